"""The settings that open a SPARQL store, shared by the CLI flags, eval datasets and the UI form.

One dataclass so that a command line, a dataset line and the Ask page's form
name the same settings the same way and get the same error messages.
"""

from __future__ import annotations

import argparse
from dataclasses import asdict, dataclass, fields
from typing import Any

from ...bounds import BoundError, bounded_number, int_option, timeout_option
from .client import MAX_REPLY_MB, BadEndpointError, check_endpoint_url, check_timeout, reply_limit_mb
from .dialects import DIALECTS, get_dialect

# the most each fetch bound may be: past these a typo, not a setting (and a hub's fetch would not end)
BOUNDS = {"hops": 10, "limit_per_entity": 1_000_000, "max_triplets": 10_000_000}


@dataclass(frozen=True)
class SparqlSource:
    """Where a graph lives: endpoint URL, dialect, default graph, label language and fetch bounds."""

    endpoint: str
    dialect: str = "rdf"
    default_graph: str | None = None
    language: str = "en"
    timeout: float = 30.0
    hops: int = 3
    limit_per_entity: int = 200
    max_triplets: int = 5000
    max_reply_mb: float | None = None  # None: $KGQA_SPARQL_MAX_REPLY_MB, else 256

    def __post_init__(self) -> None:
        check_endpoint_url(self.endpoint)
        get_dialect(self.dialect)
        for name, high in BOUNDS.items():
            try:
                bounded_number(f"sparql {name}", getattr(self, name), 1, high, integer=True)
            except BoundError as exc:
                raise BadEndpointError(str(exc)) from None
        check_timeout(self.timeout)
        if self.max_reply_mb is not None:
            reply_limit_mb(self.max_reply_mb)

    @classmethod
    def from_dict(cls, data: Any, where: str = "sparql") -> "SparqlSource":
        """From a dataset line's ``"sparql"`` value: a URL string or an object of these fields."""
        if isinstance(data, str):
            data = {"endpoint": data}
        if not isinstance(data, dict):
            raise ValueError(f"{where} must be an endpoint URL or an object with 'endpoint'")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"{where} has unknown field(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        if not data.get("endpoint"):
            raise ValueError(f"{where} needs an 'endpoint' URL")
        try:
            return cls(**data)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{where}: {exc}") from None

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}

    def open(self):
        """A new `SparqlGraphStore` (one per session: it holds the cache)."""
        from .store import SparqlGraphStore

        return SparqlGraphStore(self.endpoint, self.dialect, self.default_graph, self.language, float(self.timeout),
                                int(self.hops), int(self.limit_per_entity), int(self.max_triplets),
                                max_reply_mb=self.max_reply_mb)


def add_sparql_arguments(parser: argparse.ArgumentParser) -> None:
    """``--sparql URL --dialect ... --sparql-graph ...``: a store instead of ``--graph FILE``."""
    g = parser.add_argument_group("graph in a SPARQL endpoint (instead of --graph)")
    g.add_argument("--sparql", metavar="URL", help="SPARQL 1.1 query endpoint, e.g. http://localhost:8890/sparql")
    g.add_argument("--dialect", choices=sorted(DIALECTS), default="rdf", help="how the store names things (default rdf)")
    g.add_argument("--sparql-graph", metavar="IRI", help="default graph IRI (default-graph-uri)")
    g.add_argument("--sparql-language", default="en", help="label language (default en)")
    g.add_argument("--sparql-timeout", type=timeout_option("--sparql-timeout"), default=30.0,
                   help="seconds for one whole query: connecting, the answer and reading it (default 30)")
    g.add_argument("--sparql-hops", type=int_option("--sparql-hops", 1, BOUNDS["hops"]), default=3,
                   help="hops fetched around the topic entities (default 3)")
    g.add_argument("--sparql-limit", type=int_option("--sparql-limit", 1, BOUNDS["limit_per_entity"]), default=200,
                   help="triplets fetched per entity; a hub with more is cut and noted (default 200)")
    g.add_argument("--sparql-max-triplets", type=int_option("--sparql-max-triplets", 1, BOUNDS["max_triplets"]),
                   default=5000, help="cap on a question's fetched subgraph")
    g.add_argument("--sparql-max-reply-mb", type=_reply_mb_option, default=None,
                   help="largest answer read for one query, in MB (default $KGQA_SPARQL_MAX_REPLY_MB, else 256)")


def source_from_args(args: argparse.Namespace) -> SparqlSource | None:
    """The store the flags name, or None when ``--sparql`` was not given."""
    if not getattr(args, "sparql", None):
        return None
    return SparqlSource(args.sparql, args.dialect, args.sparql_graph, args.sparql_language, args.sparql_timeout,
                        args.sparql_hops, args.sparql_limit, args.sparql_max_triplets,
                        getattr(args, "sparql_max_reply_mb", None))


def _reply_mb_option(text: str) -> float:
    from ...bounds import argparse_type

    return float(argparse_type(lambda n, v: bounded_number(n, v, 0.0, MAX_REPLY_MB, low_inclusive=False),
                               "--sparql-max-reply-mb")(text))

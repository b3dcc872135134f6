"""The settings that open a SPARQL store, shared by the CLI flags, eval datasets and the UI form.

One dataclass so that a command line, a dataset line and the Ask page's form
name the same settings the same way and get the same error messages.
"""

from __future__ import annotations

import argparse
from dataclasses import asdict, dataclass, fields
from typing import Any

from .client import check_endpoint_url
from .dialects import DIALECTS, get_dialect


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

    def __post_init__(self) -> None:
        check_endpoint_url(self.endpoint)
        get_dialect(self.dialect)
        for name in ("hops", "limit_per_entity", "max_triplets"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"sparql {name} must be at least 1, got {getattr(self, name)!r}")
        if float(self.timeout) <= 0:
            raise ValueError(f"sparql timeout must be positive, got {self.timeout!r}")

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

        return SparqlGraphStore(self.endpoint, self.dialect, self.default_graph, self.language, self.timeout,
                                self.hops, self.limit_per_entity, self.max_triplets)


def add_sparql_arguments(parser: argparse.ArgumentParser) -> None:
    """``--sparql URL --dialect ... --sparql-graph ...``: a store instead of ``--graph FILE``."""
    g = parser.add_argument_group("graph in a SPARQL endpoint (instead of --graph)")
    g.add_argument("--sparql", metavar="URL", help="SPARQL 1.1 query endpoint, e.g. http://localhost:8890/sparql")
    g.add_argument("--dialect", choices=sorted(DIALECTS), default="rdf", help="how the store names things (default rdf)")
    g.add_argument("--sparql-graph", metavar="IRI", help="default graph IRI (default-graph-uri)")
    g.add_argument("--sparql-language", default="en", help="label language (default en)")
    g.add_argument("--sparql-timeout", type=float, default=30.0, help="seconds per query (default 30)")
    g.add_argument("--sparql-hops", type=int, default=3, help="hops fetched around the topic entities (default 3)")
    g.add_argument("--sparql-limit", type=int, default=200,
                   help="triplets fetched per entity; a hub with more is cut and noted (default 200)")
    g.add_argument("--sparql-max-triplets", type=int, default=5000, help="cap on a question's fetched subgraph")


def source_from_args(args: argparse.Namespace) -> SparqlSource | None:
    """The store the flags name, or None when ``--sparql`` was not given."""
    if not getattr(args, "sparql", None):
        return None
    return SparqlSource(args.sparql, args.dialect, args.sparql_graph, args.sparql_language, args.sparql_timeout,
                        args.sparql_hops, args.sparql_limit, args.sparql_max_triplets)

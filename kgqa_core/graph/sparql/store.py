"""`SparqlGraphStore`: the `GraphStore` interface over a SPARQL 1.1 endpoint.

Inside, entities are RDF terms (IRIs, and literals as objects); outside they
are names -- a label in the chosen language, else the IRI's local name, else
the literal's text -- exactly as the N-Triples loader names an upload, so a
method sees the same triplets either way.  Two IRIs with the same label stay
apart: the second one seen is named ``label (local name)``.

Queries: neighbours are asked for in batches (``VALUES``), one direction at a
time; each batch first counts each entity's edges, so a hub is fetched alone
with a ``LIMIT`` (no ``ORDER BY``: sorting a hub's edges costs seconds, and a
store's index order is stable) and flagged as cut, and a batch that returns fewer rows than
it counted is a truncated answer (a server row cap), raised as
`SparqlTruncated` rather than used.  Answers are cached per store (one store
per session) in an LRU keyed by entity, direction and limit.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Iterable, Sequence

from ..knowledge_graph import KnowledgeGraph, Triplet
from ..name_search import search_entity_names
from ..store import DEFAULT_HOPS, GraphStore, NeighbourBatch, StoreCosts
from ...redact import safe_url
from .client import SparqlClient, SparqlError, SparqlTruncated
from .dialects import Dialect, get_dialect
from .terms import Term, UnwritableTermError, literal

_BATCH = 50  # entities per VALUES block
_SEARCH_POOL = 200


@dataclass(frozen=True, slots=True)
class _Edge:
    """One fact edge as terms; ``path`` has two predicates when it passes a mediator node."""

    head: Term
    path: tuple[Term, ...]
    tail: Term


@dataclass
class ConnectionReport:
    """The answer of a connection test: ok, the number of triples (or None) and a message."""

    ok: bool
    triples: int | None
    message: str
    seconds: float


class SparqlGraphStore(GraphStore):
    """A remote graph behind a SPARQL endpoint (see the module doc)."""

    is_local = False

    def __init__(
        self,
        endpoint: str,
        dialect: str | Dialect = "rdf",
        default_graph: str | None = None,
        language: str = "en",
        timeout: float = 30.0,
        hops: int = DEFAULT_HOPS,
        limit_per_entity: int = 200,
        max_triplets: int = 5000,
        cache_size: int = 20000,
        name: str | None = None,
        max_reply_mb: float | None = None,
    ) -> None:
        self.client = SparqlClient(endpoint, default_graph, timeout, max_reply_mb)
        self.dialect = dialect if isinstance(dialect, Dialect) else get_dialect(dialect)
        if language and not language.replace("-", "").isalnum():
            raise ValueError(f"bad label language {language!r}")
        self.language = language or ""
        if hops < 1 or limit_per_entity < 1 or max_triplets < 1:
            raise ValueError("hops, limit_per_entity and max_triplets must be at least 1")
        self.hops, self.limit_per_entity, self.max_triplets = hops, limit_per_entity, max_triplets
        self.name = name or f"SPARQL {self.client.endpoint}"
        self._cache: OrderedDict[tuple, tuple[list[_Edge], bool]] = OrderedDict()
        self._cache_size = cache_size
        self._names: dict[Term, str] = {}
        self._terms: dict[str, Term] = {}
        self._aliases: dict[str, Term] = {}  # other texts that found an entity (bare id, other-language label)
        self._labelled: dict[Term, str | None] = {}  # IRI -> its label (None: has none)
        self._triplets: dict[int, Triplet] = {}
        self._by_key: dict[tuple[str, str, str], Triplet] = {}
        self._lock = threading.RLock()
        self.cache_hits = 0
        self.cache_misses = 0

    # ------------------------------------------------------------ identity
    @property
    def endpoint(self) -> str:
        return self.client.endpoint

    @property
    def default_graph(self) -> str | None:
        return self.client.default_graph

    @property
    def fingerprint(self) -> str:
        """Who is asked (endpoint, default graph, dialect, language), not what the graph holds."""
        key = "\x1f".join([self.endpoint, self.default_graph or "", self.dialect.name, self.language])
        return "sparql-" + hashlib.sha256(key.encode()).hexdigest()[:12]

    def describe(self) -> dict:
        """JSON-native settings, recorded in traces and saved runs."""
        return {"endpoint": self.endpoint, "dialect": self.dialect.name, "default_graph": self.default_graph,
                "language": self.language, "hops": self.hops, "limit_per_entity": self.limit_per_entity,
                "max_triplets": self.max_triplets, "timeout": self.client.timeout}

    @property
    def costs(self) -> StoreCosts:
        s = self.client.stats
        return StoreCosts(queries=s.queries, seconds=s.seconds, rows=s.rows, cache_hits=self.cache_hits,
                          cache_misses=self.cache_misses)

    def __repr__(self) -> str:
        return f"SparqlGraphStore({self.endpoint!r}, dialect={self.dialect.name!r})"

    # ------------------------------------------------------------ queries
    def _select(self, query: str) -> list[dict[str, Term]]:
        return self.client.select(query).rows

    def _values(self, var: str, terms: Iterable[Term]) -> str:
        return f"VALUES {var} {{ {' '.join(t.sparql() for t in terms)} }}"

    def _label_union(self, subject: str, label: str) -> str:
        """``{ ?e <p1> ?l BIND(0 AS ?r) } UNION { ?e <p2> ?l BIND(1 AS ?r) } ...``: one constant predicate per
        branch, so every store answers from its predicate index (a VALUES over predicates joined with
        VALUES over subjects made Oxigraph scan every label)."""
        return " UNION ".join(
            f"{{ {subject} {Term.uri(p).sparql()} {label} BIND({i} AS ?r) }}"
            for i, p in enumerate(self.dialect.label_predicates)
        )

    def count_triples(self) -> int:
        rows = self._select("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }")
        return int(rows[0]["n"].value) if rows and "n" in rows[0] else 0

    # ------------------------------------------------------------ naming
    def _fetch_labels(self, terms: Iterable[Term]) -> None:
        """Look up the labels of IRIs not seen yet (batched), preferring the chosen language."""
        todo = [t for t in dict.fromkeys(terms) if t.is_iri and t not in self._labelled]
        preds = self.dialect.label_predicates
        for i in range(0, len(todo), _BATCH):
            chunk = todo[i : i + _BATCH]
            subjects = {Term.uri(self.dialect.label_subject(t.value)): t for t in chunk}
            query = ("SELECT ?e ?r ?l WHERE { " + self._values("?e", subjects) + " "
                     + self._label_union("?e", "?l") + " FILTER(isLiteral(?l)) }")
            best: dict[Term, tuple[int, int, str]] = {}
            for row in self._select(query):
                lab = row.get("l")
                subj = row.get("e")
                if lab is None or subj is None or not lab.value.strip():
                    continue
                term = subjects.get(subj)
                if term is None:
                    continue
                rank = (int(row["r"].value) if "r" in row else len(preds), self._lang_rank(lab.lang))
                cand = (rank[0], rank[1], lab.value.strip())
                if term not in best or cand < best[term]:
                    best[term] = cand
            for term in chunk:
                self._labelled[term] = best[term][2] if term in best else None

    def _lang_rank(self, lang: str | None) -> int:
        if lang and self.language and lang.lower() == self.language.lower():
            return 0
        if not lang:
            return 1
        return 2 if lang.lower().startswith("en") else 3

    def _name(self, term: Term) -> str:
        """The name of a term (labels must have been fetched); stable for the store's life."""
        known = self._names.get(term)
        if known is not None:
            return known
        base = (self._labelled.get(term) if term.is_iri else None) or term.local_name()
        name = base
        owner = self._terms.get(name)
        if owner is not None and owner != term:
            name = f"{base} ({term.local_name()})"
            if self._terms.get(name, term) != term:
                name = f"{base} <{term.value}>"
        self._names[term] = name
        self._terms[name] = term
        return name

    def _is_mediator(self, term: Term) -> bool:
        return self.dialect.collapse_unnamed and term.is_iri and self._labelled.get(term) is None

    def _triplet(self, head: str, relation: str, tail: str) -> Triplet:
        key = (head, relation, tail)
        t = self._by_key.get(key)
        if t is None:
            t = Triplet(len(self._triplets), head, relation, tail)
            self._by_key[key] = t
            self._triplets[t.id] = t
        return t

    # ------------------------------------------------------------ entities
    def _lookup(self, names: Sequence[str]) -> dict[str, Term]:
        """Terms for names not seen yet: by label, then as a bare id or IRI, then as a literal object."""
        found: dict[str, Term] = {}
        todo = [n for n in dict.fromkeys(names) if n and n not in self._terms and n not in self._aliases]
        if not todo:
            return found
        for i in range(0, len(todo), _BATCH):
            chunk = todo[i : i + _BATCH]
            lits = []
            for n in chunk:
                lits.append(literal(n))
                if self.language:
                    lits.append(literal(n, lang=self.language))
            query = ("SELECT ?e ?l (COUNT(?x) AS ?deg) WHERE { VALUES ?l { " + " ".join(lits) + " } "
                     + self._label_union("?e", "?l") + " OPTIONAL { ?e ?px ?x } } GROUP BY ?e ?l")
            cands: dict[str, list[tuple[int, str]]] = {}
            for row in self._select(query):
                if "e" in row and row["e"].is_iri:
                    deg = int(row["deg"].value) if "deg" in row else 0
                    cands.setdefault(row["l"].value, []).append((-deg, row["e"].value))
            for n, items in cands.items():
                items.sort()
                found[n] = Term.uri(items[0][1])  # the best-connected IRI with that label gets the plain name
        rest = [n for n in todo if n not in found]
        for n in rest:
            term = self._lookup_id(n)
            if term is not None:
                found[n] = term
        if found:
            self._fetch_labels(found.values())
            for n, term in found.items():
                self._name(term)  # the label names it, whatever text found it
                self._aliases[n] = term
        return found

    def _lookup_id(self, name: str) -> Term | None:
        """A bare id under the dialect's base ("m.0abc", "Q42"), a full IRI, or a literal used as an object."""
        options: list[Term] = []
        if self.dialect.entity_base and "/" not in name and " " not in name:
            options.append(Term.uri(self.dialect.entity_base + name))
        if name.startswith(("http://", "https://", "urn:")):
            options.append(Term.uri(name))
        options.append(Term("literal", name))
        for term in options:
            try:
                written = term.sparql()
            except UnwritableTermError:
                continue
            if term.is_iri:
                q = f"ASK {{ {{ {written} ?p ?o }} UNION {{ ?s ?p {written} }} }}"
            else:
                q = f"ASK {{ ?s ?p {written} . {self.dialect.fact_filter('?p')} }}"
            rows = self._select(q)
            if rows and rows[0].get("boolean", Term("literal", "false")).value == "true":
                return term
        return None

    def lookup_names(self, names: Sequence[str]) -> dict[str, str]:
        """Which of `names` name an entity of the store (one batched label query): asked -> entity name."""
        with self._lock:
            todo = [n for n in dict.fromkeys(names) if n]
            found = {n: n for n in todo if n in self._terms}
            self._lookup([n for n in todo if n not in found])
            for n in todo:
                if n not in found and n in self._aliases:
                    found[n] = self._name(self._aliases[n])
            return found

    def term_of(self, entity: str) -> Term | None:
        with self._lock:
            term = self._terms.get(entity) or self._aliases.get(entity)
            if term is None:
                term = self._lookup([entity]).get(entity)
            return term

    def has_entity(self, entity: str) -> bool:
        return self.term_of(entity) is not None

    def labels(self, entities: Sequence[str]) -> dict[str, str]:
        """Names are labels already; this maps each known entity to its name and IRI's label."""
        return {e: e for e in entities if self.has_entity(e)}

    def iri_of(self, entity: str) -> str | None:
        """The IRI (or literal text) behind a name, for the UI's hover text."""
        term = self.term_of(entity)
        return term.value if term is not None else None

    def search_entities(self, query: str, limit: int = 10) -> list[tuple[str, float]]:
        """Entities whose label contains `query` (case-insensitive), ranked like an upload's search."""
        q = (query or "").strip()
        if not q or limit <= 0:
            return []
        with self._lock:
            exact = self._lookup([q])
            names: set[str] = set()
            if q in exact or q in self._terms:
                names.add(self._name(self._terms.get(q) or exact[q]))
            terms = self._labels_containing(q)
            if len(terms) < limit:  # a misspelt name: the start of its longest word finds the candidates
                longest = max(q.split(), key=len)
                if len(longest) >= 4 and longest[:4].lower() != q.lower():
                    terms += self._labels_containing(longest[:4])
            self._fetch_labels(terms)
            names.update(self._name(t) for t in terms)
        return search_entity_names(q, sorted(names), limit=limit)

    def _labels_containing(self, text: str) -> list[Term]:
        """IRIs with a label containing `text` (case-insensitive), at most a pool of candidates."""
        lang = (f' && (LANG(?l) = "" || LANGMATCHES(LANG(?l), {literal(self.language)}))' if self.language else "")
        query = ("SELECT DISTINCT ?e WHERE { " + self._label_union("?e", "?l")
                 + f" FILTER(isIRI(?e) && CONTAINS(LCASE(STR(?l)), LCASE({literal(text)})){lang}) }}"
                 + f" LIMIT {_SEARCH_POOL}")
        return [row["e"] for row in self._select(query) if "e" in row]

    # ------------------------------------------------------------ edges
    def _edge_query(self, terms: Sequence[Term], direction: str, select_count: bool, limit: int | None) -> str:
        pattern = "?e ?p ?x" if direction == "out" else "?x ?p ?e"
        head = "SELECT ?e (COUNT(*) AS ?n)" if select_count else "SELECT ?e ?p ?x"
        tail = " GROUP BY ?e" if select_count else ""
        if limit is not None:  # no ORDER BY: sorting a hub's edges costs seconds; the store's index order is stable
            tail += f" LIMIT {int(limit)}"
        return f"{head} WHERE {{ {self._values('?e', terms)} {pattern} . {self.dialect.fact_filter('?p')} }}{tail}"

    def _raw_edges(self, terms: Sequence[Term], direction: str, limit: int | None) -> tuple[dict[Term, list[tuple[Term, Term]]], set[Term]]:
        """(predicate, other end) pairs per term, one direction; hubs above `limit` fetched alone and flagged."""
        out: dict[Term, list[tuple[Term, Term]]] = {t: [] for t in terms}
        cut: set[Term] = set()
        usable = [t for t in terms if not (direction == "out" and not t.is_iri)]
        for i in range(0, len(usable), _BATCH):
            chunk = usable[i : i + _BATCH]
            counts = {row["e"]: int(row["n"].value) for row in self._select(self._edge_query(chunk, direction, True, None))
                      if "e" in row and "n" in row}
            small = [t for t in chunk if counts.get(t, 0) and (limit is None or counts[t] <= limit)]
            hubs = [t for t in chunk if limit is not None and counts.get(t, 0) > limit]
            if small:
                rows = self._select(self._edge_query(small, direction, False, None))
                expected = sum(counts[t] for t in small)
                if len(rows) < expected:
                    raise SparqlTruncatedRows(self.endpoint, len(rows), expected)
                for row in rows:
                    if "e" in row and "p" in row and "x" in row and row["e"] in out:
                        out[row["e"]].append((row["p"], row["x"]))
            for hub in hubs:
                rows = self._select(self._edge_query([hub], direction, False, limit))
                out[hub] = [(row["p"], row["x"]) for row in rows if "p" in row and "x" in row]
                cut.add(hub)
        return out, cut

    def _edges(self, terms: Sequence[Term], direction: str, limit: int | None) -> dict[Term, tuple[list[_Edge], bool]]:
        """Fact edges per term and direction (mediators collapsed), through the LRU cache."""
        result: dict[Term, tuple[list[_Edge], bool]] = {}
        todo: list[Term] = []
        for t in terms:
            key = (t, direction, limit)
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                self.cache_hits += 1
                result[t] = hit
            else:
                self.cache_misses += 1
                todo.append(t)
        if not todo:
            return result
        raw, cut = self._raw_edges(todo, direction, limit)
        self._fetch_labels([x for pairs in raw.values() for p, x in pairs] + [p for pairs in raw.values() for p, _ in pairs])
        mediators = sorted({x for pairs in raw.values() for _, x in pairs if self._is_mediator(x)}, key=lambda t: t.value)
        through: dict[Term, list[tuple[Term, Term]]] = {}
        if mediators:
            through, _ = self._raw_edges(mediators, direction, limit)
            self._fetch_labels([x for pairs in through.values() for p, x in pairs]
                               + [p for pairs in through.values() for p, _ in pairs])
        for t in todo:
            edges: list[_Edge] = []
            for p, x in raw.get(t, ()):
                if x.kind == "bnode":
                    continue
                if self._is_mediator(x):
                    for p2, y in through.get(x, ()):
                        if y == t or y.kind == "bnode" or self._is_mediator(y):
                            continue
                        edges.append(_Edge(t, (p, p2), y) if direction == "out" else _Edge(y, (p2, p), t))
                else:
                    edges.append(_Edge(t, (p,), x) if direction == "out" else _Edge(x, (p,), t))
            entry = (edges, t in cut)
            result[t] = entry
            self._cache[(t, direction, limit)] = entry
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return result

    def _relation_name(self, path: tuple[Term, ...]) -> str:
        return " / ".join(self._name(p) for p in path)

    def _triplets_around(self, entities: list[str], direction: str, limit: int | None) -> NeighbourBatch:
        """Each known entity's triplets, one query batch per direction; `truncated`: hubs fetched with a LIMIT."""
        with self._lock:
            terms = {n: self.term_of(n) for n in entities}
            present = [t for t in terms.values() if t is not None]
            dirs = ("out", "in") if direction == "both" else (direction,)
            per_dir = {d: self._edges(present, d, limit) for d in dirs}
            found = NeighbourBatch({})
            for n, term in terms.items():
                if term is None:
                    continue
                trips = found.triplets[n] = []
                for d in dirs:
                    edges, was_cut = per_dir[d][term]
                    if was_cut:
                        found.truncated.add(n)
                    trips.extend(self._triplet(self._name(e.head), self._relation_name(e.path), self._name(e.tail))
                                 for e in edges)
            return found

    def _neighbourhood_graph(self, triplets: list[tuple[str, str, str]], name: str) -> KnowledgeGraph:
        graph = KnowledgeGraph.from_triplets(triplets, name=name)
        graph.source = self.endpoint
        return graph

    # ---------------------------------------------- GraphView compatibility
    def neighbours(self, entity: str) -> list[Triplet]:
        return self.neighbours_batch([entity], "both", None, self.limit_per_entity).triplets.get(entity, [])

    def _triplets_source(self) -> str:
        return f"the triplets fetched from {self.endpoint}"

    def find(self, head: str, relation: str, tail: str) -> Triplet | None:
        known = self._by_key.get((head, relation, tail))
        if known is not None:
            return known
        batch = self.neighbours_batch([head], "out", [relation], None)
        return next((t for t in batch.triplets.get(head, []) if t.tail == tail), None)


class SparqlTruncatedRows(SparqlTruncated):
    """A batch that returned fewer rows than the server counted for it."""

    def __init__(self, endpoint: str, got: int, expected: int) -> None:
        super().__init__(
            f"{endpoint} returned {got} rows where it counted {expected}: the result was cut by the server "
            "(a row cap such as Virtuoso's ResultSetMaxRows); raise the cap or lower limit_per_entity"
        )


def connection_test(endpoint: str, default_graph: str | None = None, timeout: float = 10.0) -> ConnectionReport:
    """Ask the endpoint for its triple count: the UI's "Test connection" button."""
    started = time.perf_counter()
    try:
        client = SparqlClient(endpoint, default_graph, timeout)
        rows = client.select("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }").rows
        n = int(rows[0]["n"].value) if rows and "n" in rows[0] else 0
    except SparqlError as exc:
        return ConnectionReport(False, None, str(exc), time.perf_counter() - started)
    except ValueError as exc:
        return ConnectionReport(False, None, f"{safe_url(endpoint)} answered a triple count that is not a number ({exc})",
                                time.perf_counter() - started)
    where = f" in graph {default_graph}" if default_graph else ""
    return ConnectionReport(True, n, f"connected: {n:,} triples{where}", time.perf_counter() - started)

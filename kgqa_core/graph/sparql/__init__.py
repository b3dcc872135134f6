"""Graphs that live in a SPARQL 1.1 endpoint (Virtuoso, QLever, Oxigraph, Wikidata's service).

`SparqlGraphStore` implements the `GraphStore` interface over the standard
SPARQL protocol with plain HTTP (``urllib``): batched ``VALUES`` queries, a
per-session LRU cache, a timeout on every query, and errors that say what
went wrong (`SparqlError`).  Dialects say how a graph names things and which
edges are facts: ``rdf``, ``freebase``, ``wikidata`` (`DIALECTS`).
"""

from .client import SparqlClient, SparqlError, SparqlTimeout, SparqlTruncated, SparqlUnreachable
from .dialects import DIALECTS, Dialect, get_dialect
from .store import SparqlGraphStore, connection_test
from .terms import Term, iri, literal

__all__ = [
    "DIALECTS",
    "Dialect",
    "SparqlClient",
    "SparqlError",
    "SparqlGraphStore",
    "SparqlTimeout",
    "SparqlTruncated",
    "SparqlUnreachable",
    "Term",
    "connection_test",
    "get_dialect",
    "iri",
    "literal",
]

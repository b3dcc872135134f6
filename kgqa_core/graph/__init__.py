"""Knowledge graphs: loading, indexing, entity linking and prompt-budget pruning.

Everything outside this package reaches a graph through the `GraphStore`
interface (`store.py`): `KnowledgeGraph` is the in-memory implementation and
`sparql.SparqlGraphStore` the SPARQL-endpoint one (see docs/sparql.md).  Importing this package is cheap: the embedding
model loads only when `load_embedder` (or pruning with ``embedder="auto"``)
is called.
"""

from .embeddings import Embedder, load_embedder
from .knowledge_graph import GraphView, KnowledgeGraph, Triplet
from .linearize import linearize, parse_linearized
from .linking import EntityCandidate, UnknownEntityError, link_entities, resolve_entity, search_entity_names, split_listed_answer
from .loaders import DEFAULT_MAX_BYTES, GraphFormatError, load_graph, parse_graph_bytes
from .pruning import PruneResult, prune_to_budget
from .store import GraphStore, NeighbourBatch, Neighbourhood, StoreCosts, is_local_graph

__all__ = [
    "DEFAULT_MAX_BYTES",
    "Embedder",
    "EntityCandidate",
    "GraphFormatError",
    "GraphStore",
    "GraphView",
    "NeighbourBatch",
    "Neighbourhood",
    "StoreCosts",
    "KnowledgeGraph",
    "PruneResult",
    "Triplet",
    "UnknownEntityError",
    "is_local_graph",
    "linearize",
    "link_entities",
    "load_embedder",
    "load_graph",
    "parse_graph_bytes",
    "parse_linearized",
    "prune_to_budget",
    "resolve_entity",
    "split_listed_answer",
    "search_entity_names",
]

"""Hand-made graphs for the LPKG tests.

``pattern_graph`` is small enough to brute-force every query, yet has two
relation directions, shared neighbours (for intersections), numeric and date
values (for compare).
"""

import pytest
from lpkg_fixtures import PATTERN_TRIPLETS

from kgqa_core.graph.knowledge_graph import KnowledgeGraph

@pytest.fixture(scope="session")
def pattern_graph() -> KnowledgeGraph:
    return KnowledgeGraph.from_triplets(PATTERN_TRIPLETS, name="people")

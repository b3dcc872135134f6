"""Neighbour branches and the robust parser of the one relevance call."""

import pytest

from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_core.rok.branches import candidate_branches, numbered_list, parse_relevance
from kgqa_core.rok.paths import paths_between

LABELS = [
    "Film X -> directed_by -> Alice",
    "Film X -> release_year -> 1999",
    "Film X -> has_genre -> Comedy",
    "Film X -> in_language -> English",
]


@pytest.mark.parametrize(
    "text, kept, invalid",
    [
        ("1, 3", [1, 3], []),
        ("Relevant facts: 2 and 4.", [2, 4], []),
        ("#2, #3", [2, 3], []),
        ("1-3", [1, 2, 3], []),
        ("The relevant facts are 1 and 3. Facts 2 and 4 are not relevant.", [1, 3], []),
        ("1. yes\n2: no\n3 - relevant\n4. not relevant", [1, 3], []),
        ("3. Film X -> has_genre -> Comedy\n7. Film X -> sequel -> Film Y", [3], ["7. Film X -> sequel -> Film Y"]),
        ("Film X -> release_year -> 1999", [2], []),
        ("  *1*, 2, 12, 0 ", [1, 2], ["12", "0"]),
        ("none", [], []),
        ("I think the answer is Comedy.", [], []),
        ("Film X → has_genre → comedy.", [3], []),
    ],
)
def test_parse_relevance_messy_outputs(text, kept, invalid):
    j = parse_relevance(text, LABELS)
    assert j.kept == kept
    assert j.invalid == invalid


def test_parse_relevance_counts_rejections_and_not_candidates():
    j = parse_relevance("Relevant: 1, 4, 9\n2. irrelevant\nBob -> knows -> Carol", LABELS)
    assert j.kept == [1, 4]
    assert j.rejected == [2]
    assert j.invalid == ["9", "Bob -> knows -> Carol"]


def test_numbered_list():
    assert numbered_list(["a", "b"]) == "1. a\n2. b"


def _graph() -> KnowledgeGraph:
    trips = [("Film X", "directed_by", "Alice"), ("Film X", "starred_actors", "Bob"),
             ("Film Y", "directed_by", "Alice"), ("Film X", "release_year", "1999")]
    trips += [("Film X", "has_tags", f"tag {i}") for i in range(12)]
    return KnowledgeGraph.from_triplets(trips)


def test_branches_sibling_rule_and_compact_fan_out():
    g = _graph()
    (path,), _ = paths_between(g, "Alice", "Bob", max_hops=2, max_paths=10)
    cands = candidate_branches(g, [path], fanout=3, max_listed=5, sibling_rule="drop")
    labels = [b.label for b in cands.branches]
    # Alice <- directed_by <- Film Y is dropped: directed_by already leads along the main path
    assert not any("Film Y" in l for l in labels)
    assert cands.dropped_siblings == 1
    assert "Film X -> release_year -> 1999" in labels
    tags = next(b for b in cands.branches if b.relation == "has_tags")
    assert len(tags.triplet_ids) == 5 and tags.hidden == 7
    assert tags.label == "Film X -> has_tags -> (tag 0; tag 1; tag 2; tag 3; tag 4 ... +7 more)"
    # no branch repeats a main-path triplet
    assert not set(path.triplet_ids) & {t for b in cands.branches for t in b.triplet_ids}
    kept = candidate_branches(g, [path], sibling_rule="keep")
    assert "Film Y -> directed_by -> Alice" in [b.label for b in kept.branches]


def test_branches_truncation_is_noted():
    g = _graph()
    (path,), _ = paths_between(g, "Alice", "Bob", max_hops=2, max_paths=10)
    cands = candidate_branches(g, [path], fanout=100, max_branches=4)
    assert len(cands.branches) == 4 and cands.truncated > 0
    assert any("max_branches=4" in n for n in cands.notes)


def test_default_compact_rule_folds_siblings_into_one_branch():
    trips = [("Film X", "directed_by", "Zwick"), ("Film X", "release_year", "2002")]
    trips += [(f"Film {i}", "directed_by", "Zwick") for i in range(5)]
    g = KnowledgeGraph.from_triplets(trips)
    (path,), _ = paths_between(g, "Zwick", "2002", max_hops=2, max_paths=10)
    cands = candidate_branches(g, [path], fanout=10)  # below the fan-out threshold, still one branch
    sib = [b for b in cands.branches if b.relation == "directed_by"]
    assert len(sib) == 1 and cands.dropped_siblings == 0
    assert sib[0].label == "(Film 0; Film 1; Film 2; Film 3; Film 4) -> directed_by -> Zwick"
    assert len(sib[0].triplet_ids) == 5


def test_hub_fan_out_is_left_out_and_noted():
    trips = [("Film X", "has_genre", "Drama"), ("Film X", "release_year", "2002")]
    trips += [(f"Film {i}", "has_genre", "Drama") for i in range(150)]
    g = KnowledgeGraph.from_triplets(trips)
    (path,), _ = paths_between(g, "Drama", "2002", max_hops=2, max_paths=10)
    cands = candidate_branches(g, [path], max_group=100)
    assert not any(b.relation == "has_genre" for b in cands.branches)
    assert cands.hub_groups == 1 and any("hubs" in n for n in cands.notes)
    assert any(b.relation == "has_genre" for b in candidate_branches(g, [path], max_group=1000).branches)

"""Pattern grounding: every instance's answers equal a brute-force evaluation over the triplet list."""

from datetime import date

import pytest

from kgqa_core.lpkg.patterns import (
    PATTERNS,
    Grounder,
    GroundingLimits,
    PatternError,
    ground_patterns,
    parse_pattern_list,
)

from lpkg_fixtures import PATTERN_TRIPLETS


# ------------------------------------------------------------ brute force (independent of the grounder)
def bf_hop(sources, relation, inverse):
    out = set()
    for h, r, t in PATTERN_TRIPLETS:
        if r != relation:
            continue
        if not inverse and h in sources:
            out.add(t)
        if inverse and t in sources:
            out.add(h)
    return out


def bf_branch(branch):
    current = {branch.anchor}
    for hop in branch.hops:
        current = bf_hop(current, hop.relation, hop.inverse)
    return current


def bf_value(text):
    try:
        return date.fromisoformat(text).toordinal()
    except ValueError:
        return float(text)


def brute_force(inst):
    p = inst.pattern
    if p == "compare":
        c = inst.compare
        values = [bf_value(v) for v in c.values]
        facts = [(e, c.relation, v) for e, v in zip(c.entities, c.values)]
        assert all(f in PATTERN_TRIPLETS for f in facts)
        hi = max(range(2), key=lambda i: values[i])
        return {c.entities[hi] if c.mode == "larger" else c.entities[1 - hi]}
    sets = [bf_branch(b) for b in inst.branches]
    if p in ("1p", "2p", "3p"):
        return sets[0]
    if p in ("2i", "3i", "pi"):
        return set.intersection(*sets)
    if p == "2u":
        return set.union(*sets)
    if p == "ip":
        return bf_hop(sets[0] & sets[1], inst.then.relation, inst.then.inverse)
    raise AssertionError(p)


@pytest.mark.parametrize("pattern", PATTERNS)
def test_every_pattern_grounds_with_brute_force_answers(pattern_graph, pattern):
    instances = []
    for seed in range(6):
        inst = Grounder(pattern_graph, seed=seed).ground(pattern)
        if inst is not None:
            instances.append(inst)
    assert instances, f"no {pattern} instance in the hand-made graph"
    limits = GroundingLimits()
    for inst in instances:
        assert inst.pattern == pattern
        expected = brute_force(inst)
        assert set(inst.answers) == expected, inst
        assert 0 < len(inst.answers) <= limits.max_answers
        if pattern != "compare":
            assert not set(inst.answers) & set(inst.anchors), "an anchor answers its own question"
        # the gold chain holds only real triplets
        assert all(tuple(t) in PATTERN_TRIPLETS for t in inst.support)
        assert inst.support


def test_sub_answers_match_brute_force(pattern_graph):
    inst = Grounder(pattern_graph, seed=0).ground("2p")
    b = inst.branches[0]
    first = bf_hop({b.anchor}, b.hops[0].relation, b.hops[0].inverse)
    assert set(inst.sub_answers[0]) == first
    assert set(inst.sub_answers[1]) == bf_hop(first, b.hops[1].relation, b.hops[1].inverse)


def test_intersections_are_not_trivial(pattern_graph):
    for seed in range(10):
        inst = Grounder(pattern_graph, seed=seed).ground("2i")
        if inst is None:
            continue
        branch_sets = [bf_branch(b) for b in inst.branches]
        assert all(set(inst.answers) != s for s in branch_sets), "one branch alone gives the answer"
        assert len({b.anchor for b in inst.branches}) == 2


def test_unions_need_both_branches(pattern_graph):
    inst = Grounder(pattern_graph, seed=1).ground("2u")
    s1, s2 = (bf_branch(b) for b in inst.branches)
    assert not s1 <= s2 and not s2 <= s1


def test_answer_limit_rejects_large_sets(pattern_graph):
    limits = GroundingLimits(max_answers=1)
    for seed in range(5):
        inst = Grounder(pattern_graph, seed=seed, limits=limits).ground("1p")
        assert inst is None or len(inst.answers) == 1


def test_grounding_is_deterministic_for_a_seed(pattern_graph):
    a = ground_patterns(pattern_graph, PATTERNS, 12, seed=7)
    b = ground_patterns(pattern_graph, PATTERNS, 12, seed=7)
    c = ground_patterns(pattern_graph, PATTERNS, 12, seed=8)
    assert [i.to_dict() for i in a] == [i.to_dict() for i in b]
    assert [i.to_dict() for i in a] != [i.to_dict() for i in c]
    assert len({i.signature() for i in a}) == len(a), "duplicate instances"


def test_compare_uses_values_of_one_relation(pattern_graph):
    found = [Grounder(pattern_graph, seed=s).ground("compare") for s in range(8)]
    kinds = {i.compare.kind for i in found if i is not None}
    assert kinds <= {"number", "date"} and kinds
    for inst in found:
        if inst is not None:
            assert inst.compare.relation in ("population", "founded")


def test_graph_without_numbers_has_no_compare():
    from kgqa_core.graph.knowledge_graph import KnowledgeGraph

    g = KnowledgeGraph.from_triplets([("a", "r", "b"), ("b", "r", "c")])
    assert Grounder(g, seed=0, limits=GroundingLimits(attempts_per_instance=50)).ground("compare") is None


def test_pattern_names_are_validated():
    assert parse_pattern_list("2p, 2i") == ["2p", "2i"]
    assert parse_pattern_list("all") == list(PATTERNS)
    with pytest.raises(PatternError, match="unknown pattern.*4p"):
        parse_pattern_list("2p,4p")

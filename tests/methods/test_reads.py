"""READS end to end on hand-made graphs, with a scripted chooser.

The scripted chooser plays the model's part with a fixed sequence of choices;
each choice must be in the option pool READS offers, so these tests check
that the pools hold exactly the steps the paper's cases need (Tab. 14) and
that search, pruning and answering do the right thing with them.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_core.methods import reads
from kgqa_core.methods.base import MethodRequest
from kgqa_core.reads.scoring import ScriptedChooser
from kgqa_core.trace.schema import Trace


@dataclass
class _Counter:
    forward_passes: int = 0
    tokens_in: int = 0
    tokens_out: int = 0

    def snapshot(self):
        return (self.forward_passes, self.tokens_in, self.tokens_out)


@dataclass
class NoModel:
    """Scripted runs never touch the model; this records that they do not."""

    name: str = "scripted"
    revision: str = ""
    counter: _Counter = field(default_factory=_Counter)


class Script:
    """Choose the given option texts in order; fail loudly if one is not offered."""

    def __init__(self, *choices: str) -> None:
        self.choices = list(choices)
        self.pools: list[tuple[str, list[str]]] = []

    def __call__(self, kind, parts, options):
        self.pools.append((kind, list(options)))
        assert self.choices, f"unexpected {kind} decision over {options}"
        want = self.choices.pop(0)
        assert want in options, f"{want!r} not offered in {kind} pool {options}"
        return [0.0 if o == want else -5.0 for o in options]


def run_scripted(graph, question, topic, *choices, **params) -> tuple[Trace, Script]:
    """A scripted run over the paper's pools: every relation offered unless a test asks for question_relations.

    The question is read by the wording reader (no model: the chooser is scripted)."""
    params = {"question_relations": False, "reader": "wording", **params}
    script = Script(*choices)
    request = MethodRequest(graph=graph, question=question, model=NoModel(), topic_entities=[topic], params=params)
    trace = reads.run(request, chooser=ScriptedChooser(script))
    assert trace.error == "", trace.error
    assert not script.choices, f"choices left unused: {script.choices}"
    # the question's reading comes first (tests/reading); these tests look at the READS steps they script
    if params.get("reader") != "none" and (params.get("auto_search_steps", True) not in (False, "false")):
        assert trace.steps[0].kind == "reading.plan"
    trace.steps = [s for s in trace.steps if s.kind != "reading.plan"]
    return trace, script


# ------------------------------------------------------------------ graphs
def films() -> KnowledgeGraph:
    return KnowledgeGraph.from_triplets(
        [
            ("Titanic", "directed_by", "James Cameron"),
            ("Titanic", "starred_actors", "Leonardo DiCaprio"),
            ("Titanic", "starred_actors", "Kate Winslet"),
            ("Titanic", "release_year", "1997"),
            ("Avatar", "directed_by", "James Cameron"),
            ("Aliens", "directed_by", "James Cameron"),
            ("Inception", "starred_actors", "Leonardo DiCaprio"),
        ],
        name="films",
    )


def knight_rider() -> KnowledgeGraph:
    """Tab. 14, case 2: the cast is reached through CVT ids without meaning."""
    return KnowledgeGraph.from_triplets(
        [
            ("Knight Rider", "tv.tv_program.regular_cast", "m.03lj4m5"),
            ("m.03lj4m5", "tv.regular_tv_appearance.character", "KITT"),
            ("m.03lj4m5", "tv.regular_tv_appearance.actor", "William Daniels"),
            ("Knight Rider", "tv.tv_program.regular_cast", "m.02h9cb0"),
            ("m.02h9cb0", "tv.regular_tv_appearance.character", "Michael Knight"),
            ("m.02h9cb0", "tv.regular_tv_appearance.actor", "David Hasselhoff"),
            ("Knight Rider", "tv.tv_program.regular_cast", "m.03lj4m0"),
            ("m.03lj4m0", "tv.regular_tv_appearance.actor", "Edward Mulhare"),
            ("Knight Rider", "tv.tv_program.genre", "Action"),
        ],
        name="knight rider",
    )


def kevin_love() -> KnowledgeGraph:
    """Tab. 14, case 3."""
    return KnowledgeGraph.from_triplets(
        [
            ("Kevin Love", "people.person.education", "m.04ftwdc"),
            ("Kevin Love", "people.person.education", "m.045z4gx"),
            ("m.04ftwdc", "education.education.institution", "University of California, Los Angeles"),
            ("m.045z4gx", "education.education.institution", "Lake Oswego High School"),
            ("University of California, Los Angeles", "common.topic.notable_types", "College/University"),
            ("Lake Oswego High School", "common.topic.notable_types", "School"),
            ("Kevin Love", "people.person.nationality", "United States of America"),
        ],
        name="kevin love",
    )


def nolan() -> KnowledgeGraph:
    return KnowledgeGraph.from_triplets(
        [
            ("Memento", "directed_by", "Christopher Nolan"),
            ("Memento", "release_date", "2000-09-05"),
            ("Interstellar", "directed_by", "Christopher Nolan"),
            ("Interstellar", "release_date", "2014-11-07"),
            ("The Prestige", "directed_by", "Christopher Nolan"),
            ("The Prestige", "release_date", "2006-10-20"),
            ("Insomnia", "directed_by", "Christopher Nolan"),
            ("Insomnia", "release_date", "2002-05-24"),
            ("Heat", "directed_by", "Michael Mann"),
            ("Heat", "release_date", "1995-12-15"),
        ],
        name="nolan",
    )


# ------------------------------------------------------------------- cases
def test_one_hop_answer_and_trace():
    trace, script = run_scripted(films(), "who directed Titanic?", "Titanic", "Titanic + directed_by", "None")
    assert [a.text for a in trace.answers] == ["James Cameron"]
    assert all(a.in_graph for a in trace.answers)
    # the first pool offers every relation of Titanic and no None (nothing retrieved yet)
    kind, pool = script.pools[0]
    assert kind == "search" and "None" not in pool
    assert set(pool) == {"Titanic + directed_by", "Titanic + release_year", "Titanic + starred_actors"}
    kinds = [s.kind for s in trace.steps]
    assert kinds == ["reads.search", "reads.search", "reads.prune", "reads.answer"]
    first = trace.steps[0]
    assert abs(sum(c.prob for c in first.candidates) - 1.0) < 1e-4
    assert [c.label for c in first.candidates if c.kept] == ["Titanic + directed_by"]
    nodes = first.extra["abstract_structure"]["nodes"]
    assert nodes[1]["id"] == "entity_1" and nodes[1]["parent"] == "Titanic"
    assert nodes[1]["relation"] == "directed_by" and nodes[1]["entities"] == ["James Cameron"]
    g = films()
    cameron = g.find("Titanic", "directed_by", "James Cameron").id
    assert first.subgraph_after == [cameron]
    assert trace.extra["retrieved_triplets"] == [cameron] == trace.steps[-1].subgraph_after
    assert [[(c.head, c.relation, c.tail, c.triplet_id) for c in ch] for ch in trace.chains] == [
        [("Titanic", "directed_by", "James Cameron", cameron)]
    ]
    assert trace.faithfulness.ill_triplets == 0 and trace.faithfulness.answers_in_graph == 1
    assert Trace.from_json(trace.to_json()) == trace


def test_reverse_relations_are_marked_and_followed():
    trace, script = run_scripted(
        films(), "which films share the director of Titanic?", "Titanic",
        "Titanic + directed_by", "entity_1 + directed_by (reverse)", "None",
    )  # "share the director": two hops, so the one answer position two deep is taken without a call
    # the reverse expansion reaches the other films, never Titanic itself (G_k is a tree)
    assert sorted(a.text for a in trace.answers) == ["Aliens", "Avatar"]
    lin = trace.extra["linearized_structure"]
    assert '("entity_2", "directed_by", "entity_1")' in lin
    chain = [(c.head, c.relation, c.tail) for c in trace.chains[0]]
    assert chain[0] == ("Titanic", "directed_by", "James Cameron")
    assert chain[1][1:] == ("directed_by", "James Cameron")


def test_two_hops_through_topic_node_with_constraint_kitt():
    """Tab. 14 case 2: who plays the voice of KITT in Knight Rider -> William Daniels."""
    trace, script = run_scripted(
        knight_rider(), "who plays the voice of kitt in knight rider?", "Knight Rider",
        "Knight Rider + tv.tv_program.regular_cast",
        "topic_1 + tv.regular_tv_appearance.character",
        "topic_1 + tv.regular_tv_appearance.actor",
        "None",
        "entity_2 = KITT",  # no option is left after it: no second prune decision
        # answer: entity_2 is a constraint position and topic_1 holds ids only, so entity_3 is the one option
    )
    assert [a.text for a in trace.answers] == ["William Daniels"]
    nodes = {n["id"]: n for n in trace.extra["abstract_structure"]["nodes"]}
    assert nodes["topic_1"]["type"] == "topic"
    assert nodes["entity_3"]["entities"] == ["William Daniels"]
    answer = trace.steps[-1]
    assert [c.label for c in answer.candidates] == ["topic_1 + tv.regular_tv_appearance.actor -> entity_3"]
    assert "answer" not in [k for k, _ in script.pools]
    prune = [s for s in trace.steps if s.kind == "reads.prune"][0]
    assert prune.choice == "entity_2 = KITT"
    assert set(prune.subgraph_before) > set(prune.subgraph_after)
    g = knight_rider()
    kept = {g.triplet(i).as_tuple for i in trace.extra["retrieved_triplets"]}
    assert ("m.02h9cb0", "tv.regular_tv_appearance.actor", "David Hasselhoff") not in kept
    assert ("m.03lj4m5", "tv.regular_tv_appearance.actor", "William Daniels") in kept
    chain = [(c.head, c.relation, c.tail) for c in trace.chains[0]]
    assert chain == [
        ("Knight Rider", "tv.tv_program.regular_cast", "m.03lj4m5"),
        ("m.03lj4m5", "tv.regular_tv_appearance.actor", "William Daniels"),
    ]


def test_constraint_college_university():
    """Tab. 14 case 3: entity_3 = College/University keeps UCLA, prunes the high school."""
    trace, script = run_scripted(
        kevin_love(), "where did kevin love go to college?", "Kevin Love",
        "Kevin Love + people.person.education",
        "topic_1 + education.education.institution",
        "entity_2 + common.topic.notable_types",
        "None",
        "entity_3 = College/University",  # then entity_2 is the only readable answer position
    )
    assert [a.text for a in trace.answers] == ["University of California, Los Angeles"]
    assert trace.extra["constraints_applied"] == ["entity_3 = College/University"]
    # after one constraint no further option prunes anything: no second prune decision
    assert [k for k, _ in script.pools].count("prune") == 1


def test_max_over_dates():
    trace, script = run_scripted(
        nolan(), "what is the latest film directed by Christopher Nolan?", "Christopher Nolan",
        # (the first expansion is the only one, so it is taken without a decision)
        "entity_1 + release_date",  # then no expansion is left: the search ends by itself
        "date_2 max",  # the constraint position cannot answer: entity_1 is left alone
    )
    assert [a.text for a in trace.answers] == ["Interstellar"]
    prune_pool = [p for k, p in script.pools if k == "prune"][0]
    assert "date_2 min" in prune_pool  # both extremes are offered for a superlative


def test_comparison_with_a_year_from_the_question():
    trace, _ = run_scripted(
        nolan(), "which films did Christopher Nolan direct after 2005?", "Christopher Nolan",
        # (the first expansion is the only one, so it is taken without a decision)
        "entity_1 + release_date",  # then no expansion is left: the search ends by itself
        "date_2 > 2005",
    )
    assert sorted(a.text for a in trace.answers) == ["Interstellar", "The Prestige"]


def test_no_superlative_no_min_max_option():
    _, script = run_scripted(
        nolan(), "which films did Christopher Nolan direct?", "Christopher Nolan",
        "entity_1 + release_date",
        "Christopher Nolan + directed_by (reverse) -> entity_1",
    )
    assert "prune" not in [k for k, _ in script.pools]


def test_pool_cut_to_max_pool_is_reported():
    g = KnowledgeGraph.from_triplets([("Hub", f"relation_{i:02d}", f"Target {i}") for i in range(12)]
                                     + [("Hub", "directed_by", "Someone")])
    trace, script = run_scripted(g, "who directed Hub?", "Hub", "Hub + directed_by", "None", max_pool=5)
    first_pool = script.pools[0][1]
    assert len(first_pool) == 5 and "Hub + directed_by" in first_pool
    assert "13 expansions, cut to the 5" in trace.steps[0].note
    assert trace.steps[0].extra["pool_total"] == 13


def test_depth_bound_limits_search():
    g = KnowledgeGraph.from_triplets([("A", "r", "B"), ("B", "r", "C"), ("C", "r", "D")])
    trace, script = run_scripted(
        g, "what is after A?", "A", "entity_1 + r", "entity_1 + r -> entity_2", max_depth=2
    )
    assert all(not o.startswith("entity_2") for _, pool in script.pools for o in pool)
    assert trace.extra["search_stopped_by"] == "no expansion left"
    assert "D" not in {a.text for a in trace.answers} and [a.text for a in trace.answers] == ["C"]


def test_unknown_topic_entity_is_a_clear_error():
    request = MethodRequest(graph=films(), question="who directed Titanc?", model=NoModel(), topic_entities=["Titanc"])
    trace = reads.run(request, chooser=ScriptedChooser(lambda k, p, o: [0.0] * len(o)))
    assert "not in" in trace.error and "Titanic" in trace.error


# ---------------------------------------------------------------- property
@st.composite
def graphs(draw):
    names = [f"e{i}" for i in range(draw(st.integers(3, 9)))] + ["m.0abc", "1997", "2001-05-06"]
    rels = ["r", "s", "release_year", "t.u"]
    n = draw(st.integers(2, 25))
    triples = [
        (draw(st.sampled_from(names)), draw(st.sampled_from(rels)), draw(st.sampled_from(names)))
        for _ in range(n)
    ]
    return triples


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs(), st.integers(0, 10_000), st.sampled_from(
    ["what is the latest e1 of e0?", "which r of e2 after 1990?", "what s does e1 have?"]))
def test_answers_are_always_graph_entities(triples, seed, question):
    g = KnowledgeGraph.from_triplets(triples)
    topic = triples[0][0]
    rng = random.Random(seed)
    request = MethodRequest(graph=g, question=question, model=NoModel(), topic_entities=[topic],
                            params={"max_search_steps": 4})
    trace = reads.run(request, chooser=ScriptedChooser(lambda k, p, o: [rng.random() for _ in o]))
    for a in trace.answers:
        assert g.has_entity(a.entity) and a.in_graph and a.text == a.entity
    assert topic not in [a.entity for a in trace.answers]
    for step in trace.steps:
        assert all(g.has_triplet_id(i) for i in step.subgraph_after)
        if step.candidates:
            assert abs(sum(c.prob for c in step.candidates) - 1.0) < 1e-4
            assert sum(c.kept for c in step.candidates) == 1
    for chain in trace.chains:
        assert chain[0].head == topic or chain[0].tail == topic
        assert all(c.in_graph and c.grounded for c in chain)
    if trace.answers:
        assert set(trace.extra["retrieved_triplets"]) == set(trace.steps[-1].subgraph_after)


def test_stop_penalty_lowers_the_none_option():
    """With None slightly ahead, a stop penalty makes the search go on (and says so in the step)."""
    g = films()

    def prefer_none(kind, parts, options):
        return [0.0 if o == "None" else (-0.5 if o == "entity_1 + directed_by (reverse)" else -9.0) for o in options]

    def run(penalty):
        request = MethodRequest(graph=g, question="which films share the director of Titanic?", model=NoModel(),
                                topic_entities=["Titanic"], params={"stop_penalty": penalty, "max_search_steps": 2,
                                                                      "auto_search_steps": False, "reader": "none"})
        return reads.run(request, chooser=ScriptedChooser(
            lambda k, p, o: prefer_none(k, p, o) if "None" in o else [0.0 if "directed_by" in x else -9 for x in o]))

    assert run(0.0).steps[1].choice == "None"
    pushed = run(1.0).steps[1]
    assert pushed.choice == "entity_1 + directed_by (reverse)" and pushed.extra["stop_penalty"] == 1.0
    assert abs(sum(c.prob for c in pushed.candidates) - 1) < 1e-4

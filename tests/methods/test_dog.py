"""DoG end to end with the real 135M model: steps, G_q, token view, beams, trace round trip."""

from __future__ import annotations

import dataclasses
import pytest

from kgqa_core.decoding.constraint import ConstraintError
from kgqa_core.decoding.query_subgraph import QueryCentricSubgraph
from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_core.methods import dog
from kgqa_core.methods.base import MethodRequest, run_method
from kgqa_core.trace.schema import Trace

HEAT = KnowledgeGraph.from_triplets(
    [
        ("Heat", "directed_by", "Michael Mann"),
        ("Heat", "starred_actors", "Al Pacino"),
        ("Heat", "starred_actors", "Robert De Niro"),
        ("Heat", "release_year", "1995"),
        ("Collateral", "directed_by", "Michael Mann"),
        ("Collateral", "release_year", "2004"),
        ("Collateral", "starred_actors", "Tom Cruise"),
        ("Thief", "directed_by", "Michael Mann"),
    ],
    name="heat",
)
QUESTION = "who directed the movie Heat?"


def _request(model, emitted=None, **params):
    return MethodRequest(
        graph=HEAT, question=QUESTION, model=model, topic_entities=["Heat"],
        # the wording reader: DoG's mechanics read against a fixed reading (the model's reading: tests/reading)
        params={"max_new_tokens": 48, "max_steps": 2, "strict": True, "reader": "wording", **params},
        on_step=emitted.append if emitted is not None else None,
    )


@pytest.fixture(scope="module")
def greedy_run(backend_model):
    emitted = []
    before = backend_model.counter.forward_passes
    trace = run_method("dog", _request(backend_model, emitted))
    return trace, emitted, backend_model.counter.forward_passes - before


def test_greedy_run_writes_a_well_formed_chain_and_streams_its_steps(greedy_run):
    trace, emitted, passes = greedy_run
    assert not trace.error, trace.error
    assert [s.kind for s in emitted] == [s.kind for s in trace.steps]
    kinds = [s.kind for s in trace.steps]
    assert kinds[0] == "reading.plan" and kinds[1] == "dog.triplet"  # the question's reading, then the chain
    assert trace.extra["reading"]["reader"] == "wording" and "'directed'" in trace.steps[0].note
    chain = trace.best_chain
    assert chain and all(ct.grounded and ct.triplet_id is not None for ct in chain)
    assert trace.faithfulness.ill_triplets == 0 and trace.faithfulness.checked == len(chain)
    assert "< Heat -> " in trace.raw_output  # the first triplet grows from the topic entity
    assert trace.forward_passes == passes
    # one pass per free-text token at most; forced triplet tokens ride along with others
    assert trace.forward_passes <= trace.tokens_out + trace.model_calls


def test_triplet_steps_show_gq_candidates_and_token_view(greedy_run, backend_model):
    trace, _, _ = greedy_run
    gq = QueryCentricSubgraph(HEAT, ["Heat"])
    chain_so_far: list[int] = []
    for step in (s for s in trace.steps if s.kind == "dog.triplet"):
        assert step.subgraph_before == gq.triplet_ids  # Eq. 1, replayed independently
        # the candidates are G_q less the chain's own triplets (no step re-writes one), and of those the
        # relation the question names ("directed": question_relations) when G_q still holds one
        assert step.extra["excluded_repeats"] == chain_so_far
        rest = set(step.subgraph_before) - set(chain_so_far)
        named = {t for t in rest if HEAT.triplet(t).relation == "directed_by"}
        assert {c.triplet_id for c in step.candidates} == (named or rest)
        chosen = [c for c in step.candidates if c.triplet_id == step.chosen_triplet_id]
        assert len(chosen) == 1 and chosen[0].kept and chosen[0].extra["exact"]
        assert chosen[0].score == pytest.approx(step.extra["triplet_score"])
        assert all(c.score <= 0 for c in step.candidates)
        t = HEAT.triplet(step.chosen_triplet_id)
        added = gq.expand(t)
        assert step.subgraph_after == gq.triplet_ids and step.added_entities == sorted(added)
        chain_so_far.append(t.id)
        assert step.extra["chain"] == chain_so_far
        # token view: the chosen tokens spell the triplet; every position lists allowed options
        spelled = "".join(p.chosen for p in step.token_view)
        assert spelled == f" {t.head} -> {t.relation} -> {t.tail} >"
        for pos in step.token_view:
            assert 1 <= len(pos.allowed) <= 20 and pos.n_allowed >= len(pos.allowed)
            assert pos.chosen_id in {o.token_id for o in pos.allowed} or pos.n_allowed > 20
            assert 0 < pos.chosen_prob <= 1
    assert trace.chain_scores[0] == pytest.approx(
        sum(s.extra["triplet_score"] for s in trace.steps if s.kind == "dog.triplet")
    )


def test_parameters_and_json_round_trip(greedy_run):
    trace, _, _ = greedy_run
    for name in (f.name for f in dataclasses.fields(dog.DogParams)):
        assert name in trace.parameters
    assert trace.parameters["beam_size"] == 1 and trace.parameters["max_steps"] == 2
    again = Trace.from_json(trace.to_json())
    assert again == trace
    assert again.steps[1].token_view == trace.steps[1].token_view


def test_answer_step_and_answers_are_linked_to_the_graph(greedy_run):
    trace, _, _ = greedy_run
    answer_steps = [s for s in trace.steps if s.kind == "dog.answer"]
    assert len(answer_steps) == 1
    # the answer step holds what the model wrote; answers completed from the graph follow them
    assert answer_steps[0].extra["answers"] == [a.text for a in trace.answers if not a.completed_from_graph]
    for a in trace.answers:
        assert a.in_graph == HEAT.has_entity(a.entity or "")


def test_beam_of_two_keeps_two_chains_by_summed_score(backend_model):
    # every relation offered: the question names only directed_by, which Heat holds once
    trace = run_method("dog", _request(backend_model, beam_size=2, max_new_tokens=36, question_relations=False))
    assert not trace.error, trace.error
    beam_steps = [s for s in trace.steps if s.kind == "dog.beam"]
    assert beam_steps
    first = beam_steps[0]
    assert sum(c.kept for c in first.candidates) == 2
    assert len(first.candidates) >= 2
    kept_scores = [c.score for c in first.candidates if c.kept]
    assert min(kept_scores) >= max([c.score for c in first.candidates if not c.kept], default=-1e9)
    assert len(trace.chains) >= 2
    assert trace.chain_scores == sorted(trace.chain_scores, reverse=True)
    for chain in trace.chains:
        assert all(ct.grounded for ct in chain)
    triplet_steps = [s for s in trace.steps if s.kind == "dog.triplet"]
    assert {s.beam for s in triplet_steps} >= {0}
    returned = triplet_steps[0].extra["returned"]
    assert len(returned) == 2 and returned[0]["score"] >= returned[1]["score"]


def test_local_visibility_shows_only_gq_and_reprompts(backend_model):
    trace = run_method("dog", _request(backend_model, local_visibility=True, max_new_tokens=24, max_steps=1))
    assert not trace.error, trace.error
    prompt = trace.extra["prompt"]
    assert "Collateral -> release_year -> 2004" not in prompt  # not in G_q^0
    assert "Heat -> release_year -> 1995" in prompt
    if trace.best_chain:  # after a triplet the prompt is rebuilt around the grown G_q
        assert trace.model_calls >= 2


def test_no_allowed_token_fails_loudly_or_is_recorded(backend_model, monkeypatch):
    from kgqa_core.decoding.triplet_trie import TripletTrie

    build = TripletTrie.build.__func__
    monkeypatch.setattr(TripletTrie, "build", classmethod(lambda cls, triplets, **kw: build(cls, [], **kw)))
    with pytest.raises(ConstraintError):
        run_method("dog", _request(backend_model, max_new_tokens=12))
    trace = run_method("dog", _request(backend_model, max_new_tokens=12, strict=False))
    assert "allows no token" in trace.error
    failed = [s for s in trace.steps if s.extra.get("error")]
    assert failed and "no unconstrained fallback" in failed[0].note
    assert not any(trace.chains) and ">" not in trace.raw_output.split("<", 1)[-1]


def test_bad_topic_entity_is_a_clear_error(backend_model):
    req = MethodRequest(graph=HEAT, question=QUESTION, model=backend_model, topic_entities=["Nowhere"])
    trace = run_method("dog", req)
    assert "no topic entity" in trace.error and not trace.steps
    req = MethodRequest(graph=HEAT, question=QUESTION, model=backend_model, topic_entities=["Heat"],
                        params={"beam_size": 0})
    assert "beam_size" in run_method("dog", req).error


# The sample-question scenarios below were found with the prompt showing 120 graph triplets (the default
# before it became 40): the 135M model's behaviour they pin down depends on that prompt.
BUDGET_120 = {"max_prompt_triplets": 120}


def test_a_looping_chain_is_cut_and_concluded_on_a_metaqa_question(backend_model, monkeypatch):
    """The 135M model writes the right triplet, then repeats itself and never writes the answer line.

    DoG (and CoT, on the same footing) cut the loop and append "Therefore, the
    answer is"; the model then names the answer, and the trace says it was forced.
    """
    from pathlib import Path

    from kgqa_core.eval.dataset import load_dataset

    sample = Path(__file__).resolve().parents[2] / "datasets" / "metaqa_sample" / "metaqa_dev_50.jsonl"
    q = load_dataset(sample).questions[0]
    assert q.question == "who is the author of Wish You Were Here"
    for method in ("dog", "cot"):
        # this test holds the loop cut: DoG reads CoT's prompt (the paper's examples, whose commentary the
        # 135M loops on), uncapped, with the whole context, as before issue 32's pieces
        params = {**BUDGET_120, **({"prompt_examples": "paper", "free_text_cap": 0, "sure_context_triplets": 0,
                                    "guided_context_triplets": 0,
                                    "conclude_at_depth": False} if method == "dog" else {})}
        # the prompt read cold, as by a new process with no saved prefixes: after a cached prefix llama.cpp
        # reads the rest in other batch splits, and the 135M model's loop here is a near tie that the
        # prefixes of earlier runs (in memory or on disk) moved (CI, on an AVX2 CPU)
        backend_model.clear_prefix_cache()
        if hasattr(backend_model, "_store"):  # the llama.cpp backend's saved prefixes
            monkeypatch.setattr(backend_model, "_store", None)
        # the loop was found with the prompt read in whole batches; reading the method's fixed part as batches of
        # its own (llama.cpp, `exact_reuse.batch_cuts`) moves this near tie too (to "limit" for DoG), so the prompt
        # is read as then: the loop cut is what this test holds
        monkeypatch.setattr(backend_model, "fixed_tokens", lambda *args: 0)
        trace = run_method(method, MethodRequest(graph=q.graph(), question=q.question, model=backend_model,
                                                 topic_entities=list(q.topic_entities), params=params))
        assert trace.answer_texts[:1] == ["David Leland"], method
        assert trace.extra["forced_conclusion"] == 1 and trace.extra["stop"] == "repeat"
        assert any("Therefore, the answer is" in n and "repeating" in n for n in trace.notes)
        # the appended phrase is the text's last and the model completed it on one line (what it writes
        # after the name on that line, another sentence or none, is a near tie between CPUs: CI's AVX2)
        head, _, conclusion = trace.raw_output.rpartition("Therefore, the answer is")
        assert head and conclusion.startswith(" David Leland") and "\n" not in conclusion.strip(), trace.raw_output
        assert trace.faithfulness.ill_triplets == 0 or method == "cot"
        off = run_method(method, MethodRequest(graph=q.graph(), question=q.question, model=backend_model,
                                               topic_entities=list(q.topic_entities),
                                               params={"force_conclusion": False, **params}))
        # nothing is appended without force_conclusion (whether the looping 135M model ever writes an
        # answer line itself there is a near tie that depends on the KV cache's history in the process)
        assert "forced_conclusion" not in off.extra
        assert not any("Therefore, the answer is" in n for n in off.notes)


def test_a_chain_never_rewrites_its_own_triplets_unless_asked(backend_model):
    """On sample question 25 the 135M model writes the same two triplets twice when the trie allows it.

    By default a step cannot re-emit a triplet of its own chain (each step then
    adds a fact); ``repeat_triplets=True`` gives the paper's unfiltered G_q back.
    """
    from pathlib import Path

    from kgqa_core.eval.dataset import load_dataset

    sample = Path(__file__).resolve().parents[2] / "datasets" / "metaqa_sample" / "metaqa_dev_50.jsonl"
    q = load_dataset(sample).questions[25]
    assert q.question == "what are the films that have the same actor of Forever Young"

    def chain(**params):
        trace = run_method("dog", MethodRequest(graph=q.graph(), question=q.question, model=backend_model,
                                                topic_entities=list(q.topic_entities), params={**BUDGET_120, **params}))
        assert trace.faithfulness.ill_triplets == 0
        return trace, [t.triplet_id for t in trace.chains[0]]

    # the paper's G_q at each step: the question's relations, its depth and the way out leave no repeat to write
    # (skip_restatements off: a repeat is the same two entities by the same relation; the paper's examples)
    _, repeated = chain(repeat_triplets=True, question_relations=False, stay_at_depth=False, walk_out_first=False,
                        skip_restatements=False, prompt_examples="paper", free_text_cap=0)
    assert len(set(repeated)) < len(repeated), repeated
    # the same offer without repeats: the steps that would have re-written a triplet record what they left out
    trace, distinct = chain(question_relations=False, stay_at_depth=False, walk_out_first=False)
    assert len(distinct) >= 2 and len(set(distinct)) == len(distinct), distinct
    # the defaults never re-write either (their chain may end after one triplet: nothing the question names left)
    _, by_default = chain()
    assert by_default and len(set(by_default)) == len(by_default), by_default
    steps = [s for s in trace.steps if s.kind == "dog.triplet" and s.extra.get("excluded_repeats")]
    assert steps, "later steps record the chain triplets they could not write again"
    for s in steps:
        listed = {c.triplet_id for c in s.candidates}
        assert not listed & set(s.extra["excluded_repeats"])


def test_a_step_can_read_a_triplet_backwards_from_the_entity_it_stands_on(backend_model):
    """Sample question 31 asks about Mick Jackson, who is the *tail* of every triplet he is in.

    With backward readings the 135M model starts from him,
    ``< Mick Jackson -> directed_by (reverse) -> The Bodyguard >``; the chain
    records the graph triplet (The Bodyguard, directed_by, Mick Jackson), so it
    is grounded and well-formed.  Without them no step is written backwards.
    """
    from pathlib import Path

    from kgqa_core.eval.dataset import load_dataset

    sample = Path(__file__).resolve().parents[2] / "datasets" / "metaqa_sample" / "metaqa_dev_50.jsonl"
    q = load_dataset(sample).questions[31]
    assert q.question == "which directors co-directed movies with Mick Jackson"
    graph = q.graph()

    def run(**params):
        return run_method("dog", MethodRequest(graph=graph, question=q.question, model=backend_model,
                                               topic_entities=list(q.topic_entities),
                                               params={"max_steps": 2, "max_new_tokens": 80, **BUDGET_120, **params}))

    trace = run()
    steps = [s for s in trace.steps if s.kind == "dog.triplet"]
    first = steps[0]
    assert first.extra["reversed"] and first.choice.startswith("Mick Jackson -> directed_by (reverse) -> ")
    t = graph.triplet(first.chosen_triplet_id)
    assert (t.relation, t.tail) == ("directed_by", "Mick Jackson") and first.choice.endswith(t.head)
    assert "< Mick Jackson -> directed_by (reverse) -> " in trace.raw_output
    assert [x.triplet_id for x in trace.chains[0]][0] == t.id
    assert trace.faithfulness.ill_triplets == 0 and trace.faithfulness.in_graph == trace.faithfulness.checked >= 1
    chosen = [c for c in first.candidates if c.triplet_id == t.id]
    assert len(chosen) == 1 and chosen[0].extra["reversed"]
    assert len({c.triplet_id for c in first.candidates}) == len(first.candidates)  # one entry per graph triplet

    plain = run(reverse_readings=False)
    assert not any(s.extra.get("reversed") for s in plain.steps if s.kind == "dog.triplet")
    assert "(reverse)" not in plain.raw_output


LAB = KnowledgeGraph.from_triplets(  # made up: many people of Norway, one of them Karl Berg's student
    [("Leo Rud", "doctoral_advisor", "Karl Berg"), ("Nils Lind", "doctoral_advisor", "Karl Berg"),
     ("Leo Rud", "nationality", "Norway"), ("Nils Lind", "nationality", "Denmark"),
     ("Karl Berg", "works_at", "University of Bergen"), ("University of Bergen", "located_in", "Norway")]
    + [(f"Person {i}", "nationality", "Norway") for i in range(12)],
    name="lab",
)


def test_a_two_entity_reading_shows_the_triplets_where_its_walks_meet_first(backend_model, monkeypatch):
    """"which of Karl Berg's doctoral students is from Norway": the reading's walks (his students; Norway's
    people) meet at Leo Rud, and the two triplets that say so are the prompt's first, however the context was
    pruned (here to 4 triplets that hold neither), noted; switched off, or in the paper preset, the pruned
    context stands."""
    from kgqa_core.reading.reading import PlanHop, QuestionReading, RelationPlan

    reading = QuestionReading(reader="paths", hops=1, confidence=0.7, sure=True,
                              relations=["doctoral_advisor", "nationality"],
                              plans=[RelationPlan("Karl Berg", (PlanHop("doctoral_advisor", False),), 0.7),
                                     RelationPlan("Norway", (PlanHop("nationality", False),), 0.7)])

    from kgqa_core.reading import guidance

    given = [reading]  # DoG's mechanics read against a fixed reading (the model's reading: tests/reading)

    class Fixed:
        def read(self, question, graph, topics):
            return dataclasses.replace(given[0])

    monkeypatch.setattr(guidance, "make_reader", lambda *a, **k: Fixed())

    def run(**params):
        guidance.clear_readings()
        return run_method("dog", MethodRequest(
            graph=LAB, question="which of Karl Berg's doctoral students is from Norway", model=backend_model,
            topic_entities=["Karl Berg", "Norway"],
            params={"max_new_tokens": 24, "max_steps": 1, "reader": "paths", "max_prompt_triplets": 4,
                    "context_pool": 0, **params}))

    leo = [t.id for t in LAB.triplets if t.head == "Leo Rud"]
    on = run()
    ids = on.extra["context_triplet_ids"]
    assert ids[:2] == leo and len(ids) == 4, ids
    assert on.extra["meeting_context"] == {"triplets": leo, "met": ["Leo Rud"]}
    note = next(n for n in on.notes if n.startswith("meeting_context:"))
    assert "meet at Leo Rud" in note and "the 2 triplets along them" in note
    for off in (run(meeting_context=False), run(preset="paper")):
        assert off.extra["context_triplet_ids"][:2] != leo and "meeting_context" not in off.extra
        assert not any(n.startswith("meeting_context:") for n in off.notes)
    given[0] = dataclasses.replace(reading, confidence=0.3)
    assert "meeting_context" not in run().extra  # an unsure reading guides nothing: the pruned context stands

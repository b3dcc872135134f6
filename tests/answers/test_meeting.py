"""Answers that meet more of the question's entities lead (`kgqa_core.answers.meeting`), in memory and on a SPARQL store."""

from __future__ import annotations

import pytest

from kgqa_core.answers.meeting import NOTE_HEAD, linked_topics, meet_topics
from kgqa_core.trace.schema import Answer

from tests.answers.orchestras import GRAPH, TRIPLETS


def _answers(own: list[str], added: list[str]) -> list[Answer]:
    return ([Answer(text=e, entity=e, in_graph=True) for e in own]
            + [Answer(text=e, entity=e, in_graph=True, completed_from_graph=True) for e in added])


def test_the_answer_linked_to_both_entities_leads_and_graph_added_ones_linked_to_fewer_are_left_out():
    # the chain walked out from Italy and the graph completed every Italian; the orchestra rules two out
    found = _answers(["Di Sato"], ["Ann Berg", "Ed Moro"])
    met = meet_topics(found, GRAPH, ["Oslo Philharmonic", "Italy"])
    assert met is not None
    assert [a.text for a in met.answers] == ["Ann Berg", "Di Sato"]  # the model's own answer is kept, after
    assert met.leading == ["Ann Berg"] and met.moved == ["Di Sato"] and met.dropped == ["Ed Moro"]
    assert met.linked["Ann Berg"] == ["Oslo Philharmonic", "Italy"] and met.linked["Ed Moro"] == ["Italy"]
    assert met.note.startswith(NOTE_HEAD) and "Ann Berg" in met.note and "1 answer(s) the graph had added" in met.note


def test_within_a_rank_the_order_is_kept_and_answers_naming_no_entity_or_a_topic_follow_the_leaders():
    found = [Answer(text="some musician")] + _answers(["Bo Lind", "oboe"], ["Cy Rossi", "Ann Berg"])
    met = meet_topics(found, GRAPH, ["Oslo Philharmonic", "oboe"])
    assert [a.text for a in met.answers] == ["Cy Rossi", "Ann Berg", "some musician", "Bo Lind", "oboe"]
    assert met.dropped == [] and met.moved == ["Bo Lind"]


def test_when_one_of_the_models_own_answers_meets_both_its_others_with_fewer_are_left_out():
    # the model named Ann Berg (in the orchestra and Italian) and Ed Moro (Italian only): it listed Italy's side
    found = _answers(["Ed Moro", "Ann Berg"], ["Di Sato"])
    met = meet_topics(found, GRAPH, ["Oslo Philharmonic", "Italy"])
    assert [a.text for a in met.answers] == ["Ann Berg"]
    assert met.left_out == ["Ed Moro"] and met.dropped == ["Di Sato"] and met.moved == []
    assert "Ed Moro have fewer and were left out, as an answer of its own meets more" in met.note


@pytest.mark.parametrize("topics, own, added", [
    (["Italy"], ["Ann Berg"], ["Di Sato", "Ed Moro"]),  # one entity: nothing to meet
    (["Italy", "Atlantis"], ["Ann Berg"], ["Ed Moro"]),  # the second is not in the graph
    (["Oslo Philharmonic", "Italy"], ["Di Sato"], ["Ed Moro"]),  # both answers linked to one of them
    (["Oslo Philharmonic", "Italy"], ["Oslo"], []),  # no answer is linked to either
])
def test_nothing_changes_where_the_entities_cannot_tell_the_answers_apart(topics, own, added):
    assert meet_topics(_answers(own, added), GRAPH, topics) is None


def test_a_topic_is_never_counted_as_linked_to_itself():
    assert linked_topics(GRAPH, ["Italy", "Ann Berg"], ["Italy", "oboe"]) == {"Italy": [], "Ann Berg": ["Italy", "oboe"]}



# ---------------------------------------------------------------- an entity the chain wrote that meets them all
def test_an_answer_that_is_the_questions_own_entity_gives_way_to_the_chain_entity_meeting_every_topic():
    # "which oboist is Italian": the chain passed Ann Berg (plays the oboe, Italian) and answered "oboe"
    met = meet_topics(_answers(["oboe"], []), GRAPH, ["oboe", "Italy"],
                      chain_entities=["Cy Rossi", "oboe", "Ann Berg", "Italy", "Ed Moro"])
    assert met is not None and met.from_chain == ["Ann Berg"]
    assert [(a.text, a.completed_from_graph) for a in met.answers] == [("Ann Berg", True), ("oboe", False)]
    assert "the chain wrote Ann Berg, which has: added from the graph to lead" in met.note


def test_the_chain_entity_meeting_every_topic_leads_the_models_answers_meeting_fewer():
    # the chain wrote Ann Berg (in the orchestra, Italian) and answered Bo Lind (in the orchestra only); the graph
    # had added Cy Rossi (in the orchestra only): left out, as graph-added answers meeting fewer are
    found = _answers(["Bo Lind"], ["Cy Rossi"])
    met = meet_topics(found, GRAPH, ["Oslo Philharmonic", "Italy"], chain_entities=["Oslo Philharmonic", "Ann Berg",
                                                                                    "Bo Lind"])
    assert [a.text for a in met.answers] == ["Ann Berg", "Bo Lind"]
    assert met.moved == ["Bo Lind"] and met.dropped == ["Cy Rossi"] and met.left_out == []


@pytest.mark.parametrize("own, chain", [
    (["Ann Berg"], ["Ann Berg", "Di Sato"]),  # an answer meets both already: the chain adds nothing
    (["Bo Lind"], ["Di Sato", "Ed Moro"]),  # no entity of the chain meets both (each is Italian only)
    (["Oslo"], ["Oslo Philharmonic", "Italy"]),  # the chain wrote only the question's own entities
])
def test_the_chain_adds_nothing_unless_it_wrote_an_entity_meeting_every_topic_that_no_answer_meets(own, chain):
    found = _answers(own, [])
    before = meet_topics(found, GRAPH, ["Oslo Philharmonic", "Italy"])
    met = meet_topics(found, GRAPH, ["Oslo Philharmonic", "Italy"], chain_entities=chain)
    assert (met.answers if met else found) == (before.answers if before else found)
    assert met is None or met.from_chain == []


def test_resolve_answers_leads_with_the_chain_entity_meeting_every_topic_and_notes_it():
    """What DoG and CoT call: the model's line named the question's own entity, the chain had passed the answer."""
    from kgqa_core.decoding.context import resolve_answers

    notes: list[str] = []
    out = resolve_answers(["oboe"], GRAPH, ["oboe", "Italy"], notes, meet_topics=True,
                          chain_entities=["Ann Berg", "oboe", "Cy Rossi", "oboe"])
    assert [a.text for a in out] == ["Ann Berg", "oboe"] and out[0].completed_from_graph and out[0].in_graph
    assert any(n.startswith(NOTE_HEAD) and "the chain wrote Ann Berg" in n for n in notes)
    off = resolve_answers(["oboe"], GRAPH, ["oboe", "Italy"], [], meet_topics=False,
                          chain_entities=["Ann Berg", "oboe", "Cy Rossi", "oboe"])
    assert [a.text for a in off] == ["oboe"]  # the switch off (and the paper preset): the model's answer stands

# ---------------------------------------------------------------- the same on a SPARQL store (a real server)
@pytest.fixture(scope="module")
def sparql_orchestras(tmp_path_factory):
    """The graph above in a real Oxigraph server on a loopback port, and the same file loaded in memory."""
    from kgqa_core.graph.loaders import load_graph
    from tests.graph.sparql_data import oxigraph_serving

    iri = lambda name: "<http://example.org/" + name.replace(" ", "_") + ">"  # noqa: E731
    label = "<http://www.w3.org/2000/01/rdf-schema#label>"
    names = sorted({x for h, _, t in TRIPLETS for x in (h, t)})
    lines = [f'{iri(n)} {label} "{n}" .' for n in names] + [f"{iri(h)} {iri(r)} {iri(t)} ." for h, r, t in TRIPLETS]
    with oxigraph_serving(tmp_path_factory.mktemp("meeting"), "orchestras", "\n".join(lines) + "\n") as (url, path):
        yield url, load_graph(path)


def test_a_sparql_store_ranks_the_answers_as_the_uploaded_graph_does(sparql_orchestras):
    from kgqa_core.graph.sparql.store import SparqlGraphStore

    endpoint, uploaded = sparql_orchestras
    store = SparqlGraphStore(endpoint, "rdf")
    assert store.has_entity("Ann Berg") and uploaded.has_entity("Ann Berg")  # both name things by their labels
    topics = ["Oslo Philharmonic", "Italy"]
    found = _answers(["Di Sato"], ["Ann Berg", "Ed Moro"])
    in_memory, on_store = meet_topics(found, uploaded, topics), meet_topics(found, store, topics)
    assert in_memory is not None and on_store is not None
    assert [a.entity for a in on_store.answers] == [a.entity for a in in_memory.answers] == ["Ann Berg", "Di Sato"]
    assert on_store.linked == in_memory.linked and on_store.dropped == in_memory.dropped


def test_a_sparql_store_finds_the_chain_entity_meeting_every_topic_as_the_uploaded_graph_does(sparql_orchestras):
    from kgqa_core.graph.sparql.store import SparqlGraphStore

    endpoint, uploaded = sparql_orchestras
    store = SparqlGraphStore(endpoint, "rdf")
    topics, chain = ["oboe", "Italy"], ["Cy Rossi", "oboe", "Ann Berg", "Italy", "Ed Moro"]
    found = _answers(["oboe"], [])
    in_memory = meet_topics(found, uploaded, topics, chain_entities=chain)
    on_store = meet_topics(found, store, topics, chain_entities=chain)
    assert on_store.from_chain == in_memory.from_chain == ["Ann Berg"]
    assert [a.entity for a in on_store.answers] == [a.entity for a in in_memory.answers] == ["Ann Berg", "oboe"]
    assert on_store.linked == in_memory.linked

"""RoK end to end with scripted model outputs: the mechanism, exactly."""

from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_core.methods.base import MethodRequest, run_method
from kgqa_core.methods.rok import link_answers
from kgqa_core.trace.schema import Trace

KINDS = ["rok.cot", "rok.link", "rok.paths", "rok.pagerank", "rok.branches", "rok.answer"]


def _graph() -> KnowledgeGraph:
    return KnowledgeGraph.from_triplets([
        ("Film X", "directed_by", "Alice Walker"),
        ("Film X", "starred_actors", "Bob Stone"),
        ("Film Y", "directed_by", "Alice Walker"),
        ("Film Z", "starred_actors", "Bob Stone"),
        ("Film X", "release_year", "1999"),
        ("Film X", "has_genre", "Comedy"),
        ("Film Z", "has_genre", "Drama"),
    ], name="toy")


def _run(model, graph=None, question="Which film directed by [Alice Walker] starred Bob Stone?", **kw):
    steps = []
    req = MethodRequest(graph=graph or _graph(), question=question, model=model,
                        topic_entities=kw.pop("topic_entities", ["Alice Walker"]),
                        params={"use_embedder": False, "reader": "none", **kw.pop("params", {})},  # steps by position
                        on_step=steps.append)
    return run_method("rok", req), steps


def test_two_entity_question_finds_the_connecting_path(scripted):
    g = _graph()
    model = scripted(
        cot='Alice Walker directed several films. The one with "Bob Stone" is probably Film Q.',
        branches="Relevant: 1, 2, 17\nFilm X -> sequel -> Film W",
        answer="Film X",
    )
    trace, streamed = _run(model, g)
    assert [s.kind for s in trace.steps] == KINDS
    assert [s.kind for s in streamed] == KINDS  # every step was emitted as it completed
    assert trace.model_calls == 3 and len(model.prompts) == 3
    link = trace.steps[1]
    assert link.extra["key_entities"][:2] == ["Alice Walker", "Bob Stone"]
    assert "Film Q" in link.extra["unlinked"]
    connecting = [g.find("Film X", "directed_by", "Alice Walker").id, g.find("Film X", "starred_actors", "Bob Stone").id]
    assert connecting in trace.steps[2].extra["paths"]
    assert trace.extra["paths"][0] == connecting
    assert "Film X" in trace.steps[3].extra["pagerank"]
    assert trace.steps[3].extra["buckets"]
    branches = trace.steps[4]
    assert branches.extra["invalid_count"] == 2  # 17 and the invented triplet
    assert [a.entity for a in trace.answers] == ["Film X"] and trace.answers[0].in_graph
    assert [c.triplet_id for c in trace.chains[0]] == connecting
    assert all(c.grounded for chain in trace.chains for c in chain)
    assert trace.faithfulness.ill_triplets == 0 and trace.faithfulness.answers_in_graph == 1
    assert set(connecting) <= set(trace.extra["cited"])
    assert trace.parameters["hops"] == 2 and trace.parameters["top_k"] == 5 and trace.parameters["damping"] == 0.85
    # evidence in the answer prompt: the path's real triplets and the kept branches
    assert "Film X -> directed_by -> Alice Walker | Film X -> starred_actors -> Bob Stone" in model.prompts[2]
    assert Trace.from_json(trace.to_json()) == trace


def test_single_entity_question_uses_paths_out_of_it(scripted):
    model = scripted(cot="I do not know.", branches="1", answer="Comedy")
    trace, _ = _run(model, question="what genre is [Film X]", topic_entities=["Film X"])
    paths_step = trace.steps[2]
    assert paths_step.extra["mode"] == "neighbourhood"
    assert "only one key entity" in paths_step.note
    assert paths_step.extra["paths"]
    assert trace.answers[0].entity == "Comedy" and trace.answers[0].in_graph
    genre = _graph().find("Film X", "has_genre", "Comedy").id
    assert any(genre in [c.triplet_id for c in chain] for chain in trace.chains)


def test_top_k_and_hops_parameters_change_the_search(scripted):
    model = scripted(cot="Bob Stone and 1999 and Drama.", branches="none", answer="Film X")
    trace, _ = _run(model, params={"top_k": 1, "hops": 1})
    # top_k paths by PageRank bucket, plus at most two of the question entity's asked-about paths
    ranked = trace.steps[3].extra
    assert trace.steps[3].kind == "rok.pagerank"
    assert len([i for i in ranked["selected"] if i not in ranked["asked"]]) <= 1 and len(ranked["asked"]) <= 2
    assert len(trace.extra["paths"]) == len(ranked["selected"])
    assert all(len(p) == 1 for p in trace.steps[2].extra["paths"])


def test_nothing_links_still_answers_and_says_so(scripted):
    model = scripted(cot="No idea.", branches="", answer="Something Else")
    trace, _ = _run(model, question="who is the mayor of nowhere", topic_entities=[])
    assert trace.steps[1].extra["key_entities"] == []
    assert "no key entity linked" in trace.steps[2].note
    assert trace.answers[0].entity is None and not trace.answers[0].in_graph
    assert trace.model_calls == 2
    assert "relevance call skipped" in trace.steps[4].note


def test_link_answers_prefers_evidence_and_reads_sentences():
    g = _graph()
    ev = {"Film X", "Alice Walker", "Bob Stone"}
    assert [a.entity for a in link_answers("Film X | film y", g, ev)] == ["Film X", "Film Y"]
    sentence = link_answers("The film is Film X, directed by Alice Walker.", g, ev, exclude={"Alice Walker"})
    assert [a.entity for a in sentence] == ["Film X"]
    outside = link_answers("Casablanca", g, ev)
    assert outside[0].entity is None and outside[0].text == "Casablanca"
    for text in ("| Film X |", "| Film X | Bob Stone |"):  # the format written as a table row
        assert [(a.text, a.entity) for a in link_answers(text, g, ev)][:1] == [("Film X", "Film X")], text


def test_link_answers_splits_before_fuzzy_matching_and_puts_the_topic_last():
    from kgqa_core.graph import KnowledgeGraph

    g = KnowledgeGraph.from_triplets([
        ("Sex and the City", "release_year", "2008"),
        ("Sex and the City 2", "release_year", "2010"),
        ("Sex and the City 2", "directed_by", "Michael Patrick King"),
    ])
    ev = {"Sex and the City", "Sex and the City 2", "2008", "2010"}
    # the whole line is a close fuzzy match of the sequel's name; the separator must win
    got = link_answers("Sex and the City | 2008", g, ev, exclude={"Sex and the City"})
    assert [a.entity for a in got] == ["2008", "Sex and the City"]
    # a lone topic entity is still an answer
    assert [a.entity for a in link_answers("Sex and the City", g, ev, exclude={"Sex and the City"})] == [
        "Sex and the City"]


def test_prompt_too_long_keeps_the_steps_and_reports_the_error(scripted):
    from kgqa_core.models.local_model import PromptTooLongError

    class Overflowing(scripted):
        def generate(self, prompt, *args, **kw):
            if "Knowledge graph evidence" in prompt:
                raise PromptTooLongError("prompt has 9000 tokens but scripted takes at most 8192")
            return super().generate(prompt, *args, **kw)

    trace, _ = _run(Overflowing(cot="Bob Stone", branches="1", answer="x"))
    assert [s.kind for s in trace.steps] == KINDS[:5]
    assert "9000 tokens" in trace.error and "step 6" in trace.error


def test_question_entity_off_every_path_gets_its_own_paths(scripted):
    g = _graph()
    g.add("Carol", "knows", "Dave")
    # the CoT names two entities joined to each other but not to the topic Carol
    model = scripted(cot="Bob Stone and Drama.", branches="", answer="Dave")
    trace, _ = _run(model, g, question="who does [Carol] know", topic_entities=["Carol"])
    step = trace.steps[2]
    assert "question entities on no path" in step.note and "Carol" in step.note
    knows = g.find("Carol", "knows", "Dave").id
    assert [knows] in step.extra["paths"]
    assert trace.answers[0].entity == "Dave"


def test_link_answers_reads_the_evidences_entity_in_the_models_words():
    g = KnowledgeGraph.from_triplets([("virginia", "has city", "richmond, virginia"),
                                      ("atlanta, georgia", "population", "425022"),
                                      ("Angela Merkel", "nationality", "germans")])
    ev = {"virginia", "richmond, virginia", "atlanta, georgia", "425022", "Angela Merkel", "germans"}
    assert [a.entity for a in link_answers("Richmond", g, ev)] == ["richmond, virginia"]
    assert [a.entity for a in link_answers("425,022", g, ev)] == ["425022"]
    assert [a.entity for a in link_answers("German", g, ev)] == ["germans"]
    # not in the evidence: stays what the model wrote, outside the graph
    assert [(a.text, a.in_graph) for a in link_answers("Atlantis", g, ev)] == [("Atlantis", False)]

"""Unit tests of the rendering helpers: scenes, HTML, escaping, node cap, colours, tables, run store."""

from __future__ import annotations

import json
import re

import pytest

import ui_fixtures as F
from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_core.trace.schema import Candidate, Step, Trace
from kgqa_ui import colors as C
from kgqa_ui.charts import step_scores_figure, token_figure
from kgqa_ui.html_utils import script_json
from kgqa_ui.run_store import RunStore, RunStoreError
from kgqa_ui.scene import EDGE_STYLE
from kgqa_ui.text_view import highlight_model_text, token_view_html
from kgqa_ui.trace_scene import compare_scene, explore_scene, step_scene
from kgqa_ui.views.reads import abstract_structure_scene
from kgqa_ui.trace_tables import correctness, faithfulness_badge, scores_csv, summary_row
from kgqa_ui.vis_html import VIS_JS, render_html, scene_data


def _payload(html: str) -> dict:
    """The JSON scene the page hands to vis-network."""
    m = re.search(r"const SCENE = (\{.*?\});\n", html)
    assert m, "scene JSON not found"
    return json.loads(m.group(1))


def _edge(scene, tid):
    return next(e for e in scene.edges if e.triplet_id == tid)


# ------------------------------------------------------------------ escaping
def test_script_names_are_escaped_in_html_json_and_tooltips():
    g = F.xss_graph()
    tr = F.xss_trace(g)
    for i in range(len(tr.steps) + 1):
        html = render_html(step_scene(tr, i, g), title="<b>evil</b>")
        body = html.split("<script>", 1)[0] + html.rsplit("</script>", 2)[-2]  # everything but the vis bundle
        assert "<script>alert" not in html
        assert "<img src=x" not in html
        assert "</script><b>bold" not in html
        assert "<b>evil</b>" not in body
        assert "&lt;b&gt;evil&lt;/b&gt;" in html
        data = _payload(html)
        labels = {n["label"] for n in data["nodes"]}
        assert "<script>alert('x')</script>" in labels  # shown as text, drawn on canvas
        # tooltips go into the DOM through textContent, never innerHTML
        assert "d.textContent = text" in html and "innerHTML" not in body


def test_script_json_cannot_close_the_script_element():
    text = script_json({"a": "</script><script>alert(1)</script>", "b": "<!-- x -->"})
    assert "</" not in text and "<!--" not in text
    assert json.loads(text) == {"a": "</script><script>alert(1)</script>", "b": "<!-- x -->"}


def test_model_text_and_tokens_are_escaped():
    g = F.xss_graph()
    tr = F.xss_trace(g)
    html = highlight_model_text(tr.steps[0].model_text, g)
    assert "<script>alert" not in html and "&lt;script&gt;alert(2)&lt;/script&gt;" in html
    assert 'class="kg-ok"' in html  # the triplet itself is in the graph
    tok = token_view_html(tr.steps[0].token_view)
    assert "<script>" not in tok.replace("<style>", "") and "&lt;/b&gt;" in tok


def test_model_text_marks_chain_graph_and_ill_triplets(graph):
    text = ("Valley of the Dolls -> release_year -> 1967 | The Wrecking Crew -> release_year -> 1968\n"
            "Sharon Tate -> starred_in -> Rosemary's Baby")
    html = highlight_model_text(text, graph, chain=[("Valley of the Dolls", "release_year", "1967")])
    html = html.split('<div class="kg-text">', 1)[1]  # the text, not the legend
    assert html.count('class="kg-chain"') == 1
    assert html.count('class="kg-ok"') == 1
    assert html.count('class="kg-ill"') == 1


# ------------------------------------------------------------------ scenes
def test_dog_step_roles_and_score_colours(graph):
    tr = F.dog_trace(graph)
    step = tr.steps[3]  # beam 0, second triplet: 3 candidates
    scene = step_scene(tr, 3, graph)
    chosen = _edge(scene, step.chosen_triplet_id)
    assert chosen.role == "chain" and chosen.color == C.CHAIN and chosen.width >= 5
    first = _edge(scene, tr.steps[0].chosen_triplet_id)
    assert first.role == "chain"  # the chain so far is bold too
    worst = min(step.candidates, key=lambda c: c.score)
    middle = sorted(step.candidates, key=lambda c: c.score)[1]
    assert _edge(scene, worst.triplet_id).color == C.score_color(0.0)
    assert _edge(scene, middle.triplet_id).role == "candidate"
    assert scene.score_range == (min(c.score for c in step.candidates), max(c.score for c in step.candidates))
    topic = next(n for n in scene.nodes if n.title.startswith("Sharon Tate\n"))
    assert topic.role == "topic" and topic.shape == "diamond"
    assert any(item.kind == "gradient" for item in scene.legend)


def test_new_entities_marked_and_dropped_beams_faded(graph):
    tr = F.dog_trace(graph)
    first = step_scene(tr, 0, graph)
    new = {n.title.split("\n")[0] for n in first.nodes if n.new}
    assert new == {"Valley of the Dolls", "The Wrecking Crew"}
    assert all(n.border == C.NEW_BORDER for n in first.nodes if n.new)
    beam = step_scene(tr, 5, graph)  # chain C (has_genre) is dropped
    genre = graph.find("Valley of the Dolls", "has_genre", "Drama").id
    dropped = _edge(beam, genre)
    assert dropped.role == "dropped" and dropped.dashes and dropped.opacity < 0.7
    kept = _edge(beam, graph.find("The Wrecking Crew", "release_year", "1968").id)
    assert kept.role == "beam"


def test_final_scene_has_answers_and_ill_triplets(graph):
    tr = F.dog_trace(graph)
    final = step_scene(tr, len(tr.steps), graph)
    stars = {n.title.split("\n")[0] for n in final.nodes if n.role == "answer"}
    assert stars == {"1967", "1968"}
    cot = F.cot_trace_with_ill(graph)
    scene = step_scene(cot, 1, graph)
    ill = scene.edges_by_role("ill")
    assert len(ill) == 1 and ill[0].color == C.ILL and ill[0].dashes
    missing = scene.node(next(n.id for n in scene.nodes if n.title.startswith("Rosemary's Baby")))
    assert missing.role == "missing"


def test_node_cap_keeps_query_subgraph_and_says_what_was_left_out():
    hub = KnowledgeGraph.from_triplets([("Hub", "links", f"E{i}") for i in range(2000)]
                                       + [("E1", "next", "Answer")], name="big")
    t0 = hub.find("Hub", "links", "E1").id
    tr = Trace(method="dog", question="q", topic_entities=["Hub"])
    tr.add_step(Step(index=0, kind="dog.triplet", subgraph_after=[t.id for t in hub.neighbours("Hub")],
                     candidates=[Candidate("c", -0.1, triplet_id=t0, kept=True)], chosen_triplet_id=t0,
                     extra={"chain": [t0]}))
    scene = step_scene(tr, 0, hub, max_nodes=50, context=30)
    assert len(scene.nodes) == 50
    names = {n.title.split("\n")[0] for n in scene.nodes}
    assert {"Hub", "E1"} <= names  # topic and chain survive the cap
    assert "Showing 50 of" in scene.note and "left out" in scene.note
    assert len(scene_data(scene)["nodes"]) == 50
    assert all(e.source in {n.id for n in scene.nodes} for e in scene.edges)


def test_reads_rok_lpkg_panels(graph):
    reads = F.reads_trace(graph)
    s_k = abstract_structure_scene(reads.steps[1].extra["abstract_structure"])
    assert s_k.layout == "hierarchical" and len(s_k.nodes) == 3 and len(s_k.edges) == 2
    assert "starred_actors" in {e.label for e in s_k.edges}
    rok = F.rok_trace(graph)
    scene = step_scene(rok, 2, graph)
    sizes = {n.title.split("\n")[0]: n.size for n in scene.nodes}
    assert sizes["Sharon Tate"] > sizes["Drama"]  # PageRank drives node size
    assert {n.title.split("\n")[0] for n in scene.nodes if n.role == "key"} >= {"Valley of the Dolls", "1967"}
    lpkg = F.lpkg_trace(graph)
    scene = step_scene(lpkg, 2, graph)
    colours = {e.color for e in scene.edges_by_role("path")}
    assert colours == {C.categorical(0), C.categorical(1)}
    assert any("sub-question 2" in item.label for item in scene.legend)


def test_weird_trace_renders_without_crashing(graph):
    tr = F.weird_trace(graph)
    for g in (graph, None):
        for i in range(len(tr.steps) + 1):
            html = render_html(step_scene(tr, i, g))
            assert "const SCENE" in html
    scene = step_scene(tr, 0, graph)
    assert "not in this graph" in scene.note
    assert abstract_structure_scene(5) is None


def test_trace_renders_without_its_graph_from_repeated_triplets(graph):
    tr = F.dog_trace(graph)
    scene = step_scene(tr, 3, None)
    chosen = _edge(scene, tr.steps[3].chosen_triplet_id)
    assert chosen.role == "chain" and chosen.label == "release_year"


def test_compare_and_explore_scenes(graph):
    traces = [F.dog_trace(graph), F.cot_trace_with_ill(graph)]
    scene = compare_scene(traces, graph, labels=["dog", "cot"])
    assert {e.color for e in scene.edges_by_role("path")} >= {C.categorical(0), C.categorical(1)}
    assert scene.edges_by_role("ill")
    ex = explore_scene(graph, ["Sharon Tate"], selected="Sharon Tate")
    assert len(ex.nodes) == 3 and len(ex.edges) == 2


def test_vis_bundle_is_inlined_and_physics_stops():
    assert VIS_JS.is_file() and "vis-network" in VIS_JS.read_text(encoding="utf-8")[:300]
    html = render_html(step_scene(F.dog_trace(), 0, F.sample_graph()))
    assert "https://" not in html.split("<script>", 1)[0]  # no CDN
    assert "@version 10.0.2" in html
    assert "stabilizationIterationsDone" in html and "physics: { enabled: false }" in html


# ------------------------------------------------------------------ charts and tables
def test_scores_chart_sorted_and_coloured(graph):
    step = F.dog_trace(graph).steps[3]
    fig = step_scores_figure(step)
    xs = list(fig.data[0].x)
    assert xs == sorted(xs, reverse=True) and min(xs) > 0  # best candidate = longest bar
    assert fig.data[0].marker.color[0] == C.score_color(1.0)
    assert step_scores_figure(Step(index=0, kind="x")) is None
    tok = token_figure(step.token_view)
    assert len(tok.data[0].x) == len(step.token_view)


def test_tables_csv_correctness_and_badges(graph):
    tr = F.dog_trace(graph)
    csv_text = scores_csv(tr)
    assert csv_text.splitlines()[0].startswith("step,kind,title")
    assert len(csv_text.strip().splitlines()) == 1 + sum(len(s.candidates) for s in tr.steps)
    corr = correctness(tr, F.GOLD)
    assert corr.hit_at_1 and corr.matched == 2
    assert correctness(tr, []) is None
    assert faithfulness_badge(tr).color == "green"
    ill = F.cot_trace_with_ill(graph)
    assert faithfulness_badge(ill).color in ("red", "orange") and "ill" in faithfulness_badge(ill).label
    row = summary_row(ill, F.GOLD)
    assert row["ill triplets"] == "2/2" and row["answers"] == "1967"


# ------------------------------------------------------------------ run store
def test_run_store_round_trip_and_delete(tmp_path, graph):
    store = RunStore(tmp_path / "runs")
    info = store.save(F.dog_trace(graph), graph)
    assert store.load(info.run_id) == F.dog_trace(graph) or store.load(info.run_id).answers == F.dog_trace(graph).answers
    listed = store.list()
    assert [r.run_id for r in listed] == [info.run_id] and listed[0].has_graph
    (tmp_path / "runs" / "garbage.json").write_text("{not json", encoding="utf-8")
    assert len(store.list()) == 1 and store.problems and "garbage.json" in store.problems[0]
    store.delete(info.run_id)
    assert store.list() == [] and not any((tmp_path / "runs" / "graphs").glob("*.json"))


def test_graph_snapshot_keeps_triplet_ids_of_edited_graphs(tmp_path, graph):
    edited = graph.copy(name="edited")
    removed = edited.remove(3)
    added = edited.add("X", "y", "Z")
    store = RunStore(tmp_path)
    store.save_graph(edited)
    back = store.load_graph(edited.fingerprint)
    assert back.fingerprint == edited.fingerprint
    assert not back.has_triplet_id(removed.id)
    assert back.triplet(added.id).as_tuple == ("X", "y", "Z")
    assert all(back.triplet(t.id).as_tuple == t.as_tuple for t in edited)


@pytest.mark.parametrize("bad", ["../etc/passwd", "a/b", "", ".hidden", "x" * 200])
def test_run_ids_from_urls_are_validated(tmp_path, bad):
    with pytest.raises(RunStoreError):
        RunStore(tmp_path).load(bad)


def test_backward_readings_are_marked_as_the_graph_triplets_they_name(graph):
    """DoG may write ``< tail -> relation (reverse) -> head >``; it is the stored triplet, not an ill one."""
    text = ("1. < 1967 -> release_year (reverse) -> Valley of the Dolls > then "
            "< 1968 -> release_year (reverse) -> The Wrecking Crew > and (an aside) "
            "< 1999 -> release_year (reverse) -> The Wrecking Crew >")
    html = highlight_model_text(text, graph, chain=[("Valley of the Dolls", "release_year", "1967")])
    body = html.split('<div class="kg-text">', 1)[1]
    assert body.count('class="kg-chain"') == 1 and "read backwards" in body
    assert body.count('class="kg-ok"') == 1 and body.count('class="kg-ill"') == 1
    assert "(an aside)" in body  # ordinary brackets still split text


def test_faithfulness_grounds_a_backward_reading_to_its_stored_triplet(graph):
    from kgqa_core.trace.faithfulness import ground_chain

    (ok, ill) = ground_chain(graph, [("1967", "release_year (reverse)", "Valley of the Dolls"),
                                     ("1999", "release_year (reverse)", "Valley of the Dolls")], ["1967"])
    assert ok.in_graph and ok.grounded and ok.triplet_id == graph.find("Valley of the Dolls", "release_year", "1967").id
    assert not ill.in_graph and ill.reason == "not in the graph"


def test_dog_written_triplets_are_highlighted_in_their_own_format(graph):
    """DoG's text is "1. < h -> r -> t > This tells us ..."; each span gets its mark, the prose none."""
    text = ("1. < Valley of the Dolls -> release_year -> 1967 > This tells us it. "
            "2. < The Wrecking Crew -> release_year -> 1968 > and 3. < Sharon Tate -> starred_in -> Nowhere > done")
    html = highlight_model_text(text, graph, chain=[("Valley of the Dolls", "release_year", "1967")])
    body = html.split('<div class="kg-text">', 1)[1]
    assert body.count('class="kg-chain"') == 1 and body.count('class="kg-ok"') == 1
    assert body.count('class="kg-ill"') == 1
    assert ">&lt; Valley of the Dolls -&gt; release_year -&gt; 1967 &gt;</span> This tells us it." in body


# ------------------------------------------------------------------ views by step kind
def test_views_dispatch_by_method_then_kind_prefix(graph):
    from kgqa_ui.views import GENERIC, registered, view_for_kind, view_for_step

    assert {"dog.", "cot.", "direct.", "reads.", "rok.", "lpkg."} <= set(registered())
    dog = F.dog_trace(graph)
    assert view_for_step(dog, dog.steps[0]).method == "dog"
    old_cot = F.cot_trace_with_ill(graph)  # saved before CoT had its own kinds: dog.answer in a cot trace
    assert old_cot.steps[0].kind == "dog.answer" and view_for_step(old_cot, old_cot.steps[0]).method == "cot"
    assert view_for_kind("dog.answer", "direct").method == "direct"
    assert view_for_kind("cot.triplet", "").method == "cot" and view_for_kind("direct.answer").method == "direct"
    assert view_for_kind("reads.search", "future-method").method == "reads"  # unknown method: by kind
    assert view_for_kind("future.thing", "dog") is GENERIC and view_for_kind("", "") is GENERIC
    # a view owns its extras: no shared list of known keys
    assert "abstract_structure" not in view_for_kind("dog.triplet").drawn_extras


def test_a_new_view_module_needs_no_shared_renderer_change(graph):
    from kgqa_ui import views
    from kgqa_ui.views.base import StepView

    class ToyView(StepView):
        method = "toy"  # owns the "toy." steps by the trace format's rule

        def step_name(self, trace, index):
            return "toy step"

        def scene_layers(self, b, trace, upto, step, g):
            b.node("Sharon Tate", "key")

    views.register(ToyView())
    tr = Trace(method="toy", question="q", topic_entities=[])
    tr.add_step(Step(index=0, kind="toy.go"))
    from kgqa_ui.trace_scene import step_title

    assert step_title(tr, 0) == "Step 1 of 1 \u00b7 toy step"
    assert step_scene(tr, 0, graph).node(next(n.id for n in step_scene(tr, 0, graph).nodes)).role == "key"


def test_human_step_names_never_show_internal_kinds(graph):
    from kgqa_ui.trace_scene import step_name

    dog = F.dog_trace(graph)
    names = [step_name(dog, i) for i in range(len(dog.steps))]
    assert names[0] == "beam 0 \u00b7 first triplet" and names[3] == "beam 0 \u00b7 second triplet"
    assert names[2].startswith("beam selection after hop 1") and names[5].startswith("beam selection after hop 2")
    for tr in F.all_traces(graph).values():
        for i in range(len(tr.steps)):
            name = step_name(tr, i)
            assert name and not any(k in name for k in ("dog.", "cot.", "reads.", "rok.", "lpkg."))
    weird = F.weird_trace(graph)
    assert "unknown step type" in step_name(weird, 0)


def test_subgraph_grows_entities_reached_earlier_stay_marked(graph):
    tr = F.dog_trace(graph)
    scene = step_scene(tr, 3, graph)  # beam 0, second triplet: Valley of the Dolls was reached at step 1
    roles = {n.title.split("\n")[0]: n.role for n in scene.nodes}
    assert roles["Valley of the Dolls"] in ("reached", "chain")
    later = step_scene(F.reads_trace(graph), 1, graph)
    by_name = {n.title.split("\n")[0]: n for n in later.nodes}
    assert by_name["Valley of the Dolls"].role == "reached"  # reached at step 1, stays marked
    assert by_name["1967"].new and by_name["1968"].new  # new at this step: ringed
    assert any(item.label == "reached at an earlier step" for item in later.legend)


# ------------------------------------------------------------------ beam scores
def _partial_step(graph) -> Step:
    """What DoG records: the decoded triplet (exact, low score, kept) and an unfinished one (bound, higher)."""
    kept = F._cand(graph, "Valley of the Dolls", "release_year", "1967", -5.5, kept=True, beam=0)
    kept.extra = {"exact": True}
    partial = F._cand(graph, "Valley of the Dolls", "has_genre", "Drama", -3.2, beam=0)
    partial.extra = {"exact": False}
    partial.label = "Valley of the Dolls -> has_genre -> Drama, a much longer name that ends differently: A"
    twin = F._cand(graph, "Valley of the Dolls", "directed_by", "Mark Robson", -6.0, beam=0)
    twin.extra = {"exact": True}
    twin.label = "Valley of the Dolls -> has_genre -> Drama, a much longer name that ends differently: B"
    return Step(index=0, kind="dog.triplet", beam=0, candidates=[partial, twin, kept])


def test_beam_scores_kept_first_partial_marked_one_unit_full_labels(graph):
    """Today's bug: a dropped candidate showed p=0.04 and the kept one p=0.00 (an upper bound beat an exact score)."""
    from kgqa_ui.views import view_for_kind

    step = _partial_step(graph)
    view = view_for_kind("dog.triplet")
    fig = step_scores_figure(step, unit=view.score_unit_for(step), logprob=True,
                             label_of=lambda c: view.candidate_label(step, c),
                             reason_of=lambda c: view.candidate_reason(step, c))
    bar = fig.data[0]
    # each score is written under its label, in the axis (which grows to fit): never beside the bar, where a
    # narrow column cut it ("<= -16.06 p")
    values = [y.rsplit("<br>", 1)[1] for y in bar.y]
    assert bar.text is None
    assert values[0].startswith("<i>\u2713 kept") and "-5.50" in values[0]  # kept first, in log-probability
    # fully scored before partial ones: a bound is not a score, so -3.20 (partial) comes after -6.00
    assert "-6.00" in values[1] and "partial" not in values[1]
    assert "\u2264 -3.20" in values[2] and "(partial)" in values[2]  # the bound, marked
    assert list(bar.marker.pattern.shape) == ["", "", "/"]
    assert all("p=" not in t for t in values)  # one unit on the bars; probability only in the tooltip
    assert "probability" in bar.hovertext[0] and "upper bound" in bar.hovertext[2]
    assert "never finished" in bar.hovertext[2] and "kept" in bar.hovertext[0]
    labels = [y.rsplit("<br>", 1)[0].replace("<br>", " ") for y in bar.y]
    assert labels[2].endswith("differently: A") and labels[1].endswith("differently: B")  # wrapped, not cut
    assert "log-probability" in fig.layout.xaxis.title.text
    legend = view.score_legend(step)
    assert "Eq. 3" in legend and "Partial" in legend and "upper bound" in legend and "Kept" in legend


def test_scores_csv_marks_partial_candidates(graph):
    tr = Trace(method="dog", question="q")
    tr.add_step(_partial_step(graph))
    lines = scores_csv(tr).splitlines()
    assert lines[0].endswith(",partial")
    assert sum(line.endswith(",True") for line in lines[1:]) == 1


# ------------------------------------------------------------------ answer grounding
def test_an_answer_off_the_chain_is_never_green(graph):
    from kgqa_core.trace.schema import Answer
    from kgqa_ui.trace_tables import grounding_badge

    tr = F.dog_trace(graph)
    assert grounding_badge(tr, graph).color == "green"
    tr.answers.append(Answer(text="1966", entity="1966", in_graph=True))  # in the graph, on no chain
    b = grounding_badge(tr, graph)
    assert b.color == "orange" and "off the chain" in b.label and "1966" in b.help
    tr.answers.append(Answer(text="Atlantis"))
    assert grounding_badge(tr, graph).color == "red"
    direct = Trace(method="direct", question="q", answers=[Answer(text="1967", entity="1967", in_graph=True)])
    assert grounding_badge(direct, graph).color == "blue"  # no chain to check: never green
    assert grounding_badge(Trace(method="dog", question="q"), graph) is None
    assert summary_row(F.dog_trace(graph))["answers where the chain ends"] == "2/2"


# ------------------------------------------------------------------ graph page
def test_graph_labels_readable_keyboard_and_dark_mode(graph):
    scene = step_scene(F.dog_trace(graph), 3, graph)
    data = scene_data(scene)
    assert all(n["font"]["size"] >= 12 for n in data["nodes"])
    assert all(e["font"]["size"] >= 12 for e in data["edges"])
    html = render_html(scene)
    assert "keyboard: { enabled: true" in html and 'tabindex="0"' in html
    assert "prefers-color-scheme: dark" in html
    # many edges: relation names move to hover, the chain keeps its labels
    hub = KnowledgeGraph.from_triplets([("Hub", f"rel{i}", f"E{i}") for i in range(30)], name="hub")
    tr = Trace(method="dog", question="q", topic_entities=["Hub"])
    tr.add_step(Step(index=0, kind="dog.triplet", subgraph_after=[t.id for t in hub], chosen_triplet_id=0))
    data = scene_data(step_scene(tr, 0, hub))
    assert data["hoverLabels"]
    labelled = [e for e in data["edges"] if e["label"]]
    assert labelled and all(e["role"] in ("chain", "ill") for e in labelled)
    assert all(e["hoverLabel"] for e in data["edges"])


def test_compare_answers_get_a_marker_per_run(graph):
    dog, cot = F.dog_trace(graph), F.cot_trace_with_ill(graph)
    from kgqa_core.trace.schema import Answer

    cot.answers = [Answer(text="1966", entity="1966", in_graph=True)]
    scene = compare_scene([dog, cot], graph, labels=["dog", "cot"])
    shapes = {n.title.split("\n")[0]: (n.shape, n.color) for n in scene.nodes if n.role == "answer"}
    assert shapes["1967"] != shapes["1966"]
    assert shapes["1967"][1] == C.categorical(0) and shapes["1966"][1] == C.categorical(1)
    assert any(item.label == "answer of cot only" for item in scene.legend)


def test_reads_stop_option_is_named_and_structure_labels_wrap():
    from kgqa_ui.views import view_for_kind
    from kgqa_ui.views.reads import NONE_LABEL

    step = Step(index=0, kind="reads.search", choice="None",
                candidates=[Candidate("None", -0.3, prob=0.6, kept=True, extra={"stop": True}),
                            Candidate("release_year", -1.2, prob=0.3)])
    view = view_for_kind("reads.search")
    assert view.candidate_label(step, step.candidates[0]) == NONE_LABEL
    assert "stop searching" in view.score_legend(step)
    tr = Trace(method="reads", question="q")
    tr.add_step(step)
    from kgqa_ui.trace_scene import step_name

    assert "stopped" in step_name(tr, 0)
    html = render_html(abstract_structure_scene(F.reads_trace().steps[1].extra["abstract_structure"]))
    assert "widthConstraint" in html and '(hier ? " wrap" : "")' in html  # long labels wrap in a tree

"""Scenes for traces: one step of one trace, several traces overlaid, an explored neighbourhood.

Everything here reads what the trace recorded (triplet ids, candidates,
scores, extras); nothing is recomputed.  Extras are read defensively: a trace
from a newer method version with unexpected shapes still draws whatever parts
are well-formed.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable, Sequence

from kgqa_core.trace.schema import Trace

from . import colors as C
from .scene import GraphScene, LegendItem, SceneBuilder, TripletTuple
from .views import view_for_step
from .views.base import int_list as _int_list


def trace_triplet_table(trace: Trace) -> dict[int, TripletTuple]:
    """Every (id -> triplet) the trace repeats in text, for drawing without the graph."""
    table: dict[int, TripletTuple] = {}
    for step in trace.steps:
        for cand in step.candidates:
            if cand.triplet_id is not None and cand.triplet and len(cand.triplet) == 3:
                table[cand.triplet_id] = tuple(str(x) for x in cand.triplet)  # type: ignore[assignment]
    for chain in trace.chains:
        for ct in chain:
            if ct.triplet_id is not None:
                table.setdefault(ct.triplet_id, (ct.head, ct.relation, ct.tail))
    for ct in trace.faithfulness.details:
        if ct.triplet_id is not None:
            table.setdefault(ct.triplet_id, (ct.head, ct.relation, ct.tail))
    return table


def make_builder(graph: Any | None, traces: Sequence[Trace]) -> SceneBuilder:
    """A builder that resolves ids in ``graph`` first, then in the traces' own text."""
    table: dict[int, TripletTuple] = {}
    for tr in traces:
        table.update(trace_triplet_table(tr))

    def lookup(tid: int) -> TripletTuple | None:
        if graph is not None and graph.has_triplet_id(tid):
            return graph.triplet(tid).as_tuple
        return table.get(tid)

    return SceneBuilder(
        lookup,
        neighbours=graph.neighbours if graph is not None else None,
        has_entity=graph.has_entity if graph is not None else None,
    )


def _answer_entities(trace: Trace, graph: Any | None) -> list[str]:
    out = []
    for ans in trace.answers:
        name = ans.entity or ans.text
        if not name:
            continue
        if graph is None or graph.has_entity(name):
            out.append(name)
    return out


def step_scene(
    trace: Trace,
    step_index: int,
    graph: Any | None = None,
    max_nodes: int = 300,
    context: int = 30,
) -> GraphScene:
    """The graph at one step; ``step_index == len(trace.steps)`` is the final result.

    The step's view (`kgqa_ui.views`) adds what its method knows (paths,
    sub-questions, beams); this function draws what every trace has: the
    query-centric subgraph, the entities reached at earlier steps (so the
    subgraph visibly grows), the entities new at this step, the choice, the
    answers and, at the end, the cited chains.
    """
    b = make_builder(graph, [trace])
    steps = trace.steps
    final = step_index >= len(steps) or step_index < 0
    upto = steps if final else steps[: step_index + 1]
    step = None if final else steps[step_index]
    view = view_for_step(trace, step)

    view.scene_layers(b, trace, upto, step, graph)

    # the query-centric subgraph at this step
    if step is not None:
        sub = step.subgraph_after or step.subgraph_before
    else:
        last = next((s for s in reversed(steps) if s.subgraph_after or s.subgraph_before), None)
        sub = (last.subgraph_after or last.subgraph_before) if last else []
    for tid in _int_list(sub):
        b.triplet(tid, "subgraph")

    if step is not None:
        view.step_layers(b, trace, step, graph)
        if isinstance(step.chosen_triplet_id, int):
            b.triplet(step.chosen_triplet_id, "chain", info="chosen at this step")
        new = {e for e in step.added_entities if isinstance(e, str)}
        for ent in _reached_before(trace, step_index, step):
            if ent not in new and b.has_node(ent) and b.role_of(ent) in ("subgraph", "candidate"):
                b.node(ent, "reached")
        for ent in new:
            if graph is None or graph.has_entity(ent):
                b.mark_new(ent)
        if view.is_answer_step(step):
            for ent in _answer_entities(trace, graph):
                b.node(ent, "answer")
    else:
        for k, chain in enumerate(trace.chains):
            for ct in chain:
                ill = ct.triplet_id is None and not ct.in_graph
                if graph is not None and ct.triplet_id is not None and not graph.has_triplet_id(ct.triplet_id):
                    ill = True
                role = "ill" if ill else ("chain" if k == 0 else "beam")
                score = trace.chain_scores[k] if k < len(trace.chain_scores) else None
                info = f"chain {k + 1}" + (f" (score {score:.2f})" if isinstance(score, (int, float)) else "")
                if ct.reason:
                    info += f": {ct.reason}"
                b.triplet(ct.triplet_id if not ill else None, role, triplet=(ct.head, ct.relation, ct.tail), info=info)
        for ent in _answer_entities(trace, graph):
            b.node(ent, "answer")

    for ent in trace.topic_entities:
        b.node(ent, "topic")
    view.finish_scene(b, trace, upto, step, graph)

    focus = list(trace.topic_entities) + [n for n in b.names() if b.role_of(n) != "context"]
    b.context(focus, budget=context)
    title = "Final result" if final else step_title(trace, step_index)
    return b.build(max_nodes=max_nodes, title=title)


def _reached_before(trace: Trace, step_index: int, step: Any) -> set[str]:
    """Entities earlier steps of the same beam (or any beam, when steps have none) made visible."""
    out: set[str] = set()
    for s in trace.steps[:step_index]:
        if step.beam is not None and s.beam is not None and s.beam != step.beam:
            continue
        out.update(e for e in s.added_entities if isinstance(e, str))
    return out


def step_name(trace: Trace, index: int) -> str:
    """What a step did, in words, from its view; never raises (a malformed step gets its title)."""
    if index >= len(trace.steps) or index < 0:
        return "final result"
    step = trace.steps[index]
    try:
        return view_for_step(trace, step).step_name(trace, index)
    except Exception:  # a malformed step must not break the slider
        return str(step.title or "step")


def step_title(trace: Trace, index: int) -> str:
    """"Step 3 of 13 · beam 1 · second triplet" (or "Final result")."""
    if index >= len(trace.steps) or index < 0:
        return "Final result"
    return f"Step {index + 1} of {len(trace.steps)} \u00b7 {step_name(trace, index)}"


# one marker per compared run, so two runs' answers are told apart without colour alone
ANSWER_MARKERS = ["star", "triangle", "square", "diamond", "triangleDown", "hexagon", "box", "ellipse"]


def compare_scene(
    traces: Sequence[Trace],
    graph: Any | None = None,
    labels: Sequence[str] | None = None,
    max_nodes: int = 300,
    context: int = 0,
) -> GraphScene:
    """Every trace's best chain on one graph, one colour per trace."""
    b = make_builder(graph, traces)
    labels = list(labels) if labels else [t.method for t in traces]
    answered_by: Counter[str] = Counter(e for t in traces for e in set(_answer_entities(t, graph)))
    for k, trace in enumerate(traces):
        colour = C.categorical(k)
        drew = False
        for ct in trace.best_chain:
            ill = (ct.triplet_id is None and not ct.in_graph) or (
                graph is not None and ct.triplet_id is not None and not graph.has_triplet_id(ct.triplet_id)
            )
            drew |= b.triplet(
                None if ill else ct.triplet_id, "ill" if ill else "path", triplet=(ct.head, ct.relation, ct.tail),
                color=None if ill else colour, info=labels[k], layer=k,
            )
        b.legend_item(LegendItem(f"{labels[k]}" + ("" if drew else " (no chain)"), colour, "edge"))
        marker = ANSWER_MARKERS[k % len(ANSWER_MARKERS)]
        own = [e for e in _answer_entities(trace, graph) if answered_by[e] == 1]
        for ent in own:
            b.node(ent, "answer", color=colour, shape=marker, info=f"answer of {labels[k]}")
        if own:
            b.legend_item(LegendItem(f"answer of {labels[k]} only", colour, "node", shape=marker))
        for ent in _answer_entities(trace, graph):
            if answered_by[ent] > 1:
                b.node(ent, "answer", info=f"answer of {labels[k]}")
        for ent in trace.topic_entities:
            b.node(ent, "topic")
    b.context([n for n in b._nodes], budget=context)
    return b.build(max_nodes=max_nodes, title="Chains overlaid",
                   node_labels={"answer": "answer (several runs share it, or see the run's own marker)"})


def explore_scene(
    graph: Any,
    expanded: Iterable[str],
    selected: str | None = None,
    highlight: Iterable[int] = (),
    max_nodes: int = 300,
    per_entity: int = 60,
) -> GraphScene:
    """The neighbourhoods the user expanded on the Explore page."""
    b = make_builder(graph, [])
    for tid in highlight:
        b.triplet(tid, "chain", info="added on the Edit tab")
    skipped = 0
    for ent in expanded:
        if not graph.has_entity(ent):
            continue
        b.node(ent, "key", info="expanded")
        trips = graph.neighbours(ent)
        for trip in trips[:per_entity]:
            b.triplet(trip.id, "subgraph")
        skipped += max(0, len(trips) - per_entity)
    if selected and graph.has_entity(selected):
        b.node(selected, "topic", info="selected")
    if skipped:
        b.notes.append(f"{skipped} triplets of high-degree entities not drawn (at most {per_entity} per entity).")
    return b.build(
        max_nodes=max_nodes, title="Explored neighbourhoods",
        node_labels={"key": "expanded entity", "topic": "selected entity", "chain": "end of an edited triplet",
                     "subgraph": "neighbour of an expanded entity"},
        edge_labels={"chain": "triplet you added", "subgraph": "triplet of an expanded entity"},
    )

"""Scenes for traces: one step of one trace, several traces overlaid, an explored neighbourhood.

Everything here reads what the trace recorded (triplet ids, candidates,
scores, extras); nothing is recomputed.  Extras are read defensively: a trace
from a newer method version with unexpected shapes still draws whatever parts
are well-formed.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from kgqa_core.trace.schema import Trace

from . import colors as C
from .scene import GraphScene, LegendItem, SceneBuilder, TripletTuple, truncate


def _int_list(value: Any) -> list[int]:
    if not isinstance(value, (list, tuple)):
        return []
    return [v for v in value if isinstance(v, int) and not isinstance(v, bool)]


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
    """The graph at one step; ``step_index == len(trace.steps)`` is the final result."""
    b = make_builder(graph, [trace])
    steps = trace.steps
    final = step_index >= len(steps) or step_index < 0
    upto = steps if final else steps[: step_index + 1]
    step = None if final else steps[step_index]
    method = (trace.method or "").lower()

    # method-specific layers that accumulate over steps
    if method == "lpkg" or any("subquestion" in s.extra for s in upto):
        seen: set[int] = set()
        for s in upto:
            idx = s.extra.get("subquestion")
            if isinstance(idx, int) and not isinstance(idx, bool):
                colour = C.categorical(idx)
                text = str(s.extra.get("sub_question", ""))
                for tid in s.subgraph_after:
                    b.triplet(tid, "path", color=colour, info=f"sub-question {idx + 1}: {text}")
                if idx not in seen:
                    seen.add(idx)
                    b.legend_item(LegendItem(f"sub-question {idx + 1}: {truncate(text, 50)}", colour, "edge"))
    rok = next((s for s in reversed(upto) if isinstance(s.extra.get("paths"), list)), None)
    if rok is not None:
        for j, path in enumerate(rok.extra["paths"]):
            ids = _int_list(path)
            if not ids and isinstance(path, dict):
                ids = _int_list(path.get("triplets") or path.get("triplet_ids"))
            for tid in ids:
                b.triplet(tid, "path", color=C.categorical(j), info=f"path {j + 1}")
        if rok.extra["paths"]:
            b.legend_item(LegendItem("RoK paths (one colour each)", C.categorical(0), "edge"))
    for s in reversed(upto):
        keys = s.extra.get("key_entities")
        if isinstance(keys, list):
            for ent in keys:
                if isinstance(ent, str) and (graph is None or graph.has_entity(ent)):
                    b.node(ent, "key")
            break
    pr_step = next((s for s in reversed(upto) if isinstance(s.extra.get("pagerank"), dict)), None)
    pagerank = pr_step.extra["pagerank"] if pr_step is not None else {}

    # the query-centric subgraph at this step
    if step is not None:
        sub = step.subgraph_after or step.subgraph_before
    else:
        last = next((s for s in reversed(steps) if s.subgraph_after or s.subgraph_before), None)
        sub = (last.subgraph_after or last.subgraph_before) if last else []
    for tid in sub:
        b.triplet(tid, "subgraph")

    if step is not None:
        _add_candidates(b, step)
        for tid in _int_list(step.extra.get("chain")):
            b.triplet(tid, "chain", info="chain so far")
        if step.chosen_triplet_id is not None:
            b.triplet(step.chosen_triplet_id, "chain", info="chosen at this step")
        for ent in step.added_entities:
            if isinstance(ent, str) and (graph is None or graph.has_entity(ent)):
                b.mark_new(ent)
        if step.kind.endswith("answer"):
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
                info = f"chain {k + 1}" + (f" (score {score:.3f})" if score is not None else "")
                if ct.reason:
                    info += f": {ct.reason}"
                b.triplet(ct.triplet_id if not ill else None, role, triplet=(ct.head, ct.relation, ct.tail), info=info)
        for ent in _answer_entities(trace, graph):
            b.node(ent, "answer")

    for ent in trace.topic_entities:
        b.node(ent, "topic")

    if pagerank:
        vals = [float(v) for v in pagerank.values() if isinstance(v, (int, float))]
        top = max(vals) if vals else 0.0
        sized = 0
        for ent, val in pagerank.items():
            if isinstance(val, (int, float)) and top > 0 and ent in b._nodes:
                b.node(ent, b._nodes[ent].role, size=10 + 30 * float(val) / top, info=f"PageRank {float(val):.4f}")
                sized += 1
        if sized:
            b.notes.append("Node size shows PageRank.")

    focus = list(trace.topic_entities) + [n for n in list(b._nodes) if b._nodes[n].role != "context"]
    b.context(focus, budget=context)
    title = "Final result" if final else f"Step {step_index + 1}/{len(steps)}: {step.title or step.kind}"
    return b.build(max_nodes=max_nodes, title=title)


def _add_candidates(b: SceneBuilder, step: Any) -> None:
    cands = step.candidates
    if not cands:
        return
    chains = step.extra.get("chains") if isinstance(step.extra.get("chains"), list) else None
    scores = [c.score for c in cands if isinstance(c.score, (int, float))]
    norm = dict(zip([id(c) for c in cands if isinstance(c.score, (int, float))], C.normalise(scores)))
    drew_scored = False
    for j, cand in enumerate(cands):
        t = norm.get(id(cand))
        colour = C.score_color(t) if t is not None else None
        label = f"score {cand.score:.3f}" if isinstance(cand.score, (int, float)) else "no score"
        if cand.prob is not None:
            label += f", p={cand.prob:.3f}"
        label += ", kept" if cand.kept else ""
        chain_ids = _int_list(cand.extra.get("chain")) if isinstance(cand.extra, dict) else []
        if not chain_ids and chains is not None and len(chains) == len(cands):
            chain_ids = _int_list(chains[j])
        if chain_ids:
            role = "beam" if cand.kept else "dropped"
            for tid in chain_ids:
                b.triplet(tid, role, color=colour if cand.kept else None, info=f"beam chain: {label}")
            drew_scored = drew_scored or cand.kept
        elif cand.triplet_id is not None or cand.triplet:
            ok = b.triplet(cand.triplet_id, "candidate", triplet=cand.triplet, color=colour,
                           width=3.5 if cand.kept else 2.0, info=f"candidate: {label}")
            drew_scored = drew_scored or ok
    if drew_scored and scores:
        b.score_range = (min(scores), max(scores))


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
        for ent in _answer_entities(trace, graph):
            b.node(ent, "answer", info=f"answer of {labels[k]}")
        for ent in trace.topic_entities:
            b.node(ent, "topic")
    b.context([n for n in b._nodes], budget=context)
    return b.build(max_nodes=max_nodes, title="Chains overlaid")


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
        b.triplet(tid, "chain", info="edited / highlighted")
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
    return b.build(max_nodes=max_nodes, title="Explored neighbourhoods")


def abstract_structure_scene(structure: Any) -> GraphScene | None:
    """READS' abstract structure S_k as a top-down tree; None when it is not well-formed."""
    nodes = structure.get("nodes") if isinstance(structure, dict) else structure
    if not isinstance(nodes, list) or not nodes:
        return None
    b = SceneBuilder(lambda _tid: None)
    names: dict[str, str] = {}
    for i, node in enumerate(nodes):
        if not isinstance(node, dict):
            continue
        nid = str(node.get("id", i))
        ents = node.get("entities") or []
        ents = [str(e) for e in ents] if isinstance(ents, list) else [str(ents)]
        shown = ", ".join(ents[:3]) + (f" +{len(ents) - 3}" if len(ents) > 3 else "")
        name = f"{nid}: {node.get('type', '?')}" + (f"\n{shown}" if shown else "")
        names[nid] = name
        role = "topic" if node.get("parent") in (None, "", -1) else ("answer" if node.get("type") == "answer" else "subgraph")
        b.node(name, role, info="entities: " + (", ".join(ents) if ents else "(none yet)"))
    for i, node in enumerate(nodes):
        if not isinstance(node, dict):
            continue
        parent = node.get("parent")
        nid = str(node.get("id", i))
        if parent is not None and str(parent) in names and nid in names:
            b.triplet(None, "path", triplet=(names[str(parent)], str(node.get("relation", "")), names[nid]),
                      color=C.categorical(0))
    return b.build(max_nodes=200, title="Abstract structure S_k", layout="hierarchical", label_limit=90)

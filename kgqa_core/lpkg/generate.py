"""Benchmark questions from a user's own graph (paper §3.2 and §4, CLQA-Wiki style).

Each grounded instance becomes one line of the evaluation dataset format
(`kgqa_core.eval.dataset`): the verbalised question, its anchors as topic
entities, *all* answers the graph gives, the pattern as ``type``, and the
supporting triplets as ``gold_chain``.  The graph is either referenced
(``graph_file``, for a graph saved on disk) or carried inline as the
neighbourhood of the anchors deep enough to hold every reasoning path, so
the answers stay complete on the inline graph.
"""

from __future__ import annotations

from typing import Any, Sequence

from ..graph.knowledge_graph import KnowledgeGraph
from .patterns import GroundingLimits, PatternInstance, ground_patterns, parse_pattern_list
from .verbalise import TemplateVerbaliser, Verbaliser

MAX_INLINE_TRIPLETS = 5000


class GenerationError(ValueError):
    """Questions cannot be generated (e.g. no pattern can be grounded in the graph)."""


def neighbourhood(graph: KnowledgeGraph, anchors: Sequence[str], depth: int) -> list[int]:
    """Ids of triplets within ``depth`` hops of ``anchors`` (either direction)."""
    frontier = set(anchors)
    seen_entities = set(anchors)
    ids: set[int] = set()
    for _ in range(depth):
        nxt: set[str] = set()
        for e in frontier:
            for t in graph.neighbours(e):
                ids.add(t.id)
                for x in (t.head, t.tail):
                    if x not in seen_entities:
                        seen_entities.add(x)
                        nxt.add(x)
        frontier = nxt
    return sorted(ids)


def instance_record(
    inst: PatternInstance,
    question: str,
    sub_questions: list[str],
    qid: str,
    graph: KnowledgeGraph,
    graph_file: str | None = None,
    source: str = "template",
) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": qid,
        "question": question,
        "topic_entities": inst.anchors,
        "answers": list(inst.answers),
        "type": inst.pattern,
    }
    if graph_file is not None:
        record["graph_file"] = graph_file
    else:
        ids = neighbourhood(graph, inst.anchors, inst.depth)
        if len(ids) > MAX_INLINE_TRIPLETS:
            raise GenerationError(
                f"question {qid}: its neighbourhood has {len(ids)} triplets, too many to inline "
                f"(limit {MAX_INLINE_TRIPLETS}); pass the graph file instead"
            )
        record["graph"] = [list(graph.triplet(i).as_tuple) for i in ids]
    record["gold_chain"] = [list(t) for t in inst.support]
    record["sub_questions"] = sub_questions
    record["pattern_instance"] = inst.to_dict()
    record["verbaliser"] = source
    return record


def generate_questions(
    graph: KnowledgeGraph,
    patterns: Sequence[str] | str | None,
    n: int,
    seed: int = 0,
    verbaliser: Verbaliser | None = None,
    graph_file: str | None = None,
    limits: GroundingLimits | None = None,
) -> list[dict[str, Any]]:
    """``n`` questions in the evaluation dataset format, spread over ``patterns``.

    Deterministic for a given graph, patterns, ``n`` and ``seed`` (with the
    template verbaliser).  Fewer than ``n`` come back when the graph has too
    few distinct non-trivial instances; none at all raises `GenerationError`.
    """
    if n <= 0:
        raise GenerationError(f"n must be positive, got {n}")
    names = parse_pattern_list(patterns)
    verbaliser = verbaliser or TemplateVerbaliser()
    instances = ground_patterns(graph, names, n, seed=seed, limits=limits)
    if not instances:
        raise GenerationError(
            f"no instance of {', '.join(names)} could be grounded in graph {graph.name!r} "
            f"({len(graph)} triplets); try other patterns"
        )
    out = []
    counts: dict[str, int] = {}
    for inst in instances:
        counts[inst.pattern] = counts.get(inst.pattern, 0) + 1
        verb = verbaliser.verbalise(inst)
        qid = f"{inst.pattern}-{counts[inst.pattern]:03d}"
        out.append(instance_record(inst, verb.question, verb.sub_questions, qid, graph, graph_file, verb.source))
    return out


def write_generated_dataset(graph: KnowledgeGraph, patterns: Sequence[str] | str | None, n: int, seed: int,
                            folder: "str | Path", verbaliser: Verbaliser | None = None) -> "Path":
    """Generate from the graph object itself and write the dataset and its graph file into `folder`.

    The questions, answers and gold chains are grounded in `graph` as it is
    in memory (the app's session graph: an RDF literal written ``"Paris"``
    stays ``"Paris"``).  The graph is saved beside the dataset as JSON Lines
    of ``[head, relation, tail]``, which keeps every name exactly as it is
    (quotes, tabs, line breaks), so the evaluation loads the same triplets
    and the same fingerprint; the file is named by that fingerprint.
    Returns the dataset's path.
    """
    from pathlib import Path

    from ..files import atomic_write_text, jsonl_line

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    names = parse_pattern_list(patterns)
    graph_file = folder / f"graph-{graph.fingerprint}.jsonl"
    records = generate_questions(graph, names, n, seed=seed, verbaliser=verbaliser, graph_file=graph_file.name)
    if not graph_file.exists():
        atomic_write_text(graph_file, "".join(jsonl_line(list(t.as_tuple)) + "\n" for t in graph))
    out = folder / f"generated-{graph.fingerprint}-{'_'.join(names)}-{n}-{seed}.jsonl"
    atomic_write_text(out, "".join(jsonl_line(r) + "\n" for r in records))
    return out

"""Ablation of answer completion from the graph, read from a finished eval run.

Completion (`kgqa_core.answers.completion`) runs after the model finished and
only appends answers marked ``completed_from_graph``; it never changes what the
model wrote and never feeds back into decoding.  So one eval run gives every
column on exactly the same model outputs:

* **none**: the run's traces with the completed answers dropped;
* **last**: the model's answers completed from the chain's last triplet only
  (the first rule, `complete_from_last_triplet`);
* **path**: completed along the chain's relation path from the topic entity,
  else from its last triplet (`complete_from_chain`, the rule CoT uses);
* **chain**: *path* with DoG's ``chain_answers_first`` (the answers the
  chain's path reaches at the question's hops lead; when the answer line
  names none of them, a path walking exactly the question's relations gives
  them first).  Unlike the other columns this one changes Hits@1.

*last* and *path* are recomputed from each trace's best chain on the
question's graph (the dataset named in the run's ``run.json``, or
``--dataset``), so a run made under either rule gives all three columns.

    python benchmarks/answer_completion.py runs/eval/DIR [--methods dog,cot] [--dataset FILE]

Prints, per method and question type: n, questions each rule completed, and
Hits@1, macro F1 (READS App. C: harmonic mean of mean precision and mean
recall), mean per-question F1, precision and recall under each rule.
Hits@1 is the same in the first three columns by construction (the model's
first answer stays first).  The model's own answers are re-read in the order
it wrote them (DoG's answer step), so a run made with ``chain_answers_first``
gives every column too.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kgqa_core.answers.completion import complete_from_chain, complete_from_last_triplet  # noqa: E402
from kgqa_core.decoding.context import resolve_answers  # noqa: E402
from kgqa_core.methods.hop_budget import question_hops  # noqa: E402
from kgqa_core.eval.dataset import load_dataset  # noqa: E402
from kgqa_core.eval.metrics import predicted_answer_forms, score_answers  # noqa: E402
from kgqa_core.trace.schema import load_trace  # noqa: E402

RULES = ("none", "last", "path", "chain")


def _chain(trace, graph) -> list:
    """The best chain's triplets as the method passes them to completion (all grounded, else the last alone)."""
    if not trace.chains or not trace.chains[0]:
        return []
    steps = trace.chains[0]
    if trace.method == "cot":
        if not steps[-1].grounded:
            return []
        steps = steps if all(s.grounded for s in steps) else steps[-1:]
    ids = [s.triplet_id for s in steps if s.triplet_id is not None]
    return graph.triplets_by_ids(ids) if len(ids) == len(steps) else []


def _estimate(trace, graph):
    """The question's hops and relations as DoG reads them (`question_hops`); None for the other methods."""
    p = trace.parameters if isinstance(trace.parameters, dict) else {}
    if trace.method != "dog" or not (p.get("auto_steps", True) or p.get("walk_to_depth", True)):
        return None
    request = SimpleNamespace(question=trace.question, graph=graph, topic_entities=trace.topic_entities)
    return question_hops(request)


def _own(trace, graph) -> list:
    """The model's own answers in the order it wrote them (before any completion or re-ranking)."""
    own = [a for a in trace.answers if not a.completed_from_graph]
    if trace.method != "dog":
        return own
    steps = [s for s in trace.steps if s.kind == "dog.answer"]
    best = next((s for s in steps if s.beam == trace.extra.get("best_beam")), steps[0] if steps else None)
    texts = best.extra.get("answers") if best is not None else None
    return resolve_answers(texts, graph, trace.topic_entities) if texts else own


def _score(trace, answers, gold):
    trace.answers = answers
    return score_answers(predicted_answer_forms(trace), gold)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("--methods", default="dog,cot")
    ap.add_argument("--dataset", type=Path, default=None, help="the run's dataset (default: from run.json)")
    args = ap.parse_args(argv)
    methods = [m for m in args.methods.split(",") if m]
    dataset_path = args.dataset
    if dataset_path is None:
        named = json.loads((args.run_dir / "run.json").read_text(encoding="utf-8"))["dataset"]
        dataset_path = (args.run_dir / named) if not Path(named).is_absolute() else Path(named)
        if not dataset_path.exists():
            dataset_path = Path(named)
    questions = {q.id: q for q in load_dataset(dataset_path).questions}
    rows: dict[tuple[str, str], list[tuple[list, list[bool]]]] = defaultdict(list)
    seen: set[tuple[str, str]] = set()
    for line in (args.run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        rec = json.loads(line)
        if rec["method"] not in methods or (rec["method"], rec["id"]) in seen or rec["id"] not in questions:
            continue
        seen.add((rec["method"], rec["id"]))
        trace = load_trace(args.run_dir / rec["trace"])
        q = questions[rec["id"]]
        graph = q.graph()
        own = _own(trace, graph)
        chain = _chain(trace, graph) if trace.parameters.get("complete_answers", True) is not False else []
        topics = trace.topic_entities
        est = _estimate(trace, graph)
        hops, uses = (est.hops, est.uses) if est is not None else (None, {})
        last = complete_from_last_triplet(own, chain[-1], graph, topics) if chain else None
        path = complete_from_chain(own, chain, graph, topics, hops=hops) if chain else None
        first = (complete_from_chain(own, chain, graph, topics, hops=hops, rank_by_chain=True, question_uses=uses)
                 if chain else None)
        scores = [_score(trace, own, rec["gold"]),
                  _score(trace, last.answers if last else own, rec["gold"]),
                  _score(trace, path.answers if path else own, rec["gold"]),
                  _score(trace, first.answers if first else own, rec["gold"])]
        fired = [False, last is not None, path is not None, first is not None]
        for qtype in ("all", rec.get("type") or "-"):
            rows[(rec["method"], qtype)].append((scores, fired))
    head = " | ".join(f"{k} {' / '.join(RULES)}" for k in ("Hits@1", "F1", "mean F1", "P", "R"))
    print(f"| method | type | n | completed (last / path / chain) | {head} |")
    print("|" + "---|" * 9)
    for (method, qtype), items in sorted(rows.items()):
        n = len(items)

        def agg(i: int) -> tuple[float, ...]:
            p = sum(x[0][i].precision for x in items) / n
            r = sum(x[0][i].recall for x in items) / n
            return (sum(x[0][i].hits1 for x in items) / n, 2 * p * r / (p + r) if p + r else 0.0,
                    sum(x[0][i].f1 for x in items) / n, p, r)

        cols = [agg(i) for i in range(len(RULES))]
        cells = " | ".join(" / ".join(f"{c[k]:.3f}" for c in cols) for k in range(5))
        fired = " / ".join(str(sum(x[1][i] for x in items)) for i in (1, 2, 3))
        print(f"| {method} | {qtype} | {n} | {fired} | {cells} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

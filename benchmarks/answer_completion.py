"""Ablation of answer completion from the graph, read from a finished eval run.

Completion (`kgqa_core.answers.completion`) runs after the model finished and
only appends answers marked ``completed_from_graph``; it never changes what the
model wrote.  So the figures *without* it are the same run's traces with those
answers dropped, and one eval run gives both columns on exactly the same
model outputs (completion runs after decoding and never feeds back into it;
tests/methods/test_answer_completion.py checks that the model's own answers
come first and only the graph's missing entities are added).

    python benchmarks/answer_completion.py runs/eval/DIR [--methods dog,cot]

Prints, per method and question type: n, questions completed, Hits@1, macro
F1 (READS App. C: harmonic mean of mean precision and mean recall), mean
per-question F1, precision and recall, with and without completion.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kgqa_core.eval.metrics import predicted_answer_forms, score_answers  # noqa: E402
from kgqa_core.trace.schema import load_trace  # noqa: E402


def _scores(trace, gold, keep_completed: bool):
    if not keep_completed:
        trace.answers = [a for a in trace.answers if not a.completed_from_graph]
    return score_answers(predicted_answer_forms(trace), gold)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("--methods", default="dog,cot")
    args = ap.parse_args(argv)
    methods = [m for m in args.methods.split(",") if m]
    rows: dict[tuple[str, str], list[tuple[object, object, bool]]] = defaultdict(list)
    seen: set[tuple[str, str]] = set()
    for line in (args.run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        rec = json.loads(line)
        if rec["method"] not in methods or (rec["method"], rec["id"]) in seen:
            continue
        seen.add((rec["method"], rec["id"]))
        trace = load_trace(args.run_dir / rec["trace"])
        completed = any(a.completed_from_graph for a in trace.answers)
        with_c = _scores(trace, rec["gold"], True)
        without = _scores(trace, rec["gold"], False)
        for qtype in ("all", rec.get("type") or "-"):
            rows[(rec["method"], qtype)].append((with_c, without, completed))
    print("| method | type | n | completed | Hits@1 with / without | F1 with / without | mean F1 with / without "
          "| P with / without | R with / without |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (method, qtype), items in sorted(rows.items()):
        n = len(items)

        def agg(i: int):
            p = sum(getattr(x[i], "precision") for x in items) / n
            r = sum(getattr(x[i], "recall") for x in items) / n
            return (sum(x[i].hits1 for x in items) / n, 2 * p * r / (p + r) if p + r else 0.0,
                    sum(x[i].f1 for x in items) / n, p, r)

        w, wo = agg(0), agg(1)
        cells = " | ".join(f"{a:.3f} / {b:.3f}" for a, b in zip(w, wo))
        print(f"| {method} | {qtype} | {n} | {sum(x[2] for x in items)} | {cells} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""What `plan_leads_answers` changes on saved traces: the reading's likeliest plan leading DoG's answers.

    .venv/bin/python benchmarks/plan_answer.py runs/eval/base/dbpedia/main [runs/eval/base2/geography/main ...]

No model: reads the results and traces of evaluation runs (`benchmarks/multidomain.py` or `kgqa_core eval`) made
with the switch off or on, and applies the workbench's own rule (`kgqa_core.answers.plan_lead.lead_by_plan`) to
each DoG trace's answers, chain and reading plans (`extra.reading.plans`), at ``--margin`` (the default's unless
given; a trace the rule already reordered is counted as it was before, from its ``extra.plan_lead``).  As the rule
only reorders the answers after the chain is written, this is what a run with it would answer.  Printed: every
question it changes, gained or lost against the gold answers, and the totals per run.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kgqa_core.answers.plan_lead import PLAN_MARGIN, lead_by_plan  # noqa: E402
from kgqa_core.graph.readings import REVERSE_SUFFIX as REVERSE  # noqa: E402
from kgqa_core.graph.triplet import Triplet  # noqa: E402
from kgqa_core.trace.schema import Answer  # noqa: E402


def plan_of(text: str, confidence: float, topics: list[str]) -> SimpleNamespace | None:
    """A trace's plan ("Topic -> r -> s (reverse)") as the rule reads plans: topic, hops, confidence, text."""
    topic = next((t for t in sorted(topics, key=len, reverse=True) if text.startswith(t + " -> ")), None)
    if topic is None:
        return None
    hops = []
    for part in text[len(topic) + 4:].split(" -> "):
        backwards = part.endswith(REVERSE)
        hops.append(SimpleNamespace(relation=part[: -len(REVERSE)] if backwards else part, forward=not backwards))
    return SimpleNamespace(topic=topic, hops=tuple(hops), confidence=confidence, text=text)


def replay(trace: dict, margin: float) -> tuple[list[str], list[str]] | None:
    """(the answers before the rule, after it), or None when it changes nothing."""
    plans = (trace.get("extra", {}).get("reading") or {}).get("plans") or []
    topics = trace.get("topic_entities") or []
    if not trace.get("chains") or len(plans) < 2 or not trace.get("answers"):
        return None
    answers = [Answer(**{k: v for k, v in a.items() if k in Answer.__dataclass_fields__}) for a in trace["answers"]]
    done = trace.get("extra", {}).get("plan_lead")
    before = answers
    if done:  # the run applied it: what the model's order was is the answers after the moved ones
        moved = set(done["moved"])
        before = [a for a in answers if (a.entity or a.text) not in moved] + \
                 [a for a in answers if (a.entity or a.text) in moved]
    chain = [Triplet(i, t["head"], t["relation"], t["tail"]) for i, t in enumerate(trace["chains"][0])]
    read = [p for p in (plan_of(p["text"], p["confidence"], topics) for p in plans) if p is not None]
    after, lead = lead_by_plan(before, chain, read, margin)
    if lead is None:
        return None
    return [a.text for a in before], [a.text for a in after]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", type=Path, nargs="+", help="run folders holding results.jsonl and their traces")
    ap.add_argument("--margin", type=float, default=PLAN_MARGIN, help="how much likelier the plan must be")
    args = ap.parse_args(argv)
    total = [0, 0, 0, 0]
    for run in args.runs:
        n = gained = lost = changed = 0
        for line in (run / "results.jsonl").read_text(encoding="utf-8").splitlines():
            result = json.loads(line)
            if result.get("method") != "dog":
                continue
            n += 1
            trace = json.loads((run / result["trace"]).read_text(encoding="utf-8"))
            moved = replay(trace, args.margin)
            if moved is None:
                continue
            changed += 1
            gold = {g.lower() for g in result["gold"]}
            new, old = moved[1][0].lower() in gold, moved[0][0].lower() in gold
            gained += new and not old
            lost += old and not new
            verdict = "gained" if new and not old else "lost" if old and not new else "same"
            print(f"{verdict}: {result['question'][:90]!r}: {moved[0][0]!r} -> {moved[1][0]!r}")
        print(f"{run}: {n} DoG questions, changed {changed}, gained {gained}, lost {lost}")
        total = [a + b for a, b in zip(total, (n, changed, gained, lost))]
    if len(args.runs) > 1:
        print(f"all: {total[0]} DoG questions, changed {total[1]}, gained {total[2]}, lost {total[3]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""What `meet_topics` with the chain's entities changes on saved traces: the entity meeting every topic leads.

    .venv/bin/python benchmarks/meet_chain.py runs/eval/meet68/music=datasets/madeup/music_dev.jsonl \\
        [runs/eval/meet68/geo2=datasets/multidomain/geography_two_entities.jsonl ...]

No model: reads the results and traces of DoG evaluation runs (``kgqa_core eval``) made before the rule read the
chain (each RUN=DATASET pair names the run folder and the dataset whose graph its questions were asked over), and
applies `kgqa_core.answers.meeting.meet_topics` with the best chain's entities to each trace's recorded answers
(after the old rule).  Where no answer meets every one of the question's entities and an entity the chain wrote
does, that entity leads; the rule changes nothing else a chain decodes, so the first answer here is what a run
with it answers first (the graph-added answers it leaves out may differ from a real run's; Hits@1 does not).
Printed: every question it changes, gained or lost against the gold answers, and the totals per run.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kgqa_core.answers.meeting import meet_topics  # noqa: E402
from kgqa_core.eval.dataset import load_dataset  # noqa: E402
from kgqa_core.trace.schema import Answer  # noqa: E402


def replay(trace: dict, graph) -> tuple[str, str] | None:
    """(the first answer recorded, the first answer with the chain's entities read), or None when it is the same."""
    topics = trace.get("topic_entities") or []
    if len(topics) < 2 or not trace.get("chains"):
        return None
    answers = [Answer(**{k: v for k, v in a.items() if k in Answer.__dataclass_fields__})
               for a in trace.get("answers") or []]
    chain = [e for t in trace["chains"][0] for e in (t["head"], t["tail"])]
    met = meet_topics(answers, graph, topics, chain_entities=chain)
    if met is None or not met.from_chain:
        return None
    before = answers[0].text if answers else ""
    return before, met.answers[0].text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", help="RUN=DATASET: a run folder and the dataset its questions came from")
    args = ap.parse_args(argv)
    total = [0, 0, 0, 0, 0, 0]
    for pair in args.runs:
        run, _, dataset = pair.partition("=")
        graphs = {q.id: q for q in load_dataset(Path(dataset))}
        n = changed = gained = lost = right_before = 0
        for line in (Path(run) / "results.jsonl").read_text(encoding="utf-8").splitlines():
            result = json.loads(line)
            if result.get("method") != "dog" or len(result.get("topic_entities") or []) < 2:
                continue
            n += 1
            gold = {g.casefold() for g in result["gold"]}
            first = (result.get("answers") or [""])[0]
            right_before += first.casefold() in gold
            trace = json.loads((Path(run) / result["trace"]).read_text(encoding="utf-8"))
            moved = replay(trace, graphs[result["id"]].graph())
            if moved is None:
                continue
            changed += 1
            old, new = moved[0].casefold() in gold, moved[1].casefold() in gold
            gained += new and not old
            lost += old and not new
            verdict = "gained" if new and not old else "lost" if old and not new else "same"
            print(f"{verdict}: {result['question'][:90]!r}: {moved[0]!r} -> {moved[1]!r}")
        print(f"{run}: {n} DoG questions naming two entities or more, first answers right {right_before} -> "
              f"{right_before + gained - lost}; changed {changed}, gained {gained}, lost {lost}")
        total = [a + b for a, b in zip(total, (n, right_before, changed, gained, lost, right_before + gained - lost))]
    if len(args.runs) > 1:
        print(f"all: {total[0]} questions, first answers right {total[1]} -> {total[5]}; changed {total[2]}, "
              f"gained {total[3]}, lost {total[4]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

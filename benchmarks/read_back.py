"""The question read back from its likeliest walks (`reading_read_back`): on the questions it can change, in one run.

The paths reader weighs an unsure reading's likeliest walks (a one-entity question read under 90% sure) also by
how likely the model finds the question's own words after each walk (`readers.read_back`, the noisy channel).
Only such readings can change, so this asks the DoG questions of earlier evaluations (``--from``) whose recorded
reading was that unsure, with one question entity and at least two walks, with the defaults and with
``reading_read_back=0``, one after the other in this one process, defaults first:

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/read_back.py --from runs/eval/base/dbpedia/main \\
        --out runs/eval/read-back/dbpedia

Prints one row per question (domain, type, the recorded reading's confidence and plan depth, Hits@1 and F1 with
the read-back / without) and the totals.  ``--shard K/N`` asks every N-th question from the K-th (two processes,
one per core).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from kgqa_core.reading.readers import READ_BACK_UNDER  # noqa: E402
from reask import add_common_args, ask_and_print, dog_readings, eval_folders, reading_columns  # noqa: E402

VARIANTS = {"read-back": {}, "no-read-back": {"reading_read_back": 0.0}}


def unsure_questions(folders: list[Path]) -> list[dict]:
    """The DoG questions of `folders` with one entity whose recorded reading had two or more walks and was unsure."""
    def keep(reading: dict, trace: dict) -> dict | None:
        confidence = reading.get("confidence")
        if (confidence is None or confidence >= READ_BACK_UNDER or len(reading["plans"]) < 2
                or len(trace.get("topic_entities") or []) != 1):
            return None
        return reading_columns(reading)

    return dog_readings(folders, keep)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(ap)
    ap.add_argument("--shard", default="1/1", help="K/N: every N-th question from the K-th")
    ap.add_argument("--count", action="store_true", help="only say how many questions would be asked")
    args = ap.parse_args(argv)
    k, n = (int(x) for x in args.shard.split("/"))
    found = unsure_questions(eval_folders(args.folders))[k - 1::n]
    if args.count or not found:
        print(f"{len(found)} DoG question(s) with an unsure reading of one entity")
        return 0
    ask_and_print(found, VARIANTS, args.model, args.out,
                  f"{args.model}, readings under {READ_BACK_UNDER:.0%} sure, {' / '.join(VARIANTS)}, "
                  f"{len(found)} question(s)",
                  [("reading", lambda c: f"{c['confidence']:.2f}"), ("plan hops", lambda c: str(c["depth"]))])
    print(cost_line(args.out, list(VARIANTS)))
    return 0


def cost_line(out: Path, variants: list[str]) -> str:
    """Medians per variant over its questions: prompt tokens read beyond the cached prefix, and seconds."""
    import json
    import statistics

    from kgqa_core.eval.runner import load_results

    parts = []
    for variant in variants:
        read, seconds = [], []
        for folder in sorted((out / variant).glob("*")):
            for r in load_results(folder):
                path = folder / str(r.get("trace") or "")
                costs = json.loads(path.read_text()).get("costs") if r.get("trace") and path.is_file() else None
                if costs:
                    read.append(costs.get("prompt_tokens_read", 0))
                seconds.append((r.get("metrics") or {}).get("seconds", 0.0))
        if seconds:
            parts.append(f"{variant}: {len(seconds)} questions, median {statistics.median(read or [0]):.0f} prompt "
                         f"tokens read, {statistics.median(seconds):.1f} s")
    return "; ".join(parts)


if __name__ == "__main__":
    raise SystemExit(main())

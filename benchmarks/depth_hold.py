"""Whether DoG should hold a fairly sure reading's chain at the plan's depth: on the questions read that sure, in one run.

A reading at least ``reading_sure_at`` (0.6) sure holds DoG's chain at its plan's depth: ``stay_at_depth`` offers
nothing further out and ``conclude_at_depth`` writes the answer line there.  A reading 0.6-0.9 sure is still wrong
about the depth now and then (a 1-hop plan for a 2-hop question, its own extension the runner-up), and then the
hold keeps the chain from the hop that answers.  This asks the DoG questions of earlier evaluations (``--from``)
whose reading was in ``--band`` (read from their traces: the reading does not depend on these switches) with the
defaults and with the hold off (``stay_at_depth`` and ``conclude_at_depth`` false), one after the other in this
one process, defaults first:

    OMP_NUM_THREADS=2 .venv/bin/python benchmarks/depth_hold.py --from 'runs/eval/md34/*/main' \\
        --from runs/eval/wk34 --band 0.6,0.9 --out runs/eval/depth-hold

Prints one row per question (domain, type, the reading's confidence and plan depth, Hits@1 and F1 for the
defaults / the hold off) and the totals.  ``--skip`` leaves out the questions of earlier runs' folders (a
second run on new questions only: ``--skip 'runs/eval/depth-hold/hold/*'``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from kgqa_core.eval.runner import load_results  # noqa: E402
from reask import add_common_args, ask_and_print, dog_readings, eval_folders, reading_columns  # noqa: E402

VARIANTS = {"hold": {}, "no-hold": {"stay_at_depth": False, "conclude_at_depth": False}}


def band_questions(folders: list[Path], low: float, high: float) -> list[dict]:
    """The DoG questions of `folders` whose reading's confidence is in [low, high)."""
    def keep(reading: dict, trace: dict) -> dict | None:
        confidence = reading.get("confidence")
        if confidence is None or not low <= confidence < high:
            return None
        return reading_columns(reading)

    return dog_readings(folders, keep)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(ap)
    ap.add_argument("--band", default="0.6,0.9", help="LOW,HIGH: the readings' confidences asked again")
    ap.add_argument("--skip", action="append", default=[],
                    help="eval folders (globs) whose questions are left out: those an earlier run of this script asked")
    args = ap.parse_args(argv)
    low, high = (float(x) for x in args.band.split(","))
    asked = {r["id"] for f in eval_folders(args.skip) for r in load_results(f)}
    found = [c for c in band_questions(eval_folders(args.folders), low, high) if c["id"] not in asked]
    if not found:
        print(f"no DoG question of those folders had a reading {low}-{high} sure")
        return 0
    ask_and_print(found, VARIANTS, args.model, args.out,
                  f"{args.model}, readings {low}-{high} sure, {' / '.join(VARIANTS)}, {len(found)} question(s)",
                  [("reading", lambda c: f"{c['confidence']:.2f}"), ("plan hops", lambda c: str(c["depth"]))])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

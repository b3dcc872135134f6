"""DoG's ``unsure_depth`` against none, on the questions it can change, in one run.

A reading under DoG's guidance bar guides nothing of the chain's depth: the chain may list one hop's entities
and answer with one of them, or the model's own words.  ``unsure_depth`` (a share of the reading's probability)
takes such a chain back and walks it on when the reading's likeliest plans holding that share all walk at least
N hops (N of 2 or more).  Only those questions can change, so only they are asked again: the DoG traces of
earlier evaluations (``--from``, the per-domain and whole-KB runs) say which readings were unsure and what their
plans were (the reading does not depend on the switch).  Each question is asked with the switch off and on in
this one process, off first, so the two variants see the same model and the same cached prefixes:

    OMP_NUM_THREADS=2 .venv/bin/python benchmarks/unsure_depth.py --from 'runs/eval/md33/*/main' \\
        --from runs/eval/wk33 --share 0.8 --out runs/eval/unsure-depth

Prints one row per question (its domain, type, reading, the depth the plans agree on, Hits@1 and F1 off / on)
and the totals.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from kgqa_core.decoding.step_filters import likely_depth  # noqa: E402
from kgqa_core.methods.dog import DOG_SURE_AT  # noqa: E402
from reask import add_common_args, ask_and_print, dog_readings, eval_folders, plan_hops  # noqa: E402


def candidates(folders: list[Path], share: float) -> list[dict]:
    """The DoG questions of `folders` whose reading was under the bar and whose likeliest plans agree on 2+ hops."""
    def keep(reading: dict, trace: dict) -> dict | None:
        bar = (trace.get("parameters") or {}).get("reading_sure_at", DOG_SURE_AT)
        if reading.get("confidence", 1.0) >= bar:
            return None
        plans = [SimpleNamespace(hops=range(plan_hops(p["text"])), confidence=p["confidence"])
                 for p in reading["plans"]]
        depth, _taken, _held = likely_depth(plans, share)
        return {"confidence": reading["confidence"], "depth": depth} if depth >= 2 else None

    return dog_readings(folders, keep)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(ap)
    ap.add_argument("--share", type=float, default=0.8, help="the unsure_depth value asked against 0")
    args = ap.parse_args(argv)
    found = candidates(eval_folders(args.folders), args.share)
    if not found:
        print("no DoG question of those folders had an unsure reading whose likely plans agree on 2+ hops")
        return 0
    variants = {"off": {"unsure_depth": 0.0}, "on": {"unsure_depth": args.share}}
    ask_and_print(found, variants, args.model, args.out,
                  f"{args.model}, unsure_depth {args.share} against 0, {len(found)} question(s)",
                  [("reading", lambda c: f"{c['confidence']:.2f}"), ("depth", lambda c: str(c["depth"]))])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

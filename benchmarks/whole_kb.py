"""The whole-KB dev benchmark: DoG, Direct, READS, RoK and LPKG over the full MetaQA KB, per hop.

Run from the repository root (resumable; shard over cores as `eval` does):

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/whole_kb.py --model smollm2-135m --per-type 4 \\
        --out runs/eval/whole-kb-smollm2 [--methods dog,direct,reads,rok,lpkg] [--shard K/N]

Questions: datasets/metaqa_full_kb/metaqa_dev_full_kb_90.jsonl (30 per hop,
each asked over the 133,582-triplet KB, loaded once).  This is `run_eval`
with that dataset; it then prints, per method and hop: n, Hits@1, F1 (macro,
READS App. C), the ill-triplet rate (cited triplets absent from the graph or
not connected to the chain, DoG §2.2), mean and p50 seconds per question,
and model calls per question.  A run over a subset (--per-type) can be
extended later with a larger --per-type on the same --out.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kgqa_core.eval.runner import run_eval  # noqa: E402

DATA = ROOT / "datasets" / "metaqa_full_kb" / "metaqa_dev_full_kb_90.jsonl"


def _shard(text: str | None) -> tuple[int, int] | None:
    if not text:
        return None
    k, n = (int(x) for x in text.split("/"))
    if not 1 <= k <= n:
        raise SystemExit(f"--shard must be K/N with 1 <= K <= N, got {text}")
    return k, n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="qwen2.5-coder-1.5b")
    ap.add_argument("--methods", default="dog,direct,reads,rok,lpkg")
    ap.add_argument("--per-type", type=int, default=20)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--shard", default=None)
    ap.add_argument("--param", action="append", default=[], help="KEY=VALUE for every method")
    args = ap.parse_args(argv)
    params = dict(p.split("=", 1) for p in args.param)
    summary = run_eval(DATA, [m for m in args.methods.split(",") if m], args.model, args.out,
                       params=params or None, progress=False, per_type=args.per_type, shard=_shard(args.shard))
    print(f"{summary.model} on {DATA.name}: {summary.ran} run now, {summary.skipped} recorded before")
    print("| method | hop | n | Hits@1 | F1 | ill% | s/question mean | p50 | calls/question |")
    print("|---|---|---|---|---|---|---|---|---|")
    for g in sorted(summary.by_type or summary.overall, key=lambda g: (g.method, g.type)):
        ill = f"{100 * g.ill_triplet_rate.value:.1f}" if g.ill_triplet_rate else "-"
        hits = f"{g.hits1.value:.3f}" if g.hits1 else "-"
        f1 = f"{g.f1.value:.3f}" if g.f1 else "-"
        print(f"| {g.method} | {g.type} | {g.n} | {hits} | {f1} | {ill} | {g.seconds_mean:.1f} | "
              f"{g.seconds_p50:.1f} | {g.model_calls_mean:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

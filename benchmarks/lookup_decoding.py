"""What a forward pass over several tokens costs against a pass over one, per backend.

Prompt lookup decoding (`kgqa_core.models.lookup`) feeds guessed tokens with
each decoded one and keeps those the model agrees with; it pays only where a
pass over k tokens costs much less than k passes over one.  This prints, in
one run, each backend's milliseconds per pass for 1, 2, 4 and 7 tokens after
a 300-token prompt and the ratio to a one-token pass, which is what each
backend's ``lookup_draft`` default is chosen from.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/lookup_decoding.py [--model qwen2.5-coder-1.5b] \
        [--threads 1] [--backends llama.cpp,transformers] [--repeats 6]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SIZES = (1, 2, 4, 7)


def _child(backend: str, model_name: str, threads: int, repeats: int) -> dict:
    sys.path.insert(0, str(ROOT))
    os.environ["KGQA_THREADS"] = str(threads)
    import torch

    torch.set_num_threads(threads)
    from kgqa_core.models import load_model

    model = load_model(model_name, backend=backend)
    state = model.prefill(model.encode("Tell me a long story about a film director who " * 30))
    filler = model.encode(" the")[0]
    out = {}
    for n in SIZES:
        started = time.perf_counter()
        for _ in range(repeats):
            base = len(state.ids)
            rows = model.extend(state, [int(torch.argmax(state.logits))] + [filler] * (n - 1))
            model.rewind(state, base + 1, rows[0])
        out[n] = (time.perf_counter() - started) / repeats * 1000
    return {"backend": backend, "device": model.device_label, "ms": out, "default_draft": model.lookup_draft}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="qwen2.5-coder-1.5b")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--backends", default="llama.cpp,transformers")
    ap.add_argument("--repeats", type=int, default=6)
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(_child(args.child, args.model, args.threads, args.repeats)))
        return 0
    print(f"| backend | {' | '.join(f'{n} token(s) ms' for n in SIZES)} | 7 tokens / 1 token | lookup_draft |")
    print("|---|" + "---|" * (len(SIZES) + 2))
    for backend in [b for b in args.backends.split(",") if b]:
        done = subprocess.run(
            [sys.executable, __file__, "--child", backend, "--model", args.model, "--threads", str(args.threads),
             "--repeats", str(args.repeats)],
            capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": str(args.threads)},
        )
        if done.returncode != 0:
            print(f"| {backend} | failed: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else '?'} |")
            continue
        res = json.loads(done.stdout.strip().splitlines()[-1])
        ms = {int(k): v for k, v in res["ms"].items()}
        cells = " | ".join(f"{ms[n]:.0f}" for n in SIZES)
        print(f"| {backend} ({res['device']}) | {cells} | {ms[7] / ms[1]:.2f} | {res['default_draft']} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

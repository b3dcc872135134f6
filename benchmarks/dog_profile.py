"""Where a DoG answer's time goes: cProfile over the 2-hop questions `benchmarks/backends.py` measures.

    .venv/bin/python benchmarks/dog_profile.py [--backend llama.cpp] [--threads 2] [--n2 3]

One untimed question first builds the prompt prefix cache; then the first
`--n2` 2-hop sample questions run under cProfile (beam 1, 40 prompt
triplets, as in the backends table) and the largest cumulative entries are
printed: the model backend's decode calls against the host-side work (trie,
G_q, step offers, prompt pruning).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="qwen2.5-coder-1.5b")
    ap.add_argument("--backend", default="llama.cpp")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--n2", type=int, default=3)
    ap.add_argument("--top", type=int, default=30)
    args = ap.parse_args(argv)
    os.environ["KGQA_THREADS"] = str(args.threads)
    from backends import _questions  # the same sample questions as the backends table

    from kgqa_core.methods.base import MethodRequest, run_method
    from kgqa_core.models import load_model

    model = load_model(args.model, backend=args.backend)

    def run(q):
        req = MethodRequest(graph=q.graph(), question=q.question, model=model, topic_entities=list(q.topic_entities),
                            params={"max_prompt_triplets": 40, "beam_size": 1})
        t0 = time.perf_counter()
        trace = run_method("dog", req)
        return time.perf_counter() - t0, trace

    run(_questions(1, 0, skip=15)[0])  # warm the prompt prefix cache, as backends.py does
    profile = cProfile.Profile()
    total = 0.0
    profile.enable()
    for q in _questions(0, args.n2):
        seconds, trace = run(q)
        total += seconds
        print(f"{q.id}: {seconds:.1f} s, {trace.forward_passes} forward passes, {trace.tokens_in} tokens in, "
              f"{trace.tokens_out} out")
    profile.disable()
    print(f"total {total:.1f} s")
    pstats.Stats(profile).sort_stats("cumulative").print_stats(args.top)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

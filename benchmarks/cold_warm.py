"""Does an in-process llama.cpp answer depend on what ran before it? Cold and warm chains, and why they differ.

    KGQA_PROMPT_CACHE=0 OMP_NUM_THREADS=1 .venv/bin/python benchmarks/cold_warm.py --n 20

``--threads N``: llama.cpp's threads in process (``KGQA_THREADS``) and on the
servers (``--n_threads``); default 1.  llama.cpp's numbers move with it.

*Warm*: the first --n questions of --dataset asked one after another in one
process, as a session or an evaluation asks them (each prompt may reuse the
cells of prompts read before it).  *Cold*: each question asked again with the
prefix cache emptied first, as by a new process.  Printed: how many of the
questions' chains (the model's whole text) and first answers differ.

Then two probes of one prompt (no method), each against the same prompt read
into an empty cache (the largest change of a top-20 log-probability of its
next token, in nats):

* *cut*: the prompt read after a cached prefix of it, the cut at each of a
  few positions: llama.cpp's numbers depend on the batches a prompt is read
  in (a batch of under 64 tokens is computed another way), so a cut that
  leaves a short batch where a cold read has a long one moves them;
* *layout*: the prompt read whole after an unrelated prompt that stays in
  the cache: its cells sit elsewhere in the one KV cache all sequences
  share, with another sequence's cells before them.

Run with ``KGQA_PROMPT_CACHE=0`` so no prefix saved on disk by an earlier run
takes part.

``--server``: the same questions over a loopback model server started with
``python -m kgqa_core.models.llama_server`` (the same 135M file, --threads):
warm, one after another on one server; cold, each on a server started for it;
and each server chain against the in-process warm one.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kgqa_core.eval.dataset import load_dataset  # noqa: E402
from kgqa_core.methods.base import MethodRequest, run_method  # noqa: E402
from kgqa_core.models import load_model  # noqa: E402
from kgqa_core.reading import guidance  # noqa: E402

sys.path.insert(0, str(ROOT / "tests" / "models"))


def _ask(model, q, method: str) -> tuple[str, str]:
    guidance.clear_readings()  # each run reads its question itself (a recalled reading makes no model call)
    trace = run_method(method, MethodRequest(graph=q.graph(), question=q.question, model=model,
                                             topic_entities=q.topic_entities))
    return trace.raw_output, (trace.answers[0].text if trace.answers else "")


def _logprobs(state):
    return state.logits.log_softmax(-1).clone()


def probes(model) -> tuple[list[tuple[int, float]], float]:
    """(cut position, change) for a few cuts, and the change after an unrelated prompt (see the module docstring)."""
    text = "Examples: " + " ".join(f"< film{i} -> directed_by -> person{i} > < film{i} -> release_year -> {1990 + i} >"
                                   for i in range(40))
    ids = model.encode(text)[:700]
    other = model.encode("Something else entirely. " * 60)[:300]
    model.clear_prefix_cache()
    s = model.prefill(ids)
    base = _logprobs(s)
    model.release(s)
    top = base.topk(20).indices

    def change(lp) -> float:
        return round(float((lp[top] - base[top]).abs().max()), 4)

    cuts = []
    for cut in (128, 200, 256, 257, 300, 512, 513):
        model.clear_prefix_cache()
        model.release(model.prefill(ids[:cut]))  # cached: the next read reuses `cut` tokens of it
        s = model.prefill(ids)
        cuts.append((cut, change(_logprobs(s))))
        model.release(s)
    model.clear_prefix_cache()
    o = model.prefill(other)
    s = model.prefill(ids)
    layout = change(_logprobs(s))
    model.release(s)
    model.release(o)
    model.clear_prefix_cache()
    return cuts, layout


def server_runs(args, questions, local) -> None:
    """Warm (one server, question after question) and cold (a server started for each question) over HTTP."""
    from server_fixtures import LlamaServer

    from kgqa_core.models.manager import packaged_gguf
    from kgqa_core.models.registry import PACKAGED_MODELS
    from kgqa_core.models.server_model import connect_server

    gguf = packaged_gguf(PACKAGED_MODELS[args.model])
    log = Path("/tmp/kgqa-cold-warm-server.log")

    def on_new_server(qs):
        server = LlamaServer(gguf, log, threads=args.threads)
        try:
            remote = connect_server(server.url)
            return [_ask(remote, q, args.method) for q in qs]
        finally:
            server.stop()

    warm = on_new_server(questions)
    cold = [on_new_server([q])[0] for q in questions]
    chains = sum(w[0] != c[0] for w, c in zip(warm, cold))
    firsts = sum(w[1] != c[1] for w, c in zip(warm, cold))
    print(f"server: chains differ cold vs warm on {chains}, first answers on {firsts}")
    chains = sum(w[0] != c[0] for w, c in zip(warm, local))
    firsts = sum(w[1] != c[1] for w, c in zip(warm, local))
    print(f"server warm vs in process warm: chains differ on {chains}, first answers on {firsts}")
    for q, w, c in zip(questions, warm, local):
        if w[0] != c[0]:
            print(f"  {q.question!r}: server {w[1]!r}, in process {c[1]!r}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--dataset", type=Path, default=ROOT / "datasets/metaqa_sample/metaqa_dev_50.jsonl")
    ap.add_argument("--method", default="dog")
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--server", action="store_true", help="also over a loopback model server, cold and warm")
    ap.add_argument("--threads", type=int, default=1, help="llama.cpp threads, in process and on the servers")
    args = ap.parse_args(argv)
    if args.threads < 1:
        ap.error("--threads: 1 or more")
    os.environ["KGQA_THREADS"] = str(args.threads)  # the in-process model's (read when it loads)
    model = load_model(args.model, backend="llama.cpp")
    if not hasattr(model, "clear_prefix_cache"):
        print(f"{args.model} did not load on llama.cpp", file=sys.stderr)
        return 2
    questions = list(load_dataset(args.dataset))[: args.n]
    warm = [_ask(model, q, args.method) for q in questions]
    cold = []
    for q in questions:
        model.clear_prefix_cache()
        cold.append(_ask(model, q, args.method))
    chains = sum(w[0] != c[0] for w, c in zip(warm, cold))
    firsts = sum(w[1] != c[1] for w, c in zip(warm, cold))
    print(f"{args.method}, {args.model}, {len(questions)} questions: chains differ cold vs warm on {chains}, "
          f"first answers on {firsts}")
    for q, w, c in zip(questions, warm, cold):
        if w[1] != c[1]:
            print(f"  {q.question!r}: warm {w[1]!r}, cold {c[1]!r}")
    if args.server:
        server_runs(args, questions, warm)
    cuts, layout = probes(model)
    print("one prompt of 700 tokens, the largest change of a top-20 next-token log-prob (nats) against a read into an "
          "empty cache:")
    print("  read after a cached prefix cut at " + ", ".join(f"{k}: {v}" for k, v in cuts))
    print(f"  read whole after an unrelated prompt of 300 tokens kept in the cache: {layout}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

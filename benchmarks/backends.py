"""llama.cpp vs transformers on the same questions, in one run: speed, load time, memory, answers.

Run from the repository root (the 1.5B model must be installed):

    .venv/bin/python benchmarks/backends.py [--model qwen2.5-coder-1.5b] [--n1 10] [--n2 10]
        [--methods direct,dog1,dog3,reads] [--threads 1] [--max-prompt-triplets 120]

Each backend runs in its own subprocess (so peak RSS and load time are its
own): the process loads the model (the load timed is a load after the
first: converted copies and tokenizers already cached), measures prompt
reading and greedy decoding speed on the first question's DoG prompt, warms
each method's prompt-prefix cache with one untimed question (the examples'
prefix cached for both backends, as the targets ask), then runs every
method on the first ``--n1`` 1-hop and ``--n2`` 2-hop questions of
datasets/metaqa_sample.  The parent prints per method the median and mean
seconds per question for each backend, their ratio, Hits@1 and F1, and
whether both backends gave the same answers.

Targets (issue 16): DoG wall time per question >= 3x lower on llama.cpp;
model load <= 3 s after the first; peak RSS <= 2.5 GB.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DATASET = ROOT / "datasets" / "metaqa_sample" / "metaqa_dev_50.jsonl"
METHODS = {  # label -> (method, params)
    "direct": ("direct", {}),
    "dog1": ("dog", {"beam_size": 1}),
    "dog3": ("dog", {"beam_size": 3}),
    "reads": ("reads", {}),
    "cot": ("cot", {}),
}


def _questions(n1: int, n2: int, skip: int = 0):
    from kgqa_core.eval.dataset import load_dataset

    qs = load_dataset(DATASET).questions
    one = [q for q in qs if q.type == "1hop"][skip : skip + n1]
    two = [q for q in qs if q.type == "2hop"][skip : skip + n2]
    return one + two


def worker(args: argparse.Namespace) -> dict:
    import torch

    torch.set_num_threads(args.threads)
    os.environ["KGQA_THREADS"] = str(args.threads)
    from kgqa_core.eval.metrics import predicted_answer_forms, score_answers
    from kgqa_core.methods.base import MethodRequest, run_method
    from kgqa_core.models import load_model

    t0 = time.perf_counter()
    model = load_model(args.model, backend=args.backend)
    load_seconds = time.perf_counter() - t0
    out: dict = {"backend": model.backend, "device": model.device_label, "load_seconds": load_seconds}

    warm = _questions(1, 0, skip=max(args.n1, 10) + 5)[0]  # a question outside the measured set
    questions = _questions(args.n1, args.n2)
    base = {"max_prompt_triplets": args.max_prompt_triplets}

    # prompt reading and decoding speed on the first question's DoG prompt (nothing cached)
    from kgqa_core.decoding.context import prepare

    req = MethodRequest(graph=questions[0].graph(), question=questions[0].question, model=model,
                        topic_entities=list(questions[0].topic_entities), params=dict(base))
    from kgqa_core.methods.base import method_spec
    from kgqa_core.parameters import parse_params

    ctx = prepare(req, "dog", parse_params(method_spec("dog"), dict(base)))
    ids = model.encode(ctx.prompt.text)
    model.clear_prefix_cache()
    t, c = time.perf_counter(), time.process_time()
    state = model.prefill(ids)
    prefill, prefill_cpu = time.perf_counter() - t, time.process_time() - c
    n_dec = 32
    t, c = time.perf_counter(), time.process_time()
    for _ in range(n_dec):
        model.step(state, [int(torch.argmax(state.logits))])
    decode, decode_cpu = time.perf_counter() - t, time.process_time() - c
    model.release(state)
    out["prompt_tokens"] = len(ids)
    out["prefill_tok_s"] = len(ids) / prefill
    out["decode_tok_s"] = n_dec / decode
    out["prefill_tok_cpu_s"] = len(ids) / prefill_cpu  # per CPU-second: what an idle machine would give
    out["decode_tok_cpu_s"] = n_dec / decode_cpu

    runs: dict[str, list[dict]] = {}
    for label in args.methods:
        method, params = METHODS[label]
        p = {**base, **params} if method in ("dog", "direct", "cot") else dict(params)
        run_method(method, MethodRequest(graph=warm.graph(), question=warm.question, model=model,
                                         topic_entities=list(warm.topic_entities), params=dict(p)))
        rows = []
        for q in questions:
            t, c = time.perf_counter(), time.process_time()
            trace = run_method(method, MethodRequest(graph=q.graph(), question=q.question, model=model,
                                                     topic_entities=list(q.topic_entities), params=dict(p)))
            wall, cpu = time.perf_counter() - t, time.process_time() - c
            s = score_answers(predicted_answer_forms(trace), q.answers)
            rows.append({"id": q.id, "type": q.type, "seconds": wall, "cpu_seconds": cpu, "hits1": s.hits1, "f1": s.f1,
                         "answers": trace.answer_texts, "error": trace.error,
                         "prompt_tokens_cached": trace.extra.get("prompt_tokens_cached", 0)})
            print(f"[{model.backend}] {label} {q.id}: {wall:.1f}s {trace.answer_texts[:3]}", file=sys.stderr, flush=True)
        runs[label] = rows
    out["runs"] = runs
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def _run_backend(backend: str, args: argparse.Namespace) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads), KGQA_THREADS=str(args.threads))
    # first load: creates converted copies / tokenizer caches, so the timed load is "after the first"
    subprocess.run([sys.executable, "-c", f"from kgqa_core.models import load_model; load_model({args.model!r}, backend={backend!r})"],
                   cwd=ROOT, env=env, check=True, capture_output=True)
    with tempfile.NamedTemporaryFile("r", suffix=".json") as f:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", backend, "--json-out", f.name,
               "--model", args.model, "--n1", str(args.n1), "--n2", str(args.n2), "--threads", str(args.threads),
               "--methods", ",".join(args.methods), "--max-prompt-triplets", str(args.max_prompt_triplets)]
        subprocess.run(cmd, cwd=ROOT, env=env, check=True)
        return json.loads(Path(f.name).read_text())


def _report(results: dict[str, dict], args: argparse.Namespace) -> None:
    backends = list(results)
    print(f"\nmodel {args.model}, {args.n1} 1-hop + {args.n2} 2-hop questions of {DATASET.name}, "
          f"{args.threads} thread(s) per backend, max_prompt_triplets {args.max_prompt_triplets}, "
          f"load average {os.getloadavg()[0]:.2f}\n")
    print("| backend | load (s) | peak RSS (MB) | prompt tokens | prefill tok/s (per CPU-s) | decode tok/s (per CPU-s) |")
    print("|---|---|---|---|---|---|")
    for b in backends:
        r = results[b]
        print(f"| {b} ({r['device']}) | {r['load_seconds']:.2f} | {r['peak_rss_mb']:.0f} | {r['prompt_tokens']} | "
              f"{r['prefill_tok_s']:.1f} ({r['prefill_tok_cpu_s']:.1f}) | {r['decode_tok_s']:.1f} ({r['decode_tok_cpu_s']:.1f}) |")
    if not args.methods:
        return
    print("\n| method | type | " + " | ".join(f"{b} p50 s | {b} mean s (CPU s) | {b} Hits@1 | {b} F1" for b in backends)
          + " | speed-up (mean wall / CPU) | same answers |")
    print("|---|---|" + "---|" * (4 * len(backends) + 2))
    for label in args.methods:
        for typ in ("1hop", "2hop", "all"):
            cells, means, cpus, answers = [], [], [], []
            for b in backends:
                rows = [x for x in results[b]["runs"][label] if typ == "all" or x["type"] == typ]
                if not rows:
                    break
                secs = [x["seconds"] for x in rows]
                means.append(statistics.mean(secs))
                cpus.append(statistics.mean(x["cpu_seconds"] for x in rows))
                answers.append([x["answers"] for x in rows])
                cells.append(f"{statistics.median(secs):.1f} | {means[-1]:.1f} ({cpus[-1]:.1f}) | "
                             f"{statistics.mean(x['hits1'] for x in rows):.2f} | {statistics.mean(x['f1'] for x in rows):.2f}")
            if len(cells) != len(backends):
                continue
            ratio = f"{means[1] / means[0]:.2f}x / {cpus[1] / cpus[0]:.2f}x" if len(means) == 2 and means[0] and cpus[0] else "-"
            same = f"{sum(a == b for a, b in zip(*answers))}/{len(answers[0])}" if len(answers) == 2 else "-"
            print(f"| {label} | {typ} | " + " | ".join(cells) + f" | {ratio} | {same} |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="qwen2.5-coder-1.5b")
    ap.add_argument("--n1", type=int, default=10)
    ap.add_argument("--n2", type=int, default=10)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--methods", default="direct,dog1,dog3,reads")
    ap.add_argument("--backends", default="llama.cpp,transformers")
    ap.add_argument("--max-prompt-triplets", type=int, default=120)
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--json-out", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    unknown = [m for m in args.methods if m not in METHODS]
    if unknown:
        ap.error(f"unknown method label {unknown[0]!r}; choose from {', '.join(METHODS)}")
    if args.worker:
        args.backend = args.worker
        Path(args.json_out).write_text(json.dumps(worker(args)))
        return 0
    results = {b: _run_backend(b, args) for b in args.backends.split(",")}
    _report(results, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Both cores in one evaluation: questions per minute of one process (all cores' threads) against ``--workers N``.

Run from the repository root (issue 32's goal: >= 1.7x on the idle 2-core CPU with the 1.5B):

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/parallel_eval.py --model qwen2.5-coder-1.5b --limit 6
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/parallel_eval.py --model smollm2-135m --limit 6   # a quick check

In one run, on the same questions, each into its own fresh output folder:

1. a warm-up question (so both runs find the instruction+examples prefix saved on disk, as a user's
   second evaluation does);
2. one process with one thread (a child process, ``KGQA_THREADS=1``): what each hand-started shard was, the
   issue's "one process";
3. ``workers=1``: this process, with one thread per physical core (``KGQA_THREADS``: what a single
   ``eval`` uses on an idle machine);
4. ``workers=N`` (default: one per physical core): N worker processes, cores / N threads each.

The ratios printed: each run's questions per minute against the one-thread process (the goal, >= 1.7x, is the
evaluation's on both cores) and against each other.

Both times run from the call to the summary, model loads included (what a user waits for); the
steady rate (first pair started to last pair finished) is printed too.  The answers of the two runs
are compared per question and method.  The figures go to docs/benchmarks.md (by the lead).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kgqa_core.eval.parallel import cores  # noqa: E402
from kgqa_core.eval.runner import load_results, run_eval  # noqa: E402
from kgqa_core.parameters import parse_pairs  # noqa: E402

SAMPLE = ROOT / "datasets" / "metaqa_sample" / "metaqa_dev_50.jsonl"


class _Clock:
    """When the first pair started and the last one finished (the steady part of a run)."""

    def __init__(self) -> None:
        self.first: float | None = None
        self.last: float | None = None
        self.pairs = 0

    def start(self, *_: object) -> None:
        if self.first is None:
            self.first = time.perf_counter()

    def done(self, *_: object) -> None:
        self.last = time.perf_counter()
        self.pairs += 1


def _timed(label: str, out: Path, workers: int, args: argparse.Namespace, params: dict) -> tuple[float, _Clock, object]:
    clock = _Clock()
    started = time.perf_counter()
    summary = run_eval(args.dataset, args.methods.split(","), args.model, out, limit=args.limit, per_type=args.per_type,
                       params=dict(params), progress=False, n_boot=10, backend="llama.cpp", workers=workers,
                       on_start=clock.start, on_progress=clock.done)
    wall = time.perf_counter() - started
    if summary.worker_errors or summary.failed:
        print(f"{label}: worker errors {summary.worker_errors}, method errors {summary.failed}", file=sys.stderr)
    return wall, clock, summary


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="qwen2.5-coder-1.5b")
    ap.add_argument("--dataset", type=Path, default=SAMPLE)
    ap.add_argument("--methods", default="dog")
    ap.add_argument("--limit", type=int, default=6, help="the first N questions")
    ap.add_argument("--per-type", type=int, default=None, help="the first N questions of each type (with --limit)")
    ap.add_argument("--workers", type=int, default=0, help="workers of the parallel run (default: physical cores)")
    ap.add_argument("--param", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--out", type=Path, default=None, help="folder for the runs' outputs (default: a temp folder)")
    ap.add_argument("--one-thread-run", type=Path, default=None, help=argparse.SUPPRESS)  # the child's own run
    args = ap.parse_args(argv)
    if args.one_thread_run is not None:  # in the child: this process's one thread, a JSON line for the parent
        wall, clock, _ = _timed("1 thread", args.one_thread_run, 1, args, parse_pairs(args.param))
        print(json.dumps({"wall": wall, "pairs": clock.pairs, "steady": (clock.last or 0.0) - (clock.first or 0.0)}))
        return 0
    n_cores = cores()
    workers = args.workers or n_cores
    params = parse_pairs(args.param)
    base = args.out or Path(tempfile.mkdtemp(prefix="parallel_eval-"))
    os.environ["KGQA_THREADS"] = str(n_cores)  # the single process uses every core, whatever OMP_NUM_THREADS says
    run_eval(args.dataset, args.methods.split(",")[:1], args.model, base / "warmup", limit=1, params=dict(params),
             progress=False, n_boot=10, backend="llama.cpp")
    child = subprocess.run([sys.executable, __file__, *(argv if argv is not None else sys.argv[1:]),
                            "--one-thread-run", str(base / "one_thread")], capture_output=True, text=True,
                           env={**os.environ, "KGQA_THREADS": "1", "OMP_NUM_THREADS": "1"}, check=True)
    single = json.loads(child.stdout.strip().splitlines()[-1])
    one_wall, one_clock, one = _timed("1 worker", base / "one", 1, args, params)
    del os.environ["KGQA_THREADS"]  # the workers get cores / N each (kgqa_core.eval.parallel.threads_per_worker)
    par_wall, par_clock, par = _timed(f"{workers} workers", base / "parallel", workers, args, params)

    def per_minute(pairs: int, seconds: float) -> float:
        return 60.0 * pairs / seconds if seconds > 0 else float("nan")

    def steady(clock: _Clock) -> float:
        return (clock.last or 0.0) - (clock.first or 0.0)

    a = {(r["id"], r["method"]): r["answers"] for r in load_results(base / "one")}
    b = {(r["id"], r["method"]): r["answers"] for r in load_results(base / "parallel")}
    same = sum(a.get(k) == v for k, v in b.items())
    one_rate, par_rate = per_minute(one_clock.pairs, one_wall), per_minute(par_clock.pairs, par_wall)
    print(f"{args.model}, methods {args.methods}, {one_clock.pairs} question-method pairs, {n_cores} physical cores, "
          f"load average {os.getloadavg()[0]:.1f} at the end")
    print("| run | threads each | wall s | pairs/min | steady pairs/min |")
    print("|---|---|---|---|---|")
    single_rate = per_minute(single["pairs"], single["wall"])
    print(f"| 1 process | 1 | {single['wall']:.1f} | {single_rate:.2f} | "
          f"{per_minute(single['pairs'], single['steady']):.2f} |")
    print(f"| 1 process | {n_cores} | {one_wall:.1f} | {one_rate:.2f} | "
          f"{per_minute(one_clock.pairs, steady(one_clock)):.2f} |")
    print(f"| --workers {workers} | {max(1, n_cores // workers)} | {par_wall:.1f} | {par_rate:.2f} | "
          f"{per_minute(par_clock.pairs, steady(par_clock)):.2f} |")
    print(f"ratio against one process of one thread: 1 process, {n_cores} threads {one_rate / single_rate:.2f}x; "
          f"--workers {workers} {par_rate / single_rate:.2f}x (goal >= 1.7x)")
    print(f"ratio (pairs per minute, --workers {workers} / 1 process of {n_cores} threads): {par_rate / one_rate:.2f}x")
    c = {(r["id"], r["method"]): r["answers"] for r in load_results(base / "one_thread")}
    print(f"same answers, one thread against {n_cores}: {sum(c.get(k) == v for k, v in a.items())} of {len(a)} pairs")
    print(f"same answers: {same} of {len(b)} pairs (a differing answer: the in-process prompt cache's history, "
          "issue 32's 'same answer whatever was cached before')")
    print(f"outputs: {base}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""How long the Ask page makes a user wait: its starting parameters vs the longer search it used to start with.

Run from the repository root:

    OMP_NUM_THREADS=2 .venv/bin/python benchmarks/ask_defaults.py [--model smollm2-135m] [--questions 4]

For the first --questions example questions of the metaqa_movies sample (the
graph the Ask page opens with), it runs DoG and READS with the Ask page's
starting values (``pages/ask.py`` PARAM_DEFAULTS: beam 1, 2 steps) and DoG with
the former ones (beam 3, 3 steps), in the same process with the runs
interleaved, and prints each run's wall and CPU seconds, the medians, and the
ratio old/new for DoG.  The model load (once per app process: the first Run
of a fresh server includes it) is timed separately.  The load average is
printed: on a shared machine wall times mostly measure the neighbours.
"""

from __future__ import annotations

import argparse
import ast
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kgqa_core.methods.base import MethodRequest, applicable_params, method_spec, run_method  # noqa: E402
from kgqa_core.models import load_model  # noqa: E402
from kgqa_core.samples import load_sample  # noqa: E402

OLD_DEFAULTS = {"beam_size": 3, "max_steps": 3}


def demo_defaults() -> dict:
    """PARAM_DEFAULTS as written in pages/ask.py (read from the source: the page imports Streamlit)."""
    tree = ast.parse((ROOT / "pages" / "ask.py").read_text(encoding="utf-8"))
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if any(getattr(t, "id", "") == "PARAM_DEFAULTS" for t in targets):
            return ast.literal_eval(node.value)
    raise SystemExit("PARAM_DEFAULTS not found in pages/ask.py")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--questions", type=int, default=4)
    args = ap.parse_args()
    new = demo_defaults()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', '(unset)')}")
    t0 = time.perf_counter()
    model = load_model(args.model)
    print(f"model load ({args.model}, first Run of a fresh app process): {time.perf_counter() - t0:.1f} s")
    graph, questions = load_sample("metaqa_movies")
    plans = [("dog", "new", new), ("reads", "new", new), ("dog", "old", OLD_DEFAULTS)]
    wall: dict[tuple[str, str], list[float]] = {(m, w): [] for m, w, _ in plans}
    for q in questions[: args.questions]:
        for method, which, params in plans:
            c0, w0 = time.process_time(), time.perf_counter()
            used = applicable_params(method_spec(method), params)  # as the page does: each method its own
            trace = run_method(method, MethodRequest(graph=graph, question=q.question, model=model,
                                                     topic_entities=list(q.topic_entities), params=used))
            w, c = time.perf_counter() - w0, time.process_time() - c0
            wall[(method, which)].append(w)
            hit = any(a.lower() in {g.lower() for g in q.answers} for a in trace.answer_texts)
            print(f"{method:5} {which} {used}  {w:6.1f} s wall  {c:6.1f} s cpu  "
                  f"{len(trace.steps):2d} steps  {'hit' if hit else 'miss'}  load {os.getloadavg()[0]:.1f}  "
                  f"{q.question[:60]}", flush=True)
    print()
    for (method, which), ws in wall.items():
        print(f"median {method:5} {which}: {statistics.median(ws):.1f} s wall over {len(ws)} questions")
    ratio = statistics.median(wall[("dog", "old")]) / statistics.median(wall[("dog", "new")])
    print(f"DoG old/new ratio (median wall): {ratio:.2f}")


if __name__ == "__main__":
    main()

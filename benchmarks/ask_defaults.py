"""How long the Ask page makes a user wait: its starting parameters vs the longer search it used to start with.

Run from the repository root:

    OMP_NUM_THREADS=2 .venv/bin/python benchmarks/ask_defaults.py [--model smollm2-135m] [--questions 4] [--skip-old]

The model runs on the default backend (llama.cpp on a CPU-only machine with
llama-cpp-python, as the app; ``--backend`` or ``KGQA_BACKEND`` to choose).
For the first --questions example questions of the metaqa_movies sample (the
graph the Ask page opens with), it runs DoG and READS with the Ask page's
starting values (``kgqa_ui/params_form.py`` ASK_PARAM_DEFAULTS: beam 1, 2
steps) and DoG with the former ones (beam 3, 3 steps), in the same process with
the runs interleaved, and prints each run's wall and CPU seconds, the medians,
and the ratio old/new for DoG.

What a user sees after the app's first run is measured: the model load (once
per app process) and one warm-up run of each method on the sample's last
question are timed separately and reported first.  The warm-up reads each
prompt's fixed part (instruction and in-context examples) once; the backend
keeps it (in memory, and on disk for the next process), so later runs read
only the graph triplets and the question.  For each DoG run the prompt tokens
and the seconds of its slowest step are printed: where the time goes.  The
load average is printed: on a shared machine wall times mostly measure the
neighbours.
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
from kgqa_core.trace.schema import Trace  # noqa: E402

OLD_DEFAULTS = {"beam_size": 3, "max_steps": 3}
DEFAULTS_FILE = ROOT / "kgqa_ui" / "params_form.py"


def demo_defaults() -> dict:
    """ASK_PARAM_DEFAULTS as written in the app (read from the source: the module imports Streamlit)."""
    tree = ast.parse(DEFAULTS_FILE.read_text(encoding="utf-8"))
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if any(getattr(t, "id", "") == "ASK_PARAM_DEFAULTS" for t in targets):
            return ast.literal_eval(node.value)
    raise SystemExit(f"ASK_PARAM_DEFAULTS not found in {DEFAULTS_FILE}")


def where_time_goes(trace: Trace) -> str:
    """Prompt tokens read, and the slowest step with its share of the run."""
    prompt = sum(c.prompt_tokens for s in trace.steps for c in s.model_calls)
    out = sum(c.output_tokens for s in trace.steps for c in s.model_calls)
    if not trace.steps:
        return f"{prompt} prompt / {out} output tokens"
    slow = max(trace.steps, key=lambda s: s.seconds)
    share = slow.seconds / trace.seconds if trace.seconds else 0.0
    return (f"{prompt} prompt / {out} output tokens; slowest step {slow.kind} {slow.seconds:.1f} s "
            f"({share:.0%})")


def timed_run(model, graph, method: str, params: dict, question) -> tuple[Trace, float, float, dict]:
    used = applicable_params(method_spec(method), params)  # as the page does: each method its own
    c0, w0 = time.process_time(), time.perf_counter()
    trace = run_method(method, MethodRequest(graph=graph, question=question.question, model=model,
                                             topic_entities=list(question.topic_entities), params=used))
    return trace, time.perf_counter() - w0, time.process_time() - c0, used


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--backend", default=None, help="llama.cpp or transformers (default: the app's default)")
    ap.add_argument("--questions", type=int, default=4)
    ap.add_argument("--skip-old", action="store_true", help="leave out the former beam 3 / 3 steps DoG runs")
    args = ap.parse_args()
    new = demo_defaults()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', '(unset)')}")
    t0 = time.perf_counter()
    model = load_model(args.model, backend=args.backend)
    print(f"model load ({args.model}, backend {getattr(model, 'backend', '?')}, "
          f"device {getattr(model, 'device_label', '?')}): {time.perf_counter() - t0:.1f} s "
          "(the first Run of a fresh app process)")
    graph, questions = load_sample("metaqa_movies")
    plans = [("dog", "new", new), ("reads", "new", new)]
    if not args.skip_old:
        plans.append(("dog", "old", OLD_DEFAULTS))
    warm = questions[-1]
    for method, which, params in plans:
        if which == "new":
            trace, w, c, used = timed_run(model, graph, method, params, warm)
            print(f"warm-up {method:5} {used}  {w:6.1f} s wall  {c:6.1f} s cpu  ({where_time_goes(trace)})  "
                  f"first run of the process: reads the prompt's fixed part once", flush=True)
    wall: dict[tuple[str, str], list[float]] = {(m, w): [] for m, w, _ in plans}
    for q in questions[: args.questions]:
        for method, which, params in plans:
            trace, w, c, used = timed_run(model, graph, method, params, q)
            wall[(method, which)].append(w)
            hit = any(a.lower() in {g.lower() for g in q.answers} for a in trace.answer_texts)
            print(f"{method:5} {which} {used}  {w:6.1f} s wall  {c:6.1f} s cpu  "
                  f"{len(trace.steps):2d} steps  {'hit' if hit else 'miss'}  load {os.getloadavg()[0]:.1f}  "
                  f"{q.question[:60]}  [{where_time_goes(trace)}]", flush=True)
    print()
    for (method, which), ws in wall.items():
        print(f"median {method:5} {which}: {statistics.median(ws):.1f} s wall over {len(ws)} questions")
    if ("dog", "old") in wall:
        ratio = statistics.median(wall[("dog", "old")]) / statistics.median(wall[("dog", "new")])
        print(f"DoG old/new ratio (median wall): {ratio:.2f}")


if __name__ == "__main__":
    main()

"""How right the progress panel's time left is, and how soon it shows a phase: the app's own job, on the dev sample.

Run from the repository root:

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/eta.py [--model smollm2-135m] [--methods dog,reads] [--per-type 6]

For the first --per-type questions of each type (1-hop, 2-hop) of the MetaQA dev
sample (each with its own subgraph of at most 200 triplets), each method runs in a `kgqa_ui.run_job.RunJob`
exactly as the Ask page runs it (its starting parameters, ASK_PARAM_DEFAULTS;
the model loaded once), one question after another, with a fresh rates file
(``--rates`` to start from an existing one), so the ETA of question k rests
only on questions 1..k-1 measured here.  While each job runs, its progress is
read every 0.1 s as the panel reads it; printed per run:

* ``first phase``: seconds from the job's start to the first phase it reports;
* ``ETA@start``: the time left the panel showed when the run had started
  (after the model load), ``ETA@prompt`` the one once the first prompt read
  ended (where the estimate splits the run), and the run's real wall time;
* their ratio to the real time left at that moment (after the prompt read only
  when a second or more was left: below that the 0.1 s polling is the error);
* over the whole run, the share of the panel's readings (every 0.1 s, while
  at least 1 s was really left) whose time left was within a factor of 2.

The summary gives, for runs with an ETA (the second question on) that took
at least 0.5 s (a READS run with one relation to follow needs no model call
and is over in 10 ms), the fraction within a factor of 2 of the real time
(the issue's check), the median ratio, and the largest first-phase time.
Wall times include the machine's other load (its load average is printed).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

DEV = ROOT / "datasets" / "metaqa_sample" / "metaqa_dev_50.jsonl"

from ask_defaults import demo_defaults  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--backend", default=None)
    ap.add_argument("--methods", default="dog,reads")
    ap.add_argument("--per-type", type=int, default=6)
    ap.add_argument("--dataset", default=str(DEV))
    ap.add_argument("--rates", default=None, help="a rates file to start from (default: a fresh one)")
    args = ap.parse_args()
    os.environ["KGQA_RATES_FILE"] = args.rates or str(Path(tempfile.mkdtemp(prefix="kgqa-eta-")) / "rates.json")

    from kgqa_core.eval.dataset import load_dataset
    from kgqa_core.methods.base import applicable_params, method_spec
    from kgqa_core.models import load_model
    from kgqa_core.rates import shared_book
    from kgqa_ui.run_job import RunJob, RunSpec
    from kgqa_ui.run_store import RunStore

    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    from kgqa_core.eval.runner import select_questions

    questions = select_questions(load_dataset(Path(args.dataset)).questions, per_type=args.per_type)
    t0 = time.perf_counter()
    model = load_model(args.model, backend=args.backend)
    print(f"model {args.model} on {model.backend}: loaded in {time.perf_counter() - t0:.1f} s; "
          f"load average {os.getloadavg()[0]:.1f}; {len(questions)} questions x {methods}")
    store = RunStore(tempfile.mkdtemp(prefix="kgqa-eta-runs-"))
    book = shared_book()
    defaults = demo_defaults()  # the Ask page's starting values, as benchmarks/ask_defaults.py reads them
    rows = []
    print(f"{'method':7s} {'q':>3s} {'type':5s} {'1st phase':>9s} {'ETA@start':>9s} {'ETA@prompt':>10s} {'real':>7s} "
          f"{'ratio@start':>11s} {'ratio@prompt':>12s} {'readings ok':>12s}")
    for i, q in enumerate(questions):
        for m in methods:
            params = applicable_params(method_spec(m), defaults)
            spec = RunSpec(m, q.graph(), q.question, tuple(q.topic_entities), params, args.model)
            job = RunJob([spec], store, load_model=lambda name, say=None: model, step_line=lambda s: s.kind,
                         backend=model.backend, rates=book)
            start = time.monotonic()
            job.start()
            eta_start = eta_prompt = None
            t_start = t_prompt = None
            readings: list[tuple[float, float | None]] = []  # (when, time left shown)
            while not job.done:
                p = job.progress()
                now = time.monotonic()
                if p.phase == "running" and t_start is None:
                    t_start, eta_start = now, p.eta_seconds
                if t_prompt is None and job._first.state == "done":  # noqa: SLF001 - what the panel splits at
                    t_prompt, eta_prompt = now, p.eta_seconds
                if p.phase == "running":
                    readings.append((now, p.eta_seconds))
                time.sleep(0.1)
            end = job.finished or time.monotonic()
            judged = [(e / (end - t)) for t, e in readings if e is not None and end - t >= 1.0]
            share = sum(0.5 <= r <= 2.0 for r in judged) / len(judged) if judged else None
            out = job.progress().outcomes[0]
            if out.error:
                print(f"{m:7s} {i + 1:3d} error: {out.error}")
                continue
            real_start = end - (t_start or start)
            real_prompt = end - t_prompt if t_prompt is not None else None
            r_start = eta_start / real_start if eta_start is not None and real_start > 0 else None
            # judged only with a second or more really left: under that, 0.1 s of polling is the error
            r_prompt = eta_prompt / real_prompt if eta_prompt is not None and real_prompt and real_prompt >= 1.0 \
                else None
            long_enough = real_start >= 0.5
            rows.append((m, i, job.first_phase_at or 0.0, r_start if long_enough else None,
                         r_prompt if long_enough else None, share if long_enough else None, q.type))
            fmt = lambda x, w: f"{x:{w}.2f}" if x is not None else f"{'-':>{w}s}"  # noqa: E731
            print(f"{m:7s} {i + 1:3d} {q.type:5s} {fmt(job.first_phase_at, 9)} {fmt(eta_start, 9)} "
                  f"{fmt(eta_prompt, 10)} {real_start:7.2f} {fmt(r_start, 11)} {fmt(r_prompt, 12)} "
                  f"{fmt(share, 12)}")
    print()
    for who in methods + ["all"]:
        mine = [r for r in rows if who == "all" or r[0] == who]
        for label, k in (("at the start", 3), ("after the first prompt read", 4)):
            ratios = [r[k] for r in mine if r[k] is not None]
            if not ratios:
                continue
            within = sum(0.5 <= r <= 2.0 for r in ratios)
            print(f"{who}: ETA {label}: {within}/{len(ratios)} within a factor of 2 of the real time "
                  f"({100 * within / len(ratios):.0f}%); median ratio {statistics.median(ratios):.2f}, "
                  f"range {min(ratios):.2f}-{max(ratios):.2f}")
    shares = [r[5] for r in rows if r[5] is not None]
    if shares:
        print(f"panel readings within a factor of 2 (runs with an ETA): median {statistics.median(shares):.0%} "
              f"per run, lowest {min(shares):.0%}")
    print(f"first phase shown after at most {max(r[2] for r in rows):.3f} s (median "
          f"{statistics.median(r[2] for r in rows):.3f} s) of {len(rows)} runs; load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()

"""What keeping the model's relation descriptions on disk saves a new process (`reading/description_store.py`).

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/description_store.py --per-type 5

Runs `python -m kgqa_core eval` with DoG on the same questions (by default DBpedia's, whose French and abbreviated
relation names the embedder cannot read) twice, one process after the other, with a new, empty description store:
the first process asks the model for every description it needs and saves them, the second reads them back.  Also
a third run with the store off (``KGQA_DESCRIPTION_CACHE=0``: every process asks, as before it).  Printed per run:
descriptions asked of the model and read back, medians per question of tokens written and prompt tokens read
(from each trace's `costs`, the descriptions' included), total seconds, and whether the answers are the same as the
first run's.  Ratios are of the runs measured here, one after the other.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _eval(dataset: Path, out: Path, args, store: str) -> float:
    cmd = [sys.executable, "-m", "kgqa_core", "eval", "--dataset", str(dataset), "--methods", "dog",
           "--model", args.model, "--per-type", str(args.per_type), "--out", str(out)]
    if args.types:
        cmd += ["--types", args.types]
    env = {**os.environ, "KGQA_DESCRIPTION_CACHE": store}
    started = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def _summary(out: Path) -> dict:
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines() if line.strip()]
    asked = read_back = 0
    written, read = [], []
    answers = {}
    for r in rows:
        trace = json.loads((out / r["trace"]).read_text())
        described = (trace.get("extra") or {}).get("described_relations") or {}
        back = len(described.get("from_disk", []))
        read_back += back
        asked += len(described.get("drafted_now", [])) - back
        costs = trace.get("costs") or {}
        written.append(costs.get("tokens_written", 0))
        read.append(costs.get("prompt_tokens_read", 0))
        answers[r["id"]] = r["answers"][:1]
    return {"n": len(rows), "asked": asked, "read_back": read_back, "written": statistics.median(written),
            "read": statistics.median(read), "answers": answers}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", type=Path, default=ROOT / "datasets/multidomain/dbpedia_dev.jsonl")
    ap.add_argument("--model", default="qwen2.5-coder-1.5b")
    ap.add_argument("--per-type", type=int, default=5)
    ap.add_argument("--types", default="")
    ap.add_argument("--out", type=Path, default=None, help="folder for the runs (default: a temporary one)")
    args = ap.parse_args(argv)
    work = args.out or Path(tempfile.mkdtemp(prefix="kgqa-descriptions-"))
    store = str(work / "store")
    runs = [("first process (empty store)", work / "first", store), ("second process (store read back)",
            work / "second", store), ("store off", work / "off", "0")]
    results = []
    for label, out, where in runs:
        seconds = _eval(args.dataset, out, args, where)
        results.append((label, seconds, _summary(out)))
    base = results[0][2]["answers"]
    print(f"{args.model}, DoG, {results[0][2]['n']} questions of {args.dataset.name} (--per-type {args.per_type})")
    print("| run | descriptions asked | read back | tokens written (median) | prompt tokens read (median) | "
          "seconds (total) | same first answers as the first run |")
    print("|---|---|---|---|---|---|---|")
    for label, seconds, s in results:
        same = sum(s["answers"].get(k) == v for k, v in base.items())
        print(f"| {label} | {s['asked']} | {s['read_back']} | {s['written']:.0f} | {s['read']:.0f} | {seconds:.0f} | "
              f"{same}/{len(base)} |")
    print(f"second / first process, seconds: {results[1][1] / results[0][1]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

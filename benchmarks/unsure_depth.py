"""DoG's ``unsure_depth`` against none, on the questions it can change, in one run.

A reading under DoG's guidance bar guides nothing of the chain's depth: the chain may list one hop's entities
and answer with one of them, or the model's own words.  ``unsure_depth`` (a share of the reading's probability)
takes such a chain back and walks it on when the reading's likeliest plans holding that share all walk at least
N hops (N of 2 or more).  Only those questions can change, so only they are asked again: the DoG traces of
earlier evaluations (``--from``, the per-domain and whole-KB runs) say which readings were unsure and what their
plans were (the reading does not depend on the switch).  Each question is asked with the switch off and on in
this one process, off first, so the two variants see the same model and the same cached prefixes:

    OMP_NUM_THREADS=2 .venv/bin/python benchmarks/unsure_depth.py --from 'runs/eval/md33/*/main' \\
        --from runs/eval/wk33 --share 0.8 --out runs/eval/unsure-depth

Prints one row per question (its domain, type, reading, the depth the plans agree on, Hits@1 and F1 off / on)
and the totals.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import sys
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kgqa_core.decoding.step_filters import likely_depth  # noqa: E402
from kgqa_core.eval.runner import load_results, run_eval  # noqa: E402
from kgqa_core.methods.dog import DOG_SURE_AT  # noqa: E402


def _hops(plan_text: str) -> int:
    """A plan as the trace writes it, 'X -> r1 -> r2 (reverse)': one hop per arrow."""
    return plan_text.count("->")


def _dataset_file(folder: Path, named: Path) -> Path:
    """The dataset an eval folder's run.json names: relative to the folder, the repository, or a dev domain's file."""
    from kgqa_core.datasets.multidomain import DEV_DOMAINS

    tries = [named] if named.is_absolute() else [folder / named, ROOT / named]
    tries += [ROOT / p for p in DEV_DOMAINS.values() if Path(p).name == named.name]
    for path in tries:
        if path.is_file():
            return path.resolve()
    raise SystemExit(f"{folder / 'run.json'}: its dataset {named} was not found")


def candidates(folders: list[Path], share: float) -> list[dict]:
    """The DoG questions of `folders` whose reading was under the bar and whose likeliest plans agree on 2+ hops."""
    found, seen = [], set()
    for folder in folders:
        run = json.loads((folder / "run.json").read_text())
        dataset = _dataset_file(folder, Path(run["dataset"]))
        for r in load_results(folder):
            if r.get("method") != "dog" or not r.get("trace"):
                continue
            trace = json.loads((folder / r["trace"]).read_text())
            reading = (trace.get("extra") or {}).get("reading") or {}
            bar = (trace.get("parameters") or {}).get("reading_sure_at", DOG_SURE_AT)
            if not reading.get("plans") or reading.get("confidence", 1.0) >= bar:
                continue
            plans = [SimpleNamespace(hops=range(_hops(p["text"])), confidence=p["confidence"])
                     for p in reading["plans"]]
            depth, taken, held = likely_depth(plans, share)
            if depth >= 2 and (dataset, r["id"]) not in seen:
                seen.add((dataset, r["id"]))
                found.append({"dataset": dataset, "id": r["id"], "type": r.get("type", ""),
                              "question": r["question"], "confidence": reading["confidence"], "depth": depth,
                              "domain": folder.parent.name if folder.name == "main" else folder.name})
    return found


def subset(dataset: Path, ids: set[str], out: Path) -> Path:
    """The lines of `dataset` with these ids as a dataset file of their own, its graph files beside it (hard links,
    else copies: a dataset's graph must lie in its own folder)."""
    lines = []
    out.parent.mkdir(parents=True, exist_ok=True)
    for line in dataset.read_text().splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        if row.get("id") in ids:
            graph = row.get("graph_file")
            if graph and not (out.parent / graph).is_file():
                (out.parent / graph).parent.mkdir(parents=True, exist_ok=True)
                try:
                    os.link(dataset.parent / graph, out.parent / graph)
                except OSError:
                    shutil.copyfile(dataset.parent / graph, out.parent / graph)
            lines.append(json.dumps(row, ensure_ascii=False))
    out.write_text("\n".join(lines) + "\n")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--from", dest="folders", action="append", required=True,
                    help="an eval folder with DoG traces (a glob; may be given more than once)")
    ap.add_argument("--share", type=float, default=0.8, help="the unsure_depth value asked against 0")
    ap.add_argument("--model", default="qwen2.5-coder-1.5b")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    folders = [Path(f) for pattern in args.folders for f in sorted(glob.glob(pattern))]
    found = candidates(folders, args.share)
    if not found:
        print("no DoG question of those folders had an unsure reading whose likely plans agree on 2+ hops")
        return 0
    scores: dict[tuple[str, str], dict[str, dict]] = {}
    by_dataset: dict[Path, list[dict]] = {}
    for c in found:
        by_dataset.setdefault(c["dataset"], []).append(c)
    for n, (dataset, items) in enumerate(by_dataset.items()):
        ids = {c["id"] for c in items}
        part = subset(dataset, ids, args.out / "datasets" / str(n) / dataset.name)
        for variant, value in (("off", 0.0), ("on", args.share)):
            folder = args.out / variant / f"{n}-{dataset.stem}"
            run_eval(part, ["dog"], args.model, folder, params={"unsure_depth": value}, progress=False)
            for r in load_results(folder):
                scores.setdefault((str(dataset), r["id"]), {})[variant] = r.get("metrics") or {}
    print(f"{args.model}, unsure_depth {args.share} against 0, {len(found)} question(s)")
    print("| domain | type | question | reading | depth | Hits@1 off / on | F1 off / on |")
    print("|---|---|---|---|---|---|---|")
    totals = {"off": [0.0, 0.0], "on": [0.0, 0.0]}
    for c in found:
        got = scores.get((str(c["dataset"]), c["id"]), {})
        cells = []
        for key in ("hits1", "f1"):
            cells.append(" / ".join(f"{got.get(v, {}).get(key, 0.0):.2f}" for v in ("off", "on")))
        for v in ("off", "on"):
            totals[v][0] += got.get(v, {}).get("hits1", 0.0)
            totals[v][1] += got.get(v, {}).get("f1", 0.0)
        print(f"| {c['domain']} | {c['type']} | {c['question']} | {c['confidence']:.2f} | {c['depth']} | "
              f"{cells[0]} | {cells[1]} |")
    print(f"| all | | {len(found)} questions | | | {totals['off'][0]:.0f} / {totals['on'][0]:.0f} | "
          f"{totals['off'][1]:.2f} / {totals['on'][1]:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Shared by the benchmarks that ask a few questions of earlier evaluations again under variants of DoG's settings.

Why: a setting that acts only on questions of some kind (an unsure reading, a reading in a band of confidence)
is measured best on just those questions, with every variant in one process (the same model, the same cached
prefixes), not by a whole re-run in which other answers move too.  The earlier runs' traces say which questions
those are: the question's reading is recorded there and does not depend on the settings compared.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]


def plan_hops(plan_text: str) -> int:
    """A plan as the trace writes it, 'X -> r1 -> r2 (reverse)': one hop per arrow."""
    return plan_text.count("->")


def reading_columns(reading: dict) -> dict:
    """The columns the re-asking benchmarks show of a recorded reading: its confidence and its best plan's hops."""
    return {"confidence": reading["confidence"], "depth": plan_hops(reading["plans"][0]["text"])}


def dataset_file(folder: Path, named: Path) -> Path:
    """The dataset an eval folder's run.json names: relative to the folder, the repository, or a dev domain's file."""
    from kgqa_core.datasets.multidomain import DEV_DOMAINS

    tries = [named] if named.is_absolute() else [folder / named, ROOT / named]
    tries += [ROOT / p for p in DEV_DOMAINS.values() if Path(p).name == named.name]
    for path in tries:
        if path.is_file():
            return path.resolve()
    raise SystemExit(f"{folder / 'run.json'}: its dataset {named} was not found")


def eval_folders(patterns: list[str]) -> list[Path]:
    """The eval folders the --from globs name, in order."""
    return [Path(f) for pattern in patterns for f in sorted(glob.glob(pattern))]


def dog_readings(folders: list[Path], keep: Callable[[dict, dict], dict | None]) -> list[dict]:
    """The DoG questions of `folders` that `keep` takes, each once.

    ``keep(reading, trace)`` gets the trace's recorded reading (``extra["reading"]``) and the whole trace, and
    returns the columns to show for a question it takes (None: left out).  Each row also has the question's
    dataset, id, type, text and domain (the eval folder's parent for the per-domain runs' ``main``).
    """
    from kgqa_core.eval.runner import load_results

    found, seen = [], set()
    for folder in folders:
        run = json.loads((folder / "run.json").read_text())
        dataset = dataset_file(folder, Path(run["dataset"]))
        for r in load_results(folder):
            if r.get("method") != "dog" or not r.get("trace") or (dataset, r["id"]) in seen:
                continue
            trace = json.loads((folder / r["trace"]).read_text())
            reading = (trace.get("extra") or {}).get("reading") or {}
            columns = keep(reading, trace) if reading.get("plans") else None
            if columns is None:
                continue
            seen.add((dataset, r["id"]))
            found.append({"dataset": dataset, "id": r["id"], "type": r.get("type", ""), "question": r["question"],
                          "domain": folder.parent.name if folder.name == "main" else folder.name, **columns})
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


def ask_variants(found: list[dict], variants: dict[str, dict[str, Any]], model: str,
                 out: Path) -> dict[tuple[str, str], dict[str, dict]]:
    """Each question of `found` asked with DoG under every variant's parameters, in that order, in this process.

    Returns (dataset, question id) -> variant -> the result's metrics.
    """
    from kgqa_core.eval.runner import load_results, run_eval

    scores: dict[tuple[str, str], dict[str, dict]] = {}
    by_dataset: dict[Path, list[dict]] = {}
    for c in found:
        by_dataset.setdefault(c["dataset"], []).append(c)
    for n, (dataset, items) in enumerate(by_dataset.items()):
        part = subset(dataset, {c["id"] for c in items}, out / "datasets" / str(n) / dataset.name)
        for variant, params in variants.items():
            folder = out / variant / f"{n}-{dataset.stem}"
            run_eval(part, ["dog"], model, folder, params=params or None, progress=False)
            for r in load_results(folder):
                scores.setdefault((str(dataset), r["id"]), {})[variant] = r.get("metrics") or {}
    return scores


def print_table(found: list[dict], scores: dict[tuple[str, str], dict[str, dict]], names: list[str],
                columns: list[tuple[str, Callable[[dict], str]]]) -> None:
    """One markdown row per question (domain, type, question, `columns`, Hits@1 and F1 per variant), then totals."""
    heads = " | ".join(h for h, _ in columns)
    print(f"| domain | type | question | {heads} | Hits@1 {' / '.join(names)} | F1 {' / '.join(names)} |")
    print("|---|---|---|" + "---|" * len(columns) + "---|---|")
    totals = {v: [0.0, 0.0] for v in names}
    for c in found:
        got = scores.get((str(c["dataset"]), c["id"]), {})
        cells = [" / ".join(f"{got.get(v, {}).get(key, 0.0):.2f}" for v in names) for key in ("hits1", "f1")]
        for v in names:
            totals[v][0] += got.get(v, {}).get("hits1", 0.0)
            totals[v][1] += got.get(v, {}).get("f1", 0.0)
        shown = " | ".join(show(c) for _, show in columns)
        print(f"| {c['domain']} | {c['type']} | {c['question']} | {shown} | {cells[0]} | {cells[1]} |")
    blanks = " | ".join("" for _ in columns)
    print(f"| all | | {len(found)} questions | {blanks} | {' / '.join(f'{totals[v][0]:.0f}' for v in names)} | "
          f"{' / '.join(f'{totals[v][1]:.2f}' for v in names)} |")


def add_common_args(ap: Any) -> None:
    """The arguments every re-asking benchmark takes: ``--from`` (eval folders, globs), ``--model``, ``--out``."""
    ap.add_argument("--from", dest="folders", action="append", required=True,
                    help="an eval folder with DoG traces (a glob; may be given more than once)")
    ap.add_argument("--model", default="qwen2.5-coder-1.5b")
    ap.add_argument("--out", type=Path, required=True)


def ask_and_print(found: list[dict], variants: dict[str, dict[str, Any]], model: str, out: Path, heading: str,
                  columns: list[tuple[str, Callable[[dict], str]]]) -> None:
    """`ask_variants`, then the heading line and `print_table` of what came back."""
    scores = ask_variants(found, variants, model, out)
    print(heading)
    print_table(found, scores, list(variants), columns)

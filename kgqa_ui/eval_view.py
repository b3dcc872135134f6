"""The Evaluate page's logic without Streamlit: datasets, output folders, tables, estimates, generation.

Why apart from the page: the page is a thin shell (app.py and pages/ stay
thin), and these are unit-tested.  The estimate before an evaluation starts
comes from measured per-method times only: this evaluation's own finished
questions first, else runs of the same method, model and backend on graphs of
the same size here (`kgqa_core.rates`), never a run on a graph ten times
bigger (an estimate of 307 s per question from a 4,000-triplet graph was
shown for MetaQA questions that took 60-81 s).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import statistics
from pathlib import Path
from typing import Any, Callable, Sequence

import pandas as pd

from kgqa_core.eval.metrics import GroupSummary
from kgqa_core.rates import RateBook

from .eta import duration
from .eval_charts import class_name

ROOT = Path(__file__).resolve().parent.parent


def runs_dir() -> Path:
    """Where evaluations are written: ``$KGQA_RUNS_DIR/eval`` (else ``runs/eval`` beside app.py)."""
    env = os.environ.get("KGQA_RUNS_DIR")
    return (Path(env).expanduser() if env else ROOT / "runs") / "eval"


def method_choices() -> tuple[dict[str, str], set[str]]:
    """All registered methods with descriptions, and the names whose modules import."""
    from kgqa_core.methods.base import METHODS, available_methods

    available = available_methods()
    return {m: available.get(m, "cannot be imported") for m in METHODS}, set(available)


def lpkg_patterns() -> list[str]:
    try:
        from kgqa_core.lpkg.patterns import PATTERNS

        return list(PATTERNS)
    except ImportError:
        return ["1p", "2p", "3p", "2i", "3i", "2u", "ip", "pi", "compare"]


def sample_question_sets() -> dict[str, Path]:
    """The question files shipped with the app's sample graphs (title -> path)."""
    try:
        from kgqa_core.samples import list_samples

        return {s.title: s.questions_path for s in list_samples() if s.questions_path and s.questions_path.is_file()}
    except (ImportError, AttributeError, OSError):
        return {}


def generator_available() -> bool:
    """Whether the LPKG question generator (`python -m kgqa_core generate`) is installed."""
    import importlib.util

    for mod in ("kgqa_core.lpkg.cli", "kgqa_core.lpkg.generate", "kgqa_core.methods.lpkg_patterns"):
        try:
            if importlib.util.find_spec(mod) is not None:
                return True
        except ModuleNotFoundError:
            continue
    return False


def generate_dataset(graph: Any, patterns: list[str], n: int, seed: int, folder: Path | None = None) -> Path:
    """Ground LPKG patterns in the session graph object itself (the generator's API); returns the dataset's path.

    No round trip through a TSV file or the CLI: the questions are grounded in the graph as loaded
    (an RDF literal "Paris" stays "Paris"), and the graph is saved beside the dataset in a form that
    keeps every name exactly.  Raises `ValueError` with the generator's message.
    """
    from kgqa_core.lpkg.generate import GenerationError, write_generated_dataset
    from kgqa_core.lpkg.patterns import PatternError

    try:
        return write_generated_dataset(graph, patterns, n, seed, folder or runs_dir() / "datasets")
    except (GenerationError, PatternError) as exc:
        raise ValueError(str(exc)) from None


def run_slug(dataset_path: Path, model: str, params: dict, vocabulary: Any = None) -> str:
    """One output directory per (dataset content, model, parameters and preset, vocabulary): re-running resumes it."""
    digest = hashlib.sha256(dataset_path.read_bytes()).hexdigest()[:8]
    settings: object = params if not vocabulary else {"params": params, "vocabulary": vocabulary.entries}
    pdig = hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:6]
    clean = lambda s: re.sub(r"[^A-Za-z0-9._-]+", "_", s)[:40]  # noqa: E731
    return f"{clean(dataset_path.stem)}-{digest}--{clean(model)}--{pdig}"


def save_upload(data: bytes, name: str) -> Path:
    """An uploaded dataset, kept under its content hash (two tabs uploading at once never publish half a file)."""
    from kgqa_core.files import atomic_write_bytes

    folder = runs_dir() / "datasets"
    folder.mkdir(parents=True, exist_ok=True)
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(name).stem)[:40] or "upload"
    path = folder / f"{stem}-{hashlib.sha256(data).hexdigest()[:8]}.jsonl"
    if not path.exists():
        atomic_write_bytes(path, data)
    return path


def summary_frame(groups: list[GroupSummary]) -> pd.DataFrame:
    fmt = lambda e: e.fmt() if e is not None else "-"  # noqa: E731
    return pd.DataFrame([
        {
            "method": g.method, "type": g.type, "n": g.n, "Hits@1 [95% CI]": fmt(g.hits1), "F1": fmt(g.f1),
            "precision": fmt(g.precision), "recall": fmt(g.recall), "exact match": fmt(g.exact_match),
            "lenient hits (not Hits@1)": fmt(g.hits_any), "triplet-F1": fmt(g.triplet_f1),
            "ill triplets": f"{g.ill_triplets}/{g.cited_triplets}", "model calls": round(g.model_calls_mean, 1),
            "tokens in/request": round(g.tokens_in_per_request), "tokens out/request": round(g.tokens_out_per_request),
            "wall p50 s": round(g.seconds_p50, 2), "wall p95 s": round(g.seconds_p95, 2), "method errors": g.errors,
        }
        for g in groups
    ])


def question_frame(records: list[dict], answers_of: Callable[[dict], list[str]] | None = None) -> pd.DataFrame:
    """One row per (question, method); the columns a reader checks first come first."""
    rows = []
    for r in records:
        answers = answers_of(r) if answers_of is not None else list(r.get("answers", []))
        code = r["metrics"].get("error_class") or ""
        rows.append({
            "question": r["question"], "answers": ", ".join(answers[:5]) or "(none)",
            "gold": ", ".join(r.get("gold", [])[:5]), "Hits@1": bool(r["metrics"]["hits1"]),
            "F1": round(r["metrics"]["f1"], 3), "class": class_name(code) if code else "",
            "method": r["method"], "type": r.get("type", ""), "id": r["id"], "error": r.get("error", ""),
        })
    return pd.DataFrame(rows, columns=QUESTION_COLUMNS)


QUESTION_COLUMNS = ["question", "answers", "gold", "Hits@1", "F1", "class", "method", "type", "id", "error"]


# ------------------------------------------------------------------ estimates
@functools.lru_cache(maxsize=64)
def _file_triplets(path: str, mtime: float) -> int:
    """Lines of a shared graph file (about its triplets): counted once per file version, without parsing it."""
    with open(path, "rb") as fh:
        return sum(1 for line in fh if line.strip())


def typical_graph_size(questions: Sequence[Any], sample: int = 25) -> int | None:
    """The median graph size of (the first ``sample`` of) these questions, cheaply: inline triplets are
    counted, a shared graph file's lines are, a SPARQL question has none (None)."""
    sizes = []
    for q in list(questions)[:sample]:
        if getattr(q, "triplets", None) is not None:
            sizes.append(len(q.triplets))
        elif getattr(q, "graph_file", None) is not None:
            try:
                p = Path(q.graph_file)
                sizes.append(_file_triplets(str(p), p.stat().st_mtime))
            except OSError:
                continue
    return int(statistics.median(sizes)) if sizes else None


def method_seconds(method: str, records: Sequence[dict]) -> list[float]:
    """This evaluation's measured seconds per question of ``method`` (its own results so far)."""
    out = []
    for r in records:
        secs = (r.get("metrics") or {}).get("seconds")
        if r.get("method") == method and isinstance(secs, (int, float)) and secs > 0 and not r.get("error"):
            out.append(float(secs))
    return out


def expected_seconds(method: str, records: Sequence[dict], book: RateBook, model: str, backend: str,
                     params: dict[str, Any], size: int | None) -> tuple[float | None, str]:
    """Seconds per question of ``method``, and what that rests on ("" basis when not measured)."""
    own = method_seconds(method, records)
    if own:
        return statistics.median(own), f"median of {len(own)} earlier question(s) of this evaluation"
    est = book.expected_run(model, backend, method, params, size)
    if est is not None:
        return est.seconds, est.basis
    return None, ""


AUTO_WORKERS = "auto"


def worker_choices() -> list[str]:
    """The Evaluate page's worker choices: auto, then 1 up to this machine's physical cores (at least 2)."""
    from kgqa_core.eval.parallel import cores

    return [AUTO_WORKERS] + [str(n) for n in range(1, max(2, cores()) + 1)]


def workers_for(choice: str, backend: str) -> int:
    """Worker processes for the page's choice: auto is one per four cores for in-process llama.cpp, else one.

    ``backend`` is the backend the run will use (``server`` for a model server: its own parallelism,
    and the workers could not load a server's model by its key, so it always gets one).
    """
    from kgqa_core.eval.parallel import resolve_workers

    if backend == "server":
        return 1
    return resolve_workers(choice, backend)


def workers_caption(choice: str, workers: int) -> str:
    """What the chosen number of workers means here, in one line."""
    from kgqa_core.eval.parallel import threads_per_worker

    if workers <= 1:
        why = (" (auto: one process per four cores, or a model server or this backend: two workers on two cores "
               "were no faster than one process)") if choice == AUTO_WORKERS else ""
        return f"1 worker{why}: questions run one after another in the app's process, on its loaded model."
    return (f"{workers} worker processes{' (auto: one per four cores)' if choice == AUTO_WORKERS else ''}, "
            f"{threads_per_worker(workers)} thread(s) each: each loads the model (its weights are shared) and "
            "takes the next question when it is free; one results file.")


def time_estimate(methods: Sequence[str], n: int, records: Sequence[dict], book: RateBook, model: str, backend: str,
                  params_of: Callable[[str], dict[str, Any]], size: int | None, workers: int = 1) -> str:
    """Plain text: the expected duration before starting, per method, from measured times only.

    With ``workers`` > 1 the questions are shared by the workers: the total is divided by them (each
    question's own time is as measured, which with fewer threads per worker is measured longer).
    """
    parts, total, unknown = [], 0.0, []
    for m in methods:
        secs, basis = expected_seconds(m, records, book, model, backend, params_of(m), size)
        if secs is None:
            unknown.append(m)
            continue
        total += secs * n
        parts.append(f"{m}: about {secs:.1f} s per question ({basis})")
    where = f"graphs of about {size:,} triplets" if size else "these graphs"
    if not parts:
        return (f"No time estimate yet: {', '.join(methods)} has not run with {model} ({backend}) on {where} here. "
                "Try 1-2 questions first; the estimate is then measured.")
    total /= max(1, workers)
    on = f" on {workers} workers" if workers > 1 else ""
    text = (f"Estimated time: about {duration(total)} for {n} question(s) × {len(parts)} method(s){on}; "
            + "; ".join(parts))
    if unknown:
        text += f". Not measured yet on {where}: {', '.join(unknown)} (adds to this)."
    return text

"""Batch evaluation: every question x method, one trace each, resumable.

Layout of an output directory::

    out/run.json                       what was run (dataset hash, model, parameters, preset, vocabulary)
    out/results.jsonl                  one line per (question, method): answers, gold, metrics
    out/traces/<method>/<qid>.json     the full trace, for Replay
    out/summary.json                   aggregated metrics with 95% bootstrap intervals

Every finished pair is appended to ``results.jsonl`` (and flushed) before the
next one starts, so an interrupted run loses at most the question in flight;
re-running the same command skips the pairs already recorded.  A method that
raises on one question gets a trace with ``error`` set and a zero score, and
the run goes on: one crash must not cost a night of results.

Several processes may share one output directory (``--shard``, or the same
command started twice): every line of ``results.jsonl`` is appended under a
file lock, after re-reading what the others recorded, so a pair is recorded
once; ``run.json``, ``summary.json`` and traces are written to a unique temp
name and renamed into place.  Records are JSON Lines split on ``\n`` only,
so a question holding U+2028 or a form feed is read back whole.  Nothing
written holds an absolute path of the machine (the dataset is named
relative to the output directory when it can be, else by its file name).
"""

from __future__ import annotations

import hashlib
import json
import re
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from ..files import JsonProblem, atomic_write_text, file_lock, jsonl_line, loads_json, split_lines
from ..files import trace_without_machine_paths
from ..trace.schema import Trace, save_trace
from .dataset import Dataset, EvalQuestion, load_dataset
from .metrics import GroupSummary, QuestionMetrics, format_table, question_metrics, summarize
from .taxonomy import classify_error

ProgressFn = Callable[[int, int, dict[str, Any]], None]

RESULTS_FILE = "results.jsonl"
SUMMARY_FILE = "summary.json"
RUN_FILE = "run.json"
DEFAULT_PRESET = "workbench"  # kgqa_core.parameters.preset_param's default: no overrides


class EvalConfigError(ValueError):
    """The output directory holds results of a different run (dataset, model, parameters, preset or vocabulary)."""


@dataclass
class EvalSummary:
    """What `run_eval` did and the aggregated metrics of every requested method."""

    dataset: str
    model: str
    methods: list[str]
    out_dir: Path
    n_questions: int
    ran: int = 0
    skipped: int = 0
    failed: int = 0
    overall: list[GroupSummary] = field(default_factory=list)
    by_type: list[GroupSummary] = field(default_factory=list)
    records: list[dict[str, Any]] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)
    backend: str = ""  # the model backend that ran this process's pairs ("" when none ran)
    preset: str = DEFAULT_PRESET  # the methods' preset (``params["preset"]``, else the workbench's)
    vocabulary: dict[str, Any] | None = None  # the user's relation vocabulary (`RelationVocabulary.to_dict`)
    stopped: bool = False  # the caller's should_stop ended it before every pending pair ran
    worker_errors: list[str] = field(default_factory=list)  # a parallel run's workers that ended in an error

    def table(self, markdown: bool = False) -> str:
        parts = [format_table(self.overall, markdown)]
        if len({g.type for g in self.by_type}) > 1:
            parts += ["", "per question type:", "", format_table(self.by_type, markdown)]
        return "\n".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "model": self.model,
            "backend": self.backend,
            "methods": self.methods,
            "params": self.params,
            "preset": self.preset,
            "vocabulary": self.vocabulary,
            "n_questions": self.n_questions,
            "ran": self.ran,
            "skipped": self.skipped,
            "failed": self.failed,
            "overall": [g.to_dict() for g in self.overall],
            "by_type": [g.to_dict() for g in self.by_type],
            **({"worker_errors": list(self.worker_errors)} if self.worker_errors else {}),
        }


def safe_name(text: str) -> str:
    """A file-system-safe version of a question id."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._")
    if not name:
        name = "q"
    if name != text:  # keep distinct ids distinct after sanitising
        name += "-" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:8]
    return name


def trace_path(out_dir: Path, method: str, qid: str) -> Path:
    return Path(out_dir) / "traces" / method / f"{safe_name(qid)}.json"


def load_results(out_dir: str | Path) -> list[dict[str, Any]]:
    """The records of ``results.jsonl``; a truncated last line (an interrupted write) is ignored."""
    path = Path(out_dir) / RESULTS_FILE
    if not path.exists():
        return []
    return _parse_results(path.read_bytes())


def _parse_results(data: bytes) -> list[dict[str, Any]]:
    records = []
    for _, line in split_lines(data.decode("utf-8", errors="replace")):
        if not line.strip():
            continue
        try:
            rec = loads_json(line)
        except JsonProblem:
            continue
        if (isinstance(rec, dict) and isinstance(rec.get("id"), str) and isinstance(rec.get("method"), str)
                and isinstance(rec.get("metrics"), dict)):
            records.append(rec)
    return records


class _ResultsFile:
    """``results.jsonl`` shared by several processes: appends under a lock, never a pair twice."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock = file_lock(path)
        self.done: set[tuple[str, str]] = set()
        self._offset = 0
        with self.lock:
            _drop_torn_tail(path)
            self._refresh()

    def _refresh(self) -> None:
        """Read the lines others appended since we last looked (call with the lock held)."""
        if not self.path.exists():
            return
        with open(self.path, "rb") as fh:
            fh.seek(self._offset)
            data = fh.read()
        end = data.rfind(b"\n") + 1
        for rec in _parse_results(data[:end]):
            self.done.add((rec["id"], rec["method"]))
        self._offset += end

    def recorded(self, qid: str, method: str) -> bool:
        with self.lock:
            self._refresh()
        return (qid, method) in self.done

    def append(self, record: dict[str, Any]) -> bool:
        """Append ``record`` unless another process recorded its pair meanwhile; True if written."""
        key = (record["id"], record["method"])
        with self.lock:
            self._refresh()
            if key in self.done:
                return False
            _append_line(self.path, jsonl_line(record))
            self._refresh()
        self.done.add(key)
        return True


def summarize_records(
    records: Sequence[dict[str, Any]], methods: Sequence[str] | None = None, n_boot: int = 1000, seed: int = 0
) -> tuple[list[GroupSummary], list[GroupSummary]]:
    """Per-method summaries overall and per question type, methods in the given order."""
    order = list(methods) if methods else list(dict.fromkeys(r["method"] for r in records))
    overall, by_type = [], []
    for m in order:
        recs = [r for r in records if r["method"] == m]
        metrics = [QuestionMetrics.from_dict(r["metrics"]) for r in recs]
        overall.append(summarize(m, metrics, n_boot=n_boot, seed=seed))
        for t in sorted({r.get("type") or "untyped" for r in recs}):
            sub = [QuestionMetrics.from_dict(r["metrics"]) for r in recs if (r.get("type") or "untyped") == t]
            by_type.append(summarize(m, sub, qtype=t, n_boot=n_boot, seed=seed))
    return overall, by_type


def _file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _check_run_config(out_dir: Path, config: dict[str, Any]) -> None:
    """Refuse to mix results of a different dataset, model or parameters into one directory."""
    path = out_dir / RUN_FILE
    if path.exists():
        try:
            old = loads_json(path.read_text(encoding="utf-8"))
        except (JsonProblem, UnicodeDecodeError):
            old = {}
        if not isinstance(old, dict):
            old = {}
        for key, label in (("dataset_sha256", "dataset"), ("model", "model")):
            if key in old and old[key] != config[key]:
                raise EvalConfigError(
                    f"{out_dir} holds results for a different {label} "
                    f"({old.get(key)!r} vs {config[key]!r}); choose another --out directory"
                )
        if "params" in old:
            old_params = old["params"] if isinstance(old["params"], dict) else {}
            old_preset, new_preset = _preset_of(old_params), _preset_of(config["params"])
            if old_preset != new_preset:  # said first: a different preset is the difference a user looks for
                raise EvalConfigError(
                    f"{out_dir} holds results for another preset ({old_preset!r} vs {new_preset!r}); "
                    "choose another --out directory"
                )
            if _identity(old_params) != _identity(config["params"]):
                raise EvalConfigError(
                    f"{out_dir} holds results for a different parameters "
                    f"({old_params!r} vs {config['params']!r}); choose another --out directory"
                )
        old_vocab, new_vocab = _entries(old.get("vocabulary")), _entries(config.get("vocabulary"))
        if old_vocab != new_vocab:  # a run.json written before vocabularies existed ran without one
            def said(v: Any) -> str:
                return f"{len(v)} relation(s)" if v else "none"

            raise EvalConfigError(
                f"{out_dir} holds results for another relation vocabulary ({said(old_vocab)} vs {said(new_vocab)}, "
                "or other words); choose another --out directory"
            )
        return
    out_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(config, indent=2, ensure_ascii=False))


def _preset_of(params: dict[str, Any]) -> str:
    """The preset a run's shared parameters choose (none given: the workbench's)."""
    value = params.get("preset", DEFAULT_PRESET)
    return value if isinstance(value, str) and value else DEFAULT_PRESET


def _identity(params: dict[str, Any]) -> dict[str, Any]:
    """The parameters that tell runs apart: ``preset=workbench`` is the same run as no preset."""
    return {k: v for k, v in params.items() if not (k == "preset" and v == DEFAULT_PRESET)}


def _entries(vocabulary: Any) -> dict[str, Any]:
    """A recorded vocabulary's words (its file's name aside: the same words are the same run)."""
    entries = vocabulary.get("entries") if isinstance(vocabulary, dict) else None
    return entries if isinstance(entries, dict) else {}


def portable_vocabulary(vocabulary: Any) -> Any:
    """The vocabulary named by its file's name only (run.json, summary.json and traces hold no machine paths)."""
    if not vocabulary:
        return None
    from ..reading.vocabulary import RelationVocabulary

    return RelationVocabulary({r: list(a) for r, a in vocabulary.entries.items()},
                              Path(vocabulary.source).name if vocabulary.source else "")


def unknown_relations(questions: Sequence[EvalQuestion], vocabulary: Any) -> list[str]:
    """The vocabulary's relations that none of the questions' graphs holds (SPARQL stores are not asked)."""
    if not vocabulary:
        return []
    seen: set[str] = set()
    files: set[Any] = set()
    for q in questions:
        if q.sparql is not None:
            return []  # a store's relations are not listed: nothing to compare against
        if q.triplets is not None:
            seen.update(t[1] for t in q.triplets)
        elif q.graph_file not in files:  # a graph file shared by many questions is read once
            files.add(q.graph_file)
            seen.update(q.graph().relations)
    return [r for r in vocabulary.entries if seen and r not in seen]


def _fill_faithfulness(trace: Trace, graph) -> None:
    """Check cited chains against the graph when the method did not (so ill-triplet rates compare)."""
    if not trace.chains or trace.faithfulness.checked:
        return
    try:
        from ..trace.faithfulness import check_chains
    except ImportError:
        return
    try:
        trace.faithfulness = check_chains(graph, trace.chains, trace.topic_entities, trace.answers)
    except Exception as exc:  # a checker bug must not lose the result; note it on the trace
        trace.notes.append(f"eval: faithfulness check failed: {type(exc).__name__}: {exc}")


def _run_one(
    question: EvalQuestion, method: str, model: Any, params: dict[str, Any], seed: int, vocabulary: Any = None,
    on_step: Callable[[Any], None] | None = None, should_stop: Callable[[], bool] | None = None,
) -> tuple[Trace, float]:
    from ..methods.base import MethodRequest, applicable_params, method_spec, run_method

    graph = question.graph()
    request = MethodRequest(
        graph=graph,
        question=question.question,
        model=model,
        topic_entities=list(question.topic_entities),
        params=applicable_params(method_spec(method), params),  # the shared values this method declares
        seed=seed,
        vocabulary=vocabulary,
        on_step=on_step,
        should_stop=should_stop,
    )
    started = time.perf_counter()
    try:
        trace = run_method(method, request)
    except Exception as exc:  # recorded on the trace; the run goes on
        trace = Trace(
            method=method,
            question=question.question,
            model=getattr(model, "name", ""),
            model_revision=getattr(model, "revision", ""),
            parameters=dict(params),
            seed=seed,
            graph_fingerprint=graph.fingerprint,
            graph_name=graph.name,
            topic_entities=list(question.topic_entities),
            error=f"{type(exc).__name__}: {exc}",
            extra={"traceback": traceback.format_exc(limit=8)},
        )
    wall = time.perf_counter() - started
    if not trace.seconds:
        trace.seconds = wall
    _fill_faithfulness(trace, _graph_of(trace, graph))
    return trace, wall


def _graph_of(trace: Trace, graph: Any) -> Any:
    """The graph a trace's ids refer to: the subgraph a store run fetched, else the question's graph."""
    from ..methods.on_store import fetched_graph

    return fetched_graph(trace) or graph


@dataclass
class EvalPlan:
    """A checked evaluation before it runs: its questions, the pairs still to run, and where results go.

    Why a value of its own: the parallel evaluation (`kgqa_core.eval.parallel`) checks the run once in
    the parent and then hands each worker process single questions of the same plan.
    """

    dataset_path: Path
    questions: list[EvalQuestion]
    methods: list[str]
    params: dict[str, Any]
    out_dir: Path
    model_label: str
    vocabulary: Any
    seed: int
    pending: list[tuple[EvalQuestion, str]]
    summary: EvalSummary


def plan_eval(
    dataset_path: str | Path, methods: Sequence[str], model_name: str, out_dir: str | Path,
    limit: int | None = None, params: dict[str, Any] | None = None, *, per_type: int | None = None,
    types: Sequence[str] | None = None, shard: tuple[int, int] | None = None, model: Any = None, seed: int = 0,
    vocabulary: Any = None, on_warning: Callable[[str], None] | None = None,
) -> EvalPlan:
    """Check an evaluation (methods, parameters, dataset, the ``out_dir``'s earlier runs) and list its pending pairs.

    Every bad input is refused here, before a model loads or a worker starts; ``run.json`` is written
    for a new ``out_dir``.  The arguments are `run_eval`'s.
    """
    from ..methods.base import METHODS, UnknownMethodError, read_shared_params

    methods = list(dict.fromkeys(methods))
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise UnknownMethodError(f"unknown method {unknown[0]!r}; choose from: {', '.join(METHODS)}")
    params = read_shared_params(methods, params or {})  # a ParameterError names the parameter before anything runs
    dataset_path = Path(dataset_path)
    dataset: Dataset = load_dataset(dataset_path)
    questions = select_questions(dataset.questions, limit=limit, per_type=per_type, types=types)
    out_dir = Path(out_dir)
    model_label = getattr(model, "name", None) or model_name
    vocabulary = portable_vocabulary(vocabulary)
    vocab_record = vocabulary.to_dict() if vocabulary else None
    _check_run_config(
        out_dir,
        {
            "dataset": _portable_path(dataset_path, out_dir),
            "dataset_sha256": _file_sha256(dataset_path),
            "model": model_label,
            "params": params,
            "preset": _preset_of(params),
            "vocabulary": vocab_record,
            "seed": seed,
        },
    )
    done = {(r["id"], r["method"]) for r in load_results(out_dir)}
    pending = [(q, m) for q in questions for m in methods if (q.id, m) not in done]
    if shard is not None:
        k, n = shard
        if not (n >= 1 and 1 <= k <= n):
            raise ValueError(f"shard must be K/N with 1 <= K <= N, got {k}/{n}")
        # Slice by question, so a question's methods run in one process (and share its prompt cache).
        order = {q.id: i for i, q in enumerate(questions)}
        pending = [(q, m) for q, m in pending if order[q.id] % n == k - 1]
    summary = EvalSummary(
        dataset=str(dataset_path), model=model_label, methods=methods, out_dir=out_dir,
        n_questions=len(questions), skipped=len(questions) * len(methods) - len(pending), params=params,
        preset=_preset_of(params), vocabulary=vocab_record,
    )
    if pending and vocabulary and on_warning is not None:
        unknown = unknown_relations(questions, vocabulary)
        if unknown:
            shown = ", ".join(unknown[:10]) + (f" and {len(unknown) - 10} more" if len(unknown) > 10 else "")
            on_warning(f"{vocabulary.source}: relations no question's graph holds (their words match nothing): {shown}")
    return EvalPlan(dataset_path, questions, methods, params, out_dir, model_label, vocabulary, seed, pending, summary)


def run_eval(
    dataset_path: str | Path,
    methods: Sequence[str],
    model_name: str,
    out_dir: str | Path,
    limit: int | None = None,
    params: dict[str, Any] | None = None,
    progress: bool = True,
    *,
    per_type: int | None = None,
    types: Sequence[str] | None = None,
    shard: tuple[int, int] | None = None,
    model: Any = None,
    seed: int = 0,
    on_progress: ProgressFn | None = None,
    n_boot: int = 1000,
    backend: str | None = None,
    vocabulary: Any = None,
    on_warning: Callable[[str], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    on_step: Callable[[Any], None] | None = None,
    listener: Any = None,
    on_start: Callable[[int, int, EvalQuestion, str], None] | None = None,
    workers: int = 1,
) -> EvalSummary:
    """Run every method on the selected questions of a dataset and write traces, results and a summary.

    The selection is `select_questions` (``types``, ``per_type``, ``limit``).  With
    ``shard=(k, n)`` this process runs only the k-th of n interleaved slices
    of the pending pairs, so n processes on the same ``out_dir`` share the
    work (one core each); every process still reports on the whole selection
    from what is recorded so far, and a last run without ``shard`` gives the
    complete summary.  ``workers=n`` (n > 1) does that by itself: n worker
    processes (`kgqa_core.eval.parallel`), each loading ``model_name`` with its
    share of the cores, take the pending questions one at a time, and this
    process reports their progress and writes the one summary (``model`` is
    not used by them: each worker loads its own, the weights' pages are shared).
    ``model`` may be an already loaded model (the app passes its cached one);
    otherwise ``model_name`` is loaded once, and only if some pair still has
    to run, on ``backend`` (None: the default, see `models.backends`).
    ``on_progress(done, total, record)`` is called after each pair, ``on_start(i, total, question,
    method)`` before it.  ``should_stop()`` (the app's Stop) is asked between pairs and, through the
    method, after every step: a pair stopped half-way is not recorded (running again redoes it) and
    the summary says ``stopped``.  ``on_step`` hears each step of the pair going on and ``listener``
    its phases (`kgqa_core.progress`; with workers, those of the first worker still running).  Every
    activity and every finished pair is measured into this machine's rates (`kgqa_core.rates`), which
    estimates and ETAs come from.

    ``params["preset"]`` chooses the methods' preset and ``vocabulary`` (a
    `RelationVocabulary`) goes with every question's request; both are
    recorded in ``run.json`` and ``summary.json`` (and each result line), and
    an ``out_dir`` holding results of another preset or vocabulary is refused
    like one of other parameters (``preset=workbench`` is the same run as no
    preset).  ``on_warning`` gets the vocabulary's relations no question's
    graph holds, before anything runs.
    """
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a whole number of at least 1, got {workers!r}")
    plan = plan_eval(dataset_path, methods, model_name, out_dir, limit, params, per_type=per_type, types=types,
                     shard=shard, model=model, seed=seed, vocabulary=vocabulary, on_warning=on_warning)
    summary = plan.summary
    if workers > 1 and len({q.id for q, _ in plan.pending}) > 1 and _in_workers(plan.methods):
        from .parallel import run_workers

        run_workers(plan, workers, backend=backend, load_name=model_name, progress=progress, on_progress=on_progress,
                    on_start=on_start, should_stop=should_stop, on_step=on_step, listener=listener)
    elif plan.pending:
        if model is None:
            from ..models import load_model

            model = load_model(model_name, backend=backend)
        run_pairs(plan, plan.pending, model, progress=progress, on_progress=on_progress, on_start=on_start,
                  should_stop=should_stop, on_step=on_step, listener=listener)
    return finish_summary(plan, n_boot=n_boot)


def _in_workers(methods: Sequence[str]) -> bool:
    """Worker processes can run these methods (one registered at run time, from no file, runs here)."""
    from .parallel import importable_methods

    return importable_methods(methods)


def run_pairs(
    plan: EvalPlan, pending: Sequence[tuple[EvalQuestion, str]], model: Any, *, progress: bool = False,
    on_progress: ProgressFn | None = None, on_start: Callable[[int, int, EvalQuestion, str], None] | None = None,
    should_stop: Callable[[], bool] | None = None, on_step: Callable[[Any], None] | None = None,
    listener: Any = None,
) -> None:
    """Run ``pending`` pairs of ``plan`` on a loaded ``model`` one after another; counts go to ``plan.summary``."""
    from tqdm.auto import tqdm

    from .. import progress as phases
    from ..rates import RateListener, shared_book

    summary, out_dir = plan.summary, plan.out_dir
    summary.backend = getattr(model, "backend", "")
    book = shared_book()
    measure = RateListener(book, plan.model_label, summary.backend, forward=listener)
    bar = tqdm(total=len(pending), disable=not progress, unit="run", desc="eval", dynamic_ncols=True)
    results = _ResultsFile(out_dir / RESULTS_FILE)
    try:
        for i, (q, m) in enumerate(pending, start=1):
            if should_stop is not None and should_stop():
                summary.stopped = True
                break
            bar.set_postfix_str(f"{m} {q.id}", refresh=False)
            if results.recorded(q.id, m):  # another process on this --out did it meanwhile
                summary.skipped += 1
                bar.update(1)
                continue
            if on_start is not None:
                on_start(i, len(pending), q, m)
            measure.reset()
            with phases.listening(measure):
                record, trace = _evaluate_pair(q, m, model, plan.params, plan.seed, out_dir, plan.vocabulary,
                                               on_step, should_stop)
            if trace.stopped:  # stopped half-way: not a result (running again redoes this pair)
                summary.stopped = True
                break
            if not trace.error:
                book.observe_run(plan.model_label, summary.backend, m, trace.parameters, _size_of(q),
                                 measure.typical(record["metrics"].get("seconds") or trace.seconds),
                                 measure.first_prompt)
            if results.append(record):
                summary.ran += 1
                summary.failed += bool(record["error"])
            else:
                summary.skipped += 1
            bar.update(1)
            if on_progress is not None:
                on_progress(i, len(pending), record)
    finally:
        bar.close()
        book.flush()


def finish_summary(plan: EvalPlan, n_boot: int = 1000) -> EvalSummary:
    """The summary of everything recorded for the plan's selection, in dataset order, written to ``summary.json``.

    Records are ordered by question (dataset order), then method (the order asked for), whatever order
    the lines of ``results.jsonl`` were appended in: a parallel run appends them as its workers finish.
    """
    summary, out_dir = plan.summary, plan.out_dir
    order = {(q.id, m): i for i, (q, m) in enumerate((q, m) for q in plan.questions for m in plan.methods)}
    latest: dict[tuple[str, str], dict[str, Any]] = {}
    for r in load_results(out_dir):
        if (r["id"], r["method"]) in order:
            latest[(r["id"], r["method"])] = r
    summary.records = [latest[k] for k in sorted(latest, key=order.__getitem__)]
    summary.overall, summary.by_type = summarize_records(summary.records, plan.methods, n_boot=n_boot, seed=plan.seed)
    atomic_write_text(out_dir / SUMMARY_FILE, json.dumps(summary.to_dict(), indent=2, ensure_ascii=False))
    return summary


def _portable_path(path: Path, out_dir: Path) -> str:
    """``path`` relative to ``out_dir`` when they share a folder tree, else its file name (no machine paths)."""
    import os

    try:
        rel = os.path.relpath(path.resolve(), out_dir.resolve())
    except ValueError:  # another drive on Windows
        return path.name
    return rel if not os.path.isabs(rel) and rel.count("..") <= 3 else path.name


class UnknownQuestionTypeError(ValueError):
    """A ``types`` filter names a type no question of the dataset has."""


def select_questions(
    questions: Sequence[EvalQuestion], limit: int | None = None, per_type: int | None = None,
    types: Sequence[str] | None = None,
) -> list[EvalQuestion]:
    """The questions an evaluation runs: those of ``types``, the first ``per_type`` of each type, the first ``limit``.

    ``types`` lets an error analysis look at one kind of question first (the
    2-hop ones, say) and fill in the rest later: the out directory does not
    record the selection, so a later run without it only adds questions.

    ``per_type`` exists because datasets are usually sorted by type (all
    1-hop, then all 2-hop), so ``limit`` alone would measure one type only.
    Dataset order is kept, which keeps a smaller selection a prefix-subset of
    a larger one: raising ``per_type`` on a finished run only adds questions.
    """
    selected = list(questions)
    if types:
        known = {q.type or "" for q in selected}
        unknown = [t for t in types if t not in known]
        if unknown:
            raise UnknownQuestionTypeError(
                f"no question has type {unknown[0]!r}; the dataset's types are: "
                + ", ".join(sorted(t or "(none)" for t in known))
            )
        wanted = set(types)
        selected = [q for q in selected if (q.type or "") in wanted]
    if per_type is not None:
        seen: dict[str, int] = {}
        kept = []
        for q in selected:
            key = q.type or ""
            if seen.get(key, 0) < per_type:
                seen[key] = seen.get(key, 0) + 1
                kept.append(q)
        selected = kept
    if limit:
        selected = selected[:limit]
    return selected


def _append_line(path: Path, line: str) -> None:
    """Append one record with a single O_APPEND write, so shards sharing a file never interleave lines."""
    import os

    data = (line + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        written = os.write(fd, data)
        while written < len(data):  # only on exotic file systems; still appended in order
            written += os.write(fd, data[written:])
    finally:
        os.close(fd)


def _drop_torn_tail(path: Path) -> None:
    """Cut a half-written last line (a run killed mid-write) so appends start on a fresh line.

    Called with the results lock held: truncating in place never drops a line
    another process appends (it waits for the lock).
    """
    if not path.exists():
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        import os

        os.truncate(path, data.rfind(b"\n") + 1)


def _size_of(q: EvalQuestion) -> int | None:
    """The question's graph size for the rates (a shared graph file is loaded once anyway)."""
    from ..rates import graph_size

    try:
        return graph_size(q.graph())
    except Exception:
        return None


def _evaluate_pair(
    q: EvalQuestion, method: str, model: Any, params: dict[str, Any], seed: int, out_dir: Path,
    vocabulary: Any = None,
    on_step: Callable[[Any], None] | None = None, should_stop: Callable[[], bool] | None = None,
) -> tuple[dict[str, Any], Trace]:
    trace, wall = _run_one(q, method, model, params, seed, vocabulary, on_step, should_stop)
    trace.extra.setdefault("eval", {"question_id": q.id, "gold_answers": list(q.answers), "type": q.type})
    trace.gold_answers = list(q.answers)  # the typed field Replay grades with (the extra stays for older readers)
    try:
        error_class = classify_error(trace, _graph_of(trace, q.graph()), q.answers)
    except Exception:  # a malformed trace still gets its answer metrics
        error_class = None
    metrics = question_metrics(trace, q.answers, q.gold_chain, wall_seconds=wall, error_class=error_class)
    trace = trace_without_machine_paths(trace)
    path = save_trace(trace, trace_path(out_dir, method, q.id))
    return {
        "id": q.id,
        "method": method,
        "type": q.type,
        "question": q.question,
        "topic_entities": list(q.topic_entities),
        "answers": trace.answer_texts,
        "gold": list(q.answers),
        "error": trace.error,
        "trace": str(path.relative_to(out_dir)),
        "preset": _preset_of(params),
        "vocabulary": vocabulary.source if vocabulary else None,
        "metrics": metrics.to_dict(),
    }, trace

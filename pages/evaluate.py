"""Evaluate: run methods over a benchmark, compare their metrics, open any answer in Replay.

The page is a thin shell over `kgqa_core.eval.runner.run_eval`: the same output
directory layout as the CLI (traces, results.jsonl, summary.json), so a run
started here resumes from the CLI and the other way round.  It works inside the
app's navigation and on its own (``streamlit run pages/evaluate.py``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # standalone `streamlit run pages/evaluate.py`
    sys.path.insert(0, str(ROOT))

import pandas as pd  # noqa: E402
import plotly.graph_objects as go  # noqa: E402
import streamlit as st  # noqa: E402

from kgqa_core.eval.dataset import Dataset, DatasetFormatError, load_dataset, parse_dataset  # noqa: E402
from kgqa_core.eval.metrics import ERROR_CLASSES, GroupSummary  # noqa: E402
from kgqa_core.eval.runner import EvalConfigError, load_results, run_eval, summarize_records  # noqa: E402
from kgqa_core.eval.taxonomy import ERROR_CLASS_DESCRIPTIONS  # noqa: E402
from kgqa_ui.html_utils import md_text, plotly_text  # noqa: E402
from kgqa_ui.params_form import ASK_PRESET_KEY, DEFAULT_PRESET, PRESET_LABELS  # noqa: E402

SAMPLE = ROOT / "datasets" / "metaqa_sample" / "metaqa_dev_50.jsonl"
SRC_SAMPLE = "MetaQA sample (50 questions)"
FULL_KB = ROOT / "datasets" / "metaqa_full_kb" / "metaqa_dev_full_kb_90.jsonl"
SRC_FULL_KB = "MetaQA whole KB (90 questions)"
SRC_UPLOAD = "Upload a JSONL dataset"
SRC_FILE = "A dataset file on disk"
SRC_GENERATE = "Generate from a graph (LPKG patterns)"
SRC_SAMPLE_GRAPH = "Questions of a sample graph"
HEADLINE = [("hits1", "Hits@1"), ("f1", "F1"), ("exact_match", "Exact match"), ("triplet_f1", "Triplet-F1")]


# ------------------------------------------------------------------ helpers
def runs_dir() -> Path:
    env = os.environ.get("KGQA_RUNS_DIR")
    return (Path(env).expanduser() if env else ROOT / "runs") / "eval"


@st.cache_resource(show_spinner="Loading the model (once per session)...")
def get_model(name: str, backend: str | None = None):
    from kgqa_core.models import load_model

    return load_model(name, backend=backend)


def model_choices() -> tuple[list[str], int]:
    """Packaged models, and the index of the app's model: the one chosen on Ask, else the app's default."""
    try:
        from kgqa_core.models import DEFAULT_APP_MODEL, PACKAGED_MODELS

        names = list(PACKAGED_MODELS)
        default = DEFAULT_APP_MODEL
    except ImportError:
        names, default = ["smollm2-135m", "qwen2.5-coder-1.5b"], "smollm2-135m"
    chosen = st.session_state.get("ask_model")
    if chosen in names:
        default = chosen
    return names, names.index(default) if default in names else 0


def seconds_per_question(method: str, model: str, out_dir: Path) -> tuple[float | None, str]:
    """A measured time per question for (method, model): this evaluation's own results, else saved app runs."""
    try:
        own = [r["metrics"]["seconds"] for r in load_results(out_dir) if r.get("method") == method]
    except Exception:
        own = []
    if own:
        return sum(own) / len(own), f"{len(own)} earlier question(s) of this evaluation"
    try:
        from kgqa_ui import state as ui_state

        runs = [i.seconds for i in ui_state.store().list() if i.method == method and i.model == model and i.seconds > 0]
    except Exception:
        runs = []
    if runs:
        return sorted(runs)[len(runs) // 2], f"median of {len(runs)} saved run(s) on this machine"
    return None, "no run of this method and model measured yet"


def time_estimate(methods: list[str], model: str, n: int, out_dir: Path) -> str:
    """Plain text: the expected duration before starting, per method, from measured runs."""
    parts, total, unknown = [], 0.0, []
    for m in methods:
        secs, basis = seconds_per_question(m, model, out_dir)
        if secs is None:
            unknown.append(m)
            continue
        total += secs * n
        parts.append(f"{m}: about {secs:.1f} s per question ({basis})")
    if not parts:
        return ("No time estimate yet: none of these methods has run with this model here. Try 1-2 questions "
                "first; the progress bar then shows the time per question.")
    text = f"Estimated time: about {_duration(total)} for {n} question(s) × {len(parts)} method(s); " + "; ".join(parts)
    if unknown:
        text += f". Not measured yet: {', '.join(unknown)} (adds to this)."
    return text


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def class_name(code: str) -> str:
    """ "E1" -> "E1 search error" (the taxonomy's words, not only its code)."""
    desc = ERROR_CLASS_DESCRIPTIONS.get(code, "")
    return f"{code} {desc.split(':', 1)[0]}" if desc else code


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


def run_slug(dataset_path: Path, model: str, params: dict, vocabulary=None) -> str:
    """One output directory per (dataset content, model, parameters and preset, vocabulary): re-running resumes it."""
    digest = hashlib.sha256(dataset_path.read_bytes()).hexdigest()[:8]
    settings: object = params if not vocabulary else {"params": params, "vocabulary": vocabulary.entries}
    pdig = hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:6]
    clean = lambda s: re.sub(r"[^A-Za-z0-9._-]+", "_", s)[:40]  # noqa: E731
    return f"{clean(dataset_path.stem)}-{digest}--{clean(model)}--{pdig}"


def _save_upload(data: bytes, name: str) -> Path:
    folder = runs_dir() / "datasets"
    folder.mkdir(parents=True, exist_ok=True)
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(name).stem)[:40] or "upload"
    path = folder / f"{stem}-{hashlib.sha256(data).hexdigest()[:8]}.jsonl"
    if not path.exists():
        from kgqa_core.files import atomic_write_bytes

        atomic_write_bytes(path, data)  # two tabs uploading at once never publish half a file
    return path


def _session_graph():
    """The graph the user is working with in the app, if another page put one in the session."""
    from kgqa_core.graph.knowledge_graph import KnowledgeGraph

    for key in ("graph", "kg", "current_graph"):
        g = st.session_state.get(key)
        if isinstance(g, KnowledgeGraph) and len(g):
            return g
    return None


def generate_dataset(graph, patterns: list[str], n: int, seed: int) -> Path:
    """Ground LPKG patterns in the session graph object itself; returns the dataset's path.

    No round trip through a TSV file: the questions are grounded in the graph
    as loaded (an RDF literal "Paris" stays "Paris"), and the graph is saved
    beside the dataset in a form that keeps every name exactly.
    """
    from kgqa_core.lpkg.generate import GenerationError, write_generated_dataset
    from kgqa_core.lpkg.patterns import PatternError

    try:
        return write_generated_dataset(graph, patterns, n, seed, runs_dir() / "datasets")
    except (GenerationError, PatternError) as exc:
        raise ValueError(str(exc)) from None


# ------------------------------------------------------------------ charts
def _est(g: GroupSummary, key: str):
    return getattr(g, key)


def metric_figure(groups: list[GroupSummary], keys=HEADLINE, title: str = "Answer quality per method") -> go.Figure:
    fig = go.Figure()
    for g in groups:
        xs, ys, hi, lo = [], [], [], []
        for key, label in keys:
            e = _est(g, key)
            if e is None:
                continue
            xs.append(label)
            ys.append(e.value)
            hi.append(e.high - e.value)
            lo.append(e.value - e.low)
        fig.add_bar(name=g.method, x=xs, y=ys, error_y=dict(type="data", array=hi, arrayminus=lo, visible=True))
    fig.update_layout(barmode="group", title=title, yaxis=dict(range=[0, 1.05], title="score (95% CI)"),
                      height=360, margin=dict(l=10, r=10, t=40, b=10), legend_title_text="method")
    return fig


def type_figure(groups: list[GroupSummary], key: str = "hits1", label: str = "Hits@1") -> go.Figure:
    fig = go.Figure()
    for m in dict.fromkeys(g.method for g in groups):
        rows = [g for g in groups if g.method == m and _est(g, key) is not None]
        fig.add_bar(
            name=m, x=[plotly_text(g.type) for g in rows], y=[_est(g, key).value for g in rows],
            error_y=dict(type="data", visible=True, array=[_est(g, key).high - _est(g, key).value for g in rows],
                         arrayminus=[_est(g, key).value - _est(g, key).low for g in rows]),
            customdata=[g.n for g in rows], hovertemplate="%{x}: %{y:.3f} (n=%{customdata})<extra></extra>",
        )
    fig.update_layout(barmode="group", title=f"{label} per question type", yaxis=dict(range=[0, 1.05]),
                      height=340, margin=dict(l=10, r=10, t=40, b=10))
    return fig


def time_figure(records: list[dict]) -> go.Figure:
    fig = go.Figure()
    for m in dict.fromkeys(r["method"] for r in records):
        fig.add_box(name=m, y=[r["metrics"]["seconds"] for r in records if r["method"] == m], boxpoints="all")
    fig.update_layout(title="Wall time per question (s)", height=320, margin=dict(l=10, r=10, t=40, b=10),
                      showlegend=False)
    return fig


def taxonomy_figure(groups: list[GroupSummary]) -> go.Figure | None:
    rows = [g for g in groups if g.error_classes]
    if not rows:
        return None
    fig = go.Figure()
    for c in ERROR_CLASSES:
        fig.add_bar(name=plotly_text(class_name(c)), x=[plotly_text(g.method) for g in rows],
                    y=[g.error_classes.get(c, 0) for g in rows], hovertext=plotly_text(ERROR_CLASS_DESCRIPTIONS[c]),
                    hoverinfo="text+y")
    fig.update_layout(barmode="stack", title="READS error taxonomy (methods that expose their subgraph)",
                      height=320, margin=dict(l=10, r=10, t=40, b=10))
    return fig


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


def answer_entities(out_dir: Path, rec: dict) -> list[str]:
    """The run's answers as graph entities (the trace's linked entity), not the raw text the model wrote;
    each says in words when the model wrote it otherwise or it names no graph entity (`answer_label`)."""
    names = _trace_answers(str(out_dir / rec.get("trace", "")))
    return names if names is not None else list(rec.get("answers", []))


@st.cache_data(show_spinner=False, max_entries=4096)
def _trace_answers(path: str) -> list[str] | None:
    try:
        from kgqa_core.answers.chain_entities import answer_label
        from kgqa_core.trace.schema import load_trace

        return [answer_label(a) for a in load_trace(path).answers]
    except Exception:
        return None


QUESTION_COLUMNS = ["question", "answers", "gold", "Hits@1", "F1", "class", "method", "type", "id", "error"]


def question_frame(records: list[dict], out_dir: Path | None = None) -> pd.DataFrame:
    """One row per (question, method); the columns a reader checks first come first."""
    rows = []
    for r in records:
        answers = answer_entities(out_dir, r) if out_dir is not None else list(r.get("answers", []))
        code = r["metrics"].get("error_class") or ""
        rows.append({
            "question": r["question"], "answers": ", ".join(answers[:5]) or "(none)",
            "gold": ", ".join(r.get("gold", [])[:5]), "Hits@1": bool(r["metrics"]["hits1"]),
            "F1": round(r["metrics"]["f1"], 3), "class": class_name(code) if code else "",
            "method": r["method"], "type": r.get("type", ""), "id": r["id"], "error": r.get("error", ""),
        })
    return pd.DataFrame(rows, columns=QUESTION_COLUMNS)


QUESTION_COLUMN_CONFIG = {
    "question": st.column_config.TextColumn("question", width="large"),
    "answers": st.column_config.TextColumn("answers (entities)", width="medium"),
    "gold": st.column_config.TextColumn("gold", width="medium"),
    "Hits@1": st.column_config.CheckboxColumn("Hits@1", width="small"),
    "F1": st.column_config.NumberColumn("F1", width="small", format="%.2f"),
    "class": st.column_config.TextColumn("error class", width="medium",
                                         help="READS taxonomy: " + "; ".join(f"{k}: {v}" for k, v in
                                                                             ERROR_CLASS_DESCRIPTIONS.items())),
}


# ------------------------------------------------------------------ page
def choose_dataset() -> tuple[Path | None, Dataset | None]:
    sample_sets = sample_question_sets()
    sources = [SRC_SAMPLE] + ([SRC_FULL_KB] if FULL_KB.is_file() else []) + (
        [SRC_SAMPLE_GRAPH] if sample_sets else []) + [SRC_UPLOAD, SRC_FILE]
    sources += [SRC_GENERATE] if generator_available() else []
    source = st.radio("Dataset", sources, horizontal=True, key="eval_source")
    path: Path | None = None
    if source == SRC_SAMPLE:
        path = SAMPLE
        st.caption("25 one-hop and 25 two-hop MetaQA development questions, each with its own subgraph "
                   "(≤ 200 triplets). MetaQA: Zhang et al., AAAI 2018, CC BY 3.0.")
    elif source == SRC_FULL_KB:
        path = FULL_KB
        st.caption("30 one-, 30 two- and 30 three-hop MetaQA development questions, each asked over the whole "
                   "MetaQA KB (133,582 triplets, loaded once per evaluation; every cap a method applies to it is "
                   "noted in the trace). MetaQA: Zhang et al., AAAI 2018, CC BY 3.0.")
    elif source == SRC_SAMPLE_GRAPH:
        title = st.selectbox("Sample graph", list(sample_sets), key="eval_sample_graph")
        path = sample_sets[title]
    elif source == SRC_UPLOAD:
        up = st.file_uploader("JSONL, one question a line (see docs/evaluation.md)", type=["jsonl", "json"],
                              key="eval_upload")
        if up is None:
            return None, None
        data = up.getvalue()
        try:
            parse_dataset(data, up.name)
        except DatasetFormatError as exc:
            st.error("This file is not a valid dataset.")
            st.code(str(exc), language=None)
            return None, None
        path = _save_upload(data, up.name)
    elif source == SRC_FILE:
        text = st.text_input("Path to a .jsonl dataset", key="eval_path",
                             placeholder="e.g. runs/metaqa_dev_200.jsonl (python -m kgqa_core.datasets metaqa ...)")
        if not text.strip():
            return None, None
        path = Path(text.strip()).expanduser()
        if not path.is_absolute():
            path = ROOT / path
    else:
        path = _generate_ui()
        if path is None:
            return None, None
    try:
        ds = load_dataset(path)
    except DatasetFormatError as exc:
        st.error("This dataset cannot be used.")
        st.code(str(exc), language=None)
        return None, None
    types = ", ".join(f"{t}: {sum(q.type == t for q in ds)}" for t in ds.types) or "no types"
    st.caption(f"**{len(ds)} questions** (" + md_text(types) + ") · " + md_text(path.name))
    for w in ds.warnings[:3]:
        st.warning(md_text(w))
    return path, ds


def _generate_ui() -> Path | None:
    graph = _session_graph()
    if graph is None:
        from kgqa_ui.graph_upload import graph_uploader, parse_upload

        up = graph_uploader("Graph file to generate questions from", "eval_gen_graph")  # the Ask page's limit
        if up is not None:
            marker = f"{up.name}:{up.size}:{getattr(up, 'file_id', '')}"
            parsed = st.session_state.get("eval_gen_parsed")
            if not parsed or parsed[0] != marker:  # parsed once per uploaded file, not on every rerun
                parsed = st.session_state["eval_gen_parsed"] = (marker, *parse_upload(up))
            graph, err = parsed[1], parsed[2]
            if graph is None:
                st.error(err or "")
                return None
    else:
        st.caption("Generating from the current graph **" + md_text(graph.name) + f"** ({len(graph)} triplets).")
    if graph is None:
        st.info("Load a graph (here or on the graph page) to generate questions from it.")
        return None
    c1, c2, c3 = st.columns([3, 1, 1])
    patterns = c1.multiselect("Patterns", lpkg_patterns(), default=["1p", "2p", "2i"], key="eval_gen_patterns")
    n = c2.number_input("Questions", 1, 500, 20, key="eval_gen_n")
    seed = c3.number_input("Seed", 0, 10_000, 0, key="eval_gen_seed")
    if st.button("Generate questions", key="eval_gen_go", disabled=not patterns):
        try:
            st.session_state["eval_generated_path"] = str(generate_dataset(graph, patterns, int(n), int(seed)))
        except ValueError as exc:
            st.error("Question generation failed: " + md_text(exc))
    path = st.session_state.get("eval_generated_path")
    return Path(path) if path else None


def run_panel(path: Path, ds: Dataset) -> Path | None:
    descriptions, available = method_choices()
    models, default_model = model_choices()
    c1, c2 = st.columns([3, 2])
    default_methods = [m for m in ("dog", "cot", "direct") if m in available] or sorted(available)[:1]
    methods = c1.multiselect(
        "Methods", list(descriptions), default=default_methods, key="eval_methods",
        format_func=lambda m: m if m in available else f"{m} (not available yet)",
        help="\n\n".join(f"**{m}**: {d}" for m, d in descriptions.items()),
    )
    model = c2.selectbox("Model", models, index=default_model, key="eval_model")
    kinds = sorted({q.type or "" for q in ds.questions})
    types = None
    if len(kinds) > 1:
        if st.session_state.get("eval_types_of") != kinds or "eval_types" not in st.session_state:
            # another dataset: its own types, all chosen (a kept choice would hide the 3-hop questions of the
            # whole-KB set after the sample's 1- and 2-hop ones)
            st.session_state["eval_types_of"] = kinds
            st.session_state["eval_types"] = kinds
        types = st.multiselect(
            "Question types", kinds, key="eval_types",  # chosen through the session state above
            format_func=lambda t: t or "(no type)",
            help="Run only these kinds of question (the 2-hop ones, say); a later run with more types adds the rest.",
        ) or kinds
    n_selected = sum(1 for q in ds.questions if types is None or (q.type or "") in types)
    c3, c4 = st.columns(2)
    limit = c3.number_input("Questions (first N of the chosen types)", 1, n_selected, min(10, n_selected),
                            key="eval_limit")
    beam = c4.number_input("Beam size (0 = each method's default)", 0, 16, 0, key="eval_beam")
    params = {"beam_size": int(beam)} if beam else {}
    preset, vocabulary = preset_and_vocabulary()
    if preset != DEFAULT_PRESET:
        params["preset"] = preset
    out_dir = runs_dir() / run_slug(path, model, params, vocabulary)
    missing = [m for m in methods if m not in available]
    if missing:
        st.warning("Not available yet (module missing): " + md_text(", ".join(missing)) + "; they will be skipped.")
    runnable = [m for m in methods if m in available]
    st.caption("Results go to " + md_text(out_dir) + "; running again resumes (finished questions are skipped).")
    if runnable:
        st.info(time_estimate(runnable, model, int(limit), out_dir), icon=":material/schedule:")  # registry names only
    if st.button("Run evaluation", type="primary", disabled=not runnable, key="eval_run"):
        bar = st.progress(0.0, text="Loading the model...")
        try:
            from kgqa_ui.running import chosen_backend

            loaded = get_model(model, chosen_backend())

            def on_progress(done: int, total: int, rec: dict) -> None:
                mark = "✓" if rec["metrics"]["hits1"] else ("⚠" if rec["error"] else "✗")
                bar.progress(done / total, text=f"{done}/{total} · {md_text(rec['method'])} · {md_text(rec['id'])} {mark}")

            summary = run_eval(path, runnable, model, out_dir, limit=int(limit), params=params, progress=False,
                               model=loaded, on_progress=on_progress,
                               types=None if types is None or set(types) == set(kinds) else types,
                               vocabulary=vocabulary, on_warning=lambda msg: st.warning(md_text(msg)))
            bar.progress(1.0, text=f"Done: ran {summary.ran}, resumed {summary.skipped}, errors {summary.failed}")
        except (DatasetFormatError, EvalConfigError, ValueError, OSError, RuntimeError) as exc:
            bar.empty()
            st.error("The evaluation stopped: " + md_text(exc))
    return out_dir


def preset_and_vocabulary():
    """The methods' preset (the Ask page's choice to start with) and the session's relation vocabulary, if used."""
    from kgqa_ui import state as ui_state

    start = st.session_state.get(ASK_PRESET_KEY)
    c5, c6 = st.columns(2)
    preset = c5.radio(
        "Preset", list(PRESET_LABELS), key="eval_preset", format_func=PRESET_LABELS.get, horizontal=True,
        index=list(PRESET_LABELS).index(start if start in PRESET_LABELS else DEFAULT_PRESET),
        help="Every chosen method runs with it. Workbench (guided): the workbench's defaults; Paper (as published): "
             "each method as its paper describes it. Each preset has its own results folder.") or DEFAULT_PRESET
    vocabulary = ui_state.graph_vocabulary()
    if not vocabulary:
        c6.caption("No relation vocabulary: give one on the Ask page (Relation vocabulary) to use it here too.")
        return preset, None
    graph = ui_state.active_graph()
    use = c6.checkbox(
        f"Use the relation vocabulary of the Ask page ({len(vocabulary.entries)} relation(s))", value=True,
        key="eval_use_vocabulary",
        help="Your words for the relations of " + md_text(getattr(graph, "name", "the loaded graph")) + ", given to "
             "every question of the dataset (relations its graphs lack are named when the run starts). Runs with "
             "and without it keep their results apart.")
    return preset, vocabulary if use else None


def results_panel(out_dir: Path, ds: Dataset) -> None:
    records = load_results(out_dir)
    if not records:
        st.info("No results yet for this dataset, model and settings: press **Run evaluation**.")
        return
    overall, by_type = summarize_records(records, n_boot=500)
    st.subheader("Results")
    st.caption("Hits@1 is strict (the first answer must be gold, READS App. C); F1 is macro; intervals are "
               "95% bootstrap over questions. Matching normalises case, punctuation and articles.")
    st.dataframe(summary_frame(overall), hide_index=True, width="stretch")
    c1, c2 = st.columns(2)
    c1.plotly_chart(metric_figure(overall), key="eval_fig_metrics")
    if len({g.type for g in by_type}) > 1:
        c2.plotly_chart(type_figure(by_type), key="eval_fig_types")
    else:
        c2.plotly_chart(time_figure(records), key="eval_fig_time_alt")
    c3, c4 = st.columns(2)
    if len({g.type for g in by_type}) > 1:
        c3.plotly_chart(time_figure(records), key="eval_fig_time")
    tax = taxonomy_figure(overall)
    if tax is not None:
        c4.plotly_chart(tax, key="eval_fig_taxonomy")
    with st.expander("Per question type"):
        st.dataframe(summary_frame(by_type), hide_index=True, width="stretch")

    st.subheader("Per question")
    frame = question_frame(records, out_dir)
    event = st.dataframe(frame, hide_index=True, width="stretch", on_select="rerun", column_config=QUESTION_COLUMN_CONFIG,
                         selection_mode="single-row", key="eval_table")
    rows = list(getattr(getattr(event, "selection", None), "rows", []) or []) if event is not None else []
    labels = [f"{r['method']} · {r['id']} · {r['question'][:70]}" for r in records]
    index = rows[0] if rows else 0
    choice = st.selectbox("Question and method", range(len(records)), index=index, key=f"eval_pick_{index}",
                          format_func=lambda i: labels[i])
    rec = records[choice]
    st.markdown("**" + md_text(rec["question"]) + "**  \ngold: " + md_text(", ".join(rec["gold"])) + "  \nanswers: "
                + (md_text(", ".join(answer_entities(out_dir, rec))) or "(none)"))
    if rec.get("error"):
        st.error(md_text(rec["error"]))
    if rec["metrics"].get("error_class"):
        c = rec["metrics"]["error_class"]
        st.caption(md_text(f"{class_name(c)}: {ERROR_CLASS_DESCRIPTIONS.get(c, '')}"))
    if st.button("Open this trace in Replay", key="eval_open_replay"):
        open_in_replay(out_dir / rec["trace"], ds, rec["id"])


def open_in_replay(trace_file: Path, ds: Dataset, qid: str) -> None:
    """Hand the trace to Replay: import it into the run store with its graph and open it by run id."""
    st.session_state["replay_trace_path"] = str(trace_file)
    try:
        from kgqa_core.trace.schema import load_trace
        from kgqa_ui import state as ui_state

        info = ui_state.store().save(load_trace(trace_file), ds.by_id(qid).graph())
        ui_state.remember_run(info.run_id)
    except (ImportError, KeyError, OSError, ValueError) as exc:
        st.info("Replay could not take this trace (" + md_text(exc) + "); the file is " + md_text(trace_file) + ".")
        return
    try:
        st.switch_page("pages/replay.py", query_params={"run": info.run_id})
    except Exception:  # standalone or no Replay page registered
        st.info("Replay is not available here; the trace is saved as run " + md_text(info.run_id) + ".")


def main() -> None:
    st.title("Evaluate")
    st.caption("Run methods over a benchmark and compare them: strict Hits@1, F1, exact match, triplet-F1, "
               "ill triplets, the READS error taxonomy, cost and wall time. Open any answer in Replay.")
    path, ds = choose_dataset()
    if path is None or ds is None:
        return
    out_dir = run_panel(path, ds)
    if out_dir is not None:
        results_panel(out_dir, ds)


main()

"""Evaluate: run methods over a benchmark in the background, compare their metrics, open any answer in Replay.

A thin shell: the evaluation is a job of this session like an Ask run
(`kgqa_ui.running`, `kgqa_ui.eval_job`: progress, phase, time left, Stop),
its logic and tables are in `kgqa_ui.eval_view` and its charts in
`kgqa_ui.eval_charts`.  The output folder has the CLI's layout (traces,
results.jsonl, summary.json), so an evaluation started here resumes from the
CLI and the other way round.  It works inside the app's navigation and on its
own (``streamlit run pages/evaluate.py``).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # standalone `streamlit run pages/evaluate.py`
    sys.path.insert(0, str(ROOT))

import streamlit as st  # noqa: E402

from kgqa_core.eval.dataset import Dataset, DatasetFormatError, load_dataset, parse_dataset  # noqa: E402
from kgqa_core.eval.runner import load_results, select_questions, summarize_records  # noqa: E402
from kgqa_core.eval.taxonomy import ERROR_CLASS_DESCRIPTIONS  # noqa: E402
from kgqa_ui.eval_charts import class_name, metric_figure, taxonomy_figure, time_figure, type_figure  # noqa: E402
from kgqa_ui.eval_job import EvalSpec, method_params  # noqa: E402
from kgqa_ui.eval_view import (  # noqa: E402
    generate_dataset, generator_available, lpkg_patterns, method_choices, question_frame, run_slug, runs_dir,
    sample_question_sets, save_upload, summary_frame, time_estimate, typical_graph_size, worker_choices,
    workers_caption, workers_for,
)
from kgqa_ui.html_utils import md_text  # noqa: E402
from kgqa_ui.params_form import ASK_PRESET_KEY, DEFAULT_PRESET, PRESET_LABELS  # noqa: E402

SAMPLE = ROOT / "datasets" / "metaqa_sample" / "metaqa_dev_50.jsonl"
SRC_SAMPLE = "MetaQA sample (50 questions)"
FULL_KB = ROOT / "datasets" / "metaqa_full_kb" / "metaqa_dev_full_kb_90.jsonl"
SRC_FULL_KB = "MetaQA whole KB (90 questions)"
SRC_UPLOAD = "Upload a JSONL dataset"
SRC_FILE = "A dataset file on disk"
SRC_GENERATE = "Generate from a graph (LPKG patterns)"
SRC_SAMPLE_GRAPH = "Questions of a sample graph"


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


def _session_graph():
    """The graph the user is working with in the app, if another page put one in the session."""
    from kgqa_core.graph.knowledge_graph import KnowledgeGraph

    for key in ("graph", "kg", "current_graph"):
        g = st.session_state.get(key)
        if isinstance(g, KnowledgeGraph) and len(g):
            return g
    return None


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
        path = save_upload(data, up.name)
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
    from kgqa_core.rates import shared_book
    from kgqa_ui.running import backend_guess, make_eval_job, run_controls

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
    c3, c4, c7 = st.columns(3)
    limit = c3.number_input("Questions (first N of the chosen types)", 1, n_selected, min(10, n_selected),
                            key="eval_limit")
    beam = c4.number_input("Beam size (0 = each method's default)", 0, 16, 0, key="eval_beam")
    workers_choice = c7.selectbox(
        "Workers", worker_choices(), key="eval_workers",
        help="Questions run at once, each worker a process with its share of the cores. auto: one per core for "
             "the in-process llama.cpp model, one for a model server. Results are the same as one after another.")
    workers = workers_for(workers_choice, backend_guess(model))
    c7.caption(md_text(workers_caption(workers_choice, workers)))
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
    chosen_types = None if types is None or set(types) == set(kinds) else tuple(types)
    selected = select_questions(ds.questions, limit=int(limit), types=list(chosen_types) if chosen_types else None)
    size = typical_graph_size(selected)
    if runnable:
        book = shared_book()
        book.reload()  # what other sessions and evaluations measured since
        st.info(time_estimate(runnable, int(limit), load_results(out_dir), book, model, backend_guess(model),
                              lambda m: method_params(m, params), size, workers),
                icon=":material/schedule:")  # registry names and measured numbers only

    def make_job():
        return make_eval_job(EvalSpec(path, tuple(runnable), model, out_dir, int(limit), params, chosen_types, size,
                                      vocabulary, workers))

    def keep(outcomes: list[dict]) -> None:
        st.session_state["eval_outcome"] = outcomes[0] if outcomes else None

    run_controls("eval", "Run evaluation", lambda: [], keep, blocked="" if runnable else "Choose a method",
                 make_job=make_job, help="Runs in the background: the page stays usable, Stop ends it (every "
                                         "worker) after the current step (those questions are redone next time).")
    outcome = st.session_state.get("eval_outcome")
    if outcome and outcome.get("error"):
        st.error(md_text(outcome["error"]))
    elif outcome and outcome.get("stopped"):
        st.warning("Stopped by you: the questions finished so far are recorded; Run evaluation resumes.",
                   icon=":material/stop_circle:")
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
    frame = question_frame(records, lambda r: answer_entities(out_dir, r))
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

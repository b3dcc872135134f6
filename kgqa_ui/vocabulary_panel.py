"""The Ask page's "Relation vocabulary": the user's own words for the loaded graph's relations.

A vocabulary is the text format of `kgqa_core.reading.vocabulary`
(``relation: word, word`` a line).  The user uploads a ``.txt`` file or
types the text; every change is parsed at once, errors are shown with
their line numbers as plain text (the text is the user's, never Markdown),
relations the graph lacks as a warning.  The parsed vocabulary is kept in
the session with the graph it was given for (`state.set_vocabulary`;
loading another graph clears it, with a note) and goes with every run.
A trace's reading and vocabulary are drawn by `panels.question_reading`.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from kgqa_core.reading.vocabulary import MAX_VOCABULARY_BYTES, RelationVocabulary, VocabularyError

from . import state
from .html_utils import md_text

UPLOAD_KEY = "ask_vocab_upload"
UPLOAD_DONE_KEY = "ask_vocab_upload_done"  # the upload already copied into the text area
UPLOADED_KEY = "ask_vocab_uploaded"  # (file name, its text): the source named while the text is unchanged
PLACEHOLDER = "directed_by: director, made by, filmed by\nstarred_actors: actor, starring, appears in\n# a comment"
TYPED_SOURCE = "typed on the Ask page"


def vocabulary_expander(graph: Any) -> str:
    """The "Relation vocabulary" expander; returns why runs must wait ("" when they need not).

    A text with errors keeps the last vocabulary that read without errors
    (nothing is lost) and holds the runs back until it is fixed or emptied,
    so a run never goes with words other than those shown.
    """
    note = st.session_state.pop(state.VOCABULARY_NOTE_KEY, None)
    if note:
        st.info(md_text(note), icon=":material/info:")
    _adopt_draft_note(graph)
    typed = str(st.session_state.get(state.VOCABULARY_TEXT_KEY) or "").strip()
    problem = ""
    # open while it holds a text (its errors and warnings stay in sight); the label stays put, so does the state
    with st.expander("Relation vocabulary", icon=":material/translate:", expanded=bool(typed)):
        st.caption("Your own words for this graph's relations, so the question's reading knows that 'wife' means "
                   "'spouse': one relation a line, its name as the graph spells it, a colon, then your words "
                   "separated by commas ('spouse: wife, husband, married to'). Lines starting with # are comments. "
                   "The vocabulary belongs to the loaded graph, goes with every run and is saved in its trace.")
        _take_upload()
        _take_draft(graph)
        _draft_note()
        text = st.text_area("Vocabulary text", key=state.VOCABULARY_TEXT_KEY, height=140, placeholder=PLACEHOLDER,
                            max_chars=MAX_VOCABULARY_BYTES, persist_state="session",
                            help="relation: word, word — one relation a line; # starts a comment")
        problem = _read(text, graph)
        _draft_controls(graph, text)
    return problem


# ------------------------------------------------------------ the model's draft
DRAFT_JOB_KEY = "vocab_job"  # the session's DraftJob (`running.register_job("vocab", ...)`: a reload keeps it)
DRAFT_RUN_KEY = "ask_vocab_draft"
DRAFT_NOTE_KEY = "ask_vocab_draft_note"  # (the text the draft was merged into, what it added)
DRAFT_SEEN_KEY = "ask_vocab_draft_seen"  # the DraftJob this connection has taken its note from (or started)
SECONDS_PER_RELATION = 2.0  # the 1.5B on this 2-core CPU (docs/benchmarks.md, "Vocabulary draft")


def _draft_job() -> Any:
    from .draft_job import DraftJob

    job = st.session_state.get(DRAFT_JOB_KEY)
    return job if isinstance(job, DraftJob) else None


def _adopt_draft_note(graph: Any) -> None:
    """A reload: the session's draft comes back (`running.adopt_jobs`) and its merged text with the session record
    (`persist`), but the session state is empty; the note of what the draft added is shown again while that text
    stands."""
    job = _draft_job()
    if job is None or st.session_state.get(DRAFT_SEEN_KEY) is job:
        return
    st.session_state[DRAFT_SEEN_KEY] = job
    if (job.graph_fingerprint == getattr(graph, "fingerprint", None) and job.note is not None
            and job.note[0] == st.session_state.get(state.VOCABULARY_TEXT_KEY)):
        st.session_state[DRAFT_NOTE_KEY] = job.note


def _take_draft(graph: Any) -> None:
    """A finished draft for this graph goes into the text once (before the text area is drawn), the user's lines kept."""
    from .draft_job import merged_text

    job = _draft_job()
    if job is None or not job.done or job.collected:
        return
    job.collected = True
    p = job.progress()
    if p.error:
        st.error(md_text(p.error + " The vocabulary text is unchanged."), icon=":material/error:")
    if job.graph_fingerprint != getattr(graph, "fingerprint", None):
        st.info("The model's draft belonged to another graph; it was not added.", icon=":material/info:")
        return
    drafted = job.result()
    text = str(st.session_state.get(state.VOCABULARY_TEXT_KEY) or "")
    # the job is done (its worker no longer writes them); only the names the draft describes
    languages = {r: lang for r, lang in job.costs.languages.items() if r in drafted.entries}
    merged = merged_text(text, drafted, p.relations_done, languages)
    st.session_state[state.VOCABULARY_TEXT_KEY] = merged
    st.session_state.pop(UPLOADED_KEY, None)  # the text is no longer the file as uploaded
    note = (f"The model described {len(drafted.entries)} of {p.relations_done} relation(s)"
            + (" (stopped early)" if p.stopped else "") + "; its lines are at the end of the text. "
            + (f"It was told that {len(languages)} name(s) are in another language (the comment above them says "
               "which). " if languages else "") +
            "Read and correct them: they are a draft.")
    st.session_state[DRAFT_NOTE_KEY] = job.note = (merged, note)


def _draft_note() -> None:
    """What the last draft added, shown until the text is edited."""
    kept = st.session_state.get(DRAFT_NOTE_KEY)
    if isinstance(kept, tuple) and len(kept) == 2:
        if kept[0] == st.session_state.get(state.VOCABULARY_TEXT_KEY):
            st.success(md_text(kept[1]), icon=":material/check_circle:")
        else:
            st.session_state.pop(DRAFT_NOTE_KEY, None)


def _draft_controls(graph: Any, text: str) -> None:
    """"Draft with the model": the relations the text does not describe yet, asked one by one in a worker thread."""
    from .running import get_model, running_job_page, register_job

    job = _draft_job()
    if job is not None and not job.done:
        _draft_panel(job)
        return
    relations = sorted(getattr(graph, "relations", None) or [])
    try:
        have = set(RelationVocabulary.parse(text).entries) if text.strip() else set()
    except VocabularyError:
        have = set()
    todo = [r for r in relations if r not in have]
    model = _model_for_draft()
    busy = running_job_page()
    why = ("a run is going" if busy else "install or pick a model below first" if not model
           else "every relation is described" if not todo else "")
    minutes = max(1, round(len(todo) * SECONDS_PER_RELATION / 60))
    st.caption(md_text(f"The model can draft the words for you: shown each relation and two of its facts, it "
                       f"writes what the relation means in plain English. {len(todo)} relation(s) to describe, "
                       f"about {minutes} min; you can stop at any time and keep what is drafted."))
    if st.button("Draft with the model", key=DRAFT_RUN_KEY, icon=":material/auto_awesome:", disabled=bool(why),
                 help=("Cannot draft now: " + why) if why else f"Ask {model} about {len(todo)} relation(s)"):
        from .draft_job import DraftJob
        from .running import chosen_backend

        backend = chosen_backend()
        job = DraftJob(graph, todo, model, lambda name, say: get_model(name, say, backend=backend)).start()
        st.session_state[DRAFT_JOB_KEY] = st.session_state[DRAFT_SEEN_KEY] = job
        register_job("vocab", job)
        st.rerun()


def _model_for_draft() -> str:
    """The model chosen on the Ask page (before its box is first drawn: the one it will default to), if usable."""
    import os

    from kgqa_core.models.registry import DEFAULT_APP_MODEL, PACKAGED_MODELS, is_installed

    from . import server_panel

    chosen = st.session_state.get("ask_model") or os.environ.get("KGQA_APP_MODEL") or DEFAULT_APP_MODEL
    if server_panel.is_server_key(chosen):
        return chosen
    spec = PACKAGED_MODELS.get(chosen)
    return chosen if spec is not None and is_installed(spec) else ""


def _draft_panel(job: Any) -> None:
    @st.fragment(run_every=1.0)
    def panel() -> None:
        p = job.progress()
        if p.done:
            st.rerun()  # the whole page: the draft goes into the text before the text area is drawn
        share = p.relations_done / p.relations_total if p.relations_total else 0.0
        now = f": {p.current}" if p.current else ""
        st.progress(min(1.0, share), text=md_text(f"Drafting {p.relations_done} of {p.relations_total} "
                                                  f"relation(s){now} ({p.elapsed:.0f} s)"))
        st.button("Stop drafting", key="ask_vocab_draft_stop", on_click=job.stop, disabled=p.stopped,
                  icon=":material/stop_circle:", help="Stop after the current relation; what is drafted is kept.")

    panel()


def _take_upload() -> None:
    up = st.file_uploader("Load a vocabulary file (.txt)", type=["txt"], key=UPLOAD_KEY,
                          max_upload_size=max(1, MAX_VOCABULARY_BYTES // 1_000_000))
    if up is None:
        return
    marker = f"{up.name}:{up.size}:{getattr(up, 'file_id', '')}"
    if st.session_state.get(UPLOAD_DONE_KEY) == marker:
        return
    st.session_state[UPLOAD_DONE_KEY] = marker
    data = up.getvalue()
    if len(data) > MAX_VOCABULARY_BYTES:
        st.error(md_text(f"{up.name}: {len(data)} bytes; a vocabulary may have at most {MAX_VOCABULARY_BYTES}."))
        return
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        st.error(md_text(f"{up.name}: not UTF-8 text (byte {exc.start}); the text below is unchanged."))
        return
    st.session_state[state.VOCABULARY_TEXT_KEY] = text  # set before the text area is drawn: it shows the file
    st.session_state[UPLOADED_KEY] = (up.name, text)


def _source(text: str) -> str:
    uploaded = st.session_state.get(UPLOADED_KEY)
    if isinstance(uploaded, tuple) and len(uploaded) == 2 and uploaded[1] == text:
        return str(uploaded[0])
    return TYPED_SOURCE


def _read(text: str, graph: Any) -> str:
    """Parse the text into the session's vocabulary; show errors and unknown relations as plain text."""
    if not text.strip():
        state.set_vocabulary(None)
        st.caption("No vocabulary: the relations' own names are read.")
        return ""
    try:
        vocabulary = RelationVocabulary.parse(text, _source(text))
    except VocabularyError as exc:
        message = str(exc).replace("; line ", "\nline ").replace("; ... and", "\n... and")
        st.error(md_text("The vocabulary has errors; fix them (or empty the text) to run:\n" + message),
                 icon=":material/error:")
        kept = state.graph_vocabulary()
        if kept:
            st.caption(md_text(f"The last vocabulary that read without errors ({len(kept.entries)} relation(s)) is "
                               "kept; nothing runs with it until the text reads again."))
        return "Fix the relation vocabulary's errors (or empty it)"
    state.set_vocabulary(vocabulary)
    words = sum(len(a) for a in vocabulary.entries.values())
    unknown = vocabulary.unknown(graph)
    if unknown:
        shown = ", ".join(unknown[:20]) + (f" and {len(unknown) - 20} more" if len(unknown) > 20 else "")
        st.warning(md_text(f"Not relations of {getattr(graph, 'name', 'this graph')} (their words match nothing; "
                           f"a typo?): {shown}"), icon=":material/warning:")
    st.caption(md_text(f"In use for every run on this graph: {len(vocabulary.entries)} relation(s), {words} word(s) "
                       f"({vocabulary.source})."))
    return ""

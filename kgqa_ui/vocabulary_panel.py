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
    typed = str(st.session_state.get(state.VOCABULARY_TEXT_KEY) or "").strip()
    problem = ""
    # open while it holds a text (its errors and warnings stay in sight); the label stays put, so does the state
    with st.expander("Relation vocabulary", icon=":material/translate:", expanded=bool(typed)):
        st.caption("Your own words for this graph's relations, so the question's reading knows that 'wife' means "
                   "'spouse': one relation a line, its name as the graph spells it, a colon, then your words "
                   "separated by commas ('spouse: wife, husband, married to'). Lines starting with # are comments. "
                   "The vocabulary belongs to the loaded graph, goes with every run and is saved in its trace.")
        _take_upload()
        text = st.text_area("Vocabulary text", key=state.VOCABULARY_TEXT_KEY, height=140, placeholder=PLACEHOLDER,
                            max_chars=MAX_VOCABULARY_BYTES, persist_state="session",
                            help="relation: word, word — one relation a line; # starts a comment")
        problem = _read(text, graph)
    return problem


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

"""Nothing lost on reload: the session's graph, question, gold and topics come back; cards keep their own verdict.

A reload in AppTest is a new `AppTest` (an empty session state) opened on the
URL the first one left (its ``?s=`` session id, or a ``?run=`` deep link).
"""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

import ui_fixtures as F
from apptest import TIMEOUT, assert_clean as _ok, open_app as _app
from conftest import APP
from kgqa_ui.run_store import RunStore
from kgqa_ui.session_store import SessionStore

TSV = "\n".join("\t".join(t) for t in F.TRIPLETS).encode()




def _sid(at: AppTest) -> str:
    value = at.query_params["s"]
    return value[0] if isinstance(value, list) else value


def _badges(at: AppTest) -> list[str]:
    """The text of every st.badge (Markdown ``:color-badge[...]``, escaped), without its icon."""
    out = []
    for m in at.markdown:
        if "-badge[" in m.value:
            text = m.value.split("-badge[", 1)[1].rsplit("]", 1)[0].replace("\\", "")
            out.append(text.split(": ", 1)[1] if text.startswith(":material/") else text)
    return out


def _upload_and_ask(at: AppTest) -> AppTest:
    at.segmented_control(key="ask_source").set_value("Upload a file").run()
    at.file_uploader(key="ask_upload").set_value(("tate.tsv", TSV, "text/tab-separated-values")).run()
    at.text_area(key="ask_question").input(F.QUESTION).run()
    at.text_input(key="ask_gold_text").input("1967 | 1968").run()
    _ok(at)
    return at


def test_a_reload_brings_back_the_uploaded_graph_question_gold_and_topics(runs_dir):
    at = _upload_and_ask(_app())
    assert at.session_state["graph"].name == "tate"
    topics = list(at.multiselect(key="ask_topics").value)
    assert topics == [F.TOPIC]
    sid = _sid(at)
    assert SessionStore(runs_dir).load(sid).graph["kind"] == "snapshot"

    again = _app(s=sid)  # F5: a new connection, the same URL
    _ok(again)
    g = again.session_state["graph"]
    assert g.name == "tate" and g.fingerprint == at.session_state["graph"].fingerprint
    assert again.text_area(key="ask_question").value == F.QUESTION
    assert again.text_input(key="ask_gold_text").value == "1967 | 1968"
    assert list(again.multiselect(key="ask_topics").value) == topics
    assert _sid(again) != sid  # it goes on under its own id: a second tab from the same link does not clash
    assert any("Restored after the reload" in c.value for c in again.sidebar.caption)
    assert any("Graph: **tate**" in c.value for c in again.sidebar.caption)


def test_a_deep_link_to_a_run_opens_its_graph_question_and_gold_not_the_sample(runs_dir, graph):
    trace = F.dog_trace(graph)
    trace.gold_answers = ["1967", "1968"]
    run_id = RunStore(runs_dir).save(trace, graph).run_id
    at = _app("pages/replay.py", run=run_id)
    _ok(at)
    assert at.session_state["graph"].fingerprint == graph.fingerprint
    assert at.session_state["ask_question"] == F.QUESTION
    assert at.session_state["ask_gold_text"] == "1967 | 1968"
    assert at.session_state["ask_topics"] == [F.TOPIC]
    # Replay grades the run against the gold saved with it
    assert "first answer correct: 2/2 gold found" in _badges(at)


def test_an_unknown_or_damaged_session_link_starts_afresh_and_says_so(runs_dir):
    (runs_dir / "sessions").mkdir(parents=True)
    (runs_dir / "sessions" / "damaged12345.json").write_text("{not json", encoding="utf-8")
    for sid in ("damaged12345", "nosuchsession1"):
        at = _app(s=sid)
        _ok(at)
        assert at.session_state["graph"].name == "metaqa_movies"
        assert any("not found" in w.value for w in at.sidebar.warning)
    at = _app(s="../../etc/passwd")  # never a path
    _ok(at)
    assert at.session_state["graph"].name == "metaqa_movies"


@pytest.fixture
def two_runs(runs_dir, graph):
    """Two questions, each run with its own gold: the first's is right, the second's is wrong."""
    store = RunStore(runs_dir)
    first = F.dog_trace(graph)
    first.gold_answers = ["1967", "1968"]
    second = F.reads_trace(graph)
    second.question = "the films directed by [Mark Robson] were released in which years"
    second.gold_answers = ["1999"]
    return store.save(first, graph).run_id, store.save(second, graph).run_id


def _card_verdicts(at: AppTest) -> list[str]:
    return [b for b in _badges(at) if "gold found" in b]


def test_each_result_card_shows_its_own_question_and_is_graded_against_its_own_gold(runs_dir, two_runs):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["ask_last_runs"] = [{"method": "dog", "title": "dog", "run_id": two_runs[0], "error": None,
                                          "stopped": False},
                                         {"method": "reads", "title": "reads", "run_id": two_runs[1], "error": None,
                                          "stopped": False}]
    at.run()
    _ok(at)
    assert _card_verdicts(at) == ["first answer correct: 2/2 gold found", "not correct: 0/1 gold found"]
    shown = " ".join(m.value for m in at.markdown)
    assert "Mark Robson" in shown and "Sharon Tate" in shown  # each card names its question
    # typing another question's gold on the page changes no card
    at.text_input(key="ask_gold_text").input("Nothing at all").run()
    assert _card_verdicts(at) == ["first answer correct: 2/2 gold found", "not correct: 0/1 gold found"]
    # and a reload keeps the cards
    again = _app(s=_sid(at))
    _ok(again)
    assert _card_verdicts(again) == ["first answer correct: 2/2 gold found", "not correct: 0/1 gold found"]


def test_runs_and_compare_show_the_saved_gold(runs_dir, two_runs):
    at = _app("pages/runs.py")
    _ok(at)
    frame = at.dataframe[0].value
    assert set(frame["gold"]) == {"1967 | 1968", "1999"}
    assert "first answer correct: 2/2 gold found" in set(frame["correct"])
    cmp = _app("pages/compare.py")
    _ok(cmp)
    gold_boxes = [t for t in cmp.text_input if t.key and t.key.startswith("cmp_gold::")]
    assert gold_boxes and gold_boxes[0].value in ("1967 | 1968", "1999")


def test_two_tabs_from_one_link_do_not_overwrite_each_other(runs_dir):
    first = _upload_and_ask(_app())
    link = _sid(first)
    tab1, tab2 = _app(s=link), _app(s=link)  # the same URL opened twice
    assert _sid(tab1) != _sid(tab2) != link
    tab2.text_area(key="ask_question").input("who directed [Valley of the Dolls]").run()
    tab2.text_input(key="ask_gold_text").input("Mark Robson").run()
    again1, again2 = _app(s=_sid(tab1)), _app(s=_sid(tab2))  # each tab reloaded
    assert again1.text_area(key="ask_question").value == F.QUESTION
    assert again1.text_input(key="ask_gold_text").value == "1967 | 1968"
    assert again2.text_area(key="ask_question").value == "who directed [Valley of the Dolls]"
    assert again2.text_input(key="ask_gold_text").value == "Mark Robson"
    assert again1.session_state["graph"].name == again2.session_state["graph"].name == "tate"


def test_switching_pages_and_back_keeps_the_session_and_its_id(runs_dir):
    at = _upload_and_ask(_app())
    sid = _sid(at)
    for page in ("pages/replay.py", "pages/explore.py", "pages/ask.py"):
        at.switch_page(page).run()
        _ok(at)
    assert _sid(at) == sid
    assert at.text_area(key="ask_question").value == F.QUESTION
    assert at.session_state["graph"].name == "tate"


def test_a_reload_brings_back_the_relation_vocabulary_in_force(runs_dir):
    """The vocabulary an expert typed for the uploaded graph survives F5 (its text and its use in runs); a text
    with errors comes back as typed (and nothing runs with it)."""
    at = _upload_and_ask(_app())
    at.text_area(key="ask_vocab_text").input("starred_actors: actor, starring, appears in").run()
    _ok(at)
    assert at.session_state["graph_vocabulary"].aliases("starred_actors") == ["actor", "starring", "appears in"]
    sid = _sid(at)

    again = _app(s=sid)
    _ok(again)
    assert again.text_area(key="ask_vocab_text").value == "starred_actors: actor, starring, appears in"
    vocab = again.session_state["graph_vocabulary"]
    assert vocab is not None and vocab.aliases("starred_actors") == ["actor", "starring", "appears in"]
    assert any("relation vocabulary" in c.value for c in again.sidebar.caption)
    assert any("In use for every run on this graph" in c.value and "3 word" in c.value for c in again.caption)

    again.text_area(key="ask_vocab_text").input("starred_actors actor").run()  # an error: no colon
    assert again.error  # said on the page, as before the reload
    broken = _app(s=_sid(again))
    assert broken.text_area(key="ask_vocab_text").value == "starred_actors actor"
    assert broken.error and not broken.exception
    assert "graph_vocabulary" not in broken.session_state or broken.session_state["graph_vocabulary"] is None  # nothing runs with words other than those shown


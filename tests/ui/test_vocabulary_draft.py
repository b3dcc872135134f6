"""The Ask page's "Draft with the model": the model writes the vocabulary's words, the user's own lines kept.

Driven with the 135M model on the app's sample graph (a few relations, well under a minute).
"""

from __future__ import annotations

import time

import pytest
from streamlit.testing.v1 import AppTest

from apptest import assert_clean as _ok, open_app as _app, small_model_or_skip
from kgqa_ui.draft_job import DraftJob, merged_text
from kgqa_core.reading.vocabulary import RelationVocabulary


pytestmark = pytest.mark.usefixtures("no_run_outlives_its_test")


def _wait(at: AppTest, timeout: float = 600) -> DraftJob:
    deadline = time.monotonic() + timeout
    while not (job := at.session_state["vocab_job"]).done:
        assert time.monotonic() < deadline, "the draft did not finish in time"
        time.sleep(1)
        at.run(timeout=timeout)
    at.run(timeout=timeout)
    return job


def test_the_draft_fills_the_text_after_the_users_lines_and_goes_with_the_runs(runs_dir, monkeypatch):
    small_model_or_skip()
    monkeypatch.setenv("KGQA_APP_MODEL", "smollm2-135m")
    at = _app()
    graph_relations = sorted(at.session_state["graph"].relations) if "graph" in at.session_state else None
    mine = "directed_by: director, made by\n"
    at.text_area(key="ask_vocab_text").set_value(mine).run()
    _ok(at)
    button = at.button(key="ask_vocab_draft")
    assert not button.disabled and "smollm2-135m" in (button.help or "")
    button.click().run()
    _ok(at)
    job = _wait(at)
    _ok(at)
    assert "directed_by" not in job.relations, "a relation the user describes is not asked again"
    text = at.text_area(key="ask_vocab_text").value
    assert text.startswith(mine), "the user's lines stay as they were, first"
    assert "# drafted by smollm2-135m" in text
    vocab = at.session_state["graph_vocabulary"]
    assert vocab.aliases("directed_by") == ["director", "made by"]
    assert len(vocab.entries) > 1, "the model described at least one more relation"
    assert any("described" in s.value and "draft" in s.value for s in at.success)
    if graph_relations:
        assert set(vocab.entries) <= set(graph_relations)
    # the button offers only what is left; the page reruns without drafting again
    at.run()
    _ok(at)
    assert at.session_state["vocab_job"] is job


def test_stopping_keeps_what_was_drafted_and_the_text(runs_dir, monkeypatch):
    small_model_or_skip()
    monkeypatch.setenv("KGQA_APP_MODEL", "smollm2-135m")
    at = _app()
    at.button(key="ask_vocab_draft").click().run()
    job = at.session_state["vocab_job"]
    job.stop()
    job = _wait(at)
    _ok(at)
    p = job.progress()
    assert p.stopped and p.relations_done < p.relations_total or p.relations_done == p.relations_total
    drafted = job.result()
    text = at.text_area(key="ask_vocab_text").value or ""
    for relation in drafted.entries:
        assert f"{relation}: " in text


def test_merging_never_overwrites_the_users_lines_and_keeps_a_text_with_errors():
    drafted = RelationVocabulary({"spouse": ["wife"], "born_in": ["birthplace"]}, "drafted by m")
    assert merged_text("spouse: husband\n", drafted, 2) == (
        "spouse: husband\n# drafted by m: 1 of 2 relation(s) described; check and correct before relying on it\n"
        "born_in: birthplace\n")
    assert merged_text("no colon here", drafted, 2).startswith("no colon here\n# drafted by m: 2 of 2")
    assert merged_text("spouse: a\nborn_in: b", drafted, 2) == "spouse: a\nborn_in: b"


# ------------------------------------------------------------ a reload (F5) during and after a draft
# A reload is a new `AppTest` on the URL the first one left (its ``?s=`` session id), as in test_session.py;
# the first AppTest is not run again (its browser tab is gone).
MINE = "directed_by: director, made by\nstarred_actors: actor, starring\n"


def _sid(at: AppTest) -> str:
    value = at.query_params["s"]
    return value[0] if isinstance(value, list) else value


@pytest.fixture
def gate(monkeypatch):
    """Each relation's question to the model waits until the gate opens (the real 135M answers it then), so a
    draft is surely still going when the page is reloaded."""
    import threading

    from kgqa_ui import draft_job

    opened = threading.Event()
    real = draft_job.draft_relation

    def gated(*args, **kwargs):
        opened.wait(timeout=300)
        return real(*args, **kwargs)

    monkeypatch.setattr(draft_job, "draft_relation", gated)
    yield opened
    opened.set()  # never leave a worker waiting (no_run_outlives_its_test waits for it to end)


def _drafted_lines_once(text: str, job: DraftJob) -> None:
    assert text.count("# drafted by smollm2-135m") <= 1, text
    for relation in job.result().entries:
        assert text.count(f"\n{relation}: ") == 1, (relation, text)


def _start_draft(monkeypatch) -> AppTest:
    small_model_or_skip()
    monkeypatch.setenv("KGQA_APP_MODEL", "smollm2-135m")
    at = _app()
    at.text_area(key="ask_vocab_text").set_value(MINE).run()
    _ok(at)
    at.button(key="ask_vocab_draft").click().run()
    _ok(at)
    return at


def test_a_reload_while_drafting_shows_the_draft_going_keeps_the_text_and_can_stop_it(runs_dir, monkeypatch, gate):
    at = _start_draft(monkeypatch)
    job = at.session_state["vocab_job"]
    deadline = time.monotonic() + 300
    while not (first := job.progress().current):  # the model loaded, asked about the first relation (held)
        assert not job.done and time.monotonic() < deadline, job.progress()
        time.sleep(0.2)
    again = _app(s=_sid(at))  # F5 while the model is asked about the first relation
    _ok(again)
    assert again.session_state["vocab_job"] is job, "the reloaded page has the session's draft"
    assert again.text_area(key="ask_vocab_text").value == MINE, "the typed vocabulary survives the reload"
    shown = [p.text.replace("\\", "") for p in again.progress]  # (the text is escaped Markdown)
    assert any("Drafting 0 of" in t and first in t for t in shown), shown
    stop = again.button(key="ask_vocab_draft_stop")
    assert not stop.disabled
    assert "ask_vocab_draft" not in [b.key for b in again.button], "no second draft while this one goes"
    stop.click().run()
    _ok(again)
    assert job.progress().stopped
    gate.set()
    job = _wait(again)
    _ok(again)
    p = job.progress()
    assert p.stopped and p.relations_done == 1 and not p.error, p
    text = again.text_area(key="ask_vocab_text").value or ""
    assert text.startswith(MINE), "the user's lines stay as they were, first"
    _drafted_lines_once(text, job)
    assert again.session_state["graph_vocabulary"].aliases("directed_by") == ["director", "made by"]
    again.run()
    _ok(again)
    assert again.text_area(key="ask_vocab_text").value == text, "the draft is merged once"


@pytest.mark.parametrize("shown_before_the_reload", [True, False], ids=["merged-then-reload", "reload-at-the-end"])
def test_a_reload_after_the_draft_offers_its_lines_once_after_the_users(runs_dir, monkeypatch, shown_before_the_reload):
    at = _start_draft(monkeypatch)
    if shown_before_the_reload:
        job = _wait(at)  # the first page merged the draft into its text
        _ok(at)
        merged = at.text_area(key="ask_vocab_text").value
        assert merged.startswith(MINE) and merged != MINE, merged
    else:
        job = at.session_state["vocab_job"]
        assert job.wait(timeout=600), "the draft did not finish in time"  # ended while the page was reloading
        merged = None
    assert job.result().entries, "the model described at least one relation"
    again = _app(s=_sid(at))
    _ok(again)
    assert again.session_state["vocab_job"] is job
    text = again.text_area(key="ask_vocab_text").value or ""
    assert text.startswith(MINE), f"the typed vocabulary survives the reload: {text!r}"
    assert "# drafted by smollm2-135m" in text, f"the drafted lines are offered after the reload: {text!r}"
    _drafted_lines_once(text, job)
    if merged is not None:
        assert text == merged
    assert any("described" in s.value and "draft" in s.value for s in again.success)
    assert not again.progress and "ask_vocab_draft_stop" not in [b.key for b in again.button]
    vocab = again.session_state["graph_vocabulary"]
    assert vocab.aliases("directed_by") == ["director", "made by"] and len(vocab.entries) > 2
    again.run()
    _ok(again)
    assert again.text_area(key="ask_vocab_text").value == text, "the draft is not merged twice"


def test_a_merged_draft_says_which_names_the_model_was_told_are_in_another_language():
    drafted = RelationVocabulary({"est": ["east"], "born_in": ["birthplace"]}, "drafted by m")
    text = merged_text("", drafted, 2, {"est": "French", "ville": "French"})
    assert text.splitlines()[1] == "# named in another language (told to the model): est (French)"
    assert RelationVocabulary.parse(text).entries == drafted.entries, "the comment is one the file format skips"
    assert "another language" not in merged_text("est: east\n", drafted, 2, {"est": "French"})


def test_the_draft_job_tells_the_model_a_names_language(llama_model):
    """The Ask page's job (no Streamlit): the same prompts as ``vocabulary draft``, the languages kept for the note."""
    from kgqa_core.graph import KnowledgeGraph
    from kgqa_core.reading import language

    if not language.available():
        pytest.skip("wordfreq (requirements.txt) is not installed")
    g = KnowledgeGraph.from_triplets([("Avion", "est", "Méricourt"), ("Avion", "birthPlace", "Lens")], name="fr")
    job = DraftJob(g, ["est", "birthPlace"], "smollm2-135m", lambda name, progress: llama_model)
    assert job.start().wait(300), "the draft did not finish in time"
    assert job.progress().error == "" and job.costs.languages == {"est": "French"}
    bare = DraftJob(g, ["est"], "smollm2-135m", lambda name, progress: llama_model, languages=False)
    assert bare.start().wait(300), "the draft did not finish in time"
    assert bare.costs.languages == {}

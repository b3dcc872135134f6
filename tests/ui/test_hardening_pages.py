"""Pages a bad file or URL used to break: damaged traces in the runs folder, hostile ``?step=`` values."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

import ui_fixtures as F
from apptest import TIMEOUT, open_app as _app
from conftest import APP
from kgqa_ui.html_utils import md_text
from kgqa_ui.run_store import RunStore

# Each is a saved trace with one field of the wrong type; each used to break Runs and Replay.
DAMAGED = {
    "bad-seconds": lambda d: d.update(seconds="abc"),
    "bad-question": lambda d: d.update(question=123),
    "bad-steps": lambda d: d.update(steps=[1]),
    "bad-answers": lambda d: d.update(answers="abc"),
    "bad-score": lambda d: d["steps"][0]["candidates"].append({"label": "x", "score": "high"}),
}



@pytest.fixture
def runs_with_damage(saved_runs, runs_dir):
    good = F.dog_trace().to_dict()
    for name, spoil in DAMAGED.items():
        data = json.loads(json.dumps(good))
        spoil(data)
        (runs_dir / f"{name}.json").write_text(json.dumps(data), encoding="utf-8")
    (runs_dir / "bad-nan.json").write_text(F.dog_trace().to_json().replace('"seconds": 0', '"seconds": NaN', 1))
    (runs_dir / "bad-deep.json").write_text('{"method": "dog", "question": "q", "extra": {"x": ' + "[" * 100_000
                                            + "]" * 100_000 + "}}")
    return saved_runs


def test_damaged_runs_are_listed_with_the_field_and_can_be_deleted(runs_with_damage, runs_dir):
    store = RunStore(runs_dir)
    assert len(store.list()) == len(runs_with_damage)
    reasons = {d.run_id: d.problem for d in store.damaged}
    assert set(reasons) == {*DAMAGED, "bad-nan", "bad-deep"}
    assert "field seconds" in reasons["bad-seconds"] and "field question" in reasons["bad-question"]
    assert "field steps[0]" in reasons["bad-steps"] and "field answers" in reasons["bad-answers"]
    assert "steps[0].candidates[" in reasons["bad-score"] and "NaN" in reasons["bad-nan"]
    assert "nested too deeply" in reasons["bad-deep"]

    at = _app("pages/runs.py")
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert len(at.dataframe[0].value) == len(runs_with_damage), "every good run still listed"
    shown = " ".join(t.value for t in at.text)
    assert "field seconds" in shown and "field answers" in shown
    at.button(key="runs_delete_damaged::bad-steps").click().run()
    assert not at.exception
    assert not (runs_dir / "bad-steps.json").exists()
    assert (runs_dir / "bad-answers.json").exists()

    for run_id in runs_with_damage.values():  # every good run still opens in Replay
        at = _app("pages/replay.py", run=run_id)
        assert not at.exception and not at.error, [e.value for e in at.error]
        assert at.selectbox(key="replay_pick").value == run_id


def test_replay_url_naming_a_damaged_run_shows_the_newest_good_one(runs_with_damage):
    at = _app("pages/replay.py", run="bad-seconds")
    assert not at.exception and not at.error
    assert at.selectbox(key="replay_pick").value in runs_with_damage.values()


@pytest.mark.parametrize("step", ["abc", "-1", "²", "٣", "9" * 5000, "1e3", " 2", "2\n", "999999", "", "0x1"])
def test_replay_step_parameter_never_breaks_the_page(saved_runs, step):
    at = _app("pages/replay.py", run=saved_runs["dog"], step=step)
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error
    assert at.select_slider[0].value == 0


def test_import_refuses_a_bad_trace_naming_the_field(runs_dir):
    data = F.dog_trace().to_dict()
    data["steps"][0]["seconds"] = "abc"
    at = _app("pages/runs.py")
    at.file_uploader(key="runs_import").set_value(("t.json", json.dumps(data).encode(), "application/json")).run()
    assert not at.exception
    assert at.error and md_text("t.json") in at.error[0].value and md_text("steps[0].seconds") in at.error[0].value
    assert RunStore(runs_dir).list() == []


def test_ask_says_an_overlong_question_is_too_long(runs_dir):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.text_area(key="ask_question").set_value("who directed [Heat] " * 5000).run()
    assert not at.exception
    assert at.error and "question is too long" in at.error[0].value
    assert "max prompt triplets" not in at.error[0].value


@pytest.mark.parametrize("raw,limit", [("nan", 50.0), ("inf", 50.0), ("1e308", 50.0), ("-3", 50.0), ("abc", 50.0),
                                       ("7", 7.0)])
def test_the_upload_limit_is_a_finite_size(monkeypatch, raw, limit):
    """KGQA_MAX_UPLOAD_MB=inf would reach the uploader as an infinite limit (math.ceil raises): the default is used."""
    from kgqa_ui.state import upload_limit_mb

    monkeypatch.setenv("KGQA_MAX_UPLOAD_MB", raw)
    assert upload_limit_mb() == limit

"""Waiting you can read: a job's phase as it goes, a time left from measured rates, no false check mark, Stop.

The methods here are test methods registered for the test (no model): they
report a stage and a prompt read through `kgqa_core.progress` as the real
ones do, and wait on an event so a test can look at a job while it runs.
"""

from __future__ import annotations

import sys
import threading
import time
import types
from dataclasses import dataclass

import pytest
from streamlit.testing.v1 import AppTest

import ui_fixtures as F
from conftest import APP
from kgqa_core import progress
from kgqa_core.parameters import MethodParams, param
from kgqa_core.rates import Estimate, RateBook
from kgqa_core.trace.schema import Answer, Step
from kgqa_ui import eta
from kgqa_ui.run_job import RunJob, RunSpec
from kgqa_ui.run_store import RunStore

GATE = threading.Event()  # the test method waits here after its prompt read until the test lets it go


class FakeModel:
    name = "phase-model"
    backend = "llama.cpp"
    revision = "0"
    load_note = ""


@dataclass(frozen=True)
class PhaseParams(MethodParams):
    steps: int = param(2, "steps", min=1, max=10)


def _phase_run(request, params, rec) -> None:
    """Says its stage, reads a 'prompt' of 400 tokens in 4 batches, waits for the gate, records its steps."""
    progress.stage("stage A: reading the question")
    with progress.activity(progress.PROMPT, "reading a prompt of 400 tokens", 400) as act:
        for _ in range(4):
            time.sleep(0.05)
            act.advance(100)
    GATE.wait(30)
    for k in range(params.steps):
        progress.stage(f"step {k + 1} of {params.steps}")
        rec.step(Step(index=0, kind="phase.step", title=f"step {k + 1}"))
    rec.trace.answers = [Answer(text="1967", entity="1967", in_graph=True)]


@pytest.fixture
def phase_method(monkeypatch):
    from kgqa_core.methods import base

    module = types.ModuleType("kgqa_phase_method")
    module.SPEC = base.MethodSpec("phase", _phase_run, PhaseParams, "a method that reports its phases")
    monkeypatch.setitem(sys.modules, "kgqa_phase_method", module)
    monkeypatch.setitem(base.METHODS, "phase", "kgqa_phase_method")
    GATE.clear()
    yield "phase"
    GATE.set()


def _job(runs_dir, rates: RateBook, **params) -> RunJob:
    g = F.sample_graph()
    spec = RunSpec("phase", g, F.QUESTION, (F.TOPIC,), dict(params), "phase-model")
    return RunJob([spec], RunStore(runs_dir), load_model=lambda name, say=None: FakeModel(),
                  step_line=lambda s: s.title, backend="llama.cpp", rates=rates)


def _wait_for(job: RunJob, what, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        p = job.progress()
        if what(p):
            return p
        time.sleep(0.02)
    raise AssertionError(f"never seen: {job.progress()}")


def test_time_left_in_words():
    est = Estimate(30.0, "median of 3 run(s) of dog here with these settings on graphs of this size", 3)
    assert eta.time_left(est, 10.0).text == "about 20 s left"
    assert eta.time_left(est, 10.0, act_left=25.0).text == "about 25 s left"  # the prompt still to read wins
    late = eta.time_left(est, 45.0)
    assert late.overdue and late.text == "longer than the usual 30 s" and late.seconds is None
    assert "not known" in eta.time_left(None, 3.0).text
    assert eta.time_left(None, 3.0, act_left=4.0).text == "about 4 s left"
    assert eta.time_left(est, 0.0, later=50.0, later_unknown=1).text == "about 80 s left (+ 1 run(s) not measured yet)"
    split = Estimate(21.0, "b", 3, first_prompt=0.2, rest=6.0)
    assert eta.time_left(split, 9.0, first=eta.FirstPrompt("reading", spent=8.9), act_left=0.5).text == "about 6 s left"
    assert eta.time_left(split, 10.0, first=eta.FirstPrompt("done", seconds=8.0)).text == "about 4 s left"
    act = progress.Activity(progress.PROMPT, "reading a prompt of 1,834 tokens", 917, 1834, time.monotonic() - 4)
    assert eta.activity_text(act, time.monotonic()).startswith("reading a prompt of 1,834 tokens · 50% · for 4 s")
    assert eta.activity_left(act, 100.0, time.monotonic()) == pytest.approx(9.17)
    assert eta.duration(42) == "42 s" and eta.duration(600) == "10 min" and eta.duration(7200) == "2.0 h"


def test_a_job_shows_its_phase_at_once_and_an_eta_from_this_machines_rates(runs_dir, tmp_path, phase_method):
    rates = RateBook(tmp_path / "rates.json")
    job = _job(runs_dir, rates).start()
    p = _wait_for(job, lambda p: p.activity.startswith("reading a prompt of 400 tokens"))
    assert job.first_phase_at is not None and job.first_phase_at < 2.0  # a phase is known at once
    assert p.stage == "stage A: reading the question" and p.fraction is not None
    assert "not known" in p.eta  # nothing measured yet: said, not guessed
    _wait_for(job, lambda p: p.activity == "")
    GATE.set()
    assert job.wait(30)
    done = job.progress()
    assert done.done and done.outcomes[0].run_id and not done.eta
    assert rates.rate("phase-model", "llama.cpp", "prompt") > 0  # the read was measured ...
    assert len(rates.runs("phase-model", "llama.cpp", "phase")) == 1  # ... and the whole run

    GATE.clear()
    second = _job(runs_dir, rates).start()
    p = _wait_for(second, lambda p: p.activity.startswith("reading a prompt"))
    assert p.eta.startswith("about ") and p.eta.endswith(" left"), p.eta
    assert "median of 1 run(s) of phase here with these settings" in p.eta_basis
    GATE.set()
    assert second.wait(30)


def test_stop_ends_a_job_after_its_current_step(runs_dir, tmp_path, phase_method):
    job = _job(runs_dir, RateBook(tmp_path / "rates.json"), steps=5).start()
    _wait_for(job, lambda p: p.activity == "" and p.stage.startswith("stage A"))
    job.stop()
    GATE.set()
    assert job.wait(30)
    p = job.progress()
    assert p.outcomes[0].stopped and RunStore(runs_dir).load(p.outcomes[0].run_id).stopped
    assert len(RunStore(runs_dir).load(p.outcomes[0].run_id).steps) == 1


def test_the_panel_never_shows_a_check_mark_while_the_run_goes(runs_dir, phase_method, monkeypatch):
    """`with st.status(...)` marks the box complete when the block ends: a run still going flashed a check."""
    at = AppTest.from_file(APP, default_timeout=60).run()
    job = _job(runs_dir, RateBook(runs_dir.parent / "rates.json")).start()
    _wait_for(job, lambda p: p.activity.startswith("reading a prompt"))
    at.session_state["ask_job"] = job
    at.run()
    assert not at.exception, at.exception
    status = [s for s in at.status if "phase" in s.label]
    assert status and status[0].state == "running" and "check" not in status[0].icon
    assert "stage A" in status[0].label
    GATE.set()
    assert job.wait(30)
    at.run()
    at.run()
    finished = [s for s in at.status if "Finished" in s.label]
    assert finished and finished[0].state == "complete"


def test_the_evaluate_page_runs_in_the_background_and_stops(runs_dir, phase_method, monkeypatch):
    """Evaluate goes through the same job machinery: the page returns at once, Stop ends it, results so far stay."""
    import kgqa_core.models as models

    monkeypatch.setattr(models, "load_model", lambda name, **kw: FakeModel())
    GATE.set()  # each question runs straight through

    def slow(request, params, rec):  # a second per question, so Stop lands half-way
        time.sleep(0.6)
        _phase_run(request, params, rec)

    from kgqa_core.methods import base

    module = types.ModuleType("kgqa_slow_method")
    module.SPEC = base.MethodSpec("slowphase", slow, PhaseParams, "a slow method")
    monkeypatch.setitem(sys.modules, "kgqa_slow_method", module)
    monkeypatch.setitem(base.METHODS, "slowphase", "kgqa_slow_method")
    page = str(F.__file__).replace("tests/ui/ui_fixtures.py", "pages/evaluate.py")
    at = AppTest.from_file(page, default_timeout=60).run()
    at.multiselect(key="eval_methods").set_value(["slowphase"]).run()
    at.number_input(key="eval_limit").set_value(20).run()
    started = time.monotonic()
    at.button(key="eval_run").click().run()
    assert time.monotonic() - started < 15, "the page came back while the evaluation runs"
    job = at.session_state["eval_job"]
    assert not job.done
    assert at.button(key="eval_job_stop") is not None
    deadline = time.monotonic() + 30
    while not any(line.startswith("1/") for line in job.progress().log) and time.monotonic() < deadline:
        time.sleep(0.1)
    at.button(key="eval_job_stop").click().run()
    assert job.wait(60)
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any("Stopped by you" in w.value for w in at.warning)
    results = list((runs_dir / "eval").glob("*/results.jsonl"))
    assert results, (job.progress().outcomes, job.progress().log)
    n = len(results[0].read_text().splitlines())
    assert 1 <= n < 20  # the finished questions are recorded, the rest are not
    assert job.summary.stopped

"""Shared fixtures for the UI tests: a temporary runs directory holding hand-made traces."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
for p in (str(ROOT), str(HERE)):
    if p not in sys.path:
        sys.path.insert(0, p)

import ui_fixtures  # noqa: E402

APP = str(ROOT / "app.py")


@pytest.fixture
def runs_dir(tmp_path, monkeypatch):
    d = tmp_path / "runs"
    monkeypatch.setenv("KGQA_RUNS_DIR", str(d))
    return d


@pytest.fixture
def graph():
    return ui_fixtures.sample_graph()


@pytest.fixture
def saved_runs(runs_dir, graph):
    """Every fixture trace saved to the runs directory: {method: run_id}."""
    from kgqa_ui.run_store import RunStore

    store = RunStore(runs_dir)
    return {name: store.save(trace, graph).run_id for name, trace in ui_fixtures.all_traces(graph).items()}


@pytest.fixture
def no_run_outlives_its_test(monkeypatch):
    """A failed test must not leave a worker thread running the model while later tests run (every kind of job:
    runs, evaluations, vocabulary drafts)."""
    from kgqa_ui.run_job import Job

    started: list[Job] = []
    original = Job.start

    def start(self):
        started.append(self)
        return original(self)

    monkeypatch.setattr(Job, "start", start)
    yield
    for job in started:
        job.stop()
    for job in started:
        job.wait(timeout=600)

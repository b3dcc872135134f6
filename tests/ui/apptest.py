"""What the AppTest-driven UI tests share: opening the app on a page, checking it is clean, the test model."""

from __future__ import annotations

import time
from typing import Any, Iterable

import pytest
from streamlit.testing.v1 import AppTest

from conftest import APP

TIMEOUT = 120


def open_app(page: str | None = None, **query) -> AppTest:
    """The app run once, on `page` (the Ask page when None), with `query` as its URL parameters."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    if page:
        at.switch_page(page)
    for k, v in query.items():
        at.query_params[k] = v
    return at.run()


def assert_clean(at: AppTest) -> None:
    """No exception and no error element on the page."""
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def replay_at_step(runs_dir, trace, graph, step: int) -> AppTest:
    """`trace` saved with `graph` in the run store, opened on Replay at its step `step`."""
    run_id = save_run(runs_dir, trace, graph)
    at = open_app("pages/replay.py", run=run_id)
    return at.select_slider(key=f"replay_step::{run_id}").set_value(step).run()


def chain_graph(trace, name: str) -> Any:
    """A saved run's first chain as a graph of its own: what Replay needs beside a trace saved by
    `kgqa_core ask --trace-out`, whose whole graph is not in the repo."""
    from kgqa_core.graph.knowledge_graph import KnowledgeGraph

    return KnowledgeGraph.from_triplets([(t.head, t.relation, t.tail) for t in trace.chains[0]], name=name)


def save_run(runs_dir, trace, graph) -> str:
    """`trace` saved with `graph` in the run store under `runs_dir`: its run id."""
    from kgqa_ui.run_store import RunStore

    return RunStore(runs_dir).save(trace, graph).run_id


def open_replay(runs_dir, trace, graph) -> AppTest:
    """`trace` saved with `graph` in the run store, opened on Replay."""
    return open_app("pages/replay.py", run=save_run(runs_dir, trace, graph))


def shown_texts(at: AppTest) -> list[str]:
    """Every text the page shows as a caption, Markdown, text, info box, code or expander label."""
    out = []
    for kind in ("caption", "markdown", "text", "info", "code", "expander"):
        for el in getattr(at, kind, []):
            value = getattr(el, "value", None) or getattr(el, "label", None)
            if isinstance(value, str):
                out.append(value)
    return out


def small_model_or_skip(methods: Iterable[str] = ()) -> None:
    """Skip (with the reason) when the 135M test model or one of `methods` is not available here."""
    from kgqa_core.models.registry import PACKAGED_MODELS, is_installed

    if not is_installed(PACKAGED_MODELS["smollm2-135m"]):
        pytest.skip("the smollm2-135m model package is not installed")
    if methods:
        from kgqa_core.methods.base import available_methods

        missing = set(methods) - set(available_methods())
        if missing:
            pytest.skip(f"methods not importable: {sorted(missing)}")


def wait_for_ask_run(at: AppTest, timeout: float = 900) -> None:
    """Rerun the page until the Ask page's background run (``ask_job``) is done, then once more to show it."""
    deadline = time.monotonic() + timeout
    while (job := at.session_state["ask_job"]) is not None and not job.done:
        assert time.monotonic() < deadline, "the run did not finish in time"
        time.sleep(2)
        at.run(timeout=timeout)
    at.run(timeout=timeout)


def lean_dog_on_example(at: AppTest) -> AppTest:
    """Example 0 and DoG chosen on the open Ask page, beam 1, one triplet step and a 30-token budget (a short run)."""
    at.selectbox(key="ask_example").set_value(0).run()
    at.multiselect(key="ask_methods").set_value(["dog"]).run()
    for key, value in (("ask_beam", 1), ("ask_steps", 1), ("ask_budget", 30)):
        at.number_input(key=key).set_value(value)
    return at.run()


def lean_dog_on_ask(monkeypatch) -> AppTest:
    """The app opened on the Ask page with the 135M model, set up by `lean_dog_on_example`."""
    small_model_or_skip()
    monkeypatch.setenv("KGQA_APP_MODEL", "smollm2-135m")
    return lean_dog_on_example(AppTest.from_file(APP, default_timeout=TIMEOUT).run())


def run_one_on_ask(at: AppTest, runs_dir) -> Any:
    """Click Run on the Ask page, wait for it, check the page is clean and one run was saved; its trace, loaded."""
    from kgqa_ui.run_store import RunStore

    at.button(key="ask_run").click().run(timeout=900)
    wait_for_ask_run(at)
    assert_clean(at)
    runs = at.session_state["ask_last_runs"]
    assert len(runs) == 1 and runs[0]["run_id"] and not runs[0].get("error"), runs
    return RunStore(runs_dir).load(runs[0]["run_id"])

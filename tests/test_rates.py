"""Phases as a run goes (kgqa_core.progress) and the rates of this machine (kgqa_core.rates)."""

from __future__ import annotations

import json
import threading
import time

from kgqa_core import progress
from kgqa_core.rates import RateBook, RateListener, params_key, size_bucket


class Heard:
    """A listener that keeps everything it hears."""

    def __init__(self) -> None:
        self.stages: list[str] = []
        self.acts: list[progress.Activity | None] = []
        self.measures: list[tuple[str, int, float]] = []

    def stage(self, label: str) -> None:
        self.stages.append(label)

    def activity(self, act: progress.Activity | None) -> None:
        self.acts.append(act)

    def measured(self, kind: str, units: int, seconds: float) -> None:
        self.measures.append((kind, units, seconds))


def test_nobody_listening_costs_nothing_and_breaks_nothing():
    progress.stage("ignored")
    with progress.activity(progress.PROMPT, "reading", 10) as act:
        act.advance(5)


def test_stages_and_activities_reach_the_listener_of_this_thread_only():
    heard, other = Heard(), Heard()

    def elsewhere() -> None:
        with progress.listening(other):
            progress.stage("other thread")

    with progress.listening(heard):
        progress.stage("triplet step 1")
        t = threading.Thread(target=elsewhere)
        t.start()
        t.join()
        with progress.activity(progress.WRITE, "writing", 100) as w:
            with progress.activity(progress.PROMPT, "reading a prompt of 300 tokens", 300) as p:
                for _ in range(3):
                    p.advance(100)
                time.sleep(0.05)
            w.advance(7)
    assert heard.stages == ["triplet step 1"] and other.stages == ["other thread"]
    reads = [a for a in heard.acts if a is not None and a.kind == progress.PROMPT]
    assert [a.done for a in reads] == [0, 100, 200, 300] and reads[-1].fraction == 1.0
    assert heard.acts[-1] is None  # nothing going on after the outer activity ended
    # after the inner read ended the listener saw the outer activity again
    assert any(a is not None and a.kind == progress.WRITE and a.done == 0 for a in heard.acts[heard.acts.index(reads[-1]):])
    (k1, n1, s1), (k2, n2, s2) = heard.measures
    assert (k1, n1, k2, n2) == (progress.PROMPT, 300, progress.WRITE, 7)
    assert s1 >= 0.05 and s2 < s1  # the generation's own time leaves out the prompt it read


def test_a_failed_activity_is_not_measured():
    heard = Heard()
    with progress.listening(heard):
        try:
            with progress.activity(progress.PROMPT, "reading", 10):
                raise RuntimeError("the model failed")
        except RuntimeError:
            pass
    assert heard.measures == [] and heard.acts[-1] is None


def test_the_book_keeps_rates_and_runs_per_model_and_backend(tmp_path):
    path = tmp_path / "rates.json"
    book = RateBook(path)
    assert book.rate("m", "llama.cpp", "prompt") is None
    book.observe_rate("m", "llama.cpp", "prompt", 1000, 10.0)
    book.observe_rate("m", "llama.cpp", "prompt", 1000, 5.0)
    rate = book.rate("m", "llama.cpp", "prompt")
    assert 100 < rate < 200 and rate > 1800 / 15  # recent measurements weigh more
    assert book.rate("m", "transformers", "prompt") is None  # kept per backend
    book.flush()
    again = RateBook(path)
    assert abs(again.rate("m", "llama.cpp", "prompt") - rate) < 1e-9
    # a second process's observations are merged, not overwritten
    other = RateBook(path)
    other.observe_run("m", "llama.cpp", "dog", {"beam_size": 1}, 700, 8.0)
    other.flush()
    book.observe_run("m", "llama.cpp", "reads", {}, 700, 4.0)
    book.flush()
    assert sorted(r["method"] for r in RateBook(path).runs("m", "llama.cpp")) == ["dog", "reads"]


def test_a_damaged_book_is_ignored(tmp_path):
    path = tmp_path / "rates.json"
    path.write_text("{not json", encoding="utf-8")
    book = RateBook(path)
    assert book.rate("m", "b", "prompt") is None
    book.observe_rate("m", "b", "prompt", 10, 1.0)
    book.flush()
    assert json.loads(path.read_text())["models"]["m|b"]["rates"]["prompt"]["n"] == 1


def test_an_estimate_never_comes_from_a_graph_of_another_size(tmp_path):
    """The issue: 307 s per question from a 4,000-triplet graph shown for MetaQA questions of 60-81 s."""
    book = RateBook(tmp_path / "rates.json")
    params = {"beam_size": 3}
    book.observe_run("q", "llama.cpp", "dog", params, 3977, 307.0)
    assert book.expected_run("q", "llama.cpp", "dog", params, 180) is None
    for secs in (60.0, 81.0, 70.0):
        book.observe_run("q", "llama.cpp", "dog", params, 190, secs)
    est = book.expected_run("q", "llama.cpp", "dog", params, 180)
    assert est.seconds == 70.0 and est.runs == 3 and "these settings on graphs of this size" in est.basis
    other = book.expected_run("q", "llama.cpp", "dog", {"beam_size": 1}, 180)
    assert other.seconds == 70.0 and "other settings" in other.basis
    assert book.expected_run("q", "llama.cpp", "dog", params, 3500).seconds == 307.0
    assert size_bucket(673) == 3.0 and size_bucket(3977) == 3.5 and size_bucket(133_582) == 5.0
    assert params_key({"a": 1, "b": 2}) == params_key({"b": 2, "a": 1})


def test_an_estimate_splits_at_the_first_prompt_read(tmp_path):
    book = RateBook(tmp_path / "rates.json")
    book.observe_run("m", "b", "dog", {}, 25, 21.0, first_prompt=8.0)  # a cold prompt prefix
    book.observe_run("m", "b", "dog", {}, 25, 6.0, first_prompt=0.1)
    book.observe_run("m", "b", "dog", {}, 25, 6.4, first_prompt=0.2)
    est = book.expected_run("m", "b", "dog", {}, 25)
    assert est.first_prompt == 0.2 and abs(est.rest - 6.2) < 1e-9


def test_the_rate_listener_measures_and_forwards(tmp_path):
    book, heard = RateBook(tmp_path / "rates.json"), Heard()
    listener = RateListener(book, "m", "b", forward=heard)
    with progress.listening(listener):
        progress.stage("s")
        with progress.activity(progress.PROMPT, "reading", 50) as a:
            a.advance(50)
            time.sleep(0.01)
        with progress.activity(progress.LOAD, "loading the embedder"):
            pass
    assert heard.stages == ["s"] and book.rate("m", "b", "prompt") > 0
    assert book.rate("m", "b", "load") is None  # a load inside a run is not the model's load
    assert listener.first_prompt is not None and listener.first_prompt >= 0.01

"""Every method's trace says where its time went (`Trace.costs`): phases that add up, and what the model read and wrote.

Real runs with the 135M model on a small graph: each method records the
breakdown through `run_method` (not a copy per method), its phases sum to the
trace's seconds, its counts agree with the trace's own, a second run in the
same process starts from zero, and a listener that was already there (the
app's job) still hears every stage and activity.
"""

from __future__ import annotations

import pytest

from kgqa_core import progress
from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_core.methods.base import METHODS, MethodRequest, run_method
from kgqa_core.trace.schema import CostBreakdown, PHASE_LABELS, Trace, TraceFormatError

GRAPH = KnowledgeGraph.from_triplets([
    ("Heat", "directed_by", "Michael Mann"), ("Heat", "release_year", "1995"), ("Heat", "starred_actors", "Al Pacino"),
    ("Michael Mann", "born_in", "Chicago"), ("Collateral", "directed_by", "Michael Mann"),
    ("Al Pacino", "born_in", "New York"), ("Collateral", "release_year", "2004"),
], name="heat")
QUESTION = "where was the director of Heat born"
PARAMS = {  # small budgets: a fast run, every phase still taken
    "dog": {"max_new_tokens": 48}, "cot": {"max_new_tokens": 32}, "direct": {"max_new_tokens": 8},
    "reads": {"max_search_steps": 2, "reader": "none"},  # a sure reading's walk needs no model call at all
    "rok": {"cot_max_tokens": 16, "filter_max_tokens": 8, "answer_max_tokens": 8},
    "lpkg": {"max_new_tokens": 32, "patterns": "1p,2p"},
}


def _run(method: str, model, listener=None) -> Trace:
    request = MethodRequest(graph=GRAPH, question=QUESTION, model=model, topic_entities=["Heat"],
                            params=PARAMS[method])
    if listener is None:
        return run_method(method, request)
    with progress.listening(listener):
        return run_method(method, request)


def _check_sums(trace: Trace) -> CostBreakdown:
    costs = trace.costs
    assert costs is not None, f"{trace.method}: no cost breakdown"
    assert all(v >= 0 for v in costs.seconds.values()), costs.seconds
    assert costs.total == pytest.approx(trace.seconds, abs=1e-3 * len(costs.seconds) + 1e-3)
    assert set(costs.seconds) <= set(PHASE_LABELS), costs.seconds  # every phase has its words
    assert costs.tokens_written == trace.tokens_out and costs.model_calls == trace.model_calls
    return costs


@pytest.mark.parametrize("method", list(METHODS))
def test_every_method_records_phases_that_sum_to_its_seconds(small_model, method):
    trace = _run(method, small_model)
    assert not trace.error, trace.error
    costs = _check_sums(trace)
    model_phases = {progress.PROMPT_READING, progress.WRITING, progress.FORCED_RUNS, progress.OPTION_SCORING}
    assert model_phases & {k for k, v in costs.seconds.items() if v > 0}, costs.seconds
    assert costs.prompt_tokens_read + costs.prompt_tokens_cached > 0
    if method == "dog":  # DoG's own phases: its G_q and tries, the triplets under the trie, the answers
        for phase in (progress.SUBGRAPH, progress.FORCED_RUNS, progress.WRITING, progress.ANSWERS):
            assert costs.entries.get(phase, 0) >= 1, (phase, costs.entries)
    again = Trace.from_json(trace.to_json())  # saved and reloaded alike
    assert again.costs == costs


class Heard:
    """The listener that was there before the run (the app's job): what it heard."""

    def __init__(self) -> None:
        self.stages: list[str] = []
        self.kinds: set[str] = set()
        self.sizes: list[tuple[str, int]] = []

    def stage(self, label: str) -> None:
        self.stages.append(label)

    def activity(self, act) -> None:
        if act is not None:
            self.kinds.add(act.kind)

    def measured(self, kind: str, units: int, seconds: float) -> None:
        self.sizes.append((kind, units))


def test_a_second_run_gets_its_own_breakdown_and_the_old_listener_hears_everything(small_model):
    heard = Heard()
    first = _run("dog", small_model, heard)
    second = _run("dog", small_model, heard)
    for trace in (first, second):
        _check_sums(trace)  # the second's phases sum to its own seconds: nothing of the first's carried over
        assert trace.costs.entries.get(progress.WRITING, 0) >= 1
    assert second.costs.total < first.costs.total + second.costs.total - 1e-3
    # the listener in front of the run forwarded every event to the one already listening
    assert any("triplet step" in s for s in heard.stages)
    assert progress.PROMPT in heard.kinds
    read = sum(u for k, u in heard.sizes if k == progress.PROMPT)
    assert read == first.costs.prompt_tokens_read + second.costs.prompt_tokens_read


def test_a_phase_opened_inside_a_model_activity_and_the_reverse_charge_the_innermost():
    from kgqa_core.methods.phase_clock import PhaseClock

    clock = PhaseClock()
    with progress.listening(clock):
        with progress.phase(progress.SUBGRAPH):
            with progress.activity(progress.PROMPT, "reading", 3) as act:
                act.advance(3)
                with progress.phase(progress.ANSWERS):
                    pass
            with progress.phase(progress.LINKING):
                pass
    clock.tick()
    assert clock.entries == {progress.SUBGRAPH: 1, progress.PROMPT_READING: 1, progress.ANSWERS: 1,
                             progress.LINKING: 1}
    assert clock.prompt_tokens_read == 3
    assert progress.OTHER in clock.seconds  # after the outer phase closed


@pytest.mark.parametrize("backend", ["transformers", "llama.cpp"])
def test_dog_counts_the_tokens_its_trie_forced_apart_from_those_the_model_chose(request, backend):
    """Forced tokens (a triplet's only continuation) are counted as the trace's token view shows them.

    The counter and the token view are written by different code (the
    decoder's jump-forward and the trace's per-position record); they must
    agree: a position with one allowed token is one the trie forced.
    """
    model = request.getfixturevalue("small_model" if backend == "transformers" else "llama_model")
    traces = [_run("dog", model) for _ in range(2)]  # a second run in the process counts from zero again
    for trace in traces:
        costs = _check_sums(trace)
        # the triplets' positions, and the answer item's where it was chosen under the reached names' trie
        positions = [p for s in trace.steps if s.kind in ("dog.triplet", "dog.answer") for p in s.token_view]
        assert positions, "no triplet was decoded"
        one = sum(p.n_allowed == 1 for p in positions)
        assert costs.tokens_forced == one, (costs.tokens_forced, one)
        assert 0 < costs.tokens_forced < costs.tokens_written
        assert costs.tokens_chosen == costs.tokens_written - costs.tokens_forced
        assert Trace.from_json(trace.to_json()).costs.tokens_forced == costs.tokens_forced
    assert traces[0].costs.tokens_forced == traces[1].costs.tokens_forced


def test_a_trace_without_a_breakdown_loads_and_a_bad_one_is_named():
    data = Trace(method="dog", question="q", seconds=1.5).to_dict()
    del data["costs"]  # written before the breakdown existed
    assert Trace.from_dict(data).costs is None
    data["costs"] = {"seconds": {"writing": "abc"}}
    with pytest.raises(TraceFormatError, match=r"costs\.seconds\.writing"):
        Trace.from_dict(data)
    data["costs"] = {"seconds": {"writing": 1.0, "a phase of a newer writer": 0.5}, "tokens_written": 4}
    costs = Trace.from_dict(data).costs
    assert costs.tokens_written == 4 and [r[0] for r in costs.rows()] == ["writing", "a phase of a newer writer"]


def test_show_prints_the_breakdown_escaped(tmp_path, capsys):
    from kgqa_core.cli import main
    from kgqa_core.trace.schema import save_trace

    trace = Trace(method="dog", question="q", seconds=3.0, costs=CostBreakdown(
        seconds={"writing": 2.0, "\x1b[31mevil": 0.5, "other": 0.5}, entries={"writing": 4},
        prompt_tokens_read=120, prompt_tokens_cached=900, tokens_written=33, tokens_forced=12, model_calls=2))
    path = save_trace(trace, tmp_path / "t.json")
    assert main(["show", str(path)]) == 0
    out = capsys.readouterr().out
    assert "time by phase (3.0s)" in out and "model writing text, 4x" in out
    assert ("120 prompt tokens read beyond the cached prefix, 900 from the cache, 33 written (12 of them forced by "
            "the graph's trie); 2 model calls") in out
    assert "\x1b" not in out and "\\x1b[31mevil" in out
    old = save_trace(Trace(method="dog", question="q"), tmp_path / "old.json")
    assert main(["show", str(old)]) == 0
    assert "time by phase: not recorded" in capsys.readouterr().out


@pytest.mark.parametrize("method", ["dog", "direct"])
def test_a_question_asked_again_reads_nothing_again(llama_model, method):
    """Explore's re-ask (issue 32, reuse): the reading and the whole prompt come from the session's caches."""
    from kgqa_core.reading.guidance import clear_readings

    clear_readings()
    first = _run(method, llama_model)
    again = _run(method, llama_model)
    for trace in (first, again):
        _check_sums(trace)
    # the first reads at least its graph context and question (the instructions may be cached by earlier runs)
    assert first.costs.prompt_tokens_read > 20
    # asked again, the prompt is served from the prefix cache up to its last batch cut (exact reuse: the numbers
    # of a new process; cuts every whole batch after the method's fixed part), so under one batch is read again
    from kgqa_core.models.llama_model import N_BATCH

    assert again.costs.prompt_tokens_read < N_BATCH
    assert again.costs.model_calls == 1  # the answer only: the question was read once for this graph
    if method == "dog":
        assert first.costs.model_calls > 1 and "read once for this question" in again.steps[0].note


def test_a_question_asked_again_reads_one_token_when_any_prefix_may_be_reused(llama_model):
    """With ``KGQA_LLAMA_EXACT=0`` (any cached prefix reused, not only exact ones) a re-ask reads only its last token."""
    llama_model.exact = False
    try:
        _run("direct", llama_model)
        again = _run("direct", llama_model)
    finally:
        llama_model.exact = True
        llama_model.clear_prefix_cache()
    assert again.costs.prompt_tokens_read <= 1

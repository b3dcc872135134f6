"""The run store under concurrency and hostile input: nothing lost, nothing of the machine leaked."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_core.trace.schema import Trace, TraceFormatError
from kgqa_ui.run_store import RunStore, RunStoreError

ROUNDS = 25


def _save_worker(args: tuple) -> list[str]:
    """Save ROUNDS runs; round r uses graph r, the same graph in every process, so snapshots collide."""
    root, worker, barrier = args
    store = RunStore(root)
    barrier.wait(timeout=120)
    ids = []
    for r in range(ROUNDS):
        graph = KnowledgeGraph.from_triplets([("a", "r", f"b{r}"), ("b", "s", "c")], name=f"g{r}")
        trace = Trace(method="cot", question=f"w{worker} r{r}")
        ids.append(store.save(trace, graph).run_id)
    return ids


def test_four_processes_save_into_one_store_and_lose_nothing(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    with ctx.Manager() as sync, ctx.Pool(4) as pool:
        barrier = sync.Barrier(4)
        results = pool.map(_save_worker, [(str(tmp_path), w, barrier) for w in range(4)])
    ids = [i for ids in results for i in ids]
    assert len(set(ids)) == 4 * ROUNDS
    store = RunStore(tmp_path)
    runs = store.list()
    assert store.damaged == [] and len(runs) == 4 * ROUNDS
    assert all(r.has_graph for r in runs)
    assert len(list((tmp_path / "graphs").glob("*.json"))) == ROUNDS
    assert [p.name for p in tmp_path.rglob("*.tmp")] == []
    for r in runs[:5]:
        assert store.load_graph(r.graph_fingerprint) is not None


@pytest.mark.parametrize("run_id", ["abc\n", "abc\r", "a b", "../x", "a/b", "", "x" * 200, "é", ".hidden", "a\x00"])
def test_invalid_run_ids_are_refused(tmp_path, run_id):
    store = RunStore(tmp_path)
    with pytest.raises(RunStoreError):
        store.path(run_id)
    with pytest.raises(RunStoreError):
        store.save(Trace(method="cot", question="q"), run_id=run_id)
    assert not any(tmp_path.iterdir()), "nothing written"


def test_saved_runs_carry_no_absolute_paths(tmp_path):
    app = str(Path(__file__).resolve().parents[2])
    graph_file = tmp_path / "my graph.tsv"
    graph_file.write_text("a\tr\tb\n")
    from kgqa_core.graph.loaders import load_graph

    graph = load_graph(graph_file)
    trace = Trace(method="cot", question="what is in /home/someone?", model=str(tmp_path / "models" / "m.gguf"),
                  error=f"FileNotFoundError: {app}/kgqa_core/x.py", notes=[f"read {graph_file}"],
                  parameters={"file": str(graph_file)}, extra={"traceback": f'File "{app}/kgqa_core/cli.py"'})
    info = RunStore(tmp_path / "runs").save(trace, graph)
    saved = info.path.read_text() + (tmp_path / "runs" / "graphs" / f"{graph.fingerprint}.json").read_text()
    assert app not in saved and str(tmp_path) not in saved
    assert "<app>/kgqa_core/x.py" in saved and "my graph.tsv" in saved
    assert "what is in /home/someone?" in saved, "the user's own text is kept"
    assert trace.error.startswith("FileNotFoundError: /"), "the caller's trace object is untouched"


def test_a_damaged_graph_snapshot_is_an_error_not_a_crash(tmp_path):
    store = RunStore(tmp_path)
    graph = KnowledgeGraph.from_triplets([("a", "r", "b")])
    store.save(Trace(method="cot", question="q"), graph)
    snap = tmp_path / "graphs" / f"{graph.fingerprint}.json"
    for bad in ('{"triplets": [[0, "a", 1, "b"]]}', '{"triplets": [[10000000000, "a", "r", "b"]]}',
                "[" * 100_000, '{"triplets": NaN}'):
        snap.write_text(bad)
        with pytest.raises(RunStoreError, match="damaged"):
            store.load_graph(graph.fingerprint)


def test_import_refuses_hostile_traces_naming_the_field(tmp_path):
    store = RunStore(tmp_path)
    good = Trace(method="cot", question="q").to_dict()
    cases = {
        "seconds": ({**good, "seconds": "abc"}, "field seconds"),
        "question": ({**good, "question": 123}, "field question"),
        "steps": ({**good, "steps": [1]}, "field steps[0]"),
        "answers": ({**good, "answers": "abc"}, "field answers"),
        "bool-int": ({**good, "model_calls": True}, "field model_calls"),
        "extra-deep": ({**good, "extra": {"a": json.loads("[" * 200 + "]" * 200)}}, "nested more than"),
    }
    for name, (data, field) in cases.items():
        with pytest.raises(TraceFormatError, match=field.replace("[", r"\[").replace("]", r"\]")):
            store.import_trace(json.dumps(data), name=f"{name}.json")
    for text, problem in (('{"method": "cot", "question": "q", "seconds": NaN}', "NaN"),
                          ('{"method": "cot", "question": "q", "seconds": -Infinity}', "Infinity"),
                          ("[" * 100_000 + "]" * 100_000, "nested too deeply")):
        with pytest.raises(TraceFormatError, match=problem) as err:
            store.import_trace(text, name="x.json")
        assert "\n" not in str(err.value) and str(err.value).startswith("x.json: ")
    assert store.list() == [] and not any(tmp_path.glob("*.json"))


def test_listing_follows_files_changed_on_disk(tmp_path):
    store = RunStore(tmp_path)
    info = store.save(Trace(method="cot", question="first"))
    assert [r.question for r in store.list()] == ["first"]
    info.path.write_text(info.path.read_text().replace('"seconds": 0.0', '"seconds": "slow"'))
    assert store.list() == [] and "field seconds" in store.damaged[0].problem
    store.save(Trace(method="cot", question="second"), run_id=info.run_id)
    assert [r.question for r in store.list()] == ["second"] and store.damaged == []

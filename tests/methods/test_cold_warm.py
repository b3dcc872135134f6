"""Issue 32, "the same answer whatever was cached before": a question asked after others (warm) gives the chain
it gives in a new process (cold), on the llama.cpp backend with the 135M model.

Before exact reuse (`kgqa_core.models.exact_reuse`), 7 of these 20 DoG chains differed cold vs warm
(docs/benchmarks.md, "The same answer whatever ran before").
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kgqa_core.eval.dataset import load_dataset
from kgqa_core.methods.base import MethodRequest, run_method
from kgqa_core.reading import guidance

ROOT = Path(__file__).resolve().parents[2]
DATASET = ROOT / "datasets/metaqa_sample/metaqa_dev_50.jsonl"


def _ask(model, q, method: str) -> tuple[str, list[str], int]:
    guidance.clear_readings()  # each run reads its question itself (a recalled reading makes no model call)
    before = model.counter.inexact_reads
    trace = run_method(method, MethodRequest(graph=q.graph(), question=q.question, model=model,
                                             topic_entities=q.topic_entities))
    assert not trace.error, trace.error
    return trace.raw_output, [a.text for a in trace.answers], model.counter.inexact_reads - before


@pytest.mark.parametrize("method,n", [("dog", 20), ("reads", 6), ("rok", 4)])
def test_cold_and_warm_runs_give_the_same_chain(llama_model, method, n):
    model = llama_model
    questions = list(load_dataset(DATASET))[:n]
    kept_store = model._exact_store
    model._exact_store = None  # nothing on disk either: cold is a new process on a new machine
    try:
        model.clear_prefix_cache()
        warm = [_ask(model, q, method) for q in questions]  # one after another, as a session or an evaluation
        cold = []
        for q in questions:
            model.clear_prefix_cache()
            cold.append(_ask(model, q, method))
    finally:
        model._exact_store = kept_store
    assert all(w[2] == 0 for w in warm), "a prompt was read while another sequence was alive"
    differ = [(q.question, w[:2], c[:2]) for q, w, c in zip(questions, warm, cold) if w[:2] != c[:2]]
    assert not differ, differ


def test_a_run_beside_another_live_sequence_says_its_reads_were_not_exact(llama_model):
    """Two tabs asking at once share the model: a prompt read while the other run's sequences are alive cannot empty
    the cache, so its trace says its numbers may differ slightly from a new process's; a run alone says nothing."""
    model = llama_model
    q = list(load_dataset(DATASET))[0]

    def direct():
        trace = run_method("direct", MethodRequest(graph=q.graph(), question=q.question, model=model,
                                                   topic_entities=q.topic_entities))
        assert not trace.error, trace.error
        return [n for n in trace.notes if n.startswith("inexact reads:")]

    assert direct() == []
    other = model.prefill(model.encode("Another tab's question is being read. " * 5))
    try:
        notes = direct()
    finally:
        model.release(other)
    assert len(notes) == 1 and "differ slightly" in notes[0]
    assert direct() == []


def test_a_new_process_answers_as_the_last_one_did_whatever_its_string_hashing(tmp_path):
    """An evaluation in shards, or run again tomorrow, runs in other processes, and Python hashes strings
    differently in each: a method whose order follows a set of names answers otherwise (RoK did, through
    networkx's neighbour order).  Two evaluations of the same questions under two hash seeds write the same
    answers and the same model text."""
    import json
    import os
    import subprocess
    import sys

    rows = []
    for seed in ("1", "2"):
        out = tmp_path / f"seed{seed}"
        env = {**os.environ, "PYTHONHASHSEED": seed, "OMP_NUM_THREADS": "1", "KGQA_PROMPT_CACHE": "0"}
        subprocess.run([sys.executable, "-m", "kgqa_core", "eval", "--dataset", str(DATASET), "--methods",
                        "dog,reads,rok", "--model", "smollm2-135m", "--backend", "llama.cpp", "--limit", "2",
                        "--out", str(out), "--no-progress"], env=env, cwd=ROOT, check=True, capture_output=True,
                       timeout=900)
        results = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
        texts = {}
        for r in results:
            trace = json.loads((out / "traces" / r["method"] / f"{r['id']}.json").read_text())
            texts[(r["method"], r["id"])] = (r["answers"], trace["raw_output"])
        rows.append(texts)
    assert len(rows[0]) == 6 and rows[0] == rows[1]

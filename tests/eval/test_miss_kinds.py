"""benchmarks/miss_kinds.py sorts a saved evaluation's wrong answers by where they went wrong, from real traces.

The trace is a real DoG run on DBpedia (`kgqa_core ask --trace-out`, the one the Replay test shows); the eval
folder around it is written as `kgqa_core eval --out` writes one, with the gold answers and walks varied so each
kind is reached.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.benchmark_script import load_benchmark

ROOT = Path(__file__).resolve().parents[2]
TRACE = ROOT / "tests" / "reading" / "data" / "monarchy_meaning_alone.json"
TOPIC = "Monarchy of the North"
# the graph the run's chain walked (a dataset line names the graph it is asked over, as `kgqa_core eval` needs)
GRAPH = [[TOPIC, "leader", "Manuel II of Portugal"], ["Manuel II of Portugal", "avant", "Charles Ier de Portugal"]]


def _script():
    return load_benchmark("miss_kinds")


def _eval_folder(tmp_path: Path, questions: list[tuple[str, list[list[str]], list[str], float]]) -> Path:
    """An eval folder: one wrong (or right) DoG result per question, each with the same real trace."""
    out = tmp_path / "run"
    (out / "traces" / "dog").mkdir(parents=True)
    data = tmp_path / "data" / "questions.jsonl"
    data.parent.mkdir()
    lines, results = [], []
    for i, (qid, gold_chain, answers, hits1) in enumerate(questions):
        shutil.copy(TRACE, out / "traces" / "dog" / f"{qid}.json")
        lines.append(json.dumps({"id": qid, "question": "who is before the leader of Monarchy of the North?",
                                 "topic_entities": [TOPIC], "answers": answers, "type": "2hop",
                                 "gold_chain": gold_chain, "graph": GRAPH}))
        results.append(json.dumps({"id": qid, "method": "dog", "type": "2hop", "question": "q",
                                   "trace": f"traces/dog/{qid}.json", "metrics": {"hits1": hits1}}))
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (out / "results.jsonl").write_text("\n".join(results) + "\n", encoding="utf-8")
    (out / "run.json").write_text(json.dumps({"dataset": str(data)}), encoding="utf-8")
    return out


def test_each_miss_is_sorted_by_the_first_stage_that_went_wrong(tmp_path, capsys):
    mod = _script()
    chosen = [[TOPIC, "leader", "Manuel II of Portugal"], ["Manuel II of Portugal", "avant", "Charles Ier de Portugal"]]
    folder = _eval_folder(tmp_path, [
        # the reading's chosen walk, and the chain wrote the gold entity: the answer line lost it
        ("q1", chosen, ["Manuel II of Portugal"], 0.0),
        # the reading's chosen walk, and the chain wrote no gold entity
        ("q2", chosen, ["Somebody Else"], 0.0),
        # the gold walk was offered third (leader -> premierMinistre), the reading chose another
        ("q3", [[TOPIC, "leader", "X"], ["X", "premierMinistre", "Y"]], ["Y"], 0.0),
        # a walk the reader never offered
        ("q4", [[TOPIC, "capital", "X"], ["X", "mayor", "Y"]], ["Y"], 0.0),
        # right answers are not misses
        ("q5", chosen, ["Charles Ier de Portugal"], 1.0),
    ])
    misses = {m["id"]: m for m in mod.sort_misses(folder)}
    assert set(misses) == {"q1", "q2", "q3", "q4"}
    assert misses["q1"]["kind"] == "chosen, answered other" and misses["q1"]["held"]
    assert misses["q2"]["kind"] == "chosen, chain strayed" and not misses["q2"]["held"]
    assert misses["q3"]["kind"] == "offered, not chosen" and misses["q3"]["gold_place"][0] == 3
    assert misses["q4"]["kind"] == "not offered" and misses["q4"]["gold_place"] is None

    assert mod.main([str(folder), "--show"]) == 0
    out = capsys.readouterr().out
    assert "| run | dog | all | 4 | 1 | 1 | 1 | 1 | 0 | 1 |" in out
    assert "gold walk: leader -> premierMinistre (offered 3." in out


def test_a_trace_without_a_reading_is_its_own_kind(tmp_path):
    mod = _script()
    folder = _eval_folder(tmp_path, [("q1", [[TOPIC, "leader", "X"]], ["X"], 0.0)])
    trace = folder / "traces" / "dog" / "q1.json"
    raw = json.loads(trace.read_text(encoding="utf-8"))
    raw["extra"].pop("reading")
    trace.write_text(json.dumps(raw), encoding="utf-8")
    assert [m["kind"] for m in mod.sort_misses(folder)] == ["no reading"]


@pytest.mark.parametrize("chain, walk", [
    ([["A", "r", "B"]], ("r",)),
    ([["B", "r", "A"], ["B", "s", "C"]], ("r", "s")),  # a hop walked backwards
    ([], ()),
])
def test_gold_walk_follows_the_chain_from_the_topic(chain, walk):
    assert _script().gold_walk("A", chain) == walk

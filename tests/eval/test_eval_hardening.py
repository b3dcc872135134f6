"""Results and datasets are JSON Lines: no record lost to a line separator, no pair recorded twice,
line numbers as an editor shows them, graph files only from the dataset's folder."""

from __future__ import annotations

import json
import multiprocessing
import os
from pathlib import Path

import pytest

from kgqa_core.eval.dataset import DatasetFormatError, load_dataset, write_dataset
from kgqa_core.eval.runner import _ResultsFile, load_results, run_eval

GRAPH = [["Heat", "directed_by", "Michael Mann"], ["Heat", "starred_actors", "Al Pacino"]]
SEPARATORS = {"ls": "\u2028", "ps": "\u2029", "nel": "\x85", "ff": "\x0c", "vt": "\x0b", "fs": "\x1c"}


def _row(qid: str, question: str) -> dict:
    return {"id": qid, "question": question, "topic_entities": ["Heat"], "answers": ["Michael Mann"],
            "graph": GRAPH, "type": "1hop"}


def _odd_dataset(path: Path) -> Path:
    """Questions holding every character str.splitlines() breaks on; U+2028/2029/0085 written raw."""
    lines = [json.dumps(_row(k, f"who{sep}directed Heat"), ensure_ascii=False) for k, sep in SEPARATORS.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_valid_jsonl_dataset_with_line_separators_loads_whole(tmp_path):
    ds = load_dataset(_odd_dataset(tmp_path / "odd.jsonl"))
    assert [q.id for q in ds] == list(SEPARATORS)
    assert [q.question for q in ds] == [f"who{sep}directed Heat" for sep in SEPARATORS.values()]
    assert [q.line for q in ds] == list(range(1, len(SEPARATORS) + 1))
    again = load_dataset(write_dataset(list(ds), tmp_path / "again.jsonl"))
    assert [q.question for q in again] == [q.question for q in ds]
    raw = (tmp_path / "again.jsonl").read_text(encoding="utf-8")
    assert len(raw.splitlines()) == len(SEPARATORS), "written so that even str.splitlines() sees one record a line"


def test_line_numbers_count_newlines_only(tmp_path):
    path = tmp_path / "d.jsonl"
    good = json.dumps(_row("a", "who\u2028directed\x85Heat"), ensure_ascii=False)
    path.write_text(good + "\r\n" + good.replace('"a"', '"b"') + "\n{broken\n", encoding="utf-8")
    with pytest.raises(DatasetFormatError) as err:
        load_dataset(path)
    assert err.value.bad_lines == [3]


def test_results_with_line_separators_resume_without_duplicates(tmp_path, fake_method, fake_model):
    data = _odd_dataset(tmp_path / "odd.jsonl")
    out = tmp_path / "out"
    s = run_eval(data, ["fake"], "fake-model", out, progress=False, model=fake_model, n_boot=50)
    assert s.ran == len(SEPARATORS) and len(s.records) == len(SEPARATORS)
    assert len(load_results(out)) == len(SEPARATORS)
    raw = (out / "results.jsonl").read_text(encoding="utf-8")
    assert "\u2028" not in raw and "\x85" not in raw and len(raw.splitlines()) == len(SEPARATORS)
    for _ in range(2):
        again = run_eval(data, ["fake"], "fake-model", out, progress=False, model=fake_model, n_boot=50)
        assert again.ran == 0 and again.skipped == len(SEPARATORS)
    assert len(load_results(out)) == len(SEPARATORS)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["overall"][0]["n"] == len(SEPARATORS)
    run = json.loads((out / "run.json").read_text())
    assert not os.path.isabs(run["dataset"]) and str(tmp_path) not in json.dumps(run)


def test_traces_written_by_the_eval_hold_no_machine_paths(tmp_path, small_dataset, fake_method, fake_model):
    out = tmp_path / "out"
    run_eval(small_dataset, ["fake"], "fake-model", out, progress=False, model=fake_model, n_boot=50)
    crashed = (out / "traces" / "fake" / "q3.json").read_text()
    assert "traceback" in crashed and "<app>" in crashed
    app = str(Path(__file__).resolve().parents[2])
    for path in (out / "traces" / "fake").iterdir():
        assert app not in path.read_text()


def _append_worker(args: tuple[str, int]) -> int:
    path, worker = args
    results = _ResultsFile(Path(path))
    written = 0
    for i in range(40):  # every worker tries every pair; each pair must be recorded once
        qid = f"q{(i + worker * 7) % 40}"
        if not results.recorded(qid, "m"):
            written += results.append({"id": qid, "method": "m", "question": "x\u2028y", "worker": worker,
                                      "metrics": {}})
    return written


def test_four_processes_sharing_results_record_each_pair_once(tmp_path):
    path = tmp_path / "results.jsonl"
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        written = pool.map(_append_worker, [(str(path), w) for w in range(4)])
    records = load_results(tmp_path)
    assert sum(written) == 40 == len(records)
    assert sorted(r["id"] for r in records) == sorted(f"q{i}" for i in range(40))
    assert all(r["question"] == "x\u2028y" for r in records)


def test_graph_file_must_stay_inside_the_dataset_folder(tmp_path):
    inner = tmp_path / "data"
    inner.mkdir()
    (tmp_path / "secret.tsv").write_text("a\tb\tc\n")
    (inner / "kg.tsv").write_text("Heat\tdirected_by\tMichael Mann\n")
    (inner / "link.tsv").symlink_to(tmp_path / "secret.tsv")
    base = {k: v for k, v in _row("x", "who directed Heat").items() if k != "graph"}
    rows = [{**base, "id": "ok", "graph_file": "kg.tsv"},
            {**base, "id": "up", "graph_file": "../secret.tsv"},
            {**base, "id": "abs", "graph_file": str(tmp_path / "secret.tsv")},
            {**base, "id": "link", "graph_file": "link.tsv"},
            {**base, "id": "dir", "graph_file": "."}]
    path = inner / "d.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(DatasetFormatError) as err:
        load_dataset(path)
    assert err.value.bad_lines == [2, 3, 4, 5]
    assert "outside the dataset's folder" in str(err.value) and "not a regular file" in str(err.value)


def test_a_device_or_fifo_is_refused_before_reading(tmp_path):
    with pytest.raises(DatasetFormatError, match="a device"):
        load_dataset("/dev/zero")
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(DatasetFormatError, match="FIFO"):
        load_dataset(fifo)

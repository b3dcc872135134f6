"""`benchmarks/reading.py --listed-only`: the readers after the first read only the questions whose walks the first
listed, and the table counts only those (each reader the same n)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from tests.benchmark_script import load_benchmark

def _benchmark():
    return load_benchmark("reading", "reading_benchmark")


def _dataset(tmp_path: Path) -> Path:
    triplets = [("Ann", "spouse", "Bob"), ("Bob", "ethnicity", "germans"), ("Ann", "ethnicity", "dutch"),
                ("Ann", "place_of_birth", "Delft"), ("Delft", "is_in_country", "Netherlands")]
    with gzip.open(tmp_path / "people_kb.tsv.gz", "wt", encoding="utf-8") as f:
        f.write("".join("\t".join(t) + "\n" for t in triplets))
    questions = [
        {"id": "p-0", "question": "what is the ethnicity of Ann's wife", "topic_entities": ["Ann"],
         "answers": ["germans"], "type": "2hop", "graph_file": "people_kb.tsv.gz"},
        {"id": "p-1", "question": "which country was Ann born in", "topic_entities": ["Ann"],
         "answers": ["Netherlands"], "type": "2hop", "graph_file": "people_kb.tsv.gz"},
    ]
    path = tmp_path / "people_dev.jsonl"
    path.write_text("".join(json.dumps(q) + "\n" for q in questions), encoding="utf-8")
    return path


def _rows(out: str) -> dict[str, int]:
    """reader -> n, from the printed table."""
    rows = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 10 and cells[3].isdigit():
            rows[cells[2]] = int(cells[3])
    return rows


def test_listed_only_counts_the_questions_the_first_reader_listed(tmp_path, capsys):
    dataset = _dataset(tmp_path)
    bench = _benchmark()
    ids = tmp_path / "ids.txt"
    # a quick look never sure enough (quick=1.01): every question's walks are listed, so both readers read both
    assert bench.main(["--model", "smollm2-135m", "--readers", "paths:quick=1.01;paths:quick=1.01,blend=0.5",
                       "--per-type", "2", "--listed-only", "--ids-out", str(ids), str(dataset)]) == 0
    out = capsys.readouterr().out
    assert "only the questions the first reader listed walks for are counted" in out
    assert _rows(out) == {"paths:quick=1.01": 2, "paths:quick=1.01,blend=0.5": 2}
    assert ids.read_text().split() == ["p-0", "p-1"]
    # the quick look alone (listed=false) never lists: nothing is counted, no id written
    assert bench.main(["--model", "smollm2-135m", "--readers", "paths:listed=false;paths:quick=1.01",
                       "--per-type", "2", "--listed-only", "--ids-out", str(ids), str(dataset)]) == 0
    assert _rows(capsys.readouterr().out) == {}
    assert ids.read_text() == ""

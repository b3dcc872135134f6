"""benchmarks/multidomain.py --saved: the table of earlier runs, the held-out questions pooled, nothing run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run_folder(folder: Path, domain: str, rows: list[tuple[str, float, float, int, int]]) -> None:
    """A run folder as `run_eval` leaves it: results.jsonl and one trace per question with its cost breakdown."""
    where = folder / domain / "main"
    (where / "traces" / "dog").mkdir(parents=True)
    lines = []
    for qid, hits, seconds, read, written in rows:
        (where / "traces" / "dog" / f"{qid}.json").write_text(
            json.dumps({"costs": {"prompt_tokens_read": read, "tokens_written": written}}), encoding="utf-8")
        lines.append(json.dumps({"id": qid, "method": "dog", "type": "2hop", "trace": f"traces/dog/{qid}.json",
                                 "metrics": {"hits1": hits, "f1": hits, "seconds": seconds, "cited_triplets": 2,
                                             "ill_triplets": 0}}))
    (where / "results.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_saved_runs_of_two_folders_report_as_one_table_with_the_held_out_questions_pooled(tmp_path):
    """DBpedia's run in one folder, geography's and MetaQA's in another: each domain's row from where it is, and
    the pooled row over DBpedia's and geography's questions (MetaQA left out), medians per question."""
    _run_folder(tmp_path / "a", "dbpedia", [("d1", 1.0, 10.0, 500, 50), ("d2", 0.0, 20.0, 600, 60),
                                            ("d3", 1.0, 30.0, 700, 70)])
    _run_folder(tmp_path / "b", "geography", [("g1", 1.0, 4.0, 100, 20)])
    _run_folder(tmp_path / "b", "metaqa", [("m1", 0.0, 99.0, 9000, 900)])
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "multidomain.py"), "--saved",
                          "--out", str(tmp_path / "a"), "--also", str(tmp_path / "b"), "--runs", "main",
                          "--methods", "dog", "--domains", "dbpedia,geography,metaqa"],
                         capture_output=True, text=True, check=True, cwd=ROOT).stdout
    rows = [line for line in out.splitlines() if "| all |" in line]
    assert "| dbpedia | all | dog | 3 | 0.67 |" in rows[0]
    assert any(r.startswith("| geography | all | dog | 1 | 1.00 |") for r in rows)
    assert any(r.startswith("| metaqa | all | dog | 1 | 0.00 |") for r in rows)
    # four held-out questions: Hits@1 3/4, median seconds 15, tokens read 550, written 55
    assert rows[-1] == "| held out | all | dog | 4 | 0.75 | 0.75 | 0 | 15 | 550 | 55 |"

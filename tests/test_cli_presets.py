"""`--preset` and `--vocabulary` on `ask` and `eval`, and `show` naming the preset (issue 29).

The runs use the 135M model with the shortest search; the refusals happen before any model loads
(`--model no-such-model` would fail otherwise).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgqa_core.cli import main
from kgqa_core.trace.schema import load_trace

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "datasets" / "metaqa_sample" / "metaqa_dev_50.jsonl"

GRAPH_TSV = """head\trelation\ttail
Carlton the Bear\tsports.mascot.team\tToronto Maple Leafs
Toronto Maple Leafs\tsports.sports_team.sport\tIce Hockey
Toronto Maple Leafs\tsports.sports_team.location\tToronto
"""
QUESTION = "What sport does the team with the mascot Carlton the Bear play?"
SHORT = ["--param", "max_steps=1", "--param", "max_new_tokens=24", "--beam-size", "1"]


@pytest.fixture()
def graph_file(tmp_path) -> Path:
    path = tmp_path / "hockey.tsv"
    path.write_text(GRAPH_TSV, encoding="utf-8")
    return path


def _ask(graph_file: Path, out: Path, *extra: str) -> int:
    return main(["ask", "--graph", str(graph_file), "--question", QUESTION, "--topic", "Carlton the Bear",
                 "--method", "dog", "--model", "smollm2-135m", "--trace-out", str(out), *SHORT, *extra])


def test_ask_preset_paper_records_the_papers_values_and_a_set_parameter_wins(graph_file, tmp_path, capsys):
    paper = tmp_path / "paper.json"
    assert _ask(graph_file, paper, "--preset", "paper") == 0, capsys.readouterr().err
    params = load_trace(paper).parameters
    assert params["preset"] == "paper"
    assert params["walk_to_depth"] is False and params["reader"] == "none" and params["hop_order"] is False
    assert not any(s.kind == "reading.plan" for s in load_trace(paper).steps), "the paper reads no question"

    own = tmp_path / "own.json"
    assert _ask(graph_file, own, "--preset", "paper", "--param", "walk_to_depth=true") == 0
    params = load_trace(own).parameters
    assert params["preset"] == "paper" and params["walk_to_depth"] is True and params["reader"] == "none"

    capsys.readouterr()
    assert main(["show", str(paper)]) == 0
    assert "preset: paper" in capsys.readouterr().out


def test_ask_without_a_preset_records_the_workbench(graph_file, tmp_path, capsys):
    out = tmp_path / "t.json"
    assert _ask(graph_file, out) == 0, capsys.readouterr().err
    params = load_trace(out).parameters
    assert params["preset"] == "workbench" and params["walk_to_depth"] is True
    capsys.readouterr()
    assert main(["show", str(out)]) == 0
    assert "preset: workbench" in capsys.readouterr().out


def test_preset_flag_and_param_that_disagree_are_refused_naming_both(graph_file, capsys):
    code = main(["ask", "--graph", str(graph_file), "--question", QUESTION, "--method", "dog",
                 "--model", "no-such-model", "--preset", "paper", "--param", "preset=workbench"])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1
    assert "--preset paper" in err and "--param preset=workbench" in err and "no-such-model" not in err
    code = main(["ask", "--graph", str(graph_file), "--question", QUESTION, "--method", "dog",
                 "--model", "no-such-model", "--preset", "published"])
    assert code != 0 and "paper" in capsys.readouterr().err  # argparse names the choices


def test_a_bad_vocabulary_line_is_one_line_naming_the_file_and_line(graph_file, tmp_path, capsys):
    vocab = tmp_path / "words.txt"
    vocab.write_text("# my words\nsports.sports_team.sport: plays, sport\nmascot of the team\n", encoding="utf-8")
    code = main(["ask", "--graph", str(graph_file), "--question", QUESTION, "--method", "dog",
                 "--model", "no-such-model", "--vocabulary", str(vocab)])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and "Traceback" not in err
    assert "words.txt" in err and "line 3" in err and "no-such-model" not in err
    code = main(["ask", "--graph", str(graph_file), "--question", QUESTION, "--method", "dog",
                 "--model", "no-such-model", "--vocabulary", str(tmp_path / "missing.txt")])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and "missing.txt" in err


def test_the_vocabulary_is_saved_in_the_trace_and_unknown_relations_are_warned(graph_file, tmp_path, capsys):
    vocab = tmp_path / "words.txt"
    vocab.write_text("sports.sports_team.sport: plays, sport\nspouse: wife, husband\n", encoding="utf-8")
    out = tmp_path / "t.json"
    assert _ask(graph_file, out, "--vocabulary", str(vocab)) == 0
    err = capsys.readouterr().err
    warnings = [ln for ln in err.splitlines() if ln.startswith("warning:")]
    assert len(warnings) == 1 and "spouse" in warnings[0] and "words.txt" in warnings[0]
    assert "sports.sports_team.sport" not in warnings[0]
    saved = load_trace(out).extra["vocabulary"]
    assert saved["entries"] == {"sports.sports_team.sport": ["plays", "sport"], "spouse": ["wife", "husband"]}
    assert main(["show", str(out)]) == 0
    assert "vocabulary: 2 relation(s)" in capsys.readouterr().out


def _eval(out: Path, *extra: str) -> int:
    return main(["eval", "--dataset", str(SAMPLE), "--methods", "dog", "--model", "smollm2-135m", "--limit", "2",
                 "--beam-size", "1", "--param", "max_steps=1", "--param", "max_new_tokens=24", "--out", str(out),
                 "--no-progress", *extra])


def test_eval_preset_paper_is_recorded_and_another_preset_or_vocabulary_is_kept_apart(tmp_path, capsys):
    out = tmp_path / "paper"
    assert _eval(out, "--preset", "paper") == 0, capsys.readouterr().err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["preset"] == "paper" and summary["params"]["preset"] == "paper" and summary["vocabulary"] is None
    assert json.loads((out / "run.json").read_text())["preset"] == "paper"
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(records) == 2 and {r["preset"] for r in records} == {"paper"}
    for r in records:
        params = load_trace(out / r["trace"]).parameters
        assert params["preset"] == "paper" and params["walk_to_depth"] is False
    assert "preset paper" in capsys.readouterr().out

    # resuming the same --out with the workbench's preset, or with a vocabulary, is refused before anything runs
    assert _eval(out) == 2
    assert "another preset" in capsys.readouterr().err
    vocab = tmp_path / "words.txt"
    vocab.write_text("directed_by: director, made by\n", encoding="utf-8")
    assert _eval(out, "--preset", "paper", "--vocabulary", str(vocab)) == 2
    assert "relation vocabulary" in capsys.readouterr().err
    # the same command resumes: nothing runs again
    assert _eval(out, "--param", "preset=paper") == 0
    assert "ran 0, resumed 2" in capsys.readouterr().out


def test_eval_refuses_a_bad_vocabulary_naming_its_line(tmp_path, capsys):
    vocab = tmp_path / "words.txt"
    vocab.write_text("directed_by director\n", encoding="utf-8")
    assert _eval(tmp_path / "out", "--vocabulary", str(vocab)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "words.txt" in err and "line 1" in err
    assert not (tmp_path / "out").exists()

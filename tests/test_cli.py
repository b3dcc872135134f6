"""The command line contract: answers, JSON traces, one-line errors, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kgqa_core.cli import main
from kgqa_core.trace.schema import Trace, load_trace

ROOT = Path(__file__).resolve().parents[1]

GRAPH_TSV = """head\trelation\ttail
Carlton the Bear\tsports.mascot.team\tToronto Maple Leafs
Toronto Maple Leafs\tsports.sports_team.sport\tIce Hockey
Toronto Maple Leafs\tsports.sports_team.location\tToronto
"""


@pytest.fixture()
def graph_file(tmp_path) -> Path:
    path = tmp_path / "hockey.tsv"
    path.write_text(GRAPH_TSV, encoding="utf-8")
    return path


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kgqa_core", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)


def test_models_lists_packaged_models(capsys):
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    assert "smollm2-135m" in out and "qwen2.5-coder-1.5b" in out
    assert "installed" in out


def test_methods_lists_all_six(capsys):
    assert main(["methods"]) == 0
    out = capsys.readouterr().out
    for name in ("dog", "cot", "direct", "reads", "rok", "lpkg"):
        assert name in out


def test_bad_graph_is_one_line_error_without_traceback(tmp_path):
    bad = tmp_path / "bad.tsv"
    bad.write_text("a\tb\tc\nonly\ttwo\n", encoding="utf-8")
    proc = run_cli("ask", "--graph", str(bad), "--question", "q", "--method", "direct", "--topic", "a")
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    lines = [ln for ln in proc.stderr.strip().splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and "bad.tsv" in lines[0] and "line 2" in lines[0]


def test_missing_graph_file(capsys, tmp_path):
    assert main(["ask", "--graph", str(tmp_path / "nope.tsv"), "--question", "q", "--method", "dog"]) == 1
    assert "not found" in capsys.readouterr().err


def test_unknown_method(capsys, graph_file):
    assert main(["ask", "--graph", str(graph_file), "--question", "q", "--method", "magic"]) == 1
    err = capsys.readouterr().err
    assert "unknown method 'magic'" in err and "dog" in err


def test_unknown_topic_entity_suggests_names(capsys, graph_file):
    code = main(["ask", "--graph", str(graph_file), "--question", "q", "--method", "direct",
                 "--topic", "Carlton the Bearr"])
    assert code == 1
    err = capsys.readouterr().err
    assert "not in the graph" in err and "Carlton the Bear" in err


def test_debug_shows_traceback(tmp_path):
    bad = tmp_path / "bad.tsv"
    bad.write_text("x\n", encoding="utf-8")
    proc = run_cli("--debug", "ask", "--graph", str(bad), "--question", "q", "--method", "direct", "--topic", "x")
    assert proc.returncode != 0 and "Traceback" in proc.stderr


def test_ask_json_prints_a_trace_and_saves_it(graph_file, tmp_path):
    out = tmp_path / "trace.json"
    proc = run_cli("ask", "--graph", str(graph_file), "--question",
                   "What sport does the team with the mascot Carlton the Bear play?",
                   "--topic", "Carlton the Bear", "--method", "dog", "--model", "smollm2-135m",
                   "--json", "--trace-out", str(out))
    assert proc.returncode == 0, proc.stderr
    trace = Trace.from_json(proc.stdout)
    assert trace.method == "dog" and trace.model == "smollm2-135m"
    assert trace.topic_entities == ["Carlton the Bear"]
    assert trace.faithfulness.ill_triplets == 0
    assert load_trace(out) == trace
    # the human summary of the saved trace
    shown = run_cli("show", str(out))
    assert shown.returncode == 0 and "answer:" in shown.stdout


def test_ask_gold_is_saved_in_the_trace_and_graded_by_show(graph_file, tmp_path):
    out = tmp_path / "gold.json"
    proc = run_cli("ask", "--graph", str(graph_file), "--question", "what sport does [Toronto Maple Leafs] play",
                   "--method", "direct", "--gold", "Ice Hockey | Hockey", "--trace-out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert load_trace(out).gold_answers == ["Ice Hockey", "Hockey"]
    assert "gold: " in proc.stdout and "/2 gold found" in proc.stdout
    shown = run_cli("show", str(out))
    assert "gold: " in shown.stdout and "(Ice Hockey | Hockey)" in shown.stdout


def test_ask_links_topic_entities_when_not_given(graph_file):
    proc = run_cli("ask", "--graph", str(graph_file), "--question",
                   "what sport does the team of [Carlton the Bear] play", "--method", "direct")
    assert proc.returncode == 0, proc.stderr
    assert "Carlton the Bear" in proc.stderr  # the linked topic is reported
    assert "answer:" in proc.stdout


def test_show_rejects_a_non_trace(tmp_path, capsys):
    p = tmp_path / "x.json"
    p.write_text(json.dumps({"a": 1}))
    assert main(["show", str(p)]) == 1
    assert "not a trace" in capsys.readouterr().err


def test_ask_says_when_a_reading_saw_no_further_and_the_chain_may_walk_past_it(tmp_path):
    """A three-hop plan is all a reader sees: ``ask`` and ``show`` say the chain was not held to it."""
    graph = tmp_path / "chain.tsv"
    graph.write_text("Acme\tfounded by\tHenry Ford\nHenry Ford\tplace of birth\tDearborn\n"
                     "Dearborn\tcontinent\tNorth America\nNorth America\thighest point\tDenali\n")
    out = tmp_path / "trace.json"
    common = ["--graph", str(graph), "--question", "what is the continent of the place of birth of the founder of Acme",
              "--topic", "Acme", "--method", "dog", "--model", "smollm2-135m", "--param", "reader=lexicon",
              "--param", "reading_sure_at=0", "--param", "max_new_tokens=32"]
    proc = run_cli("ask", *common, "--trace-out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "3 hops is the longest walk the reader plans" in proc.stdout
    assert "past_horizon: the question's reading plans 3 hops" in proc.stdout
    trace = load_trace(out)
    assert trace.extra["reading"]["open_ended"] is True and trace.parameters["past_horizon"] is True
    assert "past_horizon: the question's reading plans 3 hops" in run_cli("show", str(out)).stdout
    closed = run_cli("ask", *common, "--param", "past_horizon=false")
    assert closed.returncode == 0 and "past_horizon:" not in closed.stdout


def _ask_with_a_prompt_budget(graph_file: Path, out: Path, *params: str) -> tuple[subprocess.CompletedProcess, dict]:
    """``ask`` a question whose lexicon reading guides (``reading_sure_at=0``), with these budget parameters; the
    run and its trace's ``prompt_budget``."""
    budget = [arg for p in params for arg in ("--param", p)]
    proc = run_cli("ask", "--graph", str(graph_file), "--question",
                   "What sport does the team with the mascot Carlton the Bear play?",
                   "--topic", "Carlton the Bear", "--method", "dog", "--model", "smollm2-135m",
                   "--max-steps", "1", "--param", "reader=lexicon", "--param", "reading_sure_at=0", *budget,
                   "--param", "max_new_tokens=32", "--trace-out", str(out))
    assert proc.returncode == 0, proc.stderr
    return proc, load_trace(out).extra["prompt_budget"]


def test_ask_sets_the_smaller_prompt_of_a_sure_reading_and_prints_why(graph_file, tmp_path):
    """Issue 32 from the command line: the budget's parameters, the trace's record and the summary's line."""
    out = tmp_path / "trace.json"
    proc, budget = _ask_with_a_prompt_budget(graph_file, out, "sure_context_at=0", "sure_context_triplets=2")
    assert budget["applied"] and budget["shown"] == 2 and budget["of"] > 2, budget
    assert f"prompt budget: 2 of {budget['of']} triplets shown" in proc.stdout
    shown = run_cli("show", str(out))  # the saved trace says the same
    assert shown.returncode == 0 and f"prompt budget: 2 of {budget['of']} triplets shown" in shown.stdout


def test_ask_sets_the_smaller_prompt_of_a_guiding_reading_and_prints_why(graph_file, tmp_path):
    """Issue 32: a reading that guides but is not very sure shows the walks of its likeliest plans first."""
    out = tmp_path / "trace.json"
    proc, budget = _ask_with_a_prompt_budget(graph_file, out, "sure_context_at=1", "guided_context_triplets=2")
    assert budget["applied"] and budget["tier"] == "guided" and budget["shown"] == 2 and budget["of"] > 2, budget
    assert load_trace(out).parameters["guided_context_triplets"] == 2
    line = f"prompt budget: 2 of {budget['of']} triplets shown, the {budget['planned']} along the question reading's"
    assert line in proc.stdout and "guided_context_triplets=2" in proc.stdout
    shown = run_cli("show", str(out))  # the saved trace says the same
    assert shown.returncode == 0 and line in shown.stdout


def test_ask_and_show_say_which_answers_meet_both_of_the_questions_entities(tmp_path):
    """Two topic entities: the answers linked to both lead, and ``ask``/``show`` print why."""
    from kgqa_core.answers.meeting import NOTE_HEAD

    from tests.answers.orchestras import TRIPLETS

    graph = tmp_path / "orchestras.tsv"
    graph.write_text("".join(f"{h}\t{r}\t{t}\n" for h, r, t in TRIPLETS), encoding="utf-8")
    out = tmp_path / "trace.json"
    common = ["--graph", str(graph), "--question", "who plays the oboe in the Oslo Philharmonic?",
              "--topic", "Oslo Philharmonic", "--topic", "oboe", "--method", "dog", "--model", "smollm2-135m",
              "--param", "reader=lexicon", "--param", "reading_sure_at=0", "--param", "max_new_tokens=48"]
    # the walks' meeting triplets shown first (meeting_context) let the model answer the two oboists alone, and
    # nothing is left to rank: the note says where the walks meet; the answers' ranking is seen without it
    shown = run_cli("ask", *common)
    assert shown.returncode == 0, shown.stderr
    assert "meeting_context: the question's entities' walks" in shown.stdout and "meet at" in shown.stdout
    common += ["--param", "meeting_context=false"]
    proc = run_cli("ask", *common, "--trace-out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert NOTE_HEAD in proc.stdout and "have a triplet with 2 of them and lead" in proc.stdout
    answer = next(line for line in proc.stdout.splitlines() if line.startswith("answer:"))
    assert answer.split(": ", 1)[1].split(", ")[:2] in (["Ann Berg", "Cy Rossi"], ["Cy Rossi", "Ann Berg"])
    assert NOTE_HEAD in run_cli("show", str(out)).stdout
    off = run_cli("ask", *common, "--param", "meet_topics=false")
    assert off.returncode == 0 and NOTE_HEAD not in off.stdout


def test_ask_and_show_say_where_the_chain_concluded_at_the_readings_depth(tmp_path):
    """A sure one-hop reading (the graph gives the state one relation): the chain answers after its first triplet
    of that hop, the graph completes the list, and ``ask``/``show`` print the conclude_at_depth note."""
    from tests.methods.test_conclude_at_depth_dog import CITIES, GRAPH

    graph = tmp_path / "states.tsv"
    graph.write_text("".join(f"{t.head}\t{t.relation}\t{t.tail}\n" for t in GRAPH.triplets),
                     encoding="utf-8")
    out = tmp_path / "trace.json"
    common = ["--graph", str(graph), "--question", "give me the cities in virginia", "--topic", "virginia",
              "--method", "dog", "--model", "smollm2-135m", "--param", "max_new_tokens=96"]
    proc = run_cli("ask", *common, "--trace-out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "conclude_at_depth: the chain's path walked the question's reading to its end (has city" in proc.stdout
    answer = next(line for line in proc.stdout.splitlines() if line.startswith("answer:"))
    assert all(c in answer for c in CITIES), answer
    assert "conclude_at_depth:" in run_cli("show", str(out)).stdout
    off = run_cli("ask", *common, "--param", "conclude_at_depth=false")
    assert off.returncode == 0 and "conclude_at_depth:" not in off.stdout

"""CLI inputs refused like the UI refuses them, and `show` on hostile trace files: one line, never a traceback."""

from __future__ import annotations

import json
import os
import threading

import pytest

from kgqa_core.cli import main
from kgqa_core.eval.dataset import DatasetFormatError, parse_dataset
from kgqa_core.questions import MAX_QUESTION_CHARS
from kgqa_core.trace.schema import Trace

GRAPH_TSV = "Heat\tdirected_by\tMichael Mann\nHeat\trelease_year\t1995\n"


@pytest.fixture()
def graph_file(tmp_path):
    path = tmp_path / "films.tsv"
    path.write_text(GRAPH_TSV, encoding="utf-8")
    return path


@pytest.mark.parametrize("question,words", [("", "question is empty"), ("   \n\t", "question is empty"),
                                            ("who directed [Heat] " * 5000, "question is too long")])
def test_ask_refuses_empty_and_overlong_questions_before_loading_a_model(graph_file, capsys, question, words):
    code = main(["ask", "--graph", str(graph_file), "--question", question, "--method", "cot",
                 "--model", "no-such-model-is-loaded"])
    err = capsys.readouterr().err
    assert code == 1 and words in err and err.count("\n") == 1
    assert "max prompt triplets" not in err and "no-such-model" not in err


def test_dataset_refuses_an_overlong_question_with_its_line():
    row = {"id": "q", "question": "x" * (MAX_QUESTION_CHARS + 1), "topic_entities": ["a"], "answers": ["b"],
           "graph": [["a", "r", "b"]]}
    with pytest.raises(DatasetFormatError, match="line 2: 'question' is too long"):
        parse_dataset(json.dumps({**row, "id": "ok", "question": "fine"}) + "\n" + json.dumps(row) + "\n", "d.jsonl")


def _show(path, capsys) -> str:
    assert main(["show", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and "RecursionError" not in err
    return err


def test_show_refuses_hostile_traces_naming_the_field(tmp_path, capsys):
    good = Trace(method="cot", question="q").to_dict()
    for name, data, words in (("seconds", {**good, "seconds": "abc"}, "field seconds"),
                              ("steps", {**good, "steps": [1]}, "field steps[0]"),
                              ("answers", {**good, "answers": "abc"}, "field answers")):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(data))
        assert words in _show(path, capsys) and path.name in _show(path, capsys)
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    assert "nested too deeply" in _show(deep, capsys) and "deep.json" in _show(deep, capsys)
    nan = tmp_path / "nan.json"
    nan.write_text('{"method": "cot", "question": "q", "seconds": NaN}')
    assert "NaN" in _show(nan, capsys)


def test_show_refuses_devices_and_fifos_without_blocking(tmp_path, capsys):
    assert "a device" in _show("/dev/zero", capsys)
    fifo = tmp_path / "t.json"
    os.mkfifo(fifo)
    codes: list = []
    worker = threading.Thread(target=lambda: codes.append(main(["show", str(fifo)])), daemon=True)
    worker.start()
    worker.join(timeout=10)
    if worker.is_alive():
        with open(fifo, "wb"):
            pass
        pytest.fail("show blocked on a FIFO")
    assert codes == [1] and "FIFO" in capsys.readouterr().err


# ------------------------------------------------------------------ terminal controls (issue 31)
TITLE = "\x1b]0;pwned\x07"  # retitles the terminal window
CLIPBOARD = "\x1b]52;c;ZXZpbA==\x07"  # OSC 52: writes the clipboard
CLEAR = "\x1b[2J\x1b[H"
BIDI = "\u202egnp.exe"
CONTROLS = ("\x1b", "\x07", "\x9b", "\u202e", "\r")


def _hostile_trace() -> Trace:
    from kgqa_core.trace.schema import Answer, ChainTriplet

    trace = Trace(method="cot", question=f"who {TITLE}?", model=f"m{CLEAR}")
    trace.answers = [Answer(text=f"Paris{CLIPBOARD}", in_graph=False), Answer(text=f"x\r\nfaithfulness: 9/9 {BIDI}")]
    trace.chains = [[ChainTriplet(head=f"Heat{CLEAR}", relation="r\x9b31m", tail="t\x07", grounded=False,
                                      reason=f"not in the graph{TITLE}")]]
    trace.error = f"the model wrote \x1b[31mred\x1b[0m\nsecond line{BIDI}"
    return trace


def test_show_prints_control_characters_as_escapes(tmp_path, capsys):
    path = tmp_path / "hostile.json"
    path.write_text(_hostile_trace().to_json(), encoding="utf-8")
    assert main(["show", str(path)]) == 0
    out = capsys.readouterr().out
    assert not any(c in out for c in CONTROLS), repr(out)
    assert "\\x1b]52;c;ZXZpbA==\\x07" in out and "\\x1b]0;pwned\\x07" in out and "\\u202egnp.exe" in out
    # a field cannot fake another line: the answer's newline stays inside its line
    assert "answer: Paris\\x1b]52;c;ZXZpbA==\\x07 (not a graph entity), x\\r\\nfaithfulness: 9/9" in out
    assert [ln.split(":")[0] for ln in out.splitlines()] == ["cot on 'who \\x1b]0;pwned\\x07?' (m\\x1b[2J\\x1b[H, 0 steps)",
                                                             "answer", "preset", "chain", "  < Heat\\x1b[2J\\x1b[H -> r\\x9b31m -> t\\x07 >  [ILL",
                                                             "faithfulness", "time by phase", "error"]


def test_errors_and_other_printers_escape_control_characters(tmp_path, capsys):
    missing = tmp_path / f"graph{TITLE}.tsv"
    assert main(["ask", "--graph", str(missing), "--question", "q", "--method", "cot", "--topic", "x"]) == 1
    err = capsys.readouterr().err
    assert not any(c in err for c in CONTROLS) and "\\x1b]0;pwned\\x07" in err and err.count("\n") == 1
    # anything printed while the CLI runs goes through the same filter, newlines and tabs kept
    from kgqa_core.terminal import SafeStream, one_line, printable

    assert printable(f"a\tb\n{CLIPBOARD}") == "a\tb\n\\x1b]52;c;ZXZpbA==\\x07"
    assert one_line("a\tb\nc\u2028d") == "a\\tb\\nc\\u2028d"
    import io

    sink = io.StringIO()
    SafeStream(sink, allow_cr=True).write(f"\r50%{CLEAR}")
    assert sink.getvalue() == "\r50%\\x1b[2J\\x1b[H"

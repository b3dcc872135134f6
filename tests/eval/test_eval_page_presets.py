"""AppTest of pages/evaluate.py: the preset choice and the session's relation vocabulary go with the run (issue 29)."""

from __future__ import annotations

import json
import sys
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import pytest
from streamlit.testing.v1 import AppTest

from kgqa_core.parameters import MethodParams, param, preset_param
from kgqa_core.reading.vocabulary import RelationVocabulary
from kgqa_core.trace.schema import Answer

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "evaluate.py")


@dataclass(frozen=True)
class _Params(MethodParams):
    guided: bool = param(True, "a workbench switch the paper turns off")
    preset: str = preset_param()
    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {"paper": {"guided": False}}


def _run(request, params, rec) -> None:
    _run.seen.append((params.preset, params.guided, request.vocabulary))
    topic = request.topic_entities[0]
    rec.trace.answers = [Answer(text=topic, entity=topic, in_graph=True)]


_run.seen = []


@pytest.fixture
def page_env(tmp_path, monkeypatch, fake_model):
    import kgqa_core.models as models
    from kgqa_core.methods import base

    module = types.ModuleType("kgqa_presetted_method")
    module.SPEC = base.MethodSpec("presetted", _run, _Params, "a test method with a paper preset")
    monkeypatch.setitem(sys.modules, "kgqa_presetted_method", module)
    monkeypatch.setitem(base.METHODS, "presetted", "kgqa_presetted_method")
    _run.seen = []
    monkeypatch.setenv("KGQA_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setattr(models, "load_model", lambda name, **kw: fake_model)
    return tmp_path / "runs"


def _run_and_wait(at: AppTest, timeout: float = 120) -> None:
    """Press Run evaluation and wait for its job (it runs in a worker thread: a loaded machine is slower)."""
    at.button(key="eval_run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.session_state["eval_job"].wait(timeout), "the evaluation did not finish in time"
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]


def test_the_preset_and_the_sessions_vocabulary_go_with_the_run(page_env):
    at = AppTest.from_file(PAGE, default_timeout=60)
    vocab = RelationVocabulary.parse("directed_by: director, made by", "words.txt")
    at.session_state["graph_vocabulary"] = vocab
    at.session_state["ask_preset"] = "paper"  # the Ask page's choice is where the page starts
    at.run()
    assert not at.exception
    assert at.radio(key="eval_preset").value == "paper"
    assert at.checkbox(key="eval_use_vocabulary").value is True
    at.multiselect(key="eval_methods").set_value(["presetted"]).run()
    at.number_input(key="eval_limit").set_value(2).run()
    _run_and_wait(at)
    assert [(p, g, v.entries if v else None) for p, g, v in _run.seen] == [
        ("paper", False, vocab.entries)] * 2
    (out,) = [p.parent for p in (page_env / "eval").glob("*/run.json")]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["preset"] == "paper" and summary["vocabulary"]["entries"] == vocab.entries

    # the workbench's preset without the vocabulary is another run, in another folder
    at.radio(key="eval_preset").set_value("workbench").run()
    at.checkbox(key="eval_use_vocabulary").uncheck().run()
    _run_and_wait(at)
    assert [(p, g, v) for p, g, v in _run.seen[2:]] == [("workbench", True, None)] * 2
    assert len(list((page_env / "eval").glob("*/run.json"))) == 2

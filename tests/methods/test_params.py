"""Declared method parameters: read by type, refused with the parameter's name and what it accepts.

The cases are the inputs that were accepted or failed without a name before
(issue 14): switches given as "false", a hop count that is not a number, an
unknown relevance mode, a negative fan-out, an infinite or huge beam, an
empty name.
"""

from __future__ import annotations

import dataclasses
import math

import pytest

from kgqa_core.cli import main
from kgqa_core.methods.base import METHODS, MethodRequest, method_spec, read_shared_params, run_method
from kgqa_core.parameters import ParameterError, declared, parse_pairs, parse_params


def test_every_method_declares_typed_documented_parameters():
    for name in METHODS:
        spec = method_spec(name)
        assert spec.name == name and spec.summary
        params = parse_params(spec, {})  # the defaults are valid values
        assert dataclasses.is_dataclass(params)
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(params, dataclasses.fields(params)[0].name, None)
        for info in declared(spec.params):
            assert info.help and info.kind in ("int", "float", "bool", "str", "choice", "multi")
            if info.kind in ("int", "float"):
                assert info.minimum is not None and info.maximum is not None, (name, info.name)
                assert info.minimum <= info.default <= info.maximum


@pytest.mark.parametrize("method, name, text", [
    ("lpkg", "fallback_plan", "false"), ("rok", "use_embedder", "false"), ("dog", "reverse_readings", "False"),
    ("dog", "strict", " no "), ("cot", "force_conclusion", "0"),
])
def test_switches_given_as_text_are_read_as_text_says(method, name, text):
    assert getattr(parse_params(method_spec(method), {name: text}), name) is False
    assert getattr(parse_params(method_spec(method), {name: "true"}), name) is True


def test_switches_keep_their_old_spellings():
    """The spellings DoG's switches took before the declarations (yes/no, 0/1) still read the same."""
    got = parse_params(method_spec("dog"), {"reverse_readings": "false", "repeat_triplets": "Yes", "strict": 0})
    assert got.reverse_readings is False and got.repeat_triplets is True and got.strict is False
    with pytest.raises(ParameterError, match="reverse_readings must be true or false, got 'maybe'"):
        parse_params(method_spec("dog"), {"reverse_readings": "maybe"})


@pytest.mark.parametrize("method, raw, name, says", [
    ("rok", {"hops": "x"}, "hops", "a whole number from 1 to 4, got 'x'"),
    ("rok", {"hops": 2.5}, "hops", "a whole number"),
    ("lpkg", {"relevance": "bogus"}, "relevance", "one of auto, embedding, lexical, got 'bogus'"),
    ("lpkg", {"max_fanout": -5}, "max_fanout", "from 1 to 1000, got -5"),
    ("dog", {"beam_size": math.inf}, "beam_size", "from 1 to 16, got inf"),
    ("dog", {"beam_size": "Infinity"}, "beam_size", "got 'Infinity'"),
    ("dog", {"beam_size": "NaN"}, "beam_size", "got 'NaN'"),
    ("dog", {"beam_size": 1000}, "beam_size", "from 1 to 16, got 1000"),
    ("dog", {"beam_size": True}, "beam_size", "a whole number"),
    ("rok", {"damping": 1.0}, "damping", "from 0.01 to 0.99"),
    ("reads", {"length_norm": "median"}, "length_norm", "one of trie, mean, total"),
    ("lpkg", {"patterns": "2p,9z"}, "patterns", "'9z' is not one of"),
    ("lpkg", {"plan": 5}, "plan", "must be text"),
    ("dog", {"": 3}, "", "name is empty"),
    ("dog", {"  ": 3}, "", "name is empty"),
    ("dog", {"beam_sise": 2}, "beam_sise", "did you mean beam_size?"),
    ("reads", {"beam_size": 2}, "beam_size", "unknown parameter 'beam_size' for reads"),
])
def test_bad_values_and_names_are_refused_naming_the_parameter(method, raw, name, says):
    with pytest.raises(ParameterError) as info:
        parse_params(method_spec(method), raw)
    assert info.value.name == name and says in str(info.value)
    if name:
        assert name in str(info.value)


def test_values_are_read_by_declared_type():
    p = parse_params(method_spec("lpkg"), {"max-fanout": "7", "relevance_weight": "0.25", "patterns": "2p, 1p,2p",
                                           "relevance": " lexical"})
    assert p.max_fanout == 7 and p.relevance_weight == 0.25 and p.patterns == ("2p", "1p")
    assert p.relevance == "lexical"
    assert parse_params(method_spec("lpkg"), {"patterns": "all"}).patterns == parse_params(method_spec("lpkg"), {}).patterns
    got = parse_params(method_spec("dog"), {"beam_size": "3", "max_steps": 2.0, "max_new_tokens": None})
    assert got.as_dict() == {**parse_params(method_spec("dog"), {}).as_dict(), "beam_size": 3, "max_steps": 2}
    assert parse_params(method_spec("dog"), {})["beam_size"] == 1  # decoders read settings by name


def test_command_line_pairs_keep_the_name_and_refuse_an_empty_one():
    assert parse_pairs(["beam_size=3", "plan=a = b", "x=Infinity"]) == {"beam_size": 3, "plan": "a = b", "x": math.inf}
    with pytest.raises(ParameterError, match="name is empty"):
        parse_pairs(["=5"])
    with pytest.raises(ParameterError, match="expected NAME=VALUE"):
        parse_pairs(["beam_size"])


def test_shared_parameters_of_several_methods():
    got = read_shared_params(["dog", "rok"], {"beam_size": "3", "hops": "1"})
    assert got == {"beam_size": 3, "hops": 1}
    with pytest.raises(ParameterError, match="unknown parameter 'hops' for dog/cot"):
        read_shared_params(["dog", "cot"], {"hops": 2})
    with pytest.raises(ParameterError, match="max_new_tokens"):  # Direct declares it too: every reader checks
        read_shared_params(["dog", "direct"], {"max_new_tokens": 0})


class _NoModel:
    name, revision = "none", ""


def test_run_method_records_a_refused_parameter_as_the_error(tiny_graph):
    trace = run_method("lpkg", MethodRequest(graph=tiny_graph, question="q", model=_NoModel(),
                                             params={"max_fanout": -5}))
    assert "max_fanout" in trace.error and not trace.steps and trace.parameters == {"max_fanout": -5}


@pytest.fixture
def tiny_graph():
    from kgqa_core.graph.knowledge_graph import KnowledgeGraph

    return KnowledgeGraph.from_triplets([("a", "r", "b")], name="tiny")


@pytest.mark.parametrize("argv, says", [
    (["--beam-size", "1000"], "beam_size must be a whole number from 1 to 16, got '1000'"),
    (["--beam-size", "Infinity"], "beam_size"),
    (["--param", "fallback_plan=maybe"], "unknown parameter 'fallback_plan' for dog"),
    (["--param", "=3"], "name is empty"),
    (["--hops", "x"], "unknown parameter 'hops' for dog"),
])
def test_ask_refuses_bad_parameters_before_loading_anything(argv, says, capsys, tmp_path):
    graph = tmp_path / "g.tsv"
    graph.write_text("a\tr\tb\n", encoding="utf-8")
    code = main(["ask", "--graph", str(graph), "--question", "q", "--method", "dog", "--topic", "a",
                 "--model", "no-such-model", *argv])
    err = capsys.readouterr().err
    assert code == 1 and says in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_methods_command_lists_each_parameter_with_range_and_help(capsys):
    assert main(["methods"]) == 0
    out = capsys.readouterr().out
    assert "beam_size = 1  (a whole number from 1 to 16)" in out
    assert "relevance = auto  (one of auto, embedding, lexical)" in out
    assert "fallback_plan = true  (true or false)" in out
    for name in METHODS:
        for info in declared(method_spec(name).params):
            assert info.help in out


def test_dogs_guidance_bar_is_higher_than_the_other_readers():
    """DoG's reading guides its chain only from 0.6 (`methods.dog.DOG_SURE_AT`: readings 0.5-0.6 sure were wrong
    as often as unsure ones); READS and RoK keep 0.5; ``--param reading_sure_at=`` still sets it."""
    from kgqa_core.reading.reading import QuestionReading

    dog = parse_params(method_spec("dog"), {})
    assert dog.reading_sure_at == 0.6
    assert parse_params(method_spec("reads"), {}).reading_sure_at == 0.5
    assert parse_params(method_spec("rok"), {}).reading_sure_at == 0.5
    just_over = QuestionReading(reader="paths", hops=3, confidence=0.55, sure=True)
    assert not just_over.guides(dog.reading_sure_at)
    assert just_over.guides(parse_params(method_spec("dog"), {"reading_sure_at": "0.5"}).reading_sure_at)
    assert QuestionReading(reader="paths", hops=3, confidence=0.6, sure=True).guides(dog.reading_sure_at)

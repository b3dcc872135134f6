"""The Tab. 6 prompt, its Direct variant, and parsing what the model wrote."""

from __future__ import annotations

import pytest

from kgqa_core.decoding.prompt import (
    ANSWER_PREFIX,
    EXAMPLES,
    build_prompt,
    parse_answers,
    parse_written_triplets,
)
from kgqa_core.graph.knowledge_graph import KnowledgeGraph

GRAPH = KnowledgeGraph.from_triplets(
    [("Heat", "directed_by", "Michael Mann"), ("Heat", "release_year", "1995"), ("A -> B", "weird", "C")]
)


@pytest.mark.parametrize("layout", ["turns", "single", "raw"])
def test_dog_prompt_holds_examples_context_question_and_prefix(small_model, layout):
    p = build_prompt(small_model, "who directed Heat?", GRAPH.triplets, layout=layout)
    assert p.layout == layout
    assert p.text.endswith(ANSWER_PREFIX)
    assert "Context: [ Heat -> directed_by -> Michael Mann | Heat -> release_year -> 1995 | A -> B -> weird -> C ]" in p.text
    assert "Question: who directed Heat?" in p.text
    for ex in EXAMPLES:  # the three in-context examples, verbatim
        assert ex.context in p.text and ex.question in p.text and ex.reasoning in p.text
    assert p.text.startswith(p.shared_prefix) and len(p.shared_prefix) > len(p.text) // 2
    assert "Heat" not in p.shared_prefix  # the shared part holds nothing of this question
    if layout != "raw":
        assert "<|im_start|>assistant" in p.text  # the chat template was applied
        assert p.text.rstrip().endswith("<|im_start|>assistant\n" + ANSWER_PREFIX)


def test_direct_prompt_omits_chains(small_model):
    p = build_prompt(small_model, "who directed Heat?", GRAPH.triplets, variant="direct")
    assert "< Grand Bahama ->" not in p.text and "Let's break down" not in p.text
    assert "* Bahamas." in p.text and "* Ice Hockey." in p.text
    assert p.text.endswith("<|im_start|>assistant\n")
    raw = build_prompt(small_model, "who directed Heat?", GRAPH.triplets, variant="direct", layout="raw")
    assert raw.text.rstrip().endswith("Question: who directed Heat?\nAnswer:")


def test_unknown_layout_and_variant_are_rejected(small_model):
    with pytest.raises(ValueError, match="layout"):
        build_prompt(small_model, "q", GRAPH.triplets, layout="fancy")
    with pytest.raises(ValueError, match="variant"):
        build_prompt(small_model, "q", GRAPH.triplets, variant="fancy")


@pytest.mark.parametrize(
    "text, expected",
    [
        ("... Therefore, the answer is * Bahamas.", ["Bahamas"]),
        ("Therefore, the answer is * playwright, and * poet.", ["playwright", "poet"]),
        ("Therefore, the answer is * Cat Island, Bahamas.", ["Cat Island, Bahamas"]),
        ("So the answers are * 1995, * 2004 and * Born in East L.A.", ["1995", "2004", "Born in East L.A."]),
        ("Therefore, the answer is * Michael Mann.\n\n**Example 5:** * Bahamas", ["Michael Mann"]),
        (" * Bahamas.\n", ["Bahamas"]),  # Direct
        ("Therefore, the answer is Michael Mann. Then more text", ["Michael Mann"]),  # no marker
        ("1. < Heat -> directed_by -> Michael Mann > This tells us", []),
        ("Therefore, the answer is * Bahamas. * Bahamas", ["Bahamas"]),
        ("The answer is * 東京.", ["東京"]),
    ],
)
def test_parse_answers(text, expected):
    assert parse_answers(text) == expected


def test_parse_written_triplets_handles_arrows_and_bad_spans():
    text = (
        "1. < Heat -> directed_by -> Michael Mann > This. 2. <Heat->release_year->1995> "
        "3. < A -> B -> weird -> C > 4. < only -> two > 5. Heat -> release_year -> 1995 >"
    )
    got = parse_written_triplets(text, GRAPH)
    assert [(w.head, w.relation, w.tail) for w in got] == [
        ("Heat", "directed_by", "Michael Mann"),
        ("Heat", "release_year", "1995"),
        ("A -> B", "weird", "C"),  # the split that names a graph triplet
        ("only", "two", ""),  # kept so the graph check flags it
        ("Heat", "release_year", "1995"),  # written without its "<"
    ]
    assert [w.well_split for w in got] == [True, True, True, False, True]
    assert [w.opened for w in got] == [True, True, True, True, False]
    assert text[got[0].start:got[0].end] == "< Heat -> directed_by -> Michael Mann >"


def test_unclosed_triplet_is_reported_with_its_first_segment():
    text = "1. < Heat -> release_year -> 1995 | Heat -> directed_by -> Michael Mann | Heat"
    got = parse_written_triplets(text, GRAPH)
    assert len(got) == 1
    w = got[0]
    assert (w.head, w.relation, w.tail) == ("Heat", "release_year", "1995")
    assert not w.closed and w.opened and not w.well_split

"""Issue 32: DoG writes fewer tokens (bare or terse examples, a free-text cap) and reads a smaller prompt when sure.

Real 135M model.  Each piece is noted in the trace and recorded in its
parameters; the paper preset writes exactly the chain it wrote before the
pieces existed (recorded below from the commit before them).
"""

from __future__ import annotations

import pytest

from kgqa_core.decoding.prompt import BARE_INSTRUCTION, TERSE_INSTRUCTION
from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_core.methods.base import MethodRequest, run_method
from kgqa_core.trace.schema import Trace

HEAT = KnowledgeGraph.from_triplets(
    [
        ("Heat", "directed_by", "Michael Mann"),
        ("Heat", "starred_actors", "Al Pacino"),
        ("Heat", "release_year", "1995"),
        ("Collateral", "directed_by", "Michael Mann"),
        ("Michael Mann", "born_in", "Chicago"),
        ("Collateral", "starred_actors", "Tom Cruise"),
    ],
    name="heat",
)
BORN = "where was the director of Heat born?"
STARRED = "who starred in Heat?"

# preset=paper on the 135M (transformers, fp32), max_new_tokens 96, written by commit ee53192 (before issue 32)
PAPER_BEFORE = {
    BORN: "Let's break down the steps to find the answer to the question. 1. < Heat -> directed_by -> Michael Mann > "
          "This tells us Heat was directed by Michael Mann. 2. < Heat -> starred_actors -> Al Pacino > This tells "
          "us Al Pacino was starred by Michael Mann. 3. < Heat -> release_year -> 1995 > This tells us 1995 was "
          "released by Michael Mann. 4. < Heat -> starred_actors -> Al Pacino >",
    STARRED: "Let's break down the steps to find the answer to the question. 1. < Heat -> directed_by -> Michael "
             "Mann > This tells us who Michael Mann is. 2. < Heat -> starred_actors -> Al Pacino > This tells us Al "
             "Pacino is. 3. < Heat -> starred_actors -> Al Pacino > This tells us Al Pacino is. 4. < Heat -> "
             "starred_actors -> Al Pacino > This tells us Al Pacino is. 5.",
}


def _ask(model, question: str, graph=HEAT, **params) -> Trace:
    req = MethodRequest(graph=graph, question=question, model=model, topic_entities=["Heat"], params=params)
    return run_method("dog", req)


def test_the_paper_preset_writes_the_chains_it_wrote_before(small_model):
    for question in (BORN, STARRED):  # two questions in one process: nothing carries over
        trace = _ask(small_model, question, preset="paper", max_new_tokens=96)
        assert not trace.error, trace.error
        assert trace.raw_output == PAPER_BEFORE[question]
        assert trace.parameters["free_text_cap"] == 0 and trace.parameters["sure_context_triplets"] == 0
        assert trace.parameters["prompt_examples"] == "paper" and trace.extra["prompt_examples"] == "paper"
        assert TERSE_INSTRUCTION not in trace.extra["prompt"] and "This tells us" in trace.extra["prompt"]
        assert "prompt_budget" not in trace.extra and "free_text_cuts" not in trace.extra
        assert not any("prompt budget" in n or "free text cut" in n for n in trace.notes)


def test_the_free_text_cap_cuts_commentary_notes_it_and_survives_a_round_trip(llama_model):
    # the paper's examples make the 135M comment after its first triplet; 8 tokens let "1. <" through
    trace = _ask(llama_model, BORN, prompt_examples="paper", free_text_cap=8, max_new_tokens=96, reader="wording")
    assert not trace.error, trace.error
    assert trace.best_chain, trace.raw_output  # the first triplet was written
    answer = [s for s in trace.steps if s.kind == "dog.answer"][0]
    assert answer.extra["stop"] == "cap"
    assert answer.note.startswith("free text cut at 8 tokens (free_text_cap)")
    assert "'Therefore, the answer is' was appended" in answer.note  # the chain concluded (force_conclusion)
    assert trace.extra["free_text_cuts"] == 1 and trace.extra["forced_conclusion"] == 1
    assert any("free text cut at 8 tokens" in n for n in trace.notes)
    again = Trace.from_json(trace.to_json())
    assert again.parameters["free_text_cap"] == 8 and again.extra["free_text_cuts"] == 1
    # the same question with the cap off writes on past those 8 tokens
    free = _ask(llama_model, BORN, prompt_examples="paper", free_text_cap=0, max_new_tokens=96, reader="wording")
    assert "free_text_cuts" not in free.extra and len(free.raw_output) > len(trace.raw_output.split("Therefore")[0])


def test_the_answer_line_is_never_cut(llama_model):
    # a cap shorter than the answer line: the terse chain's answer line still ends where the model ends it
    trace = _ask(llama_model, BORN, free_text_cap=6, max_new_tokens=96, reader="wording")
    assert not trace.error, trace.error
    answer = [s for s in trace.steps if s.kind == "dog.answer"][0]
    if answer.extra["stop"] != "cap":
        assert trace.answers and "free text cut" not in answer.note


def test_terse_examples_show_numbered_steps_without_commentary(llama_model):
    for question in (BORN, STARRED):
        trace = _ask(llama_model, question, prompt_examples="terse", max_new_tokens=96)
        assert not trace.error, trace.error
        assert trace.parameters["prompt_examples"] == "terse" and TERSE_INSTRUCTION in trace.extra["prompt"]
        assert "This tells us" not in trace.extra["prompt"] and "1. <" in trace.extra["prompt"]
        assert "This tells us" not in trace.raw_output  # the model copies the examples' form
        assert trace.best_chain


def test_bare_examples_by_default_show_no_step_numbers_and_the_model_writes_none(llama_model):
    for question in (BORN, STARRED):  # two questions in one process
        trace = _ask(llama_model, question, max_new_tokens=96)
        assert not trace.error, trace.error
        assert trace.parameters["prompt_examples"] == "bare" and BARE_INSTRUCTION in trace.extra["prompt"]
        examples = trace.extra["prompt"].split("Question: " + question)[0]
        assert "1. <" not in examples and "2. <" not in examples and "> < " in examples
        written = trace.raw_output.removeprefix("Let's break down the steps to find the answer to the question.")
        assert written.lstrip().startswith("<") and "1. <" not in written, written
        assert trace.best_chain and trace.answers
        terse = _ask(llama_model, question, prompt_examples="terse", max_new_tokens=96)
        assert "1. <" in terse.raw_output  # the terse examples' numbers are copied
        assert trace.tokens_out < terse.tokens_out, (trace.raw_output, terse.raw_output)


def _wide_graph() -> KnowledgeGraph:
    """The Heat graph and 30 other films of one director: more triplets than a sure reading's budget."""
    triplets = list(HEAT.triplets)
    rows = [(t.head, t.relation, t.tail) for t in triplets]
    for i in range(30):
        rows += [(f"Film {i}", "directed_by", f"Director {i}"), (f"Film {i}", "release_year", str(1950 + i))]
    rows += [("Heat", "genre", "Crime"), ("Heat", "language", "English")]
    return KnowledgeGraph.from_triplets(rows, name="heat-wide")


@pytest.fixture(scope="module")
def wide():
    return _wide_graph()


def test_a_sure_reading_shows_its_planned_triplets_first_in_a_smaller_prompt(llama_model, wide):
    # the question read by the relations' names (no model call): "Heat -> directed_by -> born_in", 0.44 sure
    # of the candidate triplets around Heat, 6 are embedded for any question (context_pool) and 3 when the prompt
    # will show only a sure reading's few (sure_context_pool)
    pools = {"context_pool": 6, "sure_context_pool": 3}
    sure = _ask(llama_model, BORN, graph=wide, sure_context_triplets=4, max_new_tokens=64, max_steps=2,
                reader="lexicon", reading_sure_at=0.4, sure_context_at=0.4, **pools)
    reading = sure.extra["reading"]
    assert reading["sure"] and reading["confidence"] >= sure.parameters["reading_sure_at"], reading
    budget = sure.extra["prompt_budget"]
    assert budget["applied"] and budget["shown"] == 4 and budget["of"] > 4 and budget["budget"] == 4
    shown = sure.extra["context_triplet_ids"]
    assert len(shown) == 4
    first = [wide.triplet(t).as_tuple for t in shown[:2]]
    assert first == [("Heat", "directed_by", "Michael Mann"), ("Michael Mann", "born_in", "Chicago")]
    context = sure.extra["prompt"].rsplit("Context: [ ", 1)[1].split(" ]", 1)[0]
    assert context.startswith("Heat -> directed_by -> Michael Mann | Michael Mann -> born_in -> Chicago")
    assert context.count(" | ") == 3
    note = [n for n in sure.notes if n.startswith("prompt budget:")]
    assert len(note) == 1 and f"4 of {budget['of']} triplets" in note[0] and "is sure" in note[0]
    pruned = [n for n in sure.notes if n.startswith("prompt context:")]
    assert len(pruned) == 1 and "ranked 3 of " in pruned[0], sure.notes
    assert "at most 3 candidates embedded instead of 6, sure_context_pool: the question's reading is sure" in pruned[0]
    assert sure.parameters["sure_context_pool"] == 3 and Trace.from_json(sure.to_json()).notes == sure.notes
    # the same question again in the process, the reading sure enough to guide the steps but below the smaller
    # prompt's own bar (the default, 0.9): the whole pruned context is shown
    unsure = _ask(llama_model, BORN, graph=wide, sure_context_triplets=4, max_new_tokens=64, max_steps=2,
                  reader="lexicon", reading_sure_at=0.4, **pools)
    assert unsure.parameters["sure_context_at"] == 0.9 and unsure.extra["reading"]["sure"]
    assert not unsure.extra["prompt_budget"]["applied"] and len(unsure.extra["context_triplet_ids"]) == budget["of"]
    assert any("not sure" in n and "< 0.90" in n for n in unsure.notes if n.startswith("prompt budget:"))
    assert sure.extra["prompt_tokens"] < unsure.extra["prompt_tokens"]
    pruned = [n for n in unsure.notes if n.startswith("prompt context:")]
    assert "ranked 6 of " in pruned[0] and "sure_context_pool" not in pruned[0]


def test_bare_examples_walk_on_by_opening_a_triplet_and_force_the_answer_item(backend_model):
    """Bare chains show no step numbers, so a chain asked to go on (walk_to_depth) gets its next ``<`` rather
    than a number the examples never show (after "3." the 135M wrote "2.2.2..." and answered that), and a forced
    answer line starts with the examples' ``*`` (without it the 135M listed triplets as its answer)."""
    import re

    from tests.answers.orchestras import GRAPH

    params = {"max_new_tokens": 96, "reader": "lexicon", "reading_sure_at": 0, "meeting_context": False,
              "prompt_examples": "bare"}
    for _ in range(2):  # a second question in one process answers the same way
        trace = run_method("dog", MethodRequest(graph=GRAPH, question="who plays the oboe in the Oslo Philharmonic?",
                                                model=backend_model, topic_entities=["Oslo Philharmonic", "oboe"],
                                                params=params))
        assert not trace.error, trace.error
        assert not re.search(r">\s*\d", trace.raw_output), trace.raw_output  # no step number written
        assert any("was taken back and a triplet opened" in s.note for s in trace.steps), trace.raw_output
        assert trace.answer_texts[0] in ("Ann Berg", "Cy Rossi"), trace.raw_output  # an oboist in Oslo's orchestra
        assert all(a.entity and "->" not in a.text for a in trace.answers)  # no triplet copied as an answer
        forced = [s for s in trace.steps if s.kind == "dog.answer" and s.extra["forced_conclusion"]]
        assert all("'Therefore, the answer is *' was appended" in s.note for s in forced)

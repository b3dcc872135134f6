"""CoT on DoG's prompt: its written triplets are checked, and ill-formed ones flagged.

The graph names Shakespeare's profession with another relation and other
values than the second in-context example (people.person.profession ->
Playwright): the unconstrained 135M model copies the example's triplet,
DoG on the identical prompt cannot.
"""

from __future__ import annotations

import pytest

from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_core.methods.base import MethodRequest, run_method
from kgqa_core.trace.schema import Trace

GRAPH = KnowledgeGraph.from_triplets(
    [
        ("William Shakespeare", "occupation", "Dramatist"),
        ("William Shakespeare", "occupation", "Sonneteer"),
        ("William Shakespeare", "born_in", "Stratford-upon-Avon"),
        ("Stratford-upon-Avon", "location.location.containedby", "England"),
    ],
    name="shakespeare",
)
QUESTION = "What did William Shakespeare do for a living?"


def _request(model, emitted=None, **params):
    return MethodRequest(
        graph=GRAPH, question=QUESTION, model=model, topic_entities=["William Shakespeare"],
        params={"max_new_tokens": 40, **params},
        on_step=emitted.append if emitted is not None else None,
    )


@pytest.fixture(scope="module")
def runs(small_model):
    emitted = []
    cot = run_method("cot", _request(small_model, emitted))
    # DoG with the paper's examples (the workbench's are terse): the same prompt as CoT's
    dog = run_method("dog", _request(small_model, strict=True, max_steps=2, prompt_examples="paper"))
    return cot, dog, emitted


def test_cot_writes_an_ill_triplet_that_dog_cannot(runs):
    cot, dog, _ = runs
    ill = [ct for ct in cot.best_chain if not ct.grounded]
    assert ill, f"expected the unconstrained model to cite a triplet outside the graph: {cot.raw_output!r}"
    assert any(not ct.in_graph for ct in ill)
    assert cot.faithfulness.ill_triplets == len(ill)
    # DoG, same prompt (the paper's examples): every cited triplet is in the graph and grows from the topic entity
    assert dog.extra["prompt"] == cot.extra["prompt"]
    assert dog.best_chain and all(ct.grounded for ct in dog.best_chain)
    assert dog.faithfulness.ill_triplets == 0
    cited = {(ct.head, ct.relation, ct.tail) for ct in dog.best_chain}
    assert cited.isdisjoint({(ct.head, ct.relation, ct.tail) for ct in ill})


def test_cot_check_step_lists_the_ill_triplets(runs):
    cot, _, emitted = runs
    assert [s.kind for s in emitted] == [s.kind for s in cot.steps]
    check = [s for s in cot.steps if s.kind == "cot.check"]
    assert len(check) == 1
    ill = check[0].extra["ill"]
    assert len(ill) == cot.faithfulness.ill_triplets
    assert all(item["reason"] for item in ill)
    flagged = [c for c in check[0].candidates if not c.kept]
    assert len(flagged) == len(ill)
    steps = [s for s in cot.steps if s.kind == "cot.triplet"]
    assert len(steps) == len(cot.best_chain)
    assert cot.steps[-1].kind == "cot.answer"
    assert Trace.from_json(cot.to_json()) == cot


def test_cot_costs_one_forward_pass_per_token(runs):
    cot, dog, _ = runs
    # one pass for the prompt, one per token, and one for an appended "Therefore, the answer is"
    forced = lambda t: int(t.extra.get("forced_conclusion", 0))  # noqa: E731
    assert cot.forward_passes <= cot.tokens_out + 1 + forced(cot)
    per_token = lambda t: (t.forward_passes - t.model_calls - forced(t)) / max(t.tokens_out, 1)  # noqa: E731
    # DoG's constraint costs no extra pass: at most one per token (forced trie runs take fewer). CoT's free
    # text may take fewer than one per token (prompt lookup guesses on this backend), so the two are not
    # compared with each other.
    assert per_token(dog) <= 1 + 1e-9
    assert per_token(cot) <= 1 + 1e-9

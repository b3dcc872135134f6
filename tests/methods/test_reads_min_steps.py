"""READS offers None only after as many expansions as the question names relations (auto_search_steps)."""

from __future__ import annotations

from kgqa_core.methods import reads
from kgqa_core.methods.base import MethodRequest
from kgqa_core.reads.scoring import ScriptedChooser

from test_reads import NoModel, Script, films, run_scripted

Q2 = "who directed the films starred by Kate Winslet"  # names 'directed' and 'starred': two hops


def test_a_two_relation_question_is_not_offered_none_before_its_second_expansion():
    # the first expansion is the only option (no model call); the second is asked without None
    trace, script = run_scripted(films(), Q2, "Kate Winslet", "entity_1 + directed_by", "None",
                                 "entity_1 + directed_by -> entity_2")
    search_pools = [opts for kind, opts in script.pools if kind == "search"]
    assert "None" not in search_pools[0] and "None" in search_pools[1]
    assert any("min_search_steps 2 from the question" in n for n in trace.notes)
    assert [a.entity for a in trace.answers] == ["James Cameron"]


def test_the_switch_turns_it_off_and_bad_values_are_refused():
    _, script = run_scripted(films(), Q2, "Kate Winslet", "None", auto_search_steps="false")
    assert "None" in [opts for kind, opts in script.pools if kind == "search"][0]
    request = MethodRequest(graph=films(), question=Q2, model=NoModel(), topic_entities=["Kate Winslet"],
                            params={"auto_search_steps": "two"})
    trace = reads.run(request, chooser=ScriptedChooser(Script()))
    assert "auto_search_steps" in trace.error

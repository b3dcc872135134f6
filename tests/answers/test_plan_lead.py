"""`plan_leads_answers`: the reading's likeliest plan, walked by the chain, leads the answers (kgqa_core.answers.plan_lead)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from kgqa_core.answers.plan_lead import lead_by_plan
from kgqa_core.graph.triplet import Triplet
from kgqa_core.methods.dog import DogParams
from kgqa_core.reading.reading import PlanHop, RelationPlan
from kgqa_core.trace.schema import Answer

ROOT = Path(__file__).resolve().parents[2]
CHAIN = [Triplet(0, "HMS Isis", "namesake", "Isis"), Triplet(1, "Isis", "father", "Geb"),
         Triplet(2, "Isis", "mother", "Nut"), Triplet(3, "Isis", "sibling", "Seth")]


def _plan(*relations: str, confidence: float, topic: str = "HMS Isis") -> RelationPlan:
    return RelationPlan(topic, tuple(PlanHop(r.lstrip("~"), not r.startswith("~")) for r in relations), confidence)


def _answers(*names: str) -> list[Answer]:
    return [Answer(text=n, entity=n, in_graph=True, match="exact") for n in names]


PLANS = [_plan("namesake", "sibling", confidence=0.46), _plan("namesake", "father", confidence=0.27),
         _plan("namesake", "mother", confidence=0.27)]


def test_the_likeliest_walked_plan_leads_when_the_model_answered_on_a_much_less_likely_one():
    answers, lead = lead_by_plan(_answers("Geb", "Nut", "Seth"), CHAIN, PLANS, margin=0.15)
    assert [a.text for a in answers] == ["Seth", "Geb", "Nut"]
    assert lead is not None and lead.moved == ["Seth"] and lead.confidence == 0.46
    assert "namesake -> sibling" in lead.sentence() and "27%" in lead.sentence()


def test_an_end_the_model_did_not_write_is_added_from_the_chain_as_a_graph_answer():
    answers, lead = lead_by_plan(_answers("Geb"), CHAIN, PLANS, margin=0.15)
    assert [a.text for a in answers] == ["Seth", "Geb"] and lead is not None
    assert answers[0].completed_from_graph and answers[0].in_graph
    assert not answers[1].completed_from_graph, "the model's own answer keeps what it was"


def test_nothing_moves_within_the_margin_or_when_the_chain_did_not_walk_the_likeliest_plan():
    close = [_plan("namesake", "sibling", confidence=0.36), _plan("namesake", "father", confidence=0.33)]
    assert lead_by_plan(_answers("Geb"), CHAIN, close, margin=0.15)[1] is None
    unwalked = [_plan("namesake", "spouse", confidence=0.9), *PLANS[1:]]
    answers, lead = lead_by_plan(_answers("Geb"), CHAIN, unwalked, margin=0.15)
    assert lead is None and [a.text for a in answers] == ["Geb"]
    assert lead_by_plan(_answers("Seth", "Geb"), CHAIN, PLANS, margin=0.15)[1] is None, "already first"
    assert lead_by_plan(_answers("Geb"), CHAIN, PLANS, margin=0.0)[1] is not None


def test_an_answer_on_the_likeliest_plans_way_or_past_its_end_is_not_moved():
    """The model stopped a hop short of the plan (its answer is where the plan passes), or walked a hop past a
    shorter likeliest plan: the plan's ends are not preferred to a chain that went on (or stopped) by choice."""
    short = [_plan("namesake", confidence=0.7), _plan("namesake", "sibling", confidence=0.3)]
    assert lead_by_plan(_answers("Seth"), CHAIN, short, margin=0.15)[1] is None
    long = [_plan("namesake", "sibling", confidence=0.7), _plan("namesake", confidence=0.3)]
    assert lead_by_plan(_answers("Isis"), CHAIN, long, margin=0.15)[1] is None


def test_a_plan_walked_backwards_is_followed_against_its_triplets():
    chain = [Triplet(0, "Geb", "father_of", "Isis"), Triplet(1, "Isis", "sibling", "Seth")]
    plans = [_plan("~father_of", confidence=0.8, topic="Isis"), _plan("sibling", confidence=0.2, topic="Isis")]
    answers, lead = lead_by_plan(_answers("Seth"), chain, plans, margin=0.15)
    assert [a.text for a in answers] == ["Geb", "Seth"] and lead is not None


def test_the_paper_preset_turns_it_off_and_the_default_is_on():
    assert DogParams().plan_leads_answers > 0
    assert DogParams.PRESETS["paper"]["plan_leads_answers"] == 0.0


def test_the_replay_script_applies_the_rule_to_saved_traces(tmp_path):
    """benchmarks/plan_answer.py reads a run folder and counts what the rule changes against the gold answers."""
    trace = {"topic_entities": ["HMS Isis"], "answers": [a.__dict__ for a in _answers("Geb", "Seth")],
             "chains": [[{"head": t.head, "relation": t.relation, "tail": t.tail} for t in CHAIN]],
             "extra": {"reading": {"plans": [{"text": "HMS Isis -> namesake -> sibling", "confidence": 0.46},
                                             {"text": "HMS Isis -> namesake -> father", "confidence": 0.27}]}}}
    (tmp_path / "traces").mkdir()
    (tmp_path / "traces" / "q.json").write_text(json.dumps(trace), encoding="utf-8")
    (tmp_path / "results.jsonl").write_text(json.dumps({"method": "dog", "question": "who is the sibling ...",
                                                        "gold": ["Seth"], "trace": "traces/q.json"}) + "\n")
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "plan_answer.py"), str(tmp_path)],
                         capture_output=True, text=True, check=True).stdout
    assert "gained: 'who is the sibling ...': 'Geb' -> 'Seth'" in out
    assert out.strip().endswith("1 DoG questions, changed 1, gained 1, lost 0")


def test_the_cli_prints_why_a_saved_run_put_the_plans_end_first():
    """`kgqa_core show` (and `ask`, which prints the same lines) says what plan_leads_answers did, as the trace
    recorded it (a real DoG run with the 1.5B on the DBpedia dev graph: tests/answers/data/isis_plan_lead.json)."""
    out = subprocess.run([sys.executable, "-m", "kgqa_core", "show", str(ROOT / "tests/answers/data/isis_plan_lead.json")],
                         capture_output=True, text=True, check=True, cwd=ROOT).stdout
    line = next(x for x in out.splitlines() if x.startswith("plan_leads_answers:"))
    assert "shipNamesake -> fratrie, 46%" in line and "so Seth comes first" in line


def test_dog_hands_the_plans_on_for_one_entitys_question_only():
    from kgqa_core.methods.dog import leading_plans
    from kgqa_core.reading.reading import QuestionReading

    reading = QuestionReading(reader="paths", hops=2, confidence=0.46, plans=list(PLANS))
    on = DogParams()
    assert leading_plans(reading, on, ["HMS Isis"]) == PLANS
    assert leading_plans(reading, on, ["Oslo Philharmonic", "oboe"]) == [], "two entities: meet_topics ranks"
    assert leading_plans(reading, DogParams(plan_leads_answers=0.0), ["HMS Isis"]) == []
    assert leading_plans(QuestionReading(reader="paths", hops=2, plans=PLANS[:1]), on, ["HMS Isis"]) == []
    assert leading_plans(QuestionReading.unread(), on, ["HMS Isis"]) == []

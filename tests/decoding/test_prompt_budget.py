"""A sure reading's smaller prompt context: which triplets, in which order, and what the trace says why."""

from __future__ import annotations

from kgqa_core.decoding.prompt_budget import guided_context, plan_triplets, sure_context
from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_core.reading.reading import PlanHop, QuestionReading, RelationPlan

GRAPH = KnowledgeGraph.from_triplets(
    [
        ("Heat", "release_year", "1995"),  # 0
        ("Heat", "starred_actors", "Al Pacino"),  # 1
        ("Heat", "directed_by", "Michael Mann"),  # 2
        ("Collateral", "directed_by", "Michael Mann"),  # 3
        ("Michael Mann", "born_in", "Chicago"),  # 4
        ("Collateral", "release_year", "2004"),  # 5
        ("Thief", "directed_by", "Michael Mann"),  # 6
        ("Al Pacino", "born_in", "New York"),  # 7
    ],
    name="heat",
)
PLAN = RelationPlan("Heat", (PlanHop("directed_by"), PlanHop("born_in")), confidence=0.9)


def _reading(confidence: float, sure: bool = True) -> QuestionReading:
    return QuestionReading(reader="paths", hops=2, confidence=confidence, sure=sure,
                           relations=["directed_by", "born_in"], uses={"directed_by": 1, "born_in": 1},
                           order=["directed_by", "born_in"], plans=[PLAN])


def test_plan_triplets_walk_the_plan_hop_by_hop():
    assert plan_triplets(GRAPH, "Heat", PLAN.hops, cap=10) == [2, 4]
    back = (PlanHop("directed_by", forward=False),)
    assert plan_triplets(GRAPH, "Michael Mann", back, cap=10) == [2, 3, 6]
    assert plan_triplets(GRAPH, "Michael Mann", back, cap=2) == [2, 3]


def test_a_sure_reading_shows_its_planned_triplets_first_within_the_budget():
    context = [0, 1, 5, 7, 3, 2, 6]  # the pruned order; the plan's second hop (4) was pruned away
    shown, budget = sure_context(context, GRAPH, _reading(0.9), sure_at=0.5, budget=4)
    assert shown[:2] == [2, 4]  # the walk along the best plan first, the pruned-away hop included
    assert set(shown[2:4]) == {3, 7}  # then the context's other triplets of the planned relations
    assert len(shown) == 4 and budget.applied and budget.planned == 4 and budget.of == 7
    assert budget.added == [4]
    note = budget.note()
    assert "4 of 7 triplets" in note and "Heat -> directed_by -> born_in" in note and "0.90 >= 0.50" in note
    assert budget.to_dict()["budget"] == 4


def test_the_rest_of_the_context_fills_the_budget_in_pruned_order():
    shown, budget = sure_context([0, 1, 5, 2], GRAPH, _reading(0.9), sure_at=0.5, budget=3)
    assert shown == [2, 4, 0] and budget.planned == 2


def test_an_unsure_or_unread_question_keeps_the_context():
    context = [0, 1, 5, 7, 3, 2, 6]
    for reading, why in ((_reading(0.3), "not sure (0.30 < 0.50)"), (_reading(0.9, sure=False), "not sure"),
                         (QuestionReading.unread(), "not read")):
        shown, budget = sure_context(context, GRAPH, reading, sure_at=0.5, budget=4)
        assert shown == context and not budget.applied
        assert why in budget.note() and "all of the pruned context" in budget.note()
    shown, budget = sure_context(context, GRAPH, _reading(0.9), sure_at=0.5, budget=0)
    assert shown == context and not budget.applied and "sure_context_triplets=0" in budget.note()
    shown, budget = sure_context(context, GRAPH, _reading(0.9), sure_at=0.5, budget=40)
    assert shown == context and not budget.applied and "within the budget of 40" in budget.note()


ACTORS = RelationPlan("Heat", (PlanHop("starred_actors"), PlanHop("born_in")), confidence=0.3)
YEAR = RelationPlan("Heat", (PlanHop("release_year"),), confidence=0.05)


def _guiding(confidence: float) -> QuestionReading:
    """Heat's director's birthplace, or its actor's: a reading that guides but is not very sure of which."""
    plan = RelationPlan("Heat", PLAN.hops, confidence=confidence)
    return QuestionReading(reader="paths", hops=2, confidence=confidence, sure=True,
                           relations=["directed_by", "born_in"], uses={"directed_by": 1, "born_in": 1},
                           order=["directed_by", "born_in"], plans=[plan, ACTORS, YEAR])


def test_a_guiding_reading_shows_the_walks_of_its_likeliest_plans_first():
    context = [0, 5, 6, 3, 2, 1]  # the pruned order; neither plan's second hop (4, 7) is in it
    shown, budget = guided_context(context, GRAPH, _guiding(0.6), guide_at=0.5, sure_at=0.9, budget=5)
    # the two likeliest plans (0.6 + 0.3 = 0.9 of the probability) walked in turn, hop by hop, then the
    # context's other triplets of their relations; the third plan (release_year) is not walked
    assert shown[:4] == [2, 1, 4, 7] and shown[4] in (3, 6)
    assert budget.applied and budget.tier == "guided" and budget.plans == 2 and budget.added == [4, 7]
    note = budget.note()
    assert "5 of 6 triplets" in note and "2 likeliest plan(s)" in note and "fairly sure (0.60 >= 0.50)" in note
    assert "Heat -> directed_by -> born_in; Heat -> starred_actors -> born_in" in note
    assert "guided_context_triplets=5" in note


def test_the_guided_context_leaves_very_sure_unsure_and_small_contexts_alone():
    context = [0, 5, 6, 3, 2, 1]
    assert guided_context(context, GRAPH, _guiding(0.95), guide_at=0.5, sure_at=0.9, budget=5) is None
    assert guided_context(context, GRAPH, _guiding(0.4), guide_at=0.5, sure_at=0.9, budget=5) is None
    assert guided_context(context, GRAPH, _guiding(0.6), guide_at=0.5, sure_at=0.9, budget=0) is None
    assert guided_context(context, GRAPH, _guiding(0.6), guide_at=0.5, sure_at=0.9, budget=6) is None
    assert guided_context(context, GRAPH, QuestionReading.unread(), guide_at=0.5, sure_at=0.9, budget=5) is None


LAB = KnowledgeGraph.from_triplets(  # made up: two entities whose walks meet at one student
    [
        ("Leo Rud", "doctoral_advisor", "Karl Berg"),  # 0
        ("Nils Lind", "doctoral_advisor", "Karl Berg"),  # 1
        ("Leo Rud", "nationality", "Norway"),  # 2
        ("Nils Lind", "nationality", "Denmark"),  # 3
        ("Elsa Strand", "nationality", "Norway"),  # 4
        ("Karl Berg", "works_at", "University of Bergen"),  # 5
        ("University of Bergen", "located_in", "Norway"),  # 6
    ],
    name="lab",
)
STUDENTS = RelationPlan("Karl Berg", (PlanHop("doctoral_advisor", forward=False),), confidence=0.7)
PEOPLE = RelationPlan("Norway", (PlanHop("nationality", forward=False),), confidence=0.7)


def _joint(*plans: RelationPlan, confidence: float = 0.7) -> QuestionReading:
    return QuestionReading(reader="paths", hops=1, confidence=confidence, sure=True,
                           relations=sorted({h.relation for p in plans for h in p.hops}), plans=list(plans))


def test_the_triplets_where_two_entities_walks_meet_are_those_on_the_way_to_a_shared_entity():
    from kgqa_core.decoding.prompt_budget import meeting_triplets

    ids, met = meeting_triplets(LAB, _joint(STUDENTS, PEOPLE))
    assert met == ["Leo Rud"]
    assert ids == [0, 2]  # Leo Rud's advisor, then his nationality: the walks in turn; Nils Lind and Elsa not
    # a longer walk: back from where they meet, hop by hop (Karl Berg's university's country, and Norway's people)
    country = RelationPlan("Karl Berg", (PlanHop("works_at"), PlanHop("located_in")))
    where = RelationPlan("Leo Rud", (PlanHop("nationality"),))
    ids, met = meeting_triplets(LAB, _joint(country, where))
    assert met == ["Norway"] and ids == [5, 2, 6]
    assert meeting_triplets(LAB, _joint(STUDENTS, PEOPLE), cap=1)[0] == [0]
    # one entity's walk, or walks that never meet: nothing
    assert meeting_triplets(LAB, _joint(STUDENTS)) == ([], [])
    apart = RelationPlan("Norway", (PlanHop("located_in", forward=False),))
    assert meeting_triplets(LAB, _joint(STUDENTS, apart)) == ([], [])


def test_a_very_sure_two_entity_reading_shows_where_its_walks_meet_before_its_plan():
    from kgqa_core.decoding.prompt_budget import meeting_triplets

    meeting, _ = meeting_triplets(LAB, _joint(STUDENTS, PEOPLE, confidence=0.95))
    shown, budget = sure_context([5, 6, 3, 4, 1], LAB, _joint(STUDENTS, PEOPLE, confidence=0.95), sure_at=0.9,
                                 budget=4, first=meeting)
    assert shown[:2] == [0, 2] and len(shown) == 4 and budget.applied

"""LPKG (method ``lpkg``): plan with KG patterns in context, execute the plan on the graph.

1. Plan: the ICLPKG prompt (tool code + one demonstration per KG pattern,
   grounded in this graph) is completed by the model; a caller may instead
   pass a ready plan as the ``plan`` parameter.
2. Parse: `parse_plan` reads the plan with `ast` and accepts only
   assignments of the plan tools; nothing the model wrote is executed.  If
   the plan does not parse, the error (with its line) is recorded in the
   ``lpkg.plan`` step and, unless ``fallback_plan`` is off, the question is
   asked as a single sub-question.
3. Execute: `PlanExecutor` runs Search / Get_Answer / Intersection / Union /
   Compare on the graph, streaming ``lpkg.search``, ``lpkg.answer`` and
   ``lpkg.set_op`` steps.

Parameters: `LpkgParams`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from .. import progress
from ..lpkg.executor import AnswerSet, ExecutorParams, PlanExecutionError, PlanExecutor
from ..lpkg.patterns import PATTERN_NAMES, PATTERNS
from ..lpkg.plan_parser import Plan, PlanParseError, parse_plan, question_type_of, quote
from ..lpkg.planner import Planner
from ..trace.faithfulness import check_chains, ground_chain
from ..parameters import param, preset_param
from ..trace.schema import Answer, Step, Trace
from .base import MethodRequest, MethodSpec
from .recorder import TraceRecorder

_TYPE_TO_PATTERN = {v.casefold(): k for k, v in PATTERN_NAMES.items()}


def fallback_plan(question: str) -> str:
    """Ask the whole question as one sub-question (used when the model's plan is unusable)."""
    return "\n".join([
        f"Original_Question: str = {quote(question)}",
        "### Question Type: One Projection",
        'Thought1: str = "The plan could not be used; search for the whole question."',
        "Sub_Question_1: str = Original_Question",
        "Info_1: str = Search(query = Sub_Question_1, thought = Thought1)",
        "Ans_1: str = Get_Answer(query = Sub_Question_1, info = Info_1)",
        "Final_Answer: str = Finish_The_Plan(Answer = Ans_1)",
    ])


@dataclass(frozen=True)
class LpkgParams(ExecutorParams):
    plan: str = param("", "A ready plan to execute instead of asking the model (empty: the model plans).",
                      advanced=True, multiline=True)
    patterns: tuple[str, ...] = param(tuple(PATTERNS), "KG patterns demonstrated in the planning prompt.",
                                      choices=tuple(PATTERNS), advanced=True)
    max_new_tokens: int = param(360, "Tokens the model may write for its plan.", min=1, max=2048)
    fallback_plan: bool = param(True, "Ask the whole question as one sub-question when the plan is unusable.")
    preset: str = preset_param()

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {"paper": {"fallback_plan": False}}


def run(request: MethodRequest, params: LpkgParams, rec: TraceRecorder) -> None:
    model, graph, trace = request.model, request.graph, rec.trace
    emit = rec.step

    # 1. plan
    progress.stage("planning sub-questions")
    plan_step = Step(index=0, kind="lpkg.plan", title="Plan")
    given = params.plan
    if given.strip():
        raw = plan_text = str(given)  # as given, so error line numbers are the caller's
        plan_step.note = "plan supplied by the caller"
    else:
        planner = Planner(model, graph, patterns=list(params.patterns), seed=request.seed,
                          max_new_tokens=params.max_new_tokens)
        out = planner.plan(request.question)
        raw, plan_text = out.raw, out.plan_text
        record = model.call_record("lpkg.plan", out.generation, out.prompt)
        plan_step.model_calls.append(record)
        plan_step.tokens_in, plan_step.tokens_out = out.generation.prompt_tokens, out.generation.output_tokens
        plan_step.seconds = round(out.generation.seconds, 4)
    qtype = question_type_of(plan_text)
    plan_step.model_text = raw
    plan_step.extra = {
        "plan": plan_text,
        "question_type": qtype,
        "pattern": _TYPE_TO_PATTERN.get(qtype.casefold(), ""),
    }
    plan: Plan | None = None
    try:
        plan = parse_plan(plan_text, original_question=request.question)
        plan_step.extra["sub_questions"] = [a.value.render() for a in plan.sub_questions]
        plan_step.title = f"Plan ({qtype or 'no question type'}): {len(plan.sub_questions)} sub-question(s)"
    except PlanParseError as exc:
        plan_step.extra["parse_error"] = str(exc)
        plan_step.extra["parse_error_line"] = exc.line
        plan_step.title = "Plan could not be parsed"
        plan_step.note = str(exc)
        trace.notes.append(f"the plan was rejected: {exc}")
    emit(plan_step)
    trace.raw_output = raw
    trace.extra["plan"] = plan_text
    trace.extra["question_type"] = qtype

    if plan is None and params.fallback_plan:
        plan = parse_plan(fallback_plan(request.question))
        trace.extra["fallback_plan"] = True
        trace.notes.append("answered with the one-step fallback plan instead")
        emit(Step(index=0, kind="lpkg.plan", title="Fallback plan: the whole question as one sub-question",
                  model_text=plan.source, extra={"plan": plan.source, "question_type": "One Projection",
                                                 "pattern": "1p", "fallback": True}))

    # 2. execute
    progress.stage("executing the plan on the graph")
    if plan is not None:
        executor = PlanExecutor(graph, model, request.question, request.topic_entities, params, emit)
        result: AnswerSet | None = None
        try:
            result = executor.run(plan)
        except PlanExecutionError as exc:
            trace.error = str(exc)
        trace.notes.extend(executor.notes)
        if not trace.topic_entities:
            trace.topic_entities = list(executor.linked_anchors)
        if result is not None:
            _fill_answers(trace, graph, result)
    elif not trace.error:
        trace.error = plan_step.extra.get("parse_error", "no plan")


def _fill_answers(trace: Trace, graph, result: AnswerSet) -> None:
    trace.answers = [
        Answer(text=i.text, entity=i.entity, in_graph=i.entity is not None and graph.has_entity(i.entity), score=i.score)
        for i in result.items
    ]
    chains = []
    for item in result.items:
        if item.chain:
            chains.append(ground_chain(graph, [graph.triplet(t).as_tuple for t in item.chain if graph.has_triplet_id(t)],
                                       trace.topic_entities))
    trace.chains = chains
    trace.chain_scores = [i.score if i.score is not None else 0.0 for i in result.items if i.chain]
    trace.faithfulness = check_chains(graph, chains, trace.topic_entities, trace.answers)


SPEC = MethodSpec("lpkg", run, LpkgParams,
                  "LPKG: in-context planning with KG patterns, plan executed on the graph")

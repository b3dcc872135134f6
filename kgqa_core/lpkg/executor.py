"""Execute a parsed LPKG plan on the graph (paper §3.4), step by step.

* ``Search`` -> `Retriever.search` for every instantiation of the
  sub-question: a placeholder holding several answers (``{Ans_1}`` = three
  films) fans out into one search per answer.
* ``Get_Answer`` -> the model answers *from the retrieved triplets only*:
  the candidate answers are the entities the retrieved hop groups reach, and
  the model ranks the groups (log-probability of each group's answer list
  after the App. C.3 QA prompt), combined with the group's relation
  relevance.  Answers therefore stay in the graph and every answer has the
  triplet that gives it.  Only when nothing was retrieved does the model
  generate a free list, linked to the graph with `resolve_entity`.
* ``Intersection`` / ``Union`` are real set operations on linked answers.
* ``Compare`` compares the values found for each sub-question (numbers or
  dates), using the question's wording (larger / earlier / same ...), and
  asks the model only when the wording does not say.

Each answer carries the triplet ids that led to it (its chain), so the
final answers come with supporting chains for the faithfulness check.
"""

from __future__ import annotations

import itertools
import math
import re
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Sequence

from ..graph.knowledge_graph import KnowledgeGraph
from ..graph.linearize import linearize
from ..models.generation import GenerationConfig
from ..parameters import MethodParams, param
from ..trace.schema import Candidate, ModelCall, Step
from .patterns import parse_value
from .plan_parser import Call, ListValue, Plan, Ref, Text, Value
from .retrieval import HopGroup, Retrieval, Retriever

if TYPE_CHECKING:  # pragma: no cover
    from ..models.local_model import LocalModel


class PlanExecutionError(ValueError):
    """A plan that parses but cannot run (e.g. intersecting a sub-question text)."""

    def __init__(self, line: int, problem: str) -> None:
        self.line = line
        self.problem = problem
        super().__init__(f"plan line {line}: {problem}")


# ---------------------------------------------------------------- runtime values
@dataclass
class AnswerItem:
    text: str
    entity: str | None
    chain: list[int] = field(default_factory=list)  # triplet ids supporting this answer
    score: float | None = None

    @property
    def key(self) -> str:
        return self.entity if self.entity is not None else self.text.strip().casefold()


@dataclass
class AnswerSet:
    items: list[AnswerItem] = field(default_factory=list)
    subjects: list[str] = field(default_factory=list)  # what the sub-question was about (Compare)

    def keys(self) -> list[str]:
        return [i.key for i in self.items]

    def texts(self) -> list[str]:
        return [i.text for i in self.items]

    def by_key(self) -> dict[str, AnswerItem]:
        return {i.key: i for i in self.items}


@dataclass
class SearchValue:
    retrievals: list[Retrieval]
    subquestion: int
    query_template: str


@dataclass
class Instantiation:
    text: str
    bindings: dict[str, AnswerItem]


@dataclass(frozen=True)
class ExecutorParams(MethodParams):
    """What a user may set of the executor (the LPKG method's parameters extend these)."""

    max_fanout: int = param(20, "Answers one sub-question may pass on.", min=1, max=1000)
    max_search_triplets: int = param(60, "Triplets retrieved per sub-question.", min=1, max=10000, advanced=True)
    relevance: str = param("auto", "How retrieved relations are ranked against a sub-question.",
                           choices=("auto", "embedding", "lexical"), advanced=True)
    relevance_weight: float = param(0.5, "Weight of relation relevance against the model's ranking.",
                                    min=0.0, max=1.0, advanced=True)


# Get_Answer's fixed bounds: they keep the QA prompt small, whatever the plan.
_MAX_OPTIONS = 8  # hop groups the model ranks
_MAX_LISTED = 6  # answers of a group listed in the prompt
_MAX_INFO_TRIPLETS = 24  # triplets in the prompt's information, over all groups
_FREE_ANSWER_TOKENS = 48  # tokens of a free answer list when nothing was retrieved


_QA_PROMPT = (
    "Give a question and some information that may help you answer the question. "
    "Please answer the question based only on the information provided.\n"
    "### Information\n{info}\n### Question:\n{question}\n"
    "### Your Answer: (Return the answer as a list of short entity answers divided with '#', "
    "such as [Apple#Banana]. If the information does not contain the answer, return [None].)"
)
_LARGER = re.compile(r"\b(more|most|larger|largest|bigger|biggest|greater|greatest|higher|highest|longer|longest|"
                     r"later|latest|newer|newest|after|max(?:imum)?|recent)\b", re.I)
_SMALLER = re.compile(r"\b(less|least|fewer|fewest|smaller|smallest|lower|lowest|shorter|shortest|earlier|"
                      r"earliest|older|oldest|before|first|min(?:imum)?)\b", re.I)
_SAME = re.compile(r"\b(same|equal|identical)\b", re.I)


def _softmax_log(xs: Sequence[float], temperature: float = 1.0) -> list[float]:
    """log of softmax(xs / temperature)."""
    if not xs:
        return []
    scaled = [x / temperature for x in xs]
    m = max(scaled)
    z = m + math.log(sum(math.exp(x - m) for x in scaled))
    return [x - z for x in scaled]


def _logsumexp(xs: Sequence[float]) -> float:
    if not xs:
        return float("-inf")
    m = max(xs)
    return m + math.log(sum(math.exp(x - m) for x in xs))


def parse_answer_list(text: str) -> list[str]:
    """``[A#B]`` (App. C.3's format; commas tolerated) -> ``["A", "B"]``; ``[None]`` -> ``[]``."""
    m = re.search(r"\[([^\[\]]*)\]?", text)
    body = m.group(1) if m else text
    parts = [p.strip().strip("'\"") for p in re.split(r"#|\n", body)]
    if len(parts) == 1 and "," in parts[0]:
        parts = [p.strip().strip("'\"") for p in parts[0].split(",")]
    return [p for p in parts if p and p.casefold() not in ("none", "unknown", "n/a")]


class PlanExecutor:
    """Runs one plan; records each step with ``emit``."""

    def __init__(
        self,
        graph: KnowledgeGraph,
        model: "LocalModel",
        question: str,
        topic_entities: Sequence[str] = (),
        params: ExecutorParams | None = None,
        emit: Callable[[Step], None] | None = None,
    ) -> None:
        self.graph = graph
        self.model = model
        self.question = question
        self.params = params or ExecutorParams()
        self.retriever = Retriever(
            graph, topic_entities, relevance=self.params.relevance, max_triplets=self.params.max_search_triplets
        )
        self.emit = emit or (lambda step: None)
        self.env: dict[str, object] = {}
        self.notes: list[str] = []
        self.model_calls: list[ModelCall] = []
        self.linked_anchors: list[str] = []
        self._search_counter = 0
        self._plan: Plan | None = None

    # ------------------------------------------------------------ driver
    def run(self, plan: Plan) -> AnswerSet:
        self._plan = plan
        if plan.variable("Original_Question") is None:
            self.env["Original_Question"] = Text((plan.original_question or self.question,))
        for a in plan.assignments:
            self.env[a.target] = self._evaluate(a.line, a.target, a.value)
        final = self.env.get(plan.final)
        if isinstance(final, AnswerSet):
            return final
        raise PlanExecutionError(
            plan.variable(plan.final).line if plan.variable(plan.final) else 0,
            f"the final answer {plan.final!r} is {self._kind(final)}, not an answer set",
        )

    def _evaluate(self, line: int, target: str, value: Value) -> object:
        if isinstance(value, Text):
            return value
        if isinstance(value, Ref):
            return self.env[value.name]
        if isinstance(value, Call):
            handler = getattr(self, f"_call_{value.func}")
            return handler(line, target, value.args)
        raise PlanExecutionError(line, f"a list cannot be assigned to {target}")

    @staticmethod
    def _kind(value: object) -> str:
        if isinstance(value, Text):
            return "a text"
        if isinstance(value, SearchValue):
            return "a search result"
        if isinstance(value, AnswerSet):
            return "an answer set"
        return "nothing"

    # ------------------------------------------------------------ text
    def _text_of(self, line: int, value: Value | None, what: str) -> Text:
        if isinstance(value, Text):
            return value
        if isinstance(value, Ref):
            v = self.env.get(value.name)
            if isinstance(v, Text):
                return v
            if isinstance(v, AnswerSet):  # Search(query=Ans_1): ask about the answers themselves
                return Text((Ref(value.name),))
            raise PlanExecutionError(line, f"{what} must be a text, but {value.name} is {self._kind(v)}")
        raise PlanExecutionError(line, f"{what} is missing")

    def instantiate(self, line: int, text: Text) -> list[Instantiation]:
        """Every way of filling the placeholders of ``text`` (answer sets fan out)."""
        choices: list[list[tuple[str, str, AnswerItem | None]]] = []
        for part in text.parts:
            if isinstance(part, str):
                continue
            v = self.env.get(part.name)
            if isinstance(v, Text):
                sub = self.instantiate(line, v)
                choices.append([(part.name, s.text, None) for s in sub[:1]])
            elif isinstance(v, AnswerSet):
                if not v.items:
                    return []
                choices.append([(part.name, i.text, i) for i in v.items])
            elif isinstance(v, SearchValue):
                ids = [i for r in v.retrievals for i in r.triplet_ids]
                choices.append([(part.name, linearize(self.graph.triplets_by_ids(ids[:20])), None)])
            else:
                raise PlanExecutionError(line, f"placeholder {{{part.name}}} has no value")
        out: list[Instantiation] = []
        for combo in itertools.product(*choices) if choices else [()]:
            values = {name: txt for name, txt, _ in combo}
            bindings = {name: item for name, _, item in combo if item is not None}
            out.append(Instantiation(text.render(values), bindings))
            if len(out) >= self.params.max_fanout:
                total = math.prod(len(c) for c in choices)
                if total > len(out):
                    self.notes.append(
                        f"line {line}: placeholders give {total} sub-questions; only the first "
                        f"{self.params.max_fanout} were asked (max_fanout)"
                    )
                break
        return out

    # ------------------------------------------------------------ Search
    def _subquestion_index(self, value: Value | None) -> int:
        if isinstance(value, Ref):
            m = re.search(r"(\d+)$", value.name)
            if m:
                return int(m.group(1))
        self._search_counter += 1
        return self._search_counter

    def _call_Search(self, line: int, target: str, args: dict[str, Value]) -> SearchValue:
        started = time.perf_counter()
        text = self._text_of(line, args.get("query"), "Search's query")
        index = self._subquestion_index(args.get("query"))
        insts = self.instantiate(line, text)
        retrievals: list[Retrieval] = []
        for inst in insts:
            bound = {name: item.entity for name, item in inst.bindings.items() if item.entity is not None}
            r = self.retriever.search(inst.text, bound)
            retrievals.append(r)
            if r.link_method != "placeholder":
                self.linked_anchors.extend(s for s in r.subjects if s not in self.linked_anchors)
        ids = list(dict.fromkeys(i for r in retrievals for i in r.triplet_ids))
        groups = [g for r in retrievals for g in r.groups]
        kept_ids = set(ids)
        candidates = [
            Candidate(
                label=f"{g.label()} ({len(g.triplets)} triplet{'s' if len(g.triplets) != 1 else ''})",
                score=g.relevance,
                kept=any(t.id in kept_ids for t in g.triplets),
                extra={"relation": g.hop.relation, "inverse": g.hop.inverse, "subject": g.subject},
            )
            for g in groups[:40]
        ]
        template = text.render()
        step = Step(
            index=0,
            kind="lpkg.search",
            title=f"Search {index}: {insts[0].text if insts else template}",
            subgraph_after=ids,
            added_entities=list(dict.fromkeys(s for r in retrievals for s in r.subjects)),
            candidates=candidates,
            seconds=round(time.perf_counter() - started, 4),
            note=("; ".join(r.cut_note for r in retrievals if r.cut_note) if insts
                  else "a placeholder had no answers, so nothing was searched"),
            extra={
                "subquestion": index,
                "sub_question": template,
                "line": line,
                "variable": target,
                "relevance": self.retriever.relevance_method,
                "instances": [
                    {
                        "query": r.query,
                        "subjects": r.subjects,
                        "link": r.link_method,
                        "triplet_ids": r.triplet_ids,
                        "bindings": r.bindings,
                    }
                    for r in retrievals
                ],
            },
        )
        self.emit(step)
        return SearchValue(retrievals=retrievals, subquestion=index, query_template=template)

    # ------------------------------------------------------------ Get_Answer
    def _call_Get_Answer(self, line: int, target: str, args: dict[str, Value]) -> AnswerSet:
        info = self.env.get(args["info"].name) if isinstance(args.get("info"), Ref) else None
        if not isinstance(info, SearchValue):
            info = self._call_Search(line, f"(search for {target})", {"query": args["query"]})
            self.notes.append(f"line {line}: Get_Answer had no Search result as info; searched for its query")
        started = time.perf_counter()
        before = self.model.counter.snapshot()
        retrievals = info.retrievals
        options = self._options(retrievals)
        step = Step(index=0, kind="lpkg.answer", title=f"Answer {info.subquestion}")
        if options:
            answer, cands, choice, support = self._rank(retrievals, options, step)
        else:
            answer, cands, choice, support = self._generate(retrievals, info, step)
        after = self.model.counter.snapshot()
        step.title = f"Answer {info.subquestion}: {', '.join(answer.texts()[:5]) or 'no answer'}"
        step.candidates = cands
        step.choice = choice
        step.subgraph_before = list(dict.fromkeys(i for r in retrievals for i in r.triplet_ids))
        step.subgraph_after = support
        step.tokens_in = after[1] - before[1]
        step.tokens_out = after[2] - before[2]
        step.seconds = round(time.perf_counter() - started, 4)
        step.extra.update({
            "subquestion": info.subquestion,
            "sub_question": info.query_template,
            "answers": answer.texts(),
            "entities": [i.entity for i in answer.items],
            "line": line,
            "variable": target,
        })
        self.emit(step)
        return answer

    def _options(self, retrievals: list[Retrieval]) -> list[tuple[str, bool]]:
        """Hop keys (relation, inverse) seen in any instantiation, most relevant first."""
        best: dict[tuple[str, bool], float] = {}
        for r in retrievals:
            for g in r.groups:
                best[g.key] = max(best.get(g.key, -1e9), g.relevance)
        ranked = sorted(best, key=lambda k: (-best[k], k))
        return ranked[: _MAX_OPTIONS]

    def _rank(self, retrievals, options, step: Step):
        """Let the model rank the hop groups; the best group's targets are the answer."""
        rep = retrievals[0]
        rep_groups: dict[tuple[str, bool], HopGroup] = {}
        for key in options:
            for r in retrievals:  # the representative's own group if it has one
                gs = r.group(key)
                if gs:
                    rep_groups[key] = gs[0]
                    break
        info_triplets = []
        per_group = max(2, _MAX_INFO_TRIPLETS // max(1, len(options)))
        for key in options:
            info_triplets.extend(rep_groups[key].triplets[:per_group])
        relevance = [max(g.relevance for r in retrievals for g in r.group(k)) for k in options]
        listed = []
        names_per_option = []
        for key in options:
            names = rep_groups[key].answers[: _MAX_LISTED]
            names_per_option.append(names)
            listed.append("#".join(names) + "]")
        if len(options) > 1:
            # P(the first answer the model would list comes from this group):
            # log-sum-exp of the log-probabilities of the group's entities as the
            # first list item.  Scoring single names, not whole lists, keeps long
            # lists from being penalised for their length.
            prompt = self.model.chat_prompt(
                _QA_PROMPT.format(info=linearize(info_triplets), question=rep.query)
            ) + "["
            flat = list(dict.fromkeys(n for names in names_per_option for n in names))
            scores = self.model.score_continuations(prompt, flat)
            record = self.model.call_record("lpkg.get_answer", scores, prompt)
            self.model_calls.append(record)
            step.model_calls.append(record)
            by_name = {s.text: s.total for s in scores}
            model_scores = [_logsumexp([by_name[n] for n in names]) for names in names_per_option]
        else:
            model_scores = [0.0]
        w = self.params.relevance_weight
        log_rel = _softmax_log(relevance, temperature=0.1)
        log_mod = _softmax_log(model_scores)
        combined = [w * a + (1 - w) * b for a, b in zip(log_rel, log_mod)]
        best = max(range(len(options)), key=lambda i: (combined[i], relevance[i]))
        key = options[best]
        answer = AnswerSet()
        support: list[int] = []
        seen: dict[str, AnswerItem] = {}
        for r in retrievals:
            binding_chain: list[int] = []
            for item in self._binding_items(r) if r.bindings else []:
                binding_chain.extend(item.chain)
            for g in r.group(key):
                if g.subject not in answer.subjects:
                    answer.subjects.append(g.subject)
                for t in g.triplets:
                    target = g.target(t)
                    support.append(t.id)
                    if target not in seen:
                        seen[target] = AnswerItem(
                            text=target, entity=target,
                            chain=list(dict.fromkeys(binding_chain + [t.id])),
                            score=round(math.exp(combined[best]), 4),
                        )
                        answer.items.append(seen[target])
        cands = []
        for i, k in enumerate(options):
            cands.append(
                Candidate(
                    label=f"{rep_groups[k].label()} = [{listed[i]}",
                    score=round(combined[i], 4),
                    prob=round(math.exp(combined[i]), 4),
                    kept=(i == best),
                    extra={"relation": k[0], "inverse": k[1], "relevance": relevance[i],
                           "model_logprob": round(model_scores[i], 4)},
                )
            )
        choice = f"{'<-' if key[1] else '-'}{key[0]}{'-' if key[1] else '->'}"
        step.model_text = "[" + listed[best]
        return answer, cands, choice, list(dict.fromkeys(support))

    def _binding_items(self, r: Retrieval) -> list[AnswerItem]:
        out = []
        for name, entity in r.bindings.items():
            v = self.env.get(name)
            if isinstance(v, AnswerSet):
                item = v.by_key().get(entity)
                if item is not None:
                    out.append(item)
        return out

    def _generate(self, retrievals, info: SearchValue, step: Step):
        """Nothing retrieved: the model answers freely; answers are linked to the graph if possible."""
        from ..graph.linking import resolve_entity

        answer = AnswerSet()
        question = retrievals[0].query if retrievals else info.query_template
        prompt = self.model.chat_prompt(_QA_PROMPT.format(info="(nothing was found in the graph)", question=question))
        gen = self.model.generate(prompt + "[", GenerationConfig(_FREE_ANSWER_TOKENS, stop_strings=("]", "\n\n")))
        record = self.model.call_record("lpkg.get_answer (free)", gen, prompt)
        self.model_calls.append(record)
        step.model_calls.append(record)
        step.model_text = "[" + gen.text + "]"
        step.note = "no triplets were retrieved for this sub-question; the model answered from its own knowledge"
        for text in parse_answer_list("[" + gen.text + "]"):
            entity, _score = resolve_entity(text, self.graph)
            item = AnswerItem(text=entity or text, entity=entity)
            if item.key not in answer.by_key():
                answer.items.append(item)
        return answer, [], None, []

    # ------------------------------------------------------------ set operations
    def _operands(self, line: int, func: str, args: dict[str, Value]) -> list[tuple[str, AnswerSet]]:
        out = []
        for param in ("Answer1", "Answer2", "Answer3", "Answer4"):
            v = args.get(param)
            if v is None:
                continue
            if not isinstance(v, Ref):
                raise PlanExecutionError(line, f"{func} needs answer variables; {param} is a literal text")
            val = self.env.get(v.name)
            if not isinstance(val, AnswerSet):
                raise PlanExecutionError(line, f"{func} needs answer sets; {param} = {v.name} is {self._kind(val)}")
            out.append((v.name, val))
        return out

    def _set_op(self, line: int, target: str, func: str, args: dict[str, Value]) -> AnswerSet:
        operands = self._operands(line, func, args)
        maps = [s.by_key() for _, s in operands]
        if func == "Intersection":
            keys = [k for k in maps[0] if all(k in m for m in maps[1:])]
        else:
            keys = list(dict.fromkeys(k for m in maps for k in m))
        result = AnswerSet(subjects=[s for _, o in operands for s in o.subjects])
        for k in keys:
            holders = [m[k] for m in maps if k in m]
            chain = list(dict.fromkeys(i for h in holders for i in h.chain))
            first = holders[0]
            result.items.append(AnswerItem(text=first.text, entity=first.entity, chain=chain, score=first.score))
        support = list(dict.fromkeys(i for it in result.items for i in it.chain))
        step = Step(
            index=0,
            kind="lpkg.set_op",
            title=f"{func}({', '.join(n for n, _ in operands)}) -> {len(result.items)} answer"
            f"{'s' if len(result.items) != 1 else ''}",
            subgraph_after=support,
            choice=func.lower(),
            extra=_set_op_extra(func.lower(), operands, result, line, target),
        )
        self.emit(step)
        return result

    def _call_Intersection(self, line: int, target: str, args: dict[str, Value]) -> AnswerSet:
        return self._set_op(line, target, "Intersection", args)

    def _call_Union(self, line: int, target: str, args: dict[str, Value]) -> AnswerSet:
        return self._set_op(line, target, "Union", args)

    def _call_Finish_The_Plan(self, line: int, target: str, args: dict[str, Value]) -> object:
        v = args["Answer"]
        if isinstance(v, Ref):
            return self.env[v.name]
        raise PlanExecutionError(line, "Finish_The_Plan needs the variable holding the answer")

    # ------------------------------------------------------------ Compare
    def _call_Compare(self, line: int, target: str, args: dict[str, Value]) -> AnswerSet:
        started = time.perf_counter()
        answers_arg = args.get("Answers")
        names = [v.name for v in answers_arg.items if isinstance(v, Ref)] if isinstance(answers_arg, ListValue) else []
        sets = [(n, self.env.get(n)) for n in names]
        if len(sets) < 2 or not all(isinstance(s, AnswerSet) for _, s in sets):
            raise PlanExecutionError(line, "Compare needs Answers = [Ans_1, Ans_2, ...], a list of answer variables")
        q_value = args.get("Original_Query")
        query = self.question
        if q_value is not None:
            try:
                query = self._text_of(line, q_value, "Original_Query").render() or query
            except PlanExecutionError:
                pass
        rows = []  # (subject, value text, parsed, chain)
        for _, s in sets:
            assert isinstance(s, AnswerSet)
            subject = s.subjects[0] if s.subjects else (s.items[0].text if s.items else "?")
            item = s.items[0] if s.items else None
            value = item.text if item else ""
            rows.append((subject, value, parse_value(value) if value else None, item.chain if item else []))
        result = AnswerSet()
        how = ""
        calls_before = len(self.model_calls)
        comparable = all(p is not None for _, _, p, _ in rows) and len({p[0] for _, _, p, _ in rows}) == 1
        if comparable and _SAME.search(query):
            same = len({p[1] for _, _, p, _ in rows}) == 1
            result.items.append(AnswerItem("Yes" if same else "No", None, [i for r in rows for i in r[3]]))
            how = "values compared for equality"
        elif comparable and (_LARGER.search(query) or _SMALLER.search(query)):
            larger = bool(_LARGER.search(query)) and not (
                _SMALLER.search(query) and _SMALLER.search(query).start() < _LARGER.search(query).start()
            )
            pick = (max if larger else min)(rows, key=lambda r: r[2][1])
            result.items.append(AnswerItem(pick[0], pick[0] if self.graph.has_entity(pick[0]) else None, list(pick[3])))
            how = f"picked the {'largest' if larger else 'smallest'} value"
        else:
            how = self._compare_with_model(query, rows, result)
        result.subjects = [r[0] for r in rows]
        step = Step(
            index=0,
            kind="lpkg.set_op",
            title=f"Compare: {', '.join(f'{r[0]} = {r[1]}' for r in rows)} -> {', '.join(result.texts())}",
            model_calls=self.model_calls[calls_before:],  # the model's choice, when the wording did not say
            subgraph_after=list(dict.fromkeys(i for r in rows for i in r[3])),
            choice="compare",
            seconds=round(time.perf_counter() - started, 4),
            note=how,
            extra=_set_op_extra("compare", sets, result, line, target, values={r[0]: r[1] for r in rows}),
        )
        self.emit(step)
        return result

    def _compare_with_model(self, query: str, rows, result: AnswerSet) -> str:
        options = [r[0] for r in rows]
        info = "\n".join(f"{r[0]}: {r[1] or 'unknown'}" for r in rows)
        prompt = self.model.chat_prompt(_QA_PROMPT.format(info=info, question=query)) + "["
        extra_opts = ["Yes]", "No]"]
        scores = self.model.score_continuations(prompt, [o + "]" for o in options] + extra_opts)
        self.model_calls.append(self.model.call_record("lpkg.compare", scores, prompt))
        best = max(range(len(scores)), key=lambda i: scores[i].mean)
        if best < len(rows):
            subject = rows[best][0]
            result.items.append(AnswerItem(subject, subject if self.graph.has_entity(subject) else None, list(rows[best][3])))
        else:
            result.items.append(AnswerItem(extra_opts[best - len(rows)][:-1], None, [i for r in rows for i in r[3]]))
        return "the question's wording did not say how to compare; the model chose"


def _set_op_extra(op: str, operands: Sequence[tuple[str, AnswerSet]], result: AnswerSet, line: int, target: str,
                  **more: Any) -> dict[str, Any]:
    """The extra of an ``lpkg.set_op`` step: the operation, its operands' and result's answers, the plan line."""
    return {"op": op, "operands": {n: s.texts() for n, s in operands}, **more, "result": result.texts(),
            "answers": result.texts(), "line": line, "variable": target}

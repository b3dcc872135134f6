"""Turn grounded pattern instances into sub-questions and a complex question.

Two verbalisers (paper §3.2 "Verbalization"):

* `TemplateVerbaliser` always works: relation names are turned into words
  (``directed_by`` -> "directed by") and slotted into a few question shapes.
  The English is stiff but the meaning is exactly the instance's.
* `ModelVerbaliser` follows the App. C.1 prompts (one per pattern) with a
  local model, and falls back to the template whenever the model's output is
  unusable (missing lines, an anchor entity not mentioned, a placeholder
  dropped), so a bad generation never produces a wrong question.

Sub-questions keep plan placeholders (``{Ans_1}``, ``{Inter_1}``) where a
sub-question depends on an earlier answer, as in the paper's plans.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from ..models.generation import GenerationConfig
from .patterns import Hop, PatternInstance

if TYPE_CHECKING:  # pragma: no cover
    from ..models.local_model import LocalModel


@dataclass
class Verbalised:
    """The natural-language form of one instance."""

    question: str
    sub_questions: list[str]
    source: str = "template"  # "template" | "model" | "template (model output unusable: ...)"
    model_output: str = ""
    extra: dict = field(default_factory=dict)


class Verbaliser(Protocol):
    name: str

    def verbalise(self, inst: PatternInstance) -> Verbalised: ...


# ---------------------------------------------------------------- relation words
def relation_words(relation: str) -> str:
    """``directed_by`` -> "directed by", ``placeOfBirth`` -> "place of birth"."""
    local = re.split(r"[/#]", relation.rstrip("/#"))[-1] or relation
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", local)
    spaced = re.sub(r"[_\-.]+", " ", spaced)
    return " ".join(spaced.split()).lower() or relation


def _shape(relation: str) -> tuple[str, str]:
    """(shape, core words): shape is 'has', 'by', 'in', 'is' or 'plain'."""
    w = relation_words(relation)
    if w.startswith("has ") and len(w) > 4:
        return "has", w[4:]
    if w.endswith(" by") and len(w) > 3:
        return "by", w
    if w.startswith("in ") and len(w) > 3:
        return "in", w[3:]
    if w.startswith("is ") and len(w) > 3:
        return "is", w[3:]
    return "plain", w


def relation_noun(relation: str) -> str:
    shape, core = _shape(relation)
    return core if shape in ("has", "in", "plain") else relation_words(relation)


# What a hop reaches, by the shape of its relation's words (`_shape`): a question and a noun phrase
# (for nesting).  {s} is the subject, {c} the relation's core words; shapes not listed take the default.
_FORWARD = {
    "by": ("What is {s} {c}?", "what {s} is {c}"),
    "is": ("What is {s} {c}?", "what {s} is {c}"),
}
_FORWARD_DEFAULT = ("What is the {c} of {s}?", "the {c} of {s}")
_INVERSE = {
    "has": ("What has {c} {s}?", "the entities with {c} {s}"),
    "by": ("What was {c} {s}?", "the entities {c} {s}"),
    "in": ("What is in {c} {s}?", "the entities in {c} {s}"),
    "is": ("What is {c} {s}?", "the entities that are {c} {s}"),
}
_INVERSE_DEFAULT = _INVERSE["has"]


def _wordings(hop: Hop) -> tuple[tuple[str, str], str]:
    """The (question, phrase) templates for `hop` and the relation's core words."""
    shape, core = _shape(hop.relation)
    table, default = (_INVERSE, _INVERSE_DEFAULT) if hop.inverse else (_FORWARD, _FORWARD_DEFAULT)
    return table.get(shape, default), core


def hop_question(subject: str, hop: Hop) -> str:
    """A question asking for what ``hop`` reaches from ``subject``."""
    (question, _), core = _wordings(hop)
    return question.format(s=subject, c=core)


def hop_phrase(subject: str, hop: Hop) -> str:
    """A noun phrase for what ``hop`` reaches from ``subject`` (for nesting)."""
    (_, phrase), core = _wordings(hop)
    return phrase.format(s=subject, c=core)


def _placeholder(name: str) -> str:
    return "{" + name + "}"


def sub_question_texts(inst: PatternInstance) -> list[str]:
    """The template sub-questions, with placeholders for earlier answers."""
    out = []
    for sq in inst.sub_queries():
        subject = _placeholder(sq.subject) if sq.placeholder else sq.subject
        out.append(hop_question(subject, sq.hop))
    return out


def _nested(anchor: str, hops: tuple[Hop, ...]) -> str:
    phrase = anchor
    for hop in hops:
        phrase = hop_phrase(phrase, hop)
    return phrase


def _nested_question(anchor: str, hops: tuple[Hop, ...]) -> str:
    return hop_question(_nested(anchor, hops[:-1]), hops[-1])


def complex_question(inst: PatternInstance) -> str:
    """The template complex question of an instance."""
    p = inst.pattern
    if p == "compare":
        c = inst.comparison()
        noun = relation_noun(c.relation)
        if c.kind == "date" or re.search(r"\b(year|date|born|founded|time)\b", noun):
            word = "later" if c.mode == "larger" else "earlier"
        else:
            word = "larger" if c.mode == "larger" else "smaller"
        return f"Which has the {word} {noun}, {c.entities[0]} or {c.entities[1]}?"
    if p in ("1p", "2p", "3p"):
        b = inst.branches[0]
        return _nested_question(b.anchor, b.hops)
    phrases = [_nested(b.anchor, b.hops) for b in inst.branches]
    if p == "2i" or p == "pi":
        return f"What is both {phrases[0]} and {phrases[1]}?"
    if p == "3i":
        return f"What is {phrases[0]}, {phrases[1]} and {phrases[2]} at the same time?"
    if p == "2u":
        return f"What are all the entities that are {phrases[0]} or {phrases[1]}?"
    if p == "ip":
        assert inst.then is not None
        return hop_question(f"the entities that are both {phrases[0]} and {phrases[1]}", inst.then)
    raise ValueError(f"unknown pattern {p!r}")


class TemplateVerbaliser:
    """Deterministic verbalisation; never fails."""

    name = "template"

    def verbalise(self, inst: PatternInstance) -> Verbalised:
        return Verbalised(question=complex_question(inst), sub_questions=sub_question_texts(inst))


# ---------------------------------------------------------------- model (App. C.1)
C1_PROMPTS: dict[str, str] = {
    "1p": """Instruction:
Given a subgraph query in the knowledge graph, please transfer it into natural language. The subgraph query is expressed in the format (h,(r,)), where h and r represent the head entity and relation respectively, and the meaning of this query is to find the set of tail entities of h under the relation r. Your responsibility is to transfer it into a question in natural language form. I will give you some examples, please complete your task after reading them:
Demonstrations:
### Example 1:
Subgraph Query: (Booker T. Jones, (ethnic group,))
Natural Language Question: What is the ethnic group of Booker T. Jones?
### Example 2:
Subgraph Query: (Daniel Handler, (educated at,))
Natural Language Question: Where did Daniel Handler receive education?
### Your Turn (Just output the Natural Language Question and do not return other content):
Input:
Subgraph Query: """,
    "2p": """Instruction:
Given a subgraph query in knowledge graph, please transfer it into natural language. The subgraph query is expressed in the format (h,(r1,r2,)), where h represents the head entity, and r1 and r2 represent a two-hop relation path starting from head entity h. The purpose of this query is to find the target entity associated with the head entity h under the relational path (r1, r2). Your responsibility is to first transfer it into two sub-questions and finally combine them to form a complex question. When constructing the second sub-question, you may need the answer to the first sub-question, so we will assume that the answer to the first sub-question is A1 and the answer to the second sub-question is A2, to facilitate the formulation of the sub-question. When composing the final question, please pay attention to the fluency of the language and avoid mechanically stitching sub-questions together. I will give you some examples, please complete your task after reading them:
Demonstrations:
### Example 1:
Subgraph Query:(Chongqing, (twinned administrative body, country of citizenship))
Q1: Which city or administrative body that is twinned with Chongqing?
Q1_Answer: A1
Q2: What is the country of {A1}?
Q2_Answer: A2
Final Question: Which country has a city or administrative body that is twinned with Chongqing?
### Example 2:
Subgraph Query:(Inkheart, (cast member, educated at))
Q1: Who is the cast member of Inkheart?
Q1_Answer: A1
Q2: Where did {A1} receive education?
Q2_Answer: A2
Final Question: Where did the cast member of Inkheart receive education?
Input:
### Your Turn (Just complete your task in the above format and do not return other content):
Subgraph Query: """,
    "3p": """Instruction:
Given a subgraph query in knowledge graph, please transfer it into natural language. The subgraph query is expressed in the format (h,(r1,r2,r3,)), where h represents the head entity, and (r1,r2,r3,) represents a three-hop relation path starting from the head entity h. The purpose of this query is to find the target entity associated with the head entity h under the relational path (r1,r2,r3,). Your responsibility is to first transfer it into three sub-questions and finally combine them to form a complex question. When constructing the second and third sub-question, you may need the answer to the previous sub-question, so we will assume that the answers to these three sub-questions are A1, A2, and A3, to facilitate the formulation of the sub-question. When composing the final question, please pay attention to the fluency of the language and avoid mechanically stitching sub-questions together. I will give you some examples, please complete your task after reading them:
Demonstrations:
### Example 1:
Subgraph Query: (Android, (developer, country, foundational text))
Q1: Who is the developer of Android?
Q1_Answer: A1
Q2: What is the country of {A1}?
Q2_Answer: A2
Q3: What is the foundational text of country {A2}?
Q3_Answer: A3
Final Question: What is the foundational text of the Android developer's country?
### Example 2:
Subgraph Query: (X-Men: The Last Stand, (cast member, place of birth, shares border with))
Q1: Who is the cast member of X-Men: The Last Stand?
Q1_Answer: A1
Q2: What is the birthplace of {A1}?
Q2_Answer: A2
Q3: Which area borders with {A2}?
Q3_Answer: A3
Final Question: Which area borders the birthplace of X-Men: The Last Stand's cast member?
Input:
### Your Turn (Just complete your task in the above format and do not return other content):
Subgraph Query: """,
    "2i": """Instruction:
Given a subgraph query in knowledge graph, please transfer it into natural language. The subgraph query is expressed in the format "(h1,(r1,)) Intersection (h2,(r2,))", where h1 and h2 represent two head entities, r1 and r2 are their corresponding relations. The purpose of this query is to find the intersection set of the tail entities of (h1,(r1,)) and (h2,(r2,)). Your responsibility is to first transfer it into two sub-questions and finally combine them to form a complex question. When composing the final question, please pay attention to the fluency of the language and avoid mechanically stitching sub-questions together. The questioning method can be adjusted appropriately, but the meaning cannot be changed. I will give you some examples, please complete your task after reading them:
Demonstrations:
### Example 1:
Subgraph Query: (Jimmy Carter, (educated at,)) Intersection (John Wells, (educated at,))
Q1: Where did Jimmy Carter receive education?
Q2: Where did John Wells receive education?
Final Question: Where did both Jimmy Carter and John Wells receive education?
### Example 2:
Subgraph Query: (Burlington County, (shares border with,)) Intersection (Trumbull County, (shares border with,))
Q1: Which areas border with Burlington County?
Q2: Which areas border with Trumbull County?
Final Question: Which areas border with Burlington County and Trumbull County at the same time?
Input:
### Your Turn (Just complete your task in the above format and do not return other content):
Subgraph Query: """,
    "3i": """Instruction:
Given a subgraph query in knowledge graph, please transfer it into natural language. The subgraph query is expressed in the format "(h1,(r1,)) Intersection (h2,(r2,)) Intersection (h3,(r3,))", where h1, h2 and h3 represent three head entities, r1, r2 and r3 are their corresponding relations. The purpose of this query is to find the intersection set of the tail entities of (h1,(r1,)), (h2,(r2,)) and (h3,(r3,)). Your responsibility is to first transfer it into three sub-questions and finally combine them to form a complex question. When composing the final question, please pay attention to the fluency of the language and avoid mechanically stitching sub-questions together. The questioning method can be adjusted appropriately, but the meaning cannot be changed. I will give you some examples, please complete your task after reading them:
Demonstrations:
### Example 1:
Subgraph Query: ((Alice in Wonderland, (genre,)) Intersection (Blues Brothers 2000, (genre,)) Intersection (Pinocchio, (genre,)))
Q1: What are the genre of Alice in Wonderland?
Q2: What are the genre of Blues Brothers 2000?
Q3: What are the genre of Pinocchio?
Final Question: What are the same genre shared between Alice in Wonderland, Blues Brothers 2000 and Pinocchio?
### Example 2:
Subgraph Query:(Springfield, (capital of,)) Intersection (Ulster County, (shares border with,)) Intersection (Montgomery County, (shares border with,))
Q1: What is the capital of Springfield?
Q2: Which areas border with Ulster County?
Q3: Which areas border with Montgomery County?
Final Question: Which area is the capital of Springfield and borders with Ulster County and Montgomery County at the same time?
Input:
### Your Turn (Just complete your task in the above format and do not return other content):
Subgraph Query: """,
    "ip": """Instruction:
Given a subgraph query in knowledge graph, please transfer it into natural language. The subgraph query is expressed in the format "(h1,(r1,)) Intersection (h2,(r2,)) Projection r3", where h1 and h2 represent two head entities, r1 and r2 are their corresponding relations. The purpose of this query is to fisrt get the intersection set of the tail entities of (h1,(r1,)) and (h2,(r2,)), and then find the tail entities of every entity in the previous intersection set under relation r3. Your responsibility is to first transfer it into three sub-questions and finally combine them to form a complex question. When composing the final question, please pay attention to the fluency of the language and avoid mechanically stitching sub-questions together. The questioning method can be adjusted appropriately, but the meaning cannot be changed. I will give you some examples, please complete your task after reading them:
Demonstrations:
### Example 1:
Subgraph Query: (John Williams, (educated at,)) Intersection (John Milton, (educated at,)) Projection named after
Q1: Where did John Williams receive education?
Q2: Where did John Milton receive education?
Intersection_Answer: Inter_A
Q3: The {Inter_A} was named after what?
Final Question: The place where John Williams and John Milton both received education was named after what?
### Example 2:
Subgraph Query: (The Blues Brothers, (cast member,)) Intersection (Going My Way, (cast member,)) Projection member of political party
Q1: Who are the cast members of The Blues Brothers?
Q2: Who are the cast members of Going My Way?
Intersection_Answer: Inter_A
Q3: What are the political party of {Inter_A}?
Final Question: What are the political party of people who are cast members of both The Blues Brothers and Going My Way?
Input:
### Your Turn (Just complete your task in the above format and do not return other content):
Subgraph Query: """,
    "pi": """Instruction:
Given a subgraph query in knowledge graph, please transfer it into natural language. The subgraph query is expressed in the format "(h1,(r1,r2,)) Intersection (h2,(r3,))", where (h1,(r1,r2,)) represents a two-hop relational path starts from head entity h1 followed by relation r1 and r2, and (h2, (r3,)) is an one-hop relational path start from head entity h2. The purpose of this query is to find the intersection set of the tail entity of relational path (h1,(r1,r2)) and (h2,(r3,)). Your responsibility is to first transfer it into three sub-questions and finally combine them to form a complex question. When constructing second or third sub-questions, you may need the answer to the previous sub-question, so we will assume that the answer to the first sub-question is A1 and the answer to the second sub-question is A2, to facilitate the formulation of the sub-question. When composing the final question, please pay attention to the fluency of the language and avoid mechanically stitching sub-questions together. The questioning method can be adjusted appropriately, but the meaning cannot be changed. I will give you some examples, please complete your task after reading them:
Demonstrations:
### Example 1:
Subgraph Query: (Drake Bell, (place of birth, shares border with)) Intersection (Santa Ana, shares border with)
Q1: What is the birthplace of Drake Bell?
Q1_Answer: A1
Q2: Which areas border with {A1}?
Q2_Answer: A2
Q3: Which areas border with Santa Ana?
Q3_Answer: A3
Final Question: Which regions border Drake Bell's birthplace and Santa Ana at the same time?
Final Answer: A2 Intersection A3
### Example 2:
Subgraph Query: (Fran Walsh, (spouse, sport)) Intersection (Fluminense F.C., (sport,))
Q1: Who is the spouse of Fran Walsh?
Q1_Answer: A1
Q2: What sports does {A1} play?
Q2_Answer: A2
Q3: What sports does Fluminense F.C. play?
Q3_Answer: A3
Final Question: What sports have Fluminense F.C. and Fran Walsh's spouse played in?
Final Answer: A3 Intersection A2
Input:
### Your Turn (Just complete your task in the above format and do not return other content):
Subgraph Query: """,
    "2u": """Instruction:
Given a subgraph query in knowledge graph, please transfer it into natural language. The subgraph query is expressed in the format "(h1,(r1,)) Union (h2,(r2,))", where h1 and h2 represent two head entities, r1 and r2 are their corresponding relations. The purpose of this query is to find the Union set of the tail entities of (h1,(r1,)) and (h2,(r2,)). Your responsibility is to first transfer it into two sub-questions and finally combine them to form a complex question. When composing the final question, please pay attention to the fluency of the language and avoid mechanically stitching sub-questions together. The questioning method can be adjusted appropriately, but the meaning cannot be changed. I will give you some examples, please complete your task after reading them:
Demonstrations:
### Example 1:
Subgraph Query: (Wuthering Heights, (cast member,)) Union (Traffic, (cast member,))
Q1: Who are the cast members of Wuthering Heights?
Q2: Who are the cast members of Traffic?
Final Question: Who are all the cast members from Wuthering Heights combined with the cast members from Traffic?
### Example 2:
Subgraph Query: (Eve, (director,)) Union (Cold Mountain, (cast member,))
Q1: Who is the director of Eve?
Q2: Who are the cast members of Cold Mountain?
Final Question: Please list the director of Eve as well as all the cast members from Cold Mountain.
Input:
### Your Turn (Just complete your task in the above format and do not return other content):
Subgraph Query: """,
    "compare": """Instruction:
Given two triples with numerical tail entities, please create a comparison-type question based on the given triples and create the corresponding sub-questions for each triple. Finally, you should also give the answer based on the given triple. The final answer should be "Yes" or "No". Here are some examples:
Demonstrations:
### Example 1:
Triple 1:(Vietnam male, marriageable age, 20 years old)
Triple 2:(Vietnam female, marriageable age, 18 years old)
Q1: What is the marriageable age for Vietnamese men?
Q2: What is the marriageable age for Vietnamese women
Final Question: Is the marriageable age the same for men and women in Vietnam?
Answer: No
### Example 2:
Triple 1:(Vietnam, population, 94660000)
Triple 2:(Halifax, population, 424931)
Q1: What is the population of Vietnam?
Q2: What is the population of Halifax?
Final Question: Which has less population, Vietnam or Halifax?
Answer: Halifax
Input:
### Your Turn (Just complete your task in the above format and do not return other content):
""",
}


def _rel(hop: Hop) -> str:
    w = relation_words(hop.relation)
    return f"reverse of {w}" if hop.inverse else w


def render_query(inst: PatternInstance) -> str:
    """The instance in the App. C.1 notation, e.g. ``(Inkheart, (cast member, educated at))``."""
    p = inst.pattern
    if p == "compare":
        c = inst.comparison()
        r = relation_words(c.relation)
        word = {"number": ("larger", "smaller"), "date": ("later", "earlier")}[c.kind][c.mode != "larger"]
        return (
            f"Triple 1:({c.entities[0]}, {r}, {c.values[0]})\n"
            f"Triple 2:({c.entities[1]}, {r}, {c.values[1]})\n"
            f"(Ask which of the two has the {word} {r}.)"
        )

    def one(b) -> str:
        rels = ", ".join(_rel(h) for h in b.hops)
        return f"({b.anchor}, ({rels}{',' if len(b.hops) == 1 else ''}))"

    if p in ("1p", "2p", "3p"):
        return one(inst.branches[0])
    joiner = " Union " if p == "2u" else " Intersection "
    text = joiner.join(one(b) for b in inst.branches)
    if p == "ip":
        assert inst.then is not None
        text += f" Projection {_rel(inst.then)}"
    return text


_LINE = re.compile(r"^\s*(Q\d+|Final Question|Natural Language Question|Answer)\s*:\s*(.+?)\s*$", re.M)


def parse_verbalisation(text: str) -> dict[str, str]:
    """``{"Q1": ..., "Final Question": ...}`` from a model's App. C.1-style answer."""
    found: dict[str, str] = {}
    for key, value in _LINE.findall(text):
        found.setdefault(key, value)
    return found


def _to_plan_placeholders(text: str, pattern: str) -> str:
    text = re.sub(r"\{?\bInter_A\b\}?", "{Inter_1}", text)
    return re.sub(r"\{?\bA(\d)\b\}?", lambda m: "{Ans_" + m.group(1) + "}", text)


class ModelVerbaliser:
    """App. C.1 verbalisation with a local model, template fallback on bad output."""

    name = "model"

    def __init__(self, model: "LocalModel", max_new_tokens: int = 160) -> None:
        self.model = model
        self.max_new_tokens = max_new_tokens
        self.fallback = TemplateVerbaliser()

    def prompt(self, inst: PatternInstance) -> str:
        return C1_PROMPTS[inst.pattern] + render_query(inst) + "\n"

    def verbalise(self, inst: PatternInstance) -> Verbalised:
        prompt = self.model.chat_prompt(self.prompt(inst))
        gen = self.model.generate(prompt, GenerationConfig(self.max_new_tokens, stop_strings=("### ", "\n\n\n")))
        problem, result = self._check(inst, gen.text)
        if result is not None:
            result.model_output = gen.text
            return result
        out = self.fallback.verbalise(inst)
        out.source = f"template (model output unusable: {problem})"
        out.model_output = gen.text
        return out

    def _check(self, inst: PatternInstance, text: str) -> tuple[str, Verbalised | None]:
        fields = parse_verbalisation(text)
        subs = inst.sub_queries()
        if inst.pattern == "1p":
            q = fields.get("Natural Language Question") or fields.get("Final Question")
            if not q:
                stripped = text.strip().splitlines()
                q = stripped[0].strip() if stripped else ""
            final, sub_texts = q, [q]
        else:
            final = fields.get("Final Question", "")
            sub_texts = [fields.get(f"Q{k}", "") for k in range(1, len(subs) + 1)]
            sub_texts = [_to_plan_placeholders(s, inst.pattern) for s in sub_texts]
        if not final:
            return "no final question", None
        if any(not s for s in sub_texts):
            return f"expected {len(subs)} sub-questions", None
        lowered = final.casefold()
        missing = [a for a in inst.anchors if a.casefold() not in lowered]
        if missing:
            return f"final question does not mention {missing[0]!r}", None
        for sq, text_k in zip(subs, sub_texts):
            needed = _placeholder(sq.subject) if sq.placeholder else sq.subject
            if needed.casefold() not in text_k.casefold():
                return f"sub-question {text_k!r} does not mention {needed}", None
        if inst.pattern == "compare":
            said = fields.get("Answer", "").strip().strip(".")
            if said.casefold() != inst.answers[0].casefold():
                return f"model's answer {said!r} disagrees with the graph's {inst.answers[0]!r}", None
        return "", Verbalised(question=final, sub_questions=sub_texts, source="model")


def make_verbaliser(kind: str, model: "LocalModel | None" = None) -> Verbaliser:
    if kind == "template":
        return TemplateVerbaliser()
    if kind == "model":
        if model is None:
            raise ValueError("the model verbaliser needs a model (--model NAME)")
        return ModelVerbaliser(model)
    raise ValueError(f"unknown verbaliser {kind!r}; choose 'template' or 'model'")


__all__ = [
    "Verbalised", "Verbaliser", "TemplateVerbaliser", "ModelVerbaliser", "make_verbaliser",
    "relation_words", "hop_question", "hop_phrase", "sub_question_texts", "complex_question",
    "render_query", "parse_verbalisation", "C1_PROMPTS",
]

"""The DoG prompt (paper, Appendix A, Tab. 6), its Direct variant, and answer parsing.

DoG, CoT and Direct must see the same context so that their differences come
from decoding alone (paper §3.3, §4).  The instructions and the three
in-context examples are the paper's, with these fixes of obvious typos
(recorded here because the prompt is part of the method):

* "irrelvant" -> "irrelevant";
* the second example was labelled "Example 1" -> "Example 2";
* the examples' headers read ``*Example N:**`` in the paper (a markdown bold
  that lost a star in extraction) -> ``**Example N:**``;
* "William Shakespeare is was playwright" -> "William Shakespeare was a playwright";
* typographic apostrophes (``Let’s``) -> ASCII (``Let's``).

Layout.  The paper prints the prompt as one run of text; we put each
example's Context / Question / Answer on its own line.  With a chat model the
instructions, the examples and the question go into the user turn, and the
answer prefix "Let's break down the steps to find the answer to the
question." opens the assistant turn, so the model *continues* it exactly as
in the examples.  Without a chat template the whole Tab. 6 text is used raw.

Terse examples (``examples="terse"``, DoG's workbench default; the paper
preset keeps ``"paper"``): the same three examples and chains with the
commentary between the triplets left out ("1. < h -> r -> t > 2. < ... >
Therefore, the answer is * X."), and one sentence more in the instructions
saying so.  A small model copies the examples' commentary ("This tells us
...") between every two triplets, and that commentary was most of the tokens
a DoG question wrote (issue 32); the triplets and the answer line, which the
method reads, are unchanged.

Bare examples (``examples="bare"``): the terse chains without their step
numbers ("< h -> r -> t > < ... > Therefore, the answer is * X."), the
instructions saying so: a model copies "1." or "2." before every triplet,
two or three tokens each that the method never reads.

Direct variant (paper §3.3: "similar to the one used in DoG except that the
triplet chains are omitted"): the same instructions' first sentence, the same
three contexts and questions, and answers written straight after "Answer:"
(``* Bahamas.``); the model continues after "Answer:".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Sequence

from ..graph.linearize import linearize

ANSWER_PREFIX = "Let's break down the steps to find the answer to the question."

INSTRUCTIONS = (
    "You are a helpful assistant that can analyse the knowledge graphs in the contexts and then "
    "answer the questions based on the knowledge graphs. The answers should give the grounded "
    "reasoning chains and think step by step, and the reasoning chains should be logically complete "
    "but have as fewer steps as possible. Do not include information irrelevant to the question."
)

# said after the instructions when the examples are terse (or bare)
TERSE_INSTRUCTION = "Write each step as its triplet alone, with no comment between the triplets, then the answer line."
BARE_INSTRUCTION = ("Write each step as its triplet alone, with no number or comment between the triplets, then the "
                    "answer line.")
EXAMPLE_STYLES = ("paper", "terse", "bare")
_STEP_NUMBER = re.compile(r"\d+\. (?=<)")

DIRECT_INSTRUCTIONS = (
    "You are a helpful assistant that can analyse the knowledge graphs in the contexts and then "
    "answer the questions based on the knowledge graphs. Give the answers directly, each one marked "
    "with *. Do not include information irrelevant to the question."
)


@dataclass(frozen=True)
class Example:
    context: str
    question: str
    reasoning: str  # the DoG/CoT answer after the answer prefix
    direct: str  # the Direct answer
    terse: str = ""  # the same chain without the commentary between triplets (``examples="terse"``)


EXAMPLES: tuple[Example, ...] = (
    Example(
        context=(
            "Bahamas -> location.country.first_level_divisions -> Grand Cay | Grand Bahama -> "
            "location.location.containedby -> Bahamas | Bahamas -> location.location.contains -> Grand Cay | "
            "Bahamas -> location.location.contains -> Grand Bahama | Grand Cay -> location.location.containedby "
            "-> Bahamas | Bahamas -> location.country.first_level_divisions -> East Grand Bahama | Bahamas -> "
            "location.country.first_level_divisions -> West Grand Bahama | Grand Bahama -> "
            "location.location.contains -> Grand Bahama International Airport | Bahamas -> "
            "location.location.contains -> East Grand Bahama | Bahamas -> location.location.contains -> West "
            "Grand Bahama | East Grand Bahama -> location.location.containedby -> Bahamas | Bahamas -> "
            "location.location.contains -> Grand Bahama International Airport | Grand Bahama -> "
            "location.location.people_born_here -> Hubert Ingraham | Grand Cay -> "
            "location.administrative_division.first_level_division_of -> Bahamas | Bahamas -> "
            "location.country.administrative_divisions -> Cat Island, Bahamas | Bahamas -> "
            "location.country.administrative_divisions -> Long Island | West Grand Bahama -> "
            "location.location.containedby -> Bahamas | Bahamas -> location.country.capital -> Nassau | "
            "Bahamas -> location.country.administrative_divisions -> Inagua | Bahamas -> "
            "location.country.administrative_divisions -> Exuma | Grand Bahama International Airport -> "
            "location.location.containedby -> Bahamas | Grand Bahama -> location.location.people_born_here -> "
            "Juan Lewis | Grand Bahama -> location.location.contains -> West End Airport"
        ),
        question="What country is the grand bahama island in?",
        reasoning=(
            "1. < Grand Bahama -> location.location.containedby -> Bahamas > This tells us Grand Bahama is "
            "located in Bahamas. Grand Bahama is in Bahamas. Therefore, the answer is * Bahamas."
        ),
        direct="* Bahamas.",
        terse="1. < Grand Bahama -> location.location.containedby -> Bahamas > Therefore, the answer is * Bahamas.",
    ),
    Example(
        context=(
            "William Shakespeare -> people.person.profession -> Playwright | William Shakespeare -> "
            "people.person.profession -> Poet | William Shakespeare -> base.kwebbase.kwtopic.has_sentences -> "
            "By the time these works were published in 1609, Shakespeare was an acknowledged master of drama "
            "and an established country gentleman. | William Shakespeare -> people.person.profession -> Actor "
            "| William Shakespeare -> people.person.profession -> Author | William Shakespeare -> "
            "people.person.profession -> Lyricist | In the 21 years between 1592 and 1613, Shakespeare "
            "produced more than 30 plays. -> base.kwebbase.kwsentence.previous_sentence -> Above all, his "
            "humanity spanned all classes and circumstances"
        ),
        question="What did William Shakespeare do for a living?",
        reasoning=(
            "1. < William Shakespeare -> people.person.profession -> Playwright > This tells us William "
            "Shakespeare was a playwright. 2. < William Shakespeare -> people.person.profession -> Poet > "
            "This tells us William Shakespeare was a poet. William Shakespeare was a playwright, and poet. "
            "Therefore, the answer is * playwright, and * poet."
        ),
        direct="* playwright, and * poet.",
        terse=(
            "1. < William Shakespeare -> people.person.profession -> Playwright > 2. < William Shakespeare -> "
            "people.person.profession -> Poet > Therefore, the answer is * playwright, and * poet."
        ),
    ),
    Example(
        context=(
            "Carlton the Bear -> sports.mascot.team -> Toronto Maple Leafs | Toronto Maple Leafs -> "
            "sports.sports_team.team_mascot -> Carlton the Bear | Carlton the Bear -> "
            "common.topic.notable_types -> Mascot | Mascot -> type.type.properties -> Team | Toronto Maple "
            "Leafs -> sports.sports_team.previously_known_as -> Toronto St. Patricks | Team -> "
            "type.property.master_property -> Team Mascot | Toronto Maple Leafs -> "
            "sports.sports_team.previously_known_as -> Toronto Arenas | m.0crt465 -> "
            "sports.sports_league_participation.team -> Toronto Maple Leafs | Toronto St. Patricks -> "
            "sports.defunct_sports_team.later_known_as -> Toronto Maple Leafs | Toronto Maple Leafs -> "
            "sports.sports_team.sport -> Ice Hockey | Toronto St. Patricks -> sports.sports_team.sport -> Ice "
            "Hockey | Toronto Arenas -> sports.defunct_sports_team.later_known_as -> Toronto Maple Leafs | "
            "Toronto -> sports.sports_team_location.teams -> Toronto Maple Leafs | Toronto Maple Leafs -> "
            "sports.sports_team.location -> Toronto"
        ),
        question="What is the sport played by the team with a mascot known as Carlton the Bear?",
        reasoning=(
            "1. < Carlton the Bear -> sports.mascot.team -> Toronto Maple Leafs > This tells us Carlton the "
            "Bear is the mascot of the team Toronto Maple Leafs. 2. < Toronto Maple Leafs -> "
            "sports.sports_team.sport -> Ice Hockey > This tells us Toronto Maple Leafs plays Ice Hockey. "
            "Carlton the Bear is the mascot of the team Toronto Maple Leafs which plays Ice Hockey. "
            "Therefore, the answer is * Ice Hockey."
        ),
        direct="* Ice Hockey.",
        terse=(
            "1. < Carlton the Bear -> sports.mascot.team -> Toronto Maple Leafs > 2. < Toronto Maple Leafs -> "
            "sports.sports_team.sport -> Ice Hockey > Therefore, the answer is * Ice Hockey."
        ),
    ),
)

# Text that means the model has started another example instead of finishing this one.
RUNAWAY_MARKERS: tuple[str, ...] = ("*Example", "Example 5:", "Context:", "Question:", "\n\n\n")


@dataclass
class PromptParts:
    """A built prompt: the exact string fed to the model and its pieces (for the trace)."""

    variant: str  # "dog" (also CoT) or "direct"
    text: str  # the full model input, chat template applied, ending where generation starts
    system: str | None
    user: str
    assistant_prefix: str
    context: str  # the linearised graph inside "Context: [ ... ]"
    triplet_ids: list[int] = field(default_factory=list)
    chat_template: bool = True
    shared_prefix: str = ""  # the start of `text` every question shares (instructions + examples)
    layout: str = "turns"
    examples: str = "paper"  # the examples' style: "paper" (Tab. 6), "terse" (no commentary between triplets), "bare"


def _example_block(n: int, context: str, question: str, answer: str) -> str:
    return f"**Example {n}:**\nContext: [ {context} ]\nQuestion: {question}\nAnswer: {answer}"


def _instructions(variant: str, examples: str) -> str:
    if variant != "dog":
        return DIRECT_INSTRUCTIONS
    extra = {"terse": TERSE_INSTRUCTION, "bare": BARE_INSTRUCTION}.get(examples)
    return INSTRUCTIONS + (" " + extra if extra else "")


def bare_chain(terse: str) -> str:
    """A terse chain without its step numbers: each number is two or three tokens a model copies before every
    triplet, and the method reads only the triplets and the answer line.

    >>> bare_chain("1. < A -> r -> B > 2. < B -> s -> C > Therefore, the answer is * C.")
    '< A -> r -> B > < B -> s -> C > Therefore, the answer is * C.'
    """
    return _STEP_NUMBER.sub("", terse)


def _answer(ex: Example, variant: str, examples: str) -> str:
    """An example's answer: the reasoning (paper, terse or bare) after the answer prefix, or Direct's answer."""
    if variant != "dog":
        return ex.direct
    chain = {"terse": ex.terse, "bare": bare_chain(ex.terse)}.get(examples, ex.reasoning)
    return f"{ANSWER_PREFIX} {chain}"


def build_user_text(context: str, question: str, variant: str = "dog", examples: str = "paper") -> tuple[str, str]:
    """(user text, assistant prefix) of the Tab. 6 prompt or its Direct variant."""
    if variant not in ("dog", "direct"):
        raise ValueError(f"unknown prompt variant {variant!r}; use 'dog' or 'direct'")
    if examples not in EXAMPLE_STYLES:
        raise ValueError(f"unknown example style {examples!r}; use one of {', '.join(EXAMPLE_STYLES)}")
    blocks = []
    for i, ex in enumerate(EXAMPLES, start=1):
        blocks.append(_example_block(i, ex.context, ex.question, _answer(ex, variant, examples)))
    n = len(EXAMPLES) + 1
    blocks.append(f"**Example {n}:**\nContext: [ {context} ]\nQuestion: {question.strip()}\nAnswer:")
    instructions = _instructions(variant, examples)
    user = instructions + "\n\n" + "\n\n".join(blocks)
    prefix = ANSWER_PREFIX if variant == "dog" else ""
    return user, prefix


LAYOUTS = ("turns", "single", "raw")


def _messages(context: str, question: str, variant: str, examples: str = "paper") -> list[dict[str, str]]:
    """Few-shot chat: instructions as system, each example a user/assistant exchange."""
    msgs = [{"role": "system", "content": _instructions(variant, examples)}]
    for ex in EXAMPLES:
        answer = _answer(ex, variant, examples)
        msgs.append({"role": "user", "content": f"Context: [ {ex.context} ]\nQuestion: {ex.question}"})
        msgs.append({"role": "assistant", "content": answer})
    msgs.append({"role": "user", "content": f"Context: [ {context} ]\nQuestion: {question.strip()}"})
    return msgs


def build_prompt(
    model: Any,
    question: str,
    triplets: Sequence[Any],
    variant: str = "dog",
    chat_template: bool = True,
    triplet_ids: Sequence[int] | None = None,
    layout: str = "turns",
    examples: str = "paper",
) -> PromptParts:
    """The full model input for `question` over `triplets` (already pruned to the budget).

    Layouts (with ``chat_template`` and a model that has one):

    * ``"turns"`` (default): the instructions are the system message and each
      in-context example is a user turn (context + question) answered by an
      assistant turn; the question is the last user turn and the assistant
      turn starts with the answer prefix.  Small chat models copy the
      examples' format (``1. < h -> r -> t >``) far more reliably this way
      than from examples quoted inside one user message.
    * ``"single"``: everything in one user turn (Tab. 6 text ending with
      "Answer:"), the answer prefix opening the assistant turn.
    * ``"raw"`` (also without a chat template): the Tab. 6 text as is,
      ending with ``Answer: <prefix>``.
    """
    if layout not in LAYOUTS:
        raise ValueError(f"unknown prompt layout {layout!r}; use one of {', '.join(LAYOUTS)}")
    context = linearize(triplets)
    user, prefix = build_user_text(context, question, variant, examples)
    tok = getattr(model, "tokenizer", None)
    has_template = bool(getattr(tok, "chat_template", None))
    used_chat = chat_template and has_template and layout != "raw"
    text = ""
    if used_chat and layout == "turns":
        msgs = _messages(context, question, variant, examples)
        try:
            text = tok.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True) + prefix
        except Exception:  # a template that rejects system/assistant turns: use one user turn
            layout = "single"
        cut_marker = f"Context: [ {context} ]"
    if used_chat and layout == "single":
        text = model.chat_prompt(user) + prefix
    if not used_chat:
        text = user + (" " + prefix if prefix else "")
        layout = "raw"
    if layout != "turns":
        cut_marker = f"**Example {len(EXAMPLES) + 1}:**"
    ids = list(triplet_ids) if triplet_ids is not None else [getattr(t, "id", i) for i, t in enumerate(triplets)]
    cut = text.rfind(cut_marker)
    shared = text[:cut] if cut > 0 else ""
    parts = PromptParts(variant, text, None, user, prefix, context, ids, used_chat, shared)
    parts.layout = layout
    parts.examples = examples if variant == "dog" else "paper"
    return parts


# ------------------------------------------------------------------ parsing
_ANSWER_IS = re.compile(r"answers?\s+(?:is|are)\b", re.IGNORECASE)


def _last_answer_is(text: str) -> "re.Match[str] | None":
    """The last "answer is" / "answers are" of `text` (None when it has none)."""
    m = None
    for m in _ANSWER_IS.finditer(text):
        pass
    return m


def find_runaway(text: str) -> int | None:
    """Index where the model started a new example (or None)."""
    hits = [text.find(m) for m in RUNAWAY_MARKERS if m in text]
    return min(hits) if hits else None


def answer_line_done(text: str) -> int | None:
    """If `text` has a finished "... the answer is ..." line, the index where that line ends."""
    m = _last_answer_is(text)
    if m is None:
        return None
    nl = text.find("\n", m.end())
    if nl >= 0 and text[m.end():nl].strip():
        return nl
    return None


def answer_written(text: str) -> bool:
    """Whether `text` holds an answer line with an answer in it: a triplet opened after it starts no new step.

    The examples' answer line is a chain's last; a model that opens a
    triplet right after "the answer is * Michael Mann." (no line break, as
    bare chains have none between steps) is writing past its answer, and the
    line ends there (`free_text.decode_free_text`, `server_steps`).

    >>> answer_written(" The answer is * Michael Mann.")
    True
    >>> answer_written(" Therefore, the answer is")  # its answer may be the triplet it opens
    False
    """
    return _last_answer_is(text) is not None and bool(parse_answers(text))


_LIST_ITEM_END = re.compile(r"\s*[,;*]\s*")
REPEAT_MIN_CHARS = 8


def answer_list_repeat(text: str) -> int | None:
    """Where an answer line starts writing its list again (or None): the index of the repeated item.

    A small model's answer line can loop over its own list ("* Forever Amber,
    Forever Amber, Forever Amber, ..." or "austin, texas, laredo, texas, ...,
    austin, texas, ...") until the token limit: hundreds of tokens that add
    no answer.  Checked at each item's end after the last "the answer is":
    when the item just finished, or it with the one before (a name with a
    comma in it), at least `REPEAT_MIN_CHARS` long, was already written as
    items of this line, the line is cut before it.  Never cuts a list that
    names each item once.

    Examples
    --------
    >>> t = "Therefore, the answer is * Forever Amber, Forever Amber,"
    >>> t[:answer_list_repeat(t)]
    'Therefore, the answer is * Forever Amber, '
    >>> t = "the answer is * austin, texas, laredo, texas, austin, texas,"
    >>> t[:answer_list_repeat(t)]
    'the answer is * austin, texas, laredo, texas, '
    >>> answer_list_repeat("the answer is * Heat, Thief, Collateral,") is None
    True
    """
    m = _last_answer_is(text)
    if m is None:
        return None
    line_end = text.find("\n", m.end())
    if line_end >= 0:
        return None  # a finished line: answer_line_done cuts it
    items: list[tuple[str, int]] = []  # (normalised item, where it starts)
    start = m.end()
    for sep in _LIST_ITEM_END.finditer(text, m.end()):
        piece = text[start:sep.start()].strip().lower()
        if piece:
            items.append((" ".join(piece.split()), start + (len(text[start:sep.start()]) - len(text[start:sep.start()].lstrip()))))
        start = sep.end()
    if len(items) < 2:
        return None
    names = [n for n, _ in items]
    last = names[-1]
    if len(last) >= REPEAT_MIN_CHARS and last in names[:-1]:
        return items[-1][1]
    if len(items) >= 3:
        pair = names[-2:]
        if len(", ".join(pair)) >= REPEAT_MIN_CHARS and any(names[i:i + 2] == pair for i in range(len(names) - 3)):
            return items[-2][1]
    return None


def _clean_answer(piece: str) -> str:
    s = piece.strip()
    # Separators between markers: "playwright, and * poet." -> "playwright"
    s = re.sub(r"(?:,\s*|\s+)(?:and|or)\s*$", "", s, flags=re.IGNORECASE).strip()
    s = s.rstrip(",;").strip()
    if s.endswith(".") and not re.search(r"\b[A-Z]\.$|\.\.\.$", s):
        s = s[:-1].rstrip()
    return s.strip(" \t\"'`")


def parse_answers(text: str) -> list[str]:
    """The answers a model marked with ``* X`` (Tab. 6 format), in order, de-duplicated.

    The markers after the last "the answer is" win; without such a phrase
    every ``* X`` of the text counts; without any marker, the words after
    "the answer is" up to the end of the sentence are the single answer.
    Markdown bold (``**Example``) is not an answer marker.
    """
    cut = find_runaway(text)
    if cut is not None:
        text = text[:cut]
    last = None
    for last in _ANSWER_IS.finditer(text):
        pass
    tail = text[last.end():] if last is not None else text
    lead = len(tail) - len(tail.lstrip(" :\n"))  # "the answer is:\n\n* X" answers X
    line_end = tail.find("\n", lead)
    segment = tail if line_end < 0 or last is None else tail[:line_end]
    pieces = re.split(r"(?<!\*)\*(?!\*)", segment)
    out: list[str] = []
    if len(pieces) > 1:
        for piece in pieces[1:]:
            # a marker answer runs until the next marker or the end of its sentence/line
            piece = piece.split("\n", 1)[0]
            ans = _clean_answer(piece)
            if ans and ans not in out:
                out.append(ans)
        return out
    if last is not None:
        sentence = re.split(r"(?<![A-Z])\.(?:\s|$)|\n", segment.strip(" :\n"), maxsplit=1)[0]
        ans = _clean_answer(sentence.strip(" :"))
        if ans:
            return [ans]
    return []


@dataclass(frozen=True)
class WrittenTriplet:
    """A ``< h -> r -> t >`` the model wrote, as text (CoT output)."""

    raw: str
    head: str
    relation: str
    tail: str
    start: int  # character offset of "<" in the text
    end: int  # offset just after ">"
    well_split: bool = True  # False when the text did not split into exactly three parts
    opened: bool = True  # False when the model wrote "1. h -> r -> t >" without the "<"
    closed: bool = True  # False when the "<" was never closed by ">"


# An opening ("<", or a step number "1." when the model forgot the "<"), then text where ">"
# may only appear inside an arrow "->", then a ">" not preceded by "-".
_TRIPLET_SPAN = re.compile(r"(<|(?<![\w.])\d+\.(?=\s))((?:->|[^<>\n])*?->(?:->|[^<>\n])*?)(?<!-)>")


def _split_body(body: str, graph: Any) -> tuple[tuple[str, str, str], bool]:
    """(head, relation, tail) of a span's text and whether it split cleanly."""
    parts = body.split("->")
    if len(parts) < 3:  # "< a -> b >": an attempt at a triplet, kept so the check flags it
        return (parts[0].strip(), parts[1].strip() if len(parts) > 1 else "", ""), False
    chosen: tuple[str, str, str] | None = None
    if len(parts) == 3:
        chosen = (parts[0], parts[1], parts[2])
    elif graph is not None:
        for i in range(1, len(parts) - 1):
            for j in range(i + 1, len(parts)):
                h, r, t = "->".join(parts[:i]), "->".join(parts[i:j]), "->".join(parts[j:])
                if graph.find(h.strip(), r.strip(), t.strip()) is not None:
                    chosen = (h, r, t)
                    break
            if chosen:
                break
    well = chosen is not None
    if chosen is None:
        chosen = (parts[0], "->".join(parts[1:-1]), parts[-1])
    h, r, t = (p.strip() for p in chosen)
    return (h, r, t), well


_UNCLOSED = re.compile(r"<([^<>\n|]*?->[^<\n|]*)")


def parse_written_triplets(text: str, graph: Any = None) -> list[WrittenTriplet]:
    """Every ``< h -> r -> t >`` in `text` (also ``1. h -> r -> t >`` missing its ``<``).

    Names may themselves contain ``->``; when a span splits into more than
    three parts, the split that names a graph triplet (if `graph` is given)
    wins, else the first part is the head, the last the tail and the middle
    the relation (``well_split`` False).  A span with only two parts is kept
    with an empty tail, so that a check against the graph flags it.  A ``<``
    that is never closed (the model ran on, e.g. copying the context's
    ``a -> b -> c | d -> e -> f``) yields its first segment with ``closed``
    False.
    """
    out: list[WrittenTriplet] = []
    covered: list[tuple[int, int]] = []
    for m in _TRIPLET_SPAN.finditer(text):
        (h, r, t), well = _split_body(m.group(2), graph)
        out.append(WrittenTriplet(m.group(0), h, r, t, m.start(), m.end(), well, m.group(1) == "<"))
        covered.append((m.start(), m.end()))
    for m in _UNCLOSED.finditer(text):
        if any(a <= m.start() < b for a, b in covered):
            continue
        (h, r, t), _ = _split_body(m.group(1), graph)
        out.append(WrittenTriplet(m.group(0).rstrip(), h, r, t, m.start(), m.end(), False, True, closed=False))
    out.sort(key=lambda w: w.start)
    return out

"""Greedy free-text decoding between triplets, and where it stops.

DoG's reasoning alternates: free text ("1.", "This tells us ...") until the
model opens a triplet, a constrained triplet, free text again, until the
"Therefore, the answer is ..." line ends or the model emits EOS (§2.3).  The
decision to open is taken at token level: when the greedy next token
contains ``<`` (``" <"``, ``"<<"``, ``'("<'``), the text up to and including
that ``<`` is committed and the constraint takes over; anything after the
``<`` inside that token is dropped (the trie decides what follows).

The same loop with opening detection off is the CoT / Direct decoder, so the
baselines and DoG share one code path apart from the constraint.

Small models often loop ("X is the author of Y. X is the author of Y. ...")
and never write the answer line; the loop is cut as soon as a sentence comes
round a third time (`is_looping`, stop ``"repeat"``), and `force_conclusion`
then appends "Therefore, the answer is" and lets the model finish that one
line (`decoders.force_conclusion`).  DoG and CoT get the same treatment, so the comparison stays fair.

Decoding one token per forward pass is what a CPU answer mostly waits on,
and where a pass over several tokens costs little more than a pass over one
(transformers: 625 ms for seven tokens against 357 ms for one, 1.5B model,
one thread) the passes can carry guesses.  The free text
repeats what the context already holds -- "< Heat -> directed_by -> Michael
Mann > This tells us Michael Mann directed Heat", the examples' "This tells
us", the answer line's names -- so each pass also carries a guess of the
next few tokens copied from the context after the last tokens' most recent
occurrence there (*prompt lookup decoding*, `lookup_draft`), and keeps
those the model's own greedy choice agrees with (`decode_free_text`).  The
text is the greedy text either way, up to the last bits of the backend's
arithmetic (a pass over several tokens uses other kernels than a pass over
one), and a guess the model rejects costs only its share of one pass; the
model state is rewound past it (`LanguageModel.rewind`).  Each backend says
how many tokens to guess (``lookup_draft``: 6 on transformers, 0 on llama.cpp,
whose several-token passes cost too much on a CPU); ``KGQA_LOOKUP_DRAFT``
overrides it (0 turns it off); `kgqa_core.models.lookup` has the rule,
which the models' own `generate` shares.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from ..models.interface import Sequence as PromptState
from ..models.lookup import lookup_draft, lookup_draft_tokens
from .constraint import OpeningDetector
from .prompt import answer_line_done, answer_list_repeat, answer_written, find_runaway, parse_answers

StopFn = Callable[[str], int | None]


def default_stop(text: str) -> int | None:
    """Where DoG/CoT free text ends: a finished answer line, its list written again, or a new example's start."""
    cuts = [c for c in (answer_line_done(text), find_runaway(text), answer_list_repeat(text)) if c is not None]
    return min(cuts) if cuts else None


def direct_stop(text: str) -> int | None:
    """Direct answers are one line: stop at the first line break after some text."""
    return first_line_end(text, None)


def first_line_end(text: str, skip: str | None) -> int | None:
    """End of the first line with text after the leading `skip` characters (None: whitespace), or a new example's start."""
    lead = len(text) - len(text.lstrip(skip))
    nl = text.find("\n", lead) if lead < len(text) else -1
    cuts = [c for c in ((nl if nl >= 0 else None), find_runaway(text)) if c is not None]
    return min(cuts) if cuts else None


# Units a loop repeats: sentences, "|"-separated triplets, lines; a step number ("5.") is not part of one.
_UNIT_END = re.compile(r"(?<![A-Z])\.(?=\s|$)|[|\n!?]")
_STEP_NUMBER = re.compile(r"^\s*\d+\.\s*|\s+")
LOOP_REPEATS = 3
LOOP_MIN_CHARS = 8


def is_looping(text: str, repeats: int = LOOP_REPEATS) -> bool:
    """Whether the sentence `text` just finished is the `repeats`-th copy of one already written.

    Only checked when `text` ends a unit, so a sentence still being written
    never counts.  Step numbers and spacing are ignored ("6. The movie was
    released in 2008." repeats "5. The movie was released in 2008.").
    Short units (under 8 characters, e.g. "Yes.") never count, but a run of
    one short unit written over and over does (`repeated_run`).
    """
    if repeated_run(text) is not None:
        return True
    if not text or not _UNIT_END.match(text, len(text) - 1):
        return False
    units: list[str] = []
    start = 0
    for m in _UNIT_END.finditer(text):
        unit = _STEP_NUMBER.sub(" ", text[start:m.start()]).strip().lower()
        start = m.end()
        if unit:
            units.append(unit)
    if not units or len(units[-1]) < LOOP_MIN_CHARS:
        return False
    return units.count(units[-1]) >= repeats


RUN_REPEATS = 8  # a unit of RUN_UNIT_MAX characters or fewer written this many times in a row ends a text
RUN_UNIT_MAX = 6


def repeated_run(text: str) -> int | None:
    """Where a run of one short unit written over and over ends `text` ("3.2.2.2.2.2.2.2.2.2"), or None.

    Small models fall into such runs after a triplet (the 135M wrote "3."
    and then "2." until its budget) and, conditioned on them, answer with
    the run; the sentence rule of `is_looping` never sees them (no unit
    ends).  The start returned is the start of the run's word (its first
    character after a space), so what is kept reads as text.

    >>> t = "< A -> r -> B >3.2.2.2.2.2.2.2.2.2"
    >>> t[:repeated_run(t)]
    '< A -> r -> B >'
    >>> repeated_run("1. < A -> r -> B > 2.") is None
    True
    >>> repeated_run("the answer is * 100000000") is None  # one character repeated: 16 needed
    True
    """
    for size in range(1, RUN_UNIT_MAX + 1):
        unit = text[-size:]
        # one character over and over ("100000000") needs twice the run: numbers hold such runs
        repeats = RUN_REPEATS * 2 if len(set(unit)) == 1 else RUN_REPEATS
        span = size * repeats
        if len(text) < span:
            continue
        if not unit.strip() or text[-span:] != unit * repeats:
            continue
        start = len(text) - span
        while start >= size and text[start - size:start] == unit:
            start -= size
        while start > 0 and not text[start - 1].isspace() and text[start - 1] not in "<>":
            start -= 1
        return start
    return None


@dataclass
class FreeText:
    """One stretch of free text.

    ``stop`` is ``"open"`` (the model opened a triplet; ``opener`` holds the
    committed text up to ``<``), ``"limit"`` (the model would have opened a
    triplet but its chain holds its last one: nothing of the opener is
    committed), ``"eos"``, ``"stop"`` (answer line finished or runaway
    example), ``"repeat"`` (the model looped, see `is_looping`),
    ``"length"`` or ``"cap"`` (DoG's per-step free-text cap, set by
    `chain_beam.ChainBeam`; the state as after ``"length"``).  After
    ``"open"``, ``"limit"``, ``"repeat"`` and ``"length"``
    the state holds exactly ``ids``; after ``"eos"`` and ``"stop"`` all but
    the last token (a ``"stop"`` where a triplet would open after an answer
    line, `prompt.answer_written`: exactly ``ids``; no chain reads on after a stop).  ``ids`` are the committed ids (the
    opener's included); ``text`` is the visible text without the opener.
    """

    text: str
    ids: list[int]
    stop: str
    opener: str = ""
    opener_ids: list[int] = field(default_factory=list)
    forward_passes: int = 0
    positions: list = field(default_factory=list)  # `beam.Position`s where a trie chose the text (`answer_among`)
    dropped: str = ""  # a run the model wrote over and over, cut from the text and the state (`repeated_run`)
    chosen_among: bool = False  # a forced answer line left empty: its item chosen among the chain's entities
    unread: int = 0  # trailing tokens of a name the trie wrote without a model pass (`answer_among`, ``closes_text``)


def decode_free_text(
    model: Any,
    state: PromptState,
    max_tokens: int,
    detector: OpeningDetector | None,
    allow_open: bool = True,
    stop: StopFn = default_stop,
    detect_loops: bool = True,
) -> FreeText:
    """Greedy decoding from `state` (extended in place) until a triplet opens or the text ends.

    `detector` None means never open (CoT / Direct).  With ``allow_open``
    False (a chain at its triplet limit) the text ends with ``"limit"`` where
    the model would open a triplet, so the chain concludes at once: masking
    the opener instead made small models write pseudo-triplets without ``<``
    (not graph-checked, hundreds of tokens) until the loop detector fired.
    In process only: methods call `decoders.free_text`, which
    sends a model server's free text to `server_steps` instead.
    """
    eos = model.eos_ids
    before = model.counter.forward_passes
    draft_len = lookup_draft_tokens(model) if hasattr(model, "rewind") and hasattr(state, "logits") else 0
    ids: list[int] = []
    text = ""
    while len(ids) < max_tokens:
        tok = int(torch.argmax(state.logits))
        if tok in eos:
            return _done(model, FreeText(text, ids, "eos"), before)
        if detector is not None and detector.is_opening(tok):
            if answer_written(text):  # the answer line ends where a triplet would open after it
                return _done(model, FreeText(text, ids, "stop"), before)
            if not allow_open:
                return _done(model, FreeText(text, ids, "limit"), before)
            opener = detector.opener_text(tok)
            opener_ids = [tok] if detector.is_pure(tok) else model.encode(opener)
            model.step(state, opener_ids)
            ids.extend(opener_ids)
            visible = text + opener[:-1]
            return _done(model, FreeText(visible, ids, "open", opener, opener_ids), before)
        ids.append(tok)
        text = model.decode(ids)
        cut = stop(text)
        if cut is not None:
            return _done(model, FreeText(text[:cut], ids, "stop"), before)
        draft = lookup_draft(state.ids + [tok], min(draft_len, max_tokens - len(ids))) if draft_len else []
        if not draft:
            model.step(state, [tok])
            if detect_loops and is_looping(text):
                return _done(model, drop_run(model, state, FreeText(text, ids, "repeat")), before)
            continue
        base = len(state.ids) + 1  # the state's length with `tok`
        rows = model.extend(state, [tok] + draft)  # rows[j]: what follows tok, draft[0], ..., draft[j-1]
        if detect_loops and is_looping(text):
            model.rewind(state, base, rows[0])
            return _done(model, drop_run(model, state, FreeText(text, ids, "repeat")), before)
        kept = 0
        for j, guess in enumerate(draft):
            if int(torch.argmax(rows[j])) != guess or guess in eos or (
                    detector is not None and detector.is_opening(guess)):
                break  # a rejected guess, or a token the loop above must handle (EOS, an opener)
            ids.append(guess)
            text = model.decode(ids)
            cut = stop(text)
            if cut is not None:  # as above: the state holds all but the last token
                model.rewind(state, base + j, rows[j])
                return _done(model, FreeText(text[:cut], ids, "stop"), before)
            kept += 1
            if detect_loops and is_looping(text):
                model.rewind(state, base + kept, rows[kept])
                return _done(model, drop_run(model, state, FreeText(text, ids, "repeat")), before)
        model.rewind(state, base + kept, rows[kept])
    return _done(model, FreeText(text, ids, "length"), before)


CONCLUSION = " Therefore, the answer is"
CONCLUSION_TOKENS = 48


_LINE_HEAD = " the answer is"


def conclusion_line_end(text: str) -> int | None:
    """The forced answer is one line (or a new example starting, or its list written again: `answer_list_repeat`);
    "is:\n* X" still reaches X.

    An item that starts writing a triplet (``<`` or ``->``: what the model
    wrote before the line, copied) ends the line before that item.

    >>> t = " * Cy Rossi, and * Bo Lind, and * Cy Rossi,"
    >>> t[:conclusion_line_end(t)]
    ' * Cy Rossi, and * Bo Lind, and * '
    >>> t = " * Cy Rossi, and * Oslo Philharmonic -> based_in"
    >>> t[:conclusion_line_end(t)]
    ' * Cy Rossi, and '
    """
    again = answer_list_repeat(_LINE_HEAD + text)
    cuts = [c for c in (first_line_end(text, " :\n"), None if again is None else again - len(_LINE_HEAD),
                        _triplet_item(text)) if c is not None]
    return min(cuts) if cuts else None


_TRIPLET_MARK = re.compile(r"<|->")


def _triplet_item(text: str) -> int | None:
    """Where the answer item that starts writing a triplet begins (its ``*``), or None."""
    m = _TRIPLET_MARK.search(text)
    if m is None:
        return None
    return max(text.rfind("*", 0, m.start()), 0)


_NEXT_ITEM = re.compile(r"(?<!\*)\*(?!\*)")
_ITEM_JOIN = re.compile(r"[\s,;]*(?:\b(?:and|or)\b)?[\s,;]*$")


def first_answer_end(text: str) -> int | None:
    """The forced answer line cut after its first ``* X`` item (at the separator before a second marker).

    For a chain that concluded at the depth of a sure reading (stop ``"depth"``): the graph adds every other
    entity the chain's path reaches (complete_answers), so a list the model would go on writing costs tokens
    and adds no answer.  A name may hold commas ("austin, texas"); items are told apart by their markers.
    Without markers, the line's end.

    >>> t = " * playwright, and * poet."
    >>> t[:first_answer_end(t)]
    ' * playwright'
    >>> first_answer_end(" * austin, texas") is None  # one item, its line not ended yet
    True
    """
    markers = [m.start() for m in _NEXT_ITEM.finditer(text)]
    if len(markers) >= 2:
        head = text[:markers[1]]
        cut = _ITEM_JOIN.search(head)
        return cut.start() if cut is not None else markers[1]
    return conclusion_line_end(text)


def needs_conclusion(stop: str, text: str) -> bool:
    """Whether a finished text should get the forced answer line: it ended without one, and not by a cut."""
    return stop in ("repeat", "length", "eos", "limit", "cap", "depth") and not parse_answers(text)


def tokens_before(model: Any, ids: list[int], cut: int) -> int:
    """How many of `ids` decode to text that lies wholly before character `cut` of their text."""
    kept = 0
    for k in range(1, len(ids) + 1):
        if len(model.decode(ids[:k])) > cut:
            break
        kept = k
    return kept


def drop_run(model: Any, state: PromptState, looped: FreeText, in_process: bool = True) -> FreeText:
    """`looped` (its tokens the last of `state`) without the run it ends with, if it ends with one (`repeated_run`).

    The tokens whose text reaches into the run leave the state too, so what
    the model writes next (the forced answer line) is not conditioned on the
    run.  The run's text is kept in ``dropped`` for the trace; its tokens
    still count as written (``counter.tokens_out``): they cost their time.
    Over a model server (`in_process` False) the sequence is only cut (the
    server reads it afresh with the next request; its replies' tokens were
    counted as they came).
    """
    start = repeated_run(looped.text)
    if start is None:
        return looped
    kept = tokens_before(model, looped.ids, start)
    cut_state(model, state, len(state.ids) - len(looped.ids) + kept, in_process)
    text = model.decode(looped.ids[:kept])
    if in_process:
        model.counter.tokens_out += len(looped.ids) - kept
    return FreeText(text, list(looped.ids[:kept]), "repeat", dropped=looped.text[len(text):])


def cut_state(model: Any, state: PromptState, n: int, in_process: bool = True) -> None:
    """Keep the first `n` ids of `state`; in process, the logits after them are read again from id n-1.

    Over a model server the sequence is only cut (the server reads it afresh with the next request).
    """
    if not in_process:
        model.rewind(state, n, None)
    elif n < len(state.ids):
        last = state.ids[n - 1]
        model.rewind(state, n - 1, state.logits)  # the logits after id n-1 come from reading it again
        model.step(state, [last])


def _done(model: Any, result: FreeText, passes_before: int) -> FreeText:
    result.forward_passes = model.counter.forward_passes - passes_before
    model.counter.tokens_out += len(result.ids)
    return result

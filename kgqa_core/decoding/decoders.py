"""The decoding steps a method calls, run in process or, for a model server, as requests.

Why here: the in-process decoders (`free_text.decode_free_text`,
`beam.TripletBeamSearch`) read the model's full next-token distribution at
every token; a model server's steps (`server_steps.RemoteDecoding`) are
re-planned around requests and reuse those decoders.  Choosing between the
two in one place above both keeps the imports one way (server_steps builds
on free_text and beam, nothing imports back), and a method that calls these
functions runs the same way on every backend.
"""

from __future__ import annotations

from typing import Any, Sequence

from .. import progress
from ..models.interface import Sequence as PromptState
from .beam import TripletBeamSearch, TripletSearchResult
from .constraint import OpeningDetector, TripletGuide
from .free_text import (CONCLUSION, CONCLUSION_TOKENS, FreeText, StopFn, conclusion_line_end, cut_state,
                        decode_free_text, default_stop, first_answer_end)
from .prompt import parse_answers
from .triplet_trie import TripletTrie


def _remote(model: Any) -> Any:
    """A model server's request-level decoder, or None in process (server_steps, and its HTTP client, load only then)."""
    if not getattr(model, "wants_remote_decoding", False):
        return None
    from .server_steps import remote_decoding

    return remote_decoding(model)


@progress.in_phase(progress.WRITING)
def free_text(model: Any, state: PromptState, max_tokens: int, detector: OpeningDetector | None,
              allow_open: bool = True, stop: StopFn = default_stop, detect_loops: bool = True) -> FreeText:
    """Greedy free text from `state` until a triplet opens or the text ends (see `free_text.decode_free_text`)."""
    remote = _remote(model)
    if remote is not None:  # a model server: one request, the same stop rules
        return remote.free_text(state, max_tokens, detector, allow_open, stop, detect_loops)
    return decode_free_text(model, state, max_tokens, detector, allow_open, stop, detect_loops)


@progress.in_phase(progress.WRITING)
def force_conclusion(model: Any, state: PromptState, max_tokens: int = CONCLUSION_TOKENS,
                     first_only: bool = False, reached: Sequence[str] = (), item_marker: bool = False,
                     fallback: Sequence[str] = ()) -> FreeText:
    """Append "Therefore, the answer is" to `state` and decode the rest of that line.

    For a text that ended without an answer (loop, token budget, EOS, or a
    chain at the depth of a sure reading).  The returned text starts with the
    appended phrase, so the trace shows exactly what the model was conditioned
    on; ``ids`` holds only the model's tokens.  ``first_only``: the line ends
    after its first ``* X`` item (`first_answer_end`; the graph adds the rest).
    ``reached`` (with ``first_only``): that item is one of these entity names,
    decoded under their token trie (`answer_among`).  ``item_marker``: the
    line is written up to its first item's ``*`` (the examples' form), for
    chains whose model would go on writing triplets where the answer belongs.
    ``fallback``: when the line the model writes names nothing (it ended at
    once, or its first item began copying a triplet), what it wrote leaves the
    state and the item is chosen among these names under their trie
    (`answer_among`, ``chosen_among`` set): an empty answer line would leave a
    chain that walked the graph with no answer at all.  The dropped tokens
    still count as written.
    """
    before = model.counter.forward_passes
    written = conclusion_written(first_only, reached, item_marker)
    model.step(state, model.encode(written))
    base = len(state.ids)
    if first_only and reached:
        free = answer_among(model, state, reached)
    else:
        free = free_text(model, state, max_tokens, detector=None,
                         stop=first_answer_end if first_only else conclusion_line_end, detect_loops=False)
        if fallback and not parse_answers(written + free.text):
            cut_state(model, state, base, in_process=_remote(model) is None)
            item = answer_among(model, state, fallback, item=" {}" if written.endswith(ITEM_MARKER) else ANSWER_ITEM)
            item.chosen_among = True
            free = item
    free.text = written + free.text
    free.forward_passes = model.counter.forward_passes - before
    return free


def conclusion_written(first_only: bool = False, reached: Sequence[str] = (), item_marker: bool = False) -> str:
    """What `force_conclusion` appends before the model writes (the answer item's own trie writes its ``*``)."""
    return CONCLUSION + (ITEM_MARKER if item_marker and not (first_only and reached) else "")


ANSWER_ITEM = " * {}"
ITEM_MARKER = " *"
MAX_REACHED_NAMES = 1000


def answer_among(model: Any, state: PromptState, names: Sequence[str], item: str = "") -> FreeText:
    """The answer line's first item (`` * name``) decoded under a token trie of `names`; `state` is extended.

    Why: at the depth of a sure reading the chain's path has reached the
    entities the question asks for (`answers.completion.reach`), and the graph
    adds the others after the first; written freely, the model ended its item
    with a period and a line end, listed names it had not reached ("* Richmond,
    Virginia, Alexandria, Virginia, ..."), or wrote words of the question.
    Under the trie the model still chooses which entity comes first where the
    names part (its log-probabilities, as for a triplet), the rest of a name is
    written by the trie (`tokens_forced`), and the item ends with the name.
    The first `MAX_REACHED_NAMES` names are offered.
    """
    item = item or ANSWER_ITEM
    names = list(dict.fromkeys(n for n in names if n and n.strip()))[:MAX_REACHED_NAMES]
    trie = TripletTrie(opener=item.format(""))
    for i, name in enumerate(names):
        trie.insert(i, model.encode(item.format(name)))
    hyp = search_triplets(model, state, TripletGuide(trie), 1, closes_text=True).hypotheses[0]
    return FreeText(text=item.format(names[hyp.triplet_ids[0]]), ids=list(hyp.token_ids), stop="stop",
                    positions=list(hyp.positions), unread=hyp.unread)


@progress.in_phase(progress.FORCED_RUNS)
def search_triplets(model: Any, state: PromptState, guide: TripletGuide, width: int,
                    closes_text: bool = False) -> TripletSearchResult:
    """The `width` best triplets of the guide's trie after `state` (greedy extends `state` in place).

    ``closes_text`` (width 1): nothing is decoded after the triplet, so the
    trie's run after its last choice is not fed to the model (`beam.greedy_triplet`).
    """
    remote = _remote(model)
    if remote is not None:  # a model server: scored in one or few requests
        return remote.triplet_search(state, guide, width, closes_text)
    return TripletBeamSearch(model, width).search(state, guide, closes_text)

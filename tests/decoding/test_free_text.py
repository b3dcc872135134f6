"""Free text between triplets: where a looping text is cut, and the forced answer line."""

import pytest
import torch

from kgqa_core.decoding.decoders import force_conclusion
from kgqa_core.decoding.free_text import CONCLUSION, decode_free_text, is_looping
from kgqa_core.decoding.prompt import parse_answers

# Loops written by SmolLM2-135M on MetaQA dev questions (DoG and CoT)
SENTENCE_LOOP = "David Leland is the author of Wish You Were Here. " * 3
NUMBERED_LOOP = (
    "5. The movie Sex and the City was released in 2008. This tells us the movie was released in 2008. "
    "6. The movie was released in 2008. This tells us the movie was released in 2008. "
    "7. The movie was released in 2008. This tells us the movie was released in 2008."
)
TRIPLET_LOOP = "1. < Sex and the City -> movie -> released_year -> 2008 | " + "Sex and the City -> release_year -> 2008 | " * 3


@pytest.mark.parametrize("text", [SENTENCE_LOOP.strip(), NUMBERED_LOOP, TRIPLET_LOOP.rstrip()])
def test_loops_are_detected_once_the_third_copy_ends(text):
    assert is_looping(text)
    assert not is_looping(text[:-3])  # the third copy is not finished yet


@pytest.mark.parametrize("text", [
    "David Leland is the author of Wish You Were Here. " * 2,  # said twice is not a loop
    "1. < A -> directed_by -> B > This tells us B directed A. 2. < B -> directed -> C > This tells us B "
    "directed C. Therefore, the answer is * C.",
    "Therefore, the answer is * playwright, and * poet. Yes. Yes. Yes.",  # short units never count
])
def test_ordinary_reasoning_is_not_a_loop(text):
    assert not is_looping(text.strip())


def test_a_looping_model_is_stopped_and_then_concludes(small_model):
    prompt = "I like green tea with honey. " * 4 + "I"  # the 135M model goes on copying it
    state = small_model.prefill(small_model.encode(prompt))
    n_prompt = len(state.ids)
    free = decode_free_text(small_model, state, 200, detector=None)
    assert free.stop == "repeat"
    assert len(free.ids) < 40  # cut at the third copy, not at the 200-token budget
    assert state.ids[n_prompt:] == free.ids  # the state holds exactly what was written
    forced = force_conclusion(small_model, state)
    assert forced.text.startswith(CONCLUSION)
    assert forced.text.strip(" :\n") != CONCLUSION.strip()  # something was written after it
    fed = state.ids[n_prompt + len(free.ids):]
    written = small_model.encode(CONCLUSION) + forced.ids
    # everything was fed but the token that ended the line (it decided the stop, and is not needed)
    assert written[: len(fed)] == fed and len(written) - len(fed) <= 1
    # the forced line ends by the line-end rule, not at the token budget (what the 135M model writes
    # there differs between CPUs' kernels, so the words themselves are not asserted)
    assert forced.stop in ("stop", "eos") and len(forced.ids) < 40


FACTS = ("Facts used:\n1. <Heat -> directed_by -> Michael Mann>\n2. <Heat -> starred_actors -> Al Pacino>\n"
         "3. <Heat -> release_year -> 1995>\n4.")  # the 135M model's next token opens a triplet


def test_a_chain_at_its_limit_concludes_where_it_would_open_a_triplet(backend_model):
    """With no triplet left to write, the text ends where the model opens one ("limit"), nothing of the
    opener committed, and the answer line is forced: masking the opener made the 135M model write
    pseudo-triplets without "<" (not checked against the graph) for up to its whole token budget."""
    from kgqa_core.decoding.constraint import OpeningDetector
    from kgqa_core.decoding.free_text import needs_conclusion

    detector = OpeningDetector.for_tokenizer(backend_model.tokenizer)
    prompt_ids = backend_model.encode(FACTS)
    opened = decode_free_text(backend_model, backend_model.prefill(prompt_ids), 40, detector, allow_open=True)
    assert opened.stop == "open" and opened.opener.endswith("<")
    state = backend_model.prefill(prompt_ids)
    limit = decode_free_text(backend_model, state, 40, detector, allow_open=False)
    assert limit.stop == "limit" and limit.opener == "" and "<" not in limit.text
    assert limit.text == opened.text.rstrip("<")[: len(limit.text)]  # the same text up to the opener
    assert not any(detector.is_opening(t) for t in limit.ids)
    assert state.ids[len(prompt_ids):] == limit.ids  # the state holds exactly what was written
    assert needs_conclusion(limit.stop, limit.text)
    forced = force_conclusion(backend_model, state)
    assert forced.text.startswith(CONCLUSION)


# The free text copies what the context holds: the triplet just written, the examples' phrasing.
LOOKUP_PROMPT = (
    "1. <Heat -> directed_by -> Michael Mann> This tells us Michael Mann directed Heat.\n"
    "2. <Heat -> starred_actors -> Al Pacino> This tells us Al Pacino starred in Heat.\n"
    "3. <Collateral -> directed_by -> Michael Mann> This tells us"
)


NEAR_TIE = 0.5  # nats: llama.cpp's several-token passes use other kernels than one-token passes


def _decode(model, monkeypatch, draft: str, prompt: str, max_tokens: int):
    monkeypatch.setenv("KGQA_LOOKUP_DRAFT", draft)
    state = model.prefill(model.encode(prompt))
    n = len(state.ids)
    free = decode_free_text(model, state, max_tokens, detector=None, detect_loops=False, stop=lambda t: None)
    assert state.ids[n:] == free.ids  # the state holds exactly the text written
    return free, state


def _margin_after(model, prompt_ids, ids):
    """The greedy margin (top-1 minus top-2 log-prob) after `ids`, one token per pass."""
    state = model.prefill(prompt_ids)
    for tok in ids:
        model.step(state, [tok])
    top = torch.log_softmax(state.logits.float(), -1).topk(2).values
    return float(top[0] - top[1])


def _same_greedy_text(model, prompt, a, b):
    """Equal, or apart only from a near tie where they first differ (the backend's arithmetic)."""
    if a == b:
        return True
    i = next(k for k, (x, y) in enumerate(zip(a, b)) if x != y)
    return _margin_after(model, model.encode(prompt), a[:i]) < NEAR_TIE


def test_lookup_drafts_give_the_greedy_text_in_fewer_passes(backend_model, monkeypatch):
    model = backend_model
    plain, _ = _decode(model, monkeypatch, "0", LOOKUP_PROMPT, 40)
    fast, state = _decode(model, monkeypatch, "6", LOOKUP_PROMPT, 40)
    assert _same_greedy_text(model, LOOKUP_PROMPT, plain.ids, fast.ids), (plain.text, fast.text)
    # after a near tie (a model that has run other prompts may split it the other way) the texts may go on
    # differently, to an end of text on one side; the same text must end the same way
    for free in (plain, fast):
        assert free.stop in ("length", "eos") and len(free.ids) <= 40  # the budget holds with guesses
        assert free.stop != "length" or len(free.ids) == 40
    if plain.ids == fast.ids:
        assert fast.stop == plain.stop
    assert fast.forward_passes / len(fast.ids) < plain.forward_passes / len(plain.ids), (
        fast.forward_passes, len(fast.ids), plain.forward_passes, len(plain.ids))
    # the rewinds left the cache as if the text had been fed token by token: the next-token
    # distribution agrees with a fresh read of the same ids (a stale cell would change it wholesale)
    fresh = model.prefill(list(state.ids))
    got, want = (torch.log_softmax(x.float(), -1) for x in (state.logits, fresh.logits))
    top = want.topk(10).indices
    assert float((got[top] - want[top]).abs().max()) < NEAR_TIE


def test_lookup_drafts_stop_where_plain_decoding_stops(backend_model, monkeypatch):
    """A stop inside an accepted guess ends the text at the same token with the same state."""
    model = backend_model

    def at_collateral(text):
        return text.index("Collateral") + len("Collateral") if "Collateral" in text else None

    runs = []
    for draft in ("0", "6"):
        monkeypatch.setenv("KGQA_LOOKUP_DRAFT", draft)
        state = model.prefill(model.encode(LOOKUP_PROMPT))
        n = len(state.ids)
        free = decode_free_text(model, state, 40, detector=None, detect_loops=False, stop=at_collateral)
        assert free.stop == "stop" and free.text.endswith("Collateral")
        assert state.ids[n:] == free.ids[:-1]  # the token that decided the stop is not fed
        runs.append(free)
    assert _same_greedy_text(model, LOOKUP_PROMPT, runs[0].ids, runs[1].ids)


def test_generate_with_lookup_drafts_gives_the_greedy_text_in_fewer_passes(backend_model, monkeypatch):
    from kgqa_core.models.generation import GenerationConfig

    model = backend_model
    config = GenerationConfig(max_new_tokens=30, stop_strings=["Pacino>"])
    runs = []
    for draft in ("0", "6"):
        monkeypatch.setenv("KGQA_LOOKUP_DRAFT", draft)
        runs.append(model.generate(LOOKUP_PROMPT, config))
    plain, fast = runs
    assert _same_greedy_text(model, LOOKUP_PROMPT, plain.token_ids, fast.token_ids), (plain.text, fast.text)
    if plain.token_ids == fast.token_ids:
        assert fast.text == plain.text and fast.stopped_by == plain.stopped_by
        assert fast.forward_passes < plain.forward_passes, (fast.forward_passes, plain.forward_passes)
    # llama.cpp's greedy text can part at a near tie with what the cache held before (issue 32's cold = warm: after
    # the method tests, the plain run stopped at "Pacino>" and the guessing one wrote on); either way some pass
    # must have carried accepted guesses: without them it takes one pass for the prompt and one per token fed back
    # (the token that hit a stop string is not fed; tests/models/test_backends.py checks that count)
    without_guesses = 1 + fast.output_tokens - (1 if fast.stopped_by.startswith("stop") else 0)
    assert fast.forward_passes < without_guesses, (fast.forward_passes, fast.output_tokens, fast.stopped_by)


RUN = "Steps: 1. < A -> r -> B > 2. < B -> s -> C >3." + "2." * 12  # the 135M's run after a walk-on's "3."


@pytest.mark.parametrize("text", ["< A -> r -> B >3." + "2." * 8, "ha" * 8, "-" * 16, "so " + "2.0" * 8])
def test_a_run_of_one_short_unit_is_a_loop_and_cut_at_its_word(text):
    from kgqa_core.decoding.free_text import repeated_run

    start = repeated_run(text)
    assert start is not None and is_looping(text)
    assert text[start:].strip() and (start == 0 or text[start - 1] in " >")


@pytest.mark.parametrize("text", ["the answer is * 100000000", "1. < A -> r -> B > 2. < B -> s -> C > 3.",
                                  "born in 1999, died 2011", "2." * 7])
def test_numbers_and_step_numbers_are_not_runs(text):
    from kgqa_core.decoding.free_text import repeated_run

    assert repeated_run(text) is None


def test_a_run_is_dropped_from_the_text_and_the_state_and_the_answer_does_not_copy_it(backend_model):
    """The model goes on with the run; it is cut from the text and from the state (the state's next-token
    logits those of reading the kept text afresh), its tokens counted as written, its text kept for the note."""
    model = backend_model
    prompt_ids = model.encode(RUN)
    state = model.prefill(prompt_ids)
    written_before = model.counter.tokens_out
    free = decode_free_text(model, state, 60, detector=None)
    assert free.stop == "repeat" and free.dropped and "2.2.2" in free.dropped
    assert "2.2.2" not in free.text
    assert state.ids == prompt_ids + free.ids  # nothing of the run is left in the state
    fresh = model.prefill(list(state.ids))
    assert torch.allclose(state.logits.float(), fresh.logits.float(), atol=1e-3)
    assert model.counter.tokens_out - written_before >= len(free.ids) + 1  # the dropped tokens count as written
    forced = force_conclusion(model, state, item_marker=True)
    assert forced.text.startswith(CONCLUSION + " *") and "2.2" not in forced.text


def test_a_triplet_opened_after_an_answer_line_ends_the_line(backend_model):
    """The model copies "The answer is * Heat.< ..." from its context: past an answer it opens no new step."""
    from kgqa_core.decoding.constraint import OpeningDetector

    model = backend_model
    detector = OpeningDetector.for_tokenizer(model.tokenizer)
    shown = "A: The answer is * Heat.< Heat -> release_year -> 1995 >\n" * 3
    state = model.prefill(model.encode(shown + "A:"))
    n = len(state.ids)
    free = decode_free_text(model, state, 20, detector)
    assert free.stop == "stop" and parse_answers(free.text) == ["Heat"], free.text
    assert not free.opener and state.ids[n:] == free.ids  # nothing of the opener is in the state
    # the same context without the answer line: the triplet opens (the rule looks at the answer, not the "<")
    bare = model.prefill(model.encode(shown.replace("The answer is * ", "") + "A:"))
    assert decode_free_text(model, bare, 20, detector).stop == "open"

"""Free text between triplets: where a looping text is cut, and the forced answer line."""

import pytest

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

"""The two in-process backends against each other, and llama.cpp's sequences (forks, batches, prefix cache).

Tolerance (measured with the 135M Q4_1 model, see docs/benchmarks.md):
llama.cpp multiplies the quantised weights with 8-bit quantised activations,
transformers runs the dequantised weights in bf16 on this CPU (fp32 where
the CPU has no bf16), so per-token log-probs differ.  Over the two texts
below (57 and 66 tokens) the largest per-token difference of a given token
was 0.69 and 0.61 nats, the mean 0.11 and 0.10; the tests allow 1.0 per
token and 0.2 on average.
"""

from __future__ import annotations

import pytest
import torch

from kgqa_core.methods.base import MethodRequest, run_method
from kgqa_core.models.generation import GenerationConfig
from kgqa_core.models.interface import LanguageModel

PER_TOKEN_TOL = 1.0
MEAN_TOL = 0.2

TEXTS = [
    "Question: who directed the movie Heat?\nAnswer: Heat was directed by Michael Mann in 1995.",
    "< Heat -> starred_actors -> Al Pacino > This tells us Al Pacino starred in Heat. Therefore, the answer is * Al Pacino.",
]


def _sequence_logprobs(model, ids: list[int]) -> torch.Tensor:
    """Log-prob of each token after the first, read in one extend from a fresh one-token prefill."""
    model.clear_prefix_cache()
    state = model.prefill(ids[:1])
    rows = torch.cat([torch.log_softmax(state.logits, -1)[None], model.extend(state, ids[1:-1])])
    model.release(state)
    return rows[torch.arange(len(ids) - 1), torch.tensor(ids[1:])]


def test_both_backends_implement_the_interface(small_model, llama_model):
    for m in (small_model, llama_model):
        assert isinstance(m, LanguageModel)
    assert small_model.backend == "transformers" and llama_model.backend == "llama.cpp"
    assert small_model.vocab_size == llama_model.vocab_size
    assert small_model.eos_ids == llama_model.eos_ids


@pytest.mark.parametrize("text", TEXTS)
def test_log_probs_agree_across_backends(small_model, llama_model, text):
    ids = small_model.encode(small_model.chat_prompt("Answer briefly.") + text)
    assert llama_model.encode(small_model.chat_prompt("Answer briefly.") + text) == ids
    a = _sequence_logprobs(small_model, ids)
    b = _sequence_logprobs(llama_model, ids)
    diff = (a - b).abs()
    assert float(diff.max()) < PER_TOKEN_TOL, float(diff.max())
    assert float(diff.mean()) < MEAN_TOL, float(diff.mean())


def _advance_together(model, prompt, runs):
    """Fork two beams from one prompt and advance them together, one token per batch (the beam search's way)."""
    base = model.prefill(prompt)
    beams = [model.fork(base) for _ in runs]
    rows: list[list[torch.Tensor]] = [[] for _ in runs]
    for j in range(max(len(r) for r in runs)):
        live = [i for i in range(len(runs)) if j < len(runs[i])]
        out = model.extend_many([beams[i] for i in live], [[runs[i][j]] for i in live])
        for i, r in zip(live, out):
            rows[i].append(r[-1])
    return base, beams, [torch.stack(r) for r in rows]


def _alone(model, prompt, run):
    """The same run decoded with no other sequence around: fresh prompt, one token per pass."""
    model.clear_prefix_cache()
    state = model.prefill(prompt)
    rows = torch.stack([model.extend(state, [tok])[-1] for tok in run])
    return state, rows


def test_forked_beams_match_sequences_decoded_alone(llama_model):
    model = llama_model
    prompt = model.encode(model.chat_prompt("Name a film by Michael Mann."))
    runs = [model.encode(" Heat was released in 1995."), model.encode(" Collateral stars Tom Cruise and Jamie Foxx")]
    model.clear_prefix_cache()
    base, beams, together = _advance_together(model, prompt, runs)
    for i, run in enumerate(runs):
        solo, rows = _alone(model, prompt, run)
        # llama.cpp computes each sequence's rows the same whatever else is in the batch: exact
        assert torch.allclose(together[i], rows, atol=1e-4), float((together[i] - rows).abs().max())
        assert beams[i].ids == prompt + run and solo.ids == prompt + run
        model.release(solo)
    # the prompt's own sequence was not touched by its forks
    assert base.ids == prompt
    rows = torch.stack([model.extend(base, [tok])[-1] for tok in runs[0]])
    assert torch.allclose(rows, together[0], atol=1e-4)
    for s in beams + [base]:
        model.release(s)


def test_transformers_beams_batched_together_match_alone(small_model):
    """The transformers backend stacks equal-length caches into one batch; isolation holds up to float noise."""
    model = small_model
    prompt = model.encode(model.chat_prompt("Name a film by Michael Mann."))
    runs = [model.encode(" Heat was released in 1995."), model.encode(" Collateral stars Tom Cruise and Jamie Foxx")]
    model.clear_prefix_cache()
    _, beams, together = _advance_together(model, prompt, runs)
    for i, run in enumerate(runs):
        _, rows = _alone(model, prompt, run)
        chosen = torch.tensor(run[1:])
        diff = (together[i][:-1].gather(1, chosen[:, None]) - rows[:-1].gather(1, chosen[:, None])).abs()
        assert float(diff.max()) < PER_TOKEN_TOL
        assert beams[i].ids == prompt + run


def test_prefix_cache_reuses_the_shared_prompt(llama_model):
    m = llama_model
    m.clear_prefix_cache()
    shared = m.encode("Examples: " + "< Heat -> directed_by -> Michael Mann > " * 8)
    first = m.prefill(shared + m.encode(" Question one?"))
    before = m.counter.prefix_tokens_reused
    second = m.prefill(shared + m.encode(" Question two?"))
    assert m.counter.prefix_tokens_reused - before >= len(shared) - 1
    m.clear_prefix_cache()
    again = m.prefill(shared + m.encode(" Question two?"))
    # read in one batch vs the suffix after cached cells: llama.cpp's kernels differ by batch shape
    a, b = second.logits.log_softmax(-1), again.logits.log_softmax(-1)
    top = a.topk(10).indices
    assert int(a.argmax()) == int(b.argmax())
    assert float((a[top] - b[top]).abs().max()) < PER_TOKEN_TOL
    for s in (first, second, again):
        m.release(s)


def test_released_and_dropped_sequences_free_their_ids(llama_model):
    m = llama_model
    m.clear_prefix_cache()
    base = m.prefill(m.encode("A short prompt to fork many times"))
    free_before = len(m._free) + len(m._pending)
    for _ in range(200):  # far more than the context's sequence slots
        f = m.fork(base)
        m.extend(f, m.encode(" more"))
        del f  # dropped without release: the finaliser returns the id
    m.release(base)
    m._drain()
    assert len(m._free) >= free_before


def test_scores_and_greedy_answers_agree(small_model, llama_model):
    prompt = small_model.chat_prompt("Which city is the capital of France? Answer with the city only.")
    options = ["Paris", "Lyon", "Marseille"]
    a = small_model.score_continuations(prompt, options)
    b = llama_model.score_continuations(prompt, options)
    assert [s.token_ids for s in a] == [s.token_ids for s in b]
    for x, y in zip(a, b):
        assert abs(x.total - y.total) < PER_TOKEN_TOL * len(x.token_ids)
    assert max(a, key=lambda s: s.total).text == max(b, key=lambda s: s.total).text == "Paris"
    ga = small_model.generate(prompt, GenerationConfig(max_new_tokens=12, stop_strings=["\n"]))
    gb = llama_model.generate(prompt, GenerationConfig(max_new_tokens=12, stop_strings=["\n"]))
    assert ga.text == gb.text
    # one pass for the prompt, one per token fed back (the token that hit a stop string is not)
    assert gb.forward_passes == 1 + gb.output_tokens - (1 if gb.stopped_by.startswith("stop") else 0)


def test_dog_answers_agree_on_a_fixture_question(small_model, llama_model):
    from kgqa_core.graph.knowledge_graph import KnowledgeGraph

    heat = KnowledgeGraph.from_triplets([
        ("Heat", "directed_by", "Michael Mann"), ("Heat", "starred_actors", "Al Pacino"),
        ("Heat", "release_year", "1995"), ("Collateral", "directed_by", "Michael Mann"),
    ], name="heat")
    traces = []
    for m in (small_model, llama_model):
        # the question's reading plans one hop, directed_by, and the chain takes it: with the model's own odds of
        # ending a walk (`reading_stop_weight` 1; its quick look, 99% sure on both backends) and at the defaults
        # (those odds halved), where "movie" -- between an article and the film's name: what Heat is, not a hop
        # (`alignment.APPOSITIVES`) -- no longer names a second hop back to the director's other films (without
        # that rule: Heat -> directed_by -> directed_by (reverse), 92% sure on both backends, answer Collateral).
        # With the paper's offer at each step the 135M model's second triplet is a near tie that flips with
        # llama.cpp's cache state (issue 32's cold = warm), and so is its answer line after the director
        # (" Michael" -1.52 vs " Al" -1.85 nats): the answer the chain reached leads either way, and what the model
        # lists after it may differ (docs/benchmarks.md, "Backends").
        for stop in (1.0, 0.5):
            req = MethodRequest(graph=heat, question="who directed the movie Heat?", model=m, topic_entities=["Heat"],
                                params={"max_new_tokens": 48, "reading_stop_weight": stop})
            traces.append(run_method("dog", req))
    assert traces[0].backend == "transformers" and traces[2].backend == "llama.cpp"
    for t in traces:
        assert t.extra["reading"]["relations"] == ["directed_by"], (t.backend, t.extra["reading"])
        assert [c.triplet_id for c in t.best_chain] == [0], t.backend
        assert t.answer_texts[:1] == ["Michael Mann"], (t.backend, t.answer_texts)


def test_stable_prompt_prefix_is_saved_and_read_by_a_new_process(llama_model, tmp_path, monkeypatch):
    """Two questions share the examples: their KV state goes to disk; a fresh model loads it instead of reading it."""
    from kgqa_core.models.llama_model import LlamaCppModel

    monkeypatch.setenv("KGQA_CACHE_DIR", str(tmp_path))
    m = llama_model

    def fresh():  # reusing any cached prefix (KGQA_LLAMA_EXACT=0; the exact reads' files: the test after this one)
        return LlamaCppModel(name=m.name, path=m.path, tokenizer=m.tokenizer, revision=m.revision, n_ctx=4096,
                             exact=False)

    first = fresh()
    examples = first.encode("Examples:\n" + "".join(f"{i}. < Film {i} -> directed_by -> Person {i} >\n" for i in range(40)))
    assert len(examples) >= first._store.min_tokens
    a = first.prefill(examples + first.encode("Question: who directed Film 3?"))
    b = first.prefill(examples + first.encode("Question: who wrote Film 7?"))
    saved = list(first._store.folder.glob("*.llama"))
    assert len(saved) == 1
    n = int(saved[0].name.split("-")[0])  # the common prefix: the examples and "Question: who"
    assert len(examples) <= n < len(examples) + 5
    for s in (a, b):
        first.release(s)

    second = fresh()  # nothing in memory: as a new process
    q = second.encode("Question: who directed Film 11?")
    state = second.prefill(examples + q)
    assert second.counter.prefix_tokens_loaded == n
    assert second.counter.tokens_in == len(examples) + len(q) - n  # only the rest of the question was read
    third = fresh()
    third._store = None
    plain = third.prefill(examples + q)
    x, y = state.logits.log_softmax(-1), plain.logits.log_softmax(-1)
    top = y.topk(10).indices
    assert int(x.argmax()) == int(y.argmax()) and float((x[top] - y[top]).abs().max()) < PER_TOKEN_TOL


def _fresh_read(m, ids, fixed=0):
    """The log-probs after `ids` read by a new model of the same file (nothing cached in memory or on disk)."""
    from kgqa_core.models.llama_model import LlamaCppModel

    fresh = LlamaCppModel(name=m.name, path=m.path, tokenizer=m.tokenizer, revision=m.revision, n_ctx=m.n_ctx)
    fresh._exact_store = None
    state = fresh.prefill(ids, fixed=fixed)
    out = state.logits.log_softmax(-1).clone()
    fresh.release(state)
    return out


def test_exact_reads_give_a_new_process_numbers_whatever_was_read_before(llama_model):
    """Issue 32, cold = warm: a prompt read after others (its prefix cached at every cut, other prompts between)
    gives bit for bit the log-probs a new process gives; reused where that holds (a whole batch of 256 tokens)."""
    m = llama_model
    assert m.exact
    kept_store, m._exact_store = m._exact_store, None  # what is reused comes from memory only (counted below)
    text = "Examples: " + " ".join(f"< film{i} -> directed_by -> person{i} > < film{i} -> release_year -> {1990 + i} >"
                                   for i in range(40))
    ids = m.encode(text)[:700]
    other = m.encode("Something else entirely. " * 60)[:300]
    cold = _fresh_read(m, ids)
    for cut in (128, 257, 300, 513, 699):  # a cut leaving a batch of under 64 tokens moved them up to 0.4 nats
        m.clear_prefix_cache()
        m.release(m.prefill(ids[:cut]))
        m.release(m.prefill(other))  # another prompt's cells were before this one's in the shared cache
        reused, inexact = m.counter.prefix_tokens_reused, m.counter.inexact_reads
        state = m.prefill(ids)
        assert torch.equal(state.logits.log_softmax(-1), cold), cut
        assert m.counter.prefix_tokens_reused - reused == (cut - 1) // 256 * 256  # its last whole batch
        assert m.counter.inexact_reads == inexact
        m.release(state)
    # a re-ask: the whole prompt's last whole batch is served from memory
    reused = m.counter.prefix_tokens_reused
    again = m.prefill(ids)
    assert torch.equal(again.logits.log_softmax(-1), cold) and m.counter.prefix_tokens_reused - reused == 512
    # read while another sequence is alive: its cells must stay, so the read is counted as not exact
    held = m.prefill(other)
    inexact = m.counter.inexact_reads
    m.release(m.prefill(ids))
    assert m.counter.inexact_reads == inexact + 1
    m.release(held)
    m.release(again)
    m.clear_prefix_cache()
    m._exact_store = kept_store


def _new_processes_and_examples(m, tmp_path, monkeypatch):
    """A maker of new models of `m`'s file (each as a new process: nothing in memory, a cache folder in `tmp_path`)
    and the ids of a 40-example prefix two questions share."""
    from kgqa_core.models.llama_model import LlamaCppModel

    monkeypatch.setenv("KGQA_CACHE_DIR", str(tmp_path))

    def fresh():
        return LlamaCppModel(name=m.name, path=m.path, tokenizer=m.tokenizer, revision=m.revision, n_ctx=4096)

    examples = m.encode("Examples:\n" + "".join(f"{i}. < Film {i} -> directed_by -> Person {i} >\n" for i in range(40)))
    return fresh, examples


def test_exact_fixed_prefix_is_saved_and_a_new_process_reads_it_bit_for_bit(llama_model, tmp_path, monkeypatch):
    """Two questions share the examples: their whole batches go to disk (exact reads' own files, ``.kvx``); a new
    process restores them into its empty cache and reads the rest: the log-probs of a read without any cache."""
    from kgqa_core.models.llama_model import N_BATCH

    m = llama_model
    fresh, examples = _new_processes_and_examples(m, tmp_path, monkeypatch)
    first = fresh()
    assert len(examples) >= 2 * N_BATCH
    first.release(first.prefill(examples + first.encode("Question: who directed Film 3?")))
    first.release(first.prefill(examples + first.encode("Question: who wrote Film 7?")))
    saved = list(first._exact_store.folder.glob("*.kvx"))
    assert len(saved) == 1 and not list(first._exact_store.folder.glob("*.llama"))
    n = int(saved[0].name.split("-")[0])
    assert n % N_BATCH == 0 and len(examples) - N_BATCH < n <= len(examples)

    second = fresh()
    q = second.encode("Question: who directed Film 11?")
    state = second.prefill(examples + q)
    assert second.counter.prefix_tokens_loaded == n
    assert second.counter.tokens_in == len(examples) + len(q) - n
    assert torch.equal(state.logits.log_softmax(-1), _fresh_read(m, examples + q))
    second.release(state)


def test_a_named_fixed_part_is_kept_whole_and_read_as_a_fresh_process_reads_it(llama_model, tmp_path, monkeypatch):
    """A method names its fixed part (instructions and examples, `PromptText`): it is read as batches of its own, so
    the next question reuses all of it (not only its whole batches), in this process and in a new one (``.kvx``),
    and the log-probs are bit for bit a fresh read's."""
    from kgqa_core.models.llama_model import N_BATCH

    m = llama_model
    fresh, examples = _new_processes_and_examples(m, tmp_path, monkeypatch)
    first = fresh()
    fixed = len(examples)
    assert fixed % N_BATCH > 64  # a whole-batch cut would leave most of a batch to read again
    q1, q2 = first.encode("Question: who directed Film 3?"), first.encode("Question: who wrote Film 7?")
    first.release(first.prefill(examples + q1, fixed=fixed))
    before = first.counter.prefix_tokens_reused
    state = first.prefill(examples + q2, fixed=fixed)
    assert first.counter.prefix_tokens_reused - before == fixed  # the whole fixed part, from memory
    assert torch.equal(state.logits.log_softmax(-1), _fresh_read(m, examples + q2, fixed))
    first.release(state)
    saved = list(first._exact_store.folder.glob("*.kvx"))
    assert [int(p.name.split("-")[0]) for p in saved] == [fixed]
    # the same prompt read without naming its fixed part is cut elsewhere: the kept state is not taken
    before = first.counter.prefix_tokens_reused
    state = first.prefill(examples + q2)
    assert first.counter.prefix_tokens_reused - before == 0
    assert torch.equal(state.logits.log_softmax(-1), _fresh_read(m, examples + q2))
    first.release(state)

    second = fresh()  # a new process: the fixed part comes from disk
    q3 = second.encode("Question: who directed Film 11?")
    state = second.prefill(examples + q3, fixed=fixed)
    assert second.counter.prefix_tokens_loaded == fixed
    assert second.counter.tokens_in == len(q3)
    assert torch.equal(state.logits.log_softmax(-1), _fresh_read(m, examples + q3, fixed))
    second.release(state)


def test_a_prompt_text_names_its_fixed_start_in_tokens(llama_model):
    from kgqa_core.models.interface import PromptText

    m = llama_model
    fixed = "Answer the question from the graph.\n\n"
    prompt = PromptText(fixed + "Question: who directed Heat?", fixed)
    ids = m.encode(prompt)
    n = m.fixed_tokens(prompt.fixed, ids)
    assert 0 < n <= len(m.encode(fixed)) and m.decode(ids[:n]) == fixed[: len(m.decode(ids[:n]))]
    assert PromptText("other text", fixed).fixed == ""  # not its start: no fixed part
    assert m.fixed_tokens("", ids) == 0


def test_decode_chunks_never_ask_llama_cpp_for_more_logits_rows_than_it_reserved():
    from kgqa_core.models.llama_model import N_BATCH, N_OUTPUTS, _decode_chunks

    items = [(0, t, t, 0, True) for t in range(300)] + [(1, t, t, 1, t == 499) for t in range(500)]
    chunks = _decode_chunks(items)
    assert [x for c in chunks for x in c] == items
    assert all(len(c) <= N_BATCH and sum(x[-1] for x in c) <= N_OUTPUTS for c in chunks)


def test_llama_extend_of_every_position_longer_than_the_logits_buffer(llama_model):
    """An extend that wants log-probs at 200 positions (> the 64-row buffer) used to abort the process."""
    from kgqa_core.models.llama_model import N_OUTPUTS

    text = "The quick brown fox jumps over the lazy dog. " * 30
    ids = llama_model.encode(text)[: N_OUTPUTS * 3]
    state = llama_model.prefill(llama_model.encode("Read this:"))
    rows = llama_model.extend(state, ids)
    assert len(rows) == len(ids)
    llama_model.release(state)


def test_prefill_that_fills_the_cache_evicts_cached_prompts_and_goes_on(llama_model, tmp_path, monkeypatch):
    """Questions whose prompts together overflow the KV cache: each prefill still works, prompt after prompt.

    A full cache drops every cached prompt while a new one is read; the prefill that had chosen one of them
    as its prefix used to index the emptied list (IndexError on the third 1.5B question at 120 triplets).
    """
    from kgqa_core.models.llama_model import LlamaCppModel

    monkeypatch.setenv("KGQA_CACHE_DIR", str(tmp_path))
    m = llama_model
    small = LlamaCppModel(name=m.name, path=m.path, tokenizer=m.tokenizer, revision=m.revision, n_ctx=1024)
    small._store = None
    shared = small.encode("Examples:\n" + "".join(f"{i}. < Film {i} -> directed_by -> Person {i} >\n" for i in range(12)))
    states = []
    for q in range(5):  # each prompt ~200 own tokens after the shared part: 4 cached prompts and a new one overflow 1,024 cells
        own = small.encode(f"Question {q}: " + " ".join(f"Film {q}-{j} -> starred_actors -> Actor {j}" for j in range(14)))
        state = small.prefill(shared + own)
        assert len(state.ids) == len(shared) + len(own) and state.logits.shape[-1] > 0
        states.append(int(state.logits.argmax()))
        small.release(state)
    assert len(small._prefixes) <= small.prefix_cache_size


def test_a_methods_fixed_prefix_is_saved_when_other_prompts_came_between(llama_model, tmp_path):
    """An evaluation asks each question with several methods: between two DoG prompts the others' prompts push
    the first out of the few cached ones.  The part the two DoG prompts share is still found (from the ids of
    recent prompts), saved, and read from disk for the next question instead of being read again."""
    from kgqa_core.models.base import common_prefix
    from kgqa_core.models.prompt_cache import PromptStateStore

    m = llama_model
    kept_store = m._store
    m._store = PromptStateStore(tmp_path, "llama")
    m.exact = False  # reusing any cached prefix (KGQA_LLAMA_EXACT=0): the store of non-exact reads
    try:
        m.clear_prefix_cache()
        fixed = m.encode("Examples: " + "< Heat -> directed_by -> Michael Mann > " * 30)
        assert len(fixed) > m._store.min_tokens
        m.release(m.prefill(fixed + m.encode(" Question one?")))
        for i in range(m.prefix_cache_size + 1):  # the other methods' prompts
            m.release(m.prefill(m.encode(f"Another method's prompt number {i}: " + "x y z " * 20)))
        assert not any(common_prefix(e.ids, fixed) >= len(fixed) for e in m._prefixes)  # pushed out
        m.release(m.prefill(fixed + m.encode(" Question two?")))  # read whole: its fixed part is saved
        third = fixed + m.encode(" Question three, a longer one?")
        hit = m._store.lookup(third)
        assert hit is not None and hit[0] >= len(fixed) - 1, hit
        m.release(m.prefill(fixed + m.encode(" Question two?")))  # the same prompt again saves nothing more
        assert len(list(tmp_path.iterdir())) == 1
        m.clear_prefix_cache()
        loaded, reused = m.counter.prefix_tokens_loaded, m.counter.prefix_tokens_reused
        m.release(m.prefill(third))
        assert m.counter.prefix_tokens_loaded - loaded >= len(fixed) - 1
        assert m.counter.prefix_tokens_reused - reused >= len(fixed) - 1
    finally:
        m._store = kept_store
        m.exact = True
        m.clear_prefix_cache()

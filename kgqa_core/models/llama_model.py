"""The llama.cpp backend: the packaged GGUF file as it is, through llama-cpp-python's C API.

One llama.cpp context holds every sequence of the process in its KV cache
(``kv_unified``): a `LlamaSequence` is a sequence id in that cache.  Forking
a beam is ``llama_memory_seq_cp`` (the cells are shared, nothing is copied),
releasing it is ``llama_memory_seq_rm``; several beams are advanced in one
``llama_decode`` batch, and an extend asks for logits at every fed position
(DoG's jump-forward scores each forced token exactly).

A prompt is read *exactly* by default (`exact_reuse`): when no other
sequence is alive the cache is emptied first, and only a prefix that ends on
a whole batch and was read the same way is reused (restored from its saved
keys and values, in memory or on disk), so the numbers are those a new
process computes, whatever ran before.  The instruction and in-context
examples of a method (the prompt's `stable prefix`, found as the part two
different prompts share) are written to the cache folder with
``llama_state_seq_save_file``, so a new process does not read them again
(`prompt_cache.PromptStateStore`).  With ``exact=False`` (or
``KGQA_LLAMA_EXACT=0``), recently read prompts stay in the cache as their
own sequences and a new prompt copies the longest prefix it shares with one
of them, wherever it ends (fewer tokens read; the numbers move by up to
half a nat with what ran before).

Tokenisation uses the Hugging Face tokenizer built from the same GGUF file,
so the trie, the opening detector and READS' option ids are the same ids
under both backends (checked against llama.cpp's own tokenizer at load).
"""

from __future__ import annotations

import ctypes
import os
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence as Seq

import numpy as np
import torch

from .. import progress
from .backend_fields import BackendFields
from .base import ModelBase, common_prefix
from .exact_reuse import EXACT_EXT, N_BATCH, ExactStates, batch_cuts, exact_reuse_default, plain_cuts, whole_batches
from .interface import PromptTooLongError
from .option_trie import OptionTrie
from .prompt_cache import PromptStateStore

DEFAULT_N_CTX = 8192  # prompt (at most half) + beams + cached prefixes; KGQA_LLAMA_CTX overrides
N_SEQ_MAX = 64
N_OUTPUTS = 64  # logits rows per decode call: llama.cpp keeps a buffer of this many vocab-sized rows
SEEN_PROMPTS = 32  # recent prompts whose ids (not cells) are kept to find a method's fixed part (`_save_seen_prefix`)


def repack_weights() -> bool:
    """Whether llama.cpp may copy the weights into its CPU-repacked layouts ($KGQA_LLAMA_REPACK=1).

    Off by default: the copy is a second, anonymous copy of the weights beside
    the mapped file (+600 MB for the 1.5B Q4_K_M), and on this project's CPU
    it read prompts slower, not faster (81 vs 50 prompt tokens per CPU-second,
    decoding unchanged; docs/benchmarks.md, "llama.cpp weight repacking").  A
    CPU whose repacked kernels win (AVX512, ARM) can turn it on.
    """
    return os.environ.get("KGQA_LLAMA_REPACK", "").strip() in ("1", "true", "yes")


def physical_cores() -> int:
    """Physical cores this process may use (hyper-threads do not speed up llama.cpp's matmuls)."""
    try:
        allowed = os.sched_getaffinity(0)
    except AttributeError:  # pragma: no cover (macOS)
        allowed = set(range(os.cpu_count() or 1))
    cores: set[tuple[str, str]] = set()
    try:
        cpu = phys = core = None
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            key, value = key.strip(), value.strip()
            if key == "processor":
                cpu = int(value)
            elif key == "physical id":
                phys = value
            elif key == "core id":
                core = value
            elif not key and cpu is not None:
                if cpu in allowed:
                    cores.add((phys or "0", core or str(cpu)))
                cpu = phys = core = None
        if cpu is not None and cpu in allowed:
            cores.add((phys or "0", core or str(cpu)))
    except (OSError, ValueError):
        pass
    return max(1, len(cores) or len(allowed))


def default_threads() -> int:
    """$KGQA_THREADS, else the physical cores, capped by $OMP_NUM_THREADS where it is set."""
    for var in ("KGQA_THREADS",):
        if os.environ.get(var, "").isdigit() and int(os.environ[var]) > 0:
            return int(os.environ[var])
    n = physical_cores()
    omp = os.environ.get("OMP_NUM_THREADS", "")
    if omp.isdigit() and int(omp) > 0:
        n = min(n, int(omp))
    return n


class LlamaSequence:
    """A sequence in the llama.cpp context's KV cache: its ids and next-token logits.

    Dropping the last reference releases its cache cells (at the next model
    call); `LlamaCppModel.release` does it at once.
    """

    __slots__ = ("ids", "logits", "seq_id", "_model", "_finalizer", "__weakref__")

    def __init__(self, model: "LlamaCppModel", seq_id: int, ids: list[int], logits: torch.Tensor) -> None:
        self.ids = ids
        self.logits = logits
        self.seq_id = seq_id
        self._model = model
        self._finalizer = weakref.finalize(self, model._pending.append, seq_id)

    def fork(self) -> "LlamaSequence":
        return self._model.fork(self)


@dataclass
class _Entry:
    ids: list[int]
    seq_id: int


@dataclass(eq=False)
class LlamaCppModel(BackendFields, ModelBase):
    name: str
    path: Path
    tokenizer: Any
    n_ctx: int = DEFAULT_N_CTX
    threads: int = 0
    prefix_cache_size: int = 4
    min_reused_prefix: int = 32
    # reuse a prompt's cached cells only where the numbers stay those of a fresh process (`exact_reuse`)
    exact: bool = field(default_factory=exact_reuse_default)

    backend = "llama.cpp"
    lookup_draft = 0  # guessed tokens a pass (models/lookup.py): a 7-token pass costs 3.6 one-token ones

    def __post_init__(self) -> None:
        import llama_cpp
        from llama_cpp import _internals, _logger

        _logger.set_verbose(False)
        self._ll = llama_cpp
        self.threads = self.threads or default_threads()
        mp = llama_cpp.llama_model_default_params()
        mp.n_gpu_layers = 0
        if hasattr(mp, "use_extra_bufts"):
            mp.use_extra_bufts = repack_weights()
        self._lm = _internals.LlamaModel(path_model=str(self.path), params=mp, verbose=False)
        train = int(llama_cpp.llama_model_n_ctx_train(self._lm.model))
        cp = llama_cpp.llama_context_default_params()
        cp.n_ctx = min(self.n_ctx, train) if train > 0 else self.n_ctx
        cp.n_batch = N_BATCH
        cp.n_ubatch = N_BATCH
        cp.n_seq_max = N_SEQ_MAX
        cp.n_outputs_max = N_OUTPUTS
        cp.n_outputs_max_per_seq = 0
        cp.n_threads = self.threads
        cp.n_threads_batch = self.threads
        cp.kv_unified = True  # forks share cells; one cache for every sequence
        cp.no_perf = True
        self._cx = _internals.LlamaContext(model=self._lm, params=cp, verbose=False)
        self._ctx = self._cx.ctx
        self._mem = self._cx.memory
        self.n_ctx = int(llama_cpp.llama_n_ctx(self._ctx))
        self._vocab = self._lm.vocab
        self._n_vocab = int(llama_cpp.llama_vocab_n_tokens(self._vocab))
        self._batch = llama_cpp.llama_batch_init(N_BATCH, 0, 1)
        self._free = list(range(N_SEQ_MAX - 1, -1, -1))
        self._pending: list[int] = []
        self._prefixes: list[_Entry] = []
        # the ids of the prompts read lately (no cells): the fixed part two of them share is found even when the
        # first one's cells are no longer cached (`_save_seen_prefix`)
        self._seen: list[list[int]] = []
        # a prompt may take half the cache; beams, forks and cached prefixes share the rest
        self.context_length = min(train, self.n_ctx // 2)
        self._check_vocabulary()
        self._store = PromptStateStore.for_model(self.backend, self.name, self.revision, "llama")
        # a named fixed part is kept whole, so a short one (READS' instructions) is worth a file too
        self._exact_store = PromptStateStore.for_model(self.backend, self.name, self.revision, EXACT_EXT, 64)
        self._exact_states = ExactStates()

    def __del__(self) -> None:  # the batch is ours; model and context free themselves
        for name in ("_batch", "_shared_batch"):
            batch = getattr(self, name, None)
            if batch is not None:
                try:
                    self._ll.llama_batch_free(batch)
                except Exception:
                    pass
                setattr(self, name, None)

    # ------------------------------------------------------------- info
    @property
    def device_label(self) -> str:
        return f"cpu ({self.threads} thread{'s' if self.threads != 1 else ''})"

    @property
    def vocab_size(self) -> int:
        return self._n_vocab

    def _backend_eos(self) -> set[int]:
        ids = set()
        for fn in (self._ll.llama_vocab_eos, self._ll.llama_vocab_eot):
            tid = int(fn(self._vocab))
            if tid >= 0:
                ids.add(tid)
        return ids

    def _check_vocabulary(self) -> None:
        """The HF tokenizer must give llama.cpp's ids, or every constraint would be wrong."""
        sample = "Which films did Ridley Scott direct? < Alien -> directed_by -> Ridley Scott > 1979, été."
        ours = self.encode(sample)
        theirs = self._lm.tokenize(sample.encode("utf-8"), add_bos=False, special=False)
        if list(ours) != list(theirs):
            raise ValueError(
                f"the tokenizer of {self.name} does not match llama.cpp's ({ours[:8]} vs {theirs[:8]})"
            )

    # ------------------------------------------------------- sequences
    def _alloc(self) -> int:
        self._drain()
        if not self._free and self._prefixes:
            self._evict(len(self._prefixes))
        if not self._free:
            import gc

            gc.collect()
            self._drain()
        if not self._free:
            raise RuntimeError(f"llama.cpp backend: all {N_SEQ_MAX} sequences are in use (a beam leak)")
        return self._free.pop()

    def _drain(self) -> None:
        while self._pending:
            seq = self._pending.pop()
            self._ll.llama_memory_seq_rm(self._mem, seq, -1, -1)
            self._free.append(seq)

    def release(self, state: Any) -> None:
        if isinstance(state, LlamaSequence) and state._finalizer.alive:
            state._finalizer()  # queues the id once
            with self.lock:
                self._drain()

    def _evict(self, n: int) -> None:
        for entry in self._prefixes[-n:]:
            self._ll.llama_memory_seq_rm(self._mem, entry.seq_id, -1, -1)
            self._free.append(entry.seq_id)
        del self._prefixes[len(self._prefixes) - n :]

    def clear_prefix_cache(self) -> None:
        """Forget every prompt read before (in memory; the files on disk stay), as a new process starts."""
        with self.lock:
            self._evict(len(self._prefixes))
            self._exact_states.clear()

    def prefill(self, ids: Seq[int], fixed: int = 0) -> LlamaSequence:
        """Read a prompt: exactly when no other sequence is alive (`_prefill_exact`), else copying the longest cached
        prefix's cells (from memory, else from disk) instead of reading it.

        `fixed`: how many first tokens are the method's fixed part (read as batches of their own and kept whole).
        """
        ids = self._prompt_ids(ids)
        with self.lock:
            if self.exact and self._quiet():
                return self._prefill_exact(ids, fixed)
            if self.exact:  # another sequence is alive: its cells stay, so this read is not a fresh one
                self.counter.inexact_reads += 1
            reused, slot = self._best_prefix(ids)
            if not self.exact and self._store is not None and reused < self._store.min_tokens and \
                    self._load_prefix(ids):
                reused, slot = self._best_prefix(ids)
            source = self._prefixes[slot] if slot is not None else None
            source_ids = source.ids if source is not None else None
            seq = self._alloc()
            if source is not None:
                self._ll.llama_memory_seq_cp(self._mem, source.seq_id, seq, 0, reused)
            state = LlamaSequence(self, seq, ids[:reused], torch.empty(0))
            self._read_rest(state, ids)
            if not self.exact and source_ids is not None and source_ids[:reused + 1] != ids[:reused + 1]:
                self._save_prefix(seq, ids[:reused])  # shared by two different prompts: the stable part
            elif not self.exact and self._store is not None and reused < self._store.min_tokens:
                self._save_seen_prefix(seq, ids)
            self._seen = [list(ids), *[s for s in self._seen if s != ids]][:SEEN_PROMPTS]
            self._keep_prompt(seq, ids, source, reused)
            return state

    def _read_rest(self, state: LlamaSequence, ids: list[int], cuts: Seq[int] = ()) -> None:
        """Read the part of `ids` that `state` (holding a cached prefix of it) lacks, counting the reused tokens.

        `cuts`: positions where a batch must end (`exact_reuse.batch_cuts`); else batches of N_BATCH from the start.
        """
        reused = len(state.ids)
        try:
            todo = len(ids) - reused
            cached = f" ({reused:,} more cached)" if reused else ""
            ends = [c for c in cuts if reused < c < len(ids)] + [len(ids)]
            with progress.activity(progress.PROMPT, f"reading a prompt of {todo:,} tokens{cached}", todo) as act:
                start = reused
                for end in ends:  # progress per batch
                    self._run([(state, ids[start:end], False)], on_chunk=act.advance)
                    start = end
        except BaseException:
            self.release(state)
            raise
        self.counter.prefix_tokens_reused += reused

    def _keep_prompt(self, seq: int, ids: list[int], source: _Entry | None = None, reused: int = 0) -> None:
        """Keep the cells of the prompt just read as a cached prompt (the newest first)."""
        if self.prefix_cache_size <= 0:
            return
        # `source` may be gone: a full cache evicts every cached prompt while this one is read (`_decode`)
        if source is not None and any(e is source for e in self._prefixes) and reused * 2 >= len(source.ids):
            self._prefixes.remove(source)  # mostly the same prompt: the newer one takes its place
            self._ll.llama_memory_seq_rm(self._mem, source.seq_id, -1, -1)
            self._free.append(source.seq_id)
        keep = self._alloc()
        self._ll.llama_memory_seq_cp(self._mem, seq, keep, -1, -1)
        self._prefixes.insert(0, _Entry(list(ids), keep))
        if len(self._prefixes) > self.prefix_cache_size:
            self._evict(len(self._prefixes) - self.prefix_cache_size)

    def _quiet(self) -> bool:
        """No sequence is alive but the cached prompts (a method's earlier ones all released): the cache may be emptied."""
        self._drain()
        if len(self._free) + len(self._prefixes) == N_SEQ_MAX:
            return True
        import gc

        gc.collect()  # a released state whose finalizer has not run yet
        self._drain()
        return len(self._free) + len(self._prefixes) == N_SEQ_MAX

    def _prefill_exact(self, ids: list[int], fixed: int = 0) -> LlamaSequence:
        """Read `ids` into an emptied cache, reusing only a prefix read the same way and ending on a batch cut.

        The numbers are those of a fresh process reading `ids` (`exact_reuse`):
        the batches end at `batch_cuts` (whole batches, and the end of the
        method's `fixed` part when the caller names it), reused or read.
        """
        fixed = fixed if 0 < fixed < len(ids) else 0
        cuts = batch_cuts(len(ids), fixed, N_BATCH)
        self._evict(len(self._prefixes))
        self._ll.llama_memory_clear(self._mem, False)
        state, loaded = self._restore_exact(ids, cuts)
        reused = len(state.ids)
        self._read_rest(state, ids, cuts)
        self.counter.prefix_tokens_loaded += reused if loaded else 0
        # kept in memory: the fixed part (the next question of the method) and the last cut (a re-ask reads from there)
        for n in {fixed, max((c for c in cuts if c < len(ids)), default=0)}:
            if n and not self._exact_states.has(ids[:n]):
                self._exact_states.put(ids[:n], self._sequence_bytes(state.seq_id, n), cuts)
        store = self._exact_store
        if store is not None:  # the method's fixed part goes to disk (read with plain cuts below its end)
            shared = fixed or whole_batches(self._fixed_part(ids), N_BATCH)
            if shared >= store.min_tokens and not store.has(ids[:shared]):
                self._save_part(state.seq_id, ids[:shared], store)
        self._seen = [list(ids), *[s for s in self._seen if s != ids]][:SEEN_PROMPTS]
        # its cells stay for a read made while a sequence is alive (not exact then; the next exact read empties them)
        self._keep_prompt(state.seq_id, ids)
        return state

    def _restore_exact(self, ids: list[int], cuts: list[int]) -> tuple[LlamaSequence, bool]:
        """A new sequence holding the longest exactly-read prefix of `ids` kept in memory or on disk (or nothing).

        A prefix is taken only where it ends on one of `cuts` and was read with the same cuts before it (those
        on disk were read with plain cuts: whole batches, then their end).
        """
        n_mem, blob = self._exact_states.best(ids, cuts)

        def plain(n: int) -> bool:
            return n in cuts and [c for c in cuts if c < n] == plain_cuts(n, N_BATCH)

        hit = self._exact_store.lookup(ids, plain) if self._exact_store is not None else None
        if hit is not None and hit[0] > n_mem:
            loaded = self.load_sequence(hit[1], hit[0])
            if loaded is not None and loaded.ids == ids[: hit[0]]:
                return loaded, True
            if loaded is not None:
                self.release(loaded)
                self._ll.llama_memory_clear(self._mem, False)
        seq = self._alloc()
        if blob is not None and self._ll.llama_state_seq_set_data(self._ctx, blob, len(blob), seq):
            return LlamaSequence(self, seq, ids[:n_mem], torch.empty(0)), False
        self._ll.llama_memory_seq_rm(self._mem, seq, -1, -1)
        return LlamaSequence(self, seq, [], torch.empty(0)), False

    def _sequence_bytes(self, seq: int, n: int) -> ctypes.Array:
        """The keys and values of the first `n` cells of `seq` (llama.cpp's sequence state), as bytes."""
        tmp = self._alloc()
        try:
            self._ll.llama_memory_seq_cp(self._mem, seq, tmp, 0, n)
            size = int(self._ll.llama_state_seq_get_size(self._ctx, tmp))
            buf = (ctypes.c_uint8 * size)()
            self._ll.llama_state_seq_get_data(self._ctx, buf, size, tmp)
            return buf
        finally:
            self._ll.llama_memory_seq_rm(self._mem, tmp, -1, -1)
            self._free.append(tmp)

    def _best_prefix(self, ids: list[int]) -> tuple[int, int | None]:
        reused, slot = 0, None
        for i, entry in enumerate(self._prefixes):
            n = min(common_prefix(entry.ids, ids), len(ids) - 1)
            if n > reused:
                reused, slot = n, i
        if reused < self.min_reused_prefix:
            return 0, None
        return reused, slot

    def _load_prefix(self, ids: list[int]) -> bool:
        """Bring the longest prefix of `ids` saved on disk into the prefix cache."""
        hit = self._store.lookup(ids)
        if hit is None:
            return False
        n, path = hit
        loaded = self.load_sequence(path, n)
        if loaded is None or loaded.ids != ids[:n]:
            if loaded is not None:
                self.release(loaded)
            return False
        self.adopt_prefix(loaded, front=True)
        self.release(loaded)
        self.counter.prefix_tokens_loaded += n
        return True

    def _save_seen_prefix(self, seq: int, ids: list[int]) -> None:
        """Save the part of `ids` (just read whole) that a different prompt read lately began with too.

        Why: between two questions of one method, the other methods' prompts
        (an evaluation asks each question with several, the question's reading
        first) push the first question's cells out of the few cached prompts,
        so the method's instructions and examples were never seen shared in
        the cache, never saved, and read again for every question (1,000
        prompt tokens a DoG question on a new machine).  The ids of recent
        prompts are kept without their cells; the longest prefix `ids` shares
        with one that goes on differently is the method's fixed part.
        """
        shared = self._fixed_part(ids)
        if shared >= self._store.min_tokens:
            self._save_prefix(seq, ids[:shared])

    def _fixed_part(self, ids: list[int]) -> int:
        """How many first tokens of `ids` a different prompt read lately began with too (its method's fixed part)."""
        shared = 0
        for seen in self._seen:
            n = common_prefix(seen, ids)
            if n < len(seen):  # a different prompt, not this one again (nor one it goes on from)
                shared = max(shared, min(n, len(ids) - 1))
        return shared

    def _save_prefix(self, seq: int, prefix: list[int]) -> None:
        store = self._store
        if store is None or len(prefix) < store.min_tokens or store.has(prefix):
            return
        self._save_part(seq, prefix, store)

    def _save_part(self, seq: int, prefix: list[int], store: PromptStateStore) -> None:
        """Write the first ``len(prefix)`` cells of `seq` to `store` (a cache we cannot write only costs time)."""
        tmp_seq = self._alloc()
        try:
            self._ll.llama_memory_seq_cp(self._mem, seq, tmp_seq, 0, len(prefix))
            self._save_seq(tmp_seq, prefix, store.path_for(prefix), store.temp_path(store.path_for(prefix)))
            store.prune()
        except OSError:
            pass  # a cache we cannot write only costs time
        finally:
            self._ll.llama_memory_seq_rm(self._mem, tmp_seq, -1, -1)
            self._free.append(tmp_seq)

    def step(self, state: LlamaSequence, new_ids: Seq[int]) -> LlamaSequence:
        if new_ids:
            with self.lock:
                self._run([(state, list(new_ids), False)])
        return state

    def extend(self, state: LlamaSequence, new_ids: Seq[int]) -> torch.Tensor:
        return self.extend_many([state], [new_ids])[0]

    def extend_many(self, states: Seq[LlamaSequence], new_ids: Seq[Seq[int]]) -> list[torch.Tensor]:
        """Feed each sequence its ids in one batch; log-prob rows after every fed id."""
        with self.lock:
            rows = self._run([(s, list(ids), True) for s, ids in zip(states, new_ids)])
        return [torch.log_softmax(r, dim=-1) for r in rows]

    def rewind(self, state: LlamaSequence, n: int, logits: torch.Tensor) -> None:
        """Keep the first `n` ids of `state` (drop the cells after them); `logits`: the next-token logits after id n-1."""
        if n >= len(state.ids):
            return
        with self.lock:
            self._ll.llama_memory_seq_rm(self._mem, state.seq_id, n, -1)
            del state.ids[n:]
            state.logits = logits

    def fork(self, state: LlamaSequence) -> LlamaSequence:
        with self.lock:
            seq = self._alloc()
            self._ll.llama_memory_seq_cp(self._mem, state.seq_id, seq, -1, -1)
            return LlamaSequence(self, seq, list(state.ids), state.logits.clone())

    # ---------------------------------------------------------- scoring
    def _score_batch(self, state: LlamaSequence, options: list[list[int]]) -> list[list[float]]:
        """Tokens 2.. of each option, a prefix the options share read once.

        Options written after one prompt mostly begin alike (walks from one entity,
        answers of one list); scored one fork each, their shared tokens were read
        once per option.  Here the options' tokens form a trie (`OptionTrie`) and
        each trie node is one KV cell that belongs to every option through it
        (llama.cpp's multi-sequence tokens), so a shared prefix costs its tokens once.
        """
        trie = OptionTrie.of(options)
        out: list[list[float]] = [[] for _ in options]
        if not trie.nodes:
            return out
        with self.lock:
            self._drain()
            seqs: list[int] = []
            try:
                for _ in trie.members:
                    seqs.append(self._alloc())
                    self._ll.llama_memory_seq_cp(self._mem, state.seq_id, seqs[-1], -1, -1)
                base = len(state.ids)
                items = [(n, tok, base + depth, [seqs[m] for m in members], True)
                         for n, (tok, depth, members) in enumerate(trie.nodes)]
                wanted = trie.next_tokens(options)
                logprob: dict[tuple[int, int], float] = {}
                batch = self._multi_batch()
                for chunk in _decode_chunks(items):
                    self._decode_chunk(batch, chunk)
                    for i, (n, *_rest) in enumerate(chunk):
                        row = torch.from_numpy(self._logits_row(i))
                        lse = float(torch.logsumexp(row, dim=0))
                        for tok in wanted[n]:
                            logprob[(n, tok)] = float(row[tok]) - lse
            finally:
                self._pending.extend(seqs)
                self._drain()
        for i, path in trie.paths.items():
            ids = options[i]
            out[i] = [logprob[(path[j - 1], ids[j])] for j in range(1, len(ids))]
        return out

    def _multi_batch(self) -> Any:
        """A decode batch whose tokens may each belong to up to N_SEQ_MAX sequences (made once)."""
        if getattr(self, "_shared_batch", None) is None:
            self._shared_batch = self._ll.llama_batch_init(N_BATCH, 0, N_SEQ_MAX)
        return self._shared_batch

    # ----------------------------------------------------------- decode
    def _run(self, work: list[tuple[LlamaSequence, list[int], bool]],
             on_chunk: Callable[[int], None] | None = None) -> list[torch.Tensor]:
        """Decode `work` (sequence, ids, logits at every position?) in batches of N_BATCH tokens.

        Returns, per item, the logits after each fed id ([n, V]) when asked,
        else after the last one; every state's ids and logits are updated.
        ``on_chunk(n)`` hears of each decoded batch of n tokens (a long prompt's read shows progress).
        """
        self._drain()
        items: list[tuple[int, int, int, tuple[int], bool]] = []  # (work index, token, pos, (seq,), want)
        for w, (state, ids, every) in enumerate(work):
            base = len(state.ids)
            for j, tok in enumerate(ids):
                items.append((w, tok, base + j, (state.seq_id,), every or j == len(ids) - 1))
        out: list[list[np.ndarray]] = [[] for _ in work]
        for chunk in _decode_chunks(items):
            self._decode_chunk(self._batch, chunk)
            if on_chunk is not None:
                on_chunk(len(chunk))
            for i, (w, _, _, _, want) in enumerate(chunk):
                if want:
                    out[w].append(self._logits_row(i).copy())
        result = []
        for w, (state, ids, every) in enumerate(work):
            state.ids.extend(ids)
            rows = torch.from_numpy(np.stack(out[w])) if out[w] else torch.empty(0, self._n_vocab)
            if len(rows):
                state.logits = rows[-1]
            result.append(rows)
        return result

    def _decode_chunk(self, batch: Any, chunk: list) -> None:
        """Decode one chunk of (key, token, pos, sequences, want logits?) items, counted as one forward pass."""
        for i, (_, tok, pos, seqs, want) in enumerate(chunk):
            batch.token[i] = tok
            batch.pos[i] = pos
            batch.n_seq_id[i] = len(seqs)
            for k, seq in enumerate(seqs):
                batch.seq_id[i][k] = seq
            batch.logits[i] = want
        batch.n_tokens = len(chunk)
        self._decode(batch)
        self.counter.forward_passes += 1
        self.counter.tokens_in += len(chunk)

    def _logits_row(self, i: int) -> np.ndarray:
        """The last decode's logits for its i-th token (a view into llama.cpp's buffer: copy to keep)."""
        return np.ctypeslib.as_array(self._ll.llama_get_logits_ith(self._ctx, i), shape=(self._n_vocab,))

    def _decode(self, batch: Any) -> None:
        rc = self._ll.llama_decode(self._ctx, batch)
        if rc == 1 and self._prefixes:  # no room in the KV cache: drop cached prompts and retry
            self._evict(len(self._prefixes))
            rc = self._ll.llama_decode(self._ctx, batch)
        if rc == 1:
            raise PromptTooLongError(
                f"the llama.cpp cache ({self.n_ctx} tokens) is full: lower the prompt budget or the beam size, "
                "or set KGQA_LLAMA_CTX higher"
            )
        if rc != 0:
            raise RuntimeError(f"llama_decode failed with code {rc}")

    # ------------------------------------------------------ state files
    def save_sequence(self, state: LlamaSequence, path: Path) -> int:
        """Write the cells of `state` to `path` (atomically); returns bytes written."""
        with self.lock:
            return self._save_seq(state.seq_id, state.ids, path, path.with_name(path.name + f".{os.getpid()}.tmp"))

    def _save_seq(self, seq: int, ids: list[int], path: Path, tmp: Path) -> int:
        arr = (self._ll.llama_token * len(ids))(*ids)
        n = self._ll.llama_state_seq_save_file(self._ctx, str(tmp).encode(), seq, arr, len(ids))
        if not n:
            tmp.unlink(missing_ok=True)
            raise OSError(f"llama.cpp could not write {tmp}")
        os.replace(tmp, path)
        return int(n)

    def load_sequence(self, path: Path, max_tokens: int) -> LlamaSequence | None:
        """A sequence restored from a file `save_sequence` wrote (None if it cannot be read).

        The restored sequence has no logits (its last token's logits are not
        stored); `prefill` uses it only as a prefix, which always leaves one
        token to read.
        """
        with self.lock:
            seq = self._alloc()
            buf = (self._ll.llama_token * max_tokens)()
            count = ctypes.c_size_t(0)
            n = self._ll.llama_state_seq_load_file(
                self._ctx, str(path).encode(), seq, buf, max_tokens, ctypes.byref(count)
            )
            if not n or count.value == 0:
                self._ll.llama_memory_seq_rm(self._mem, seq, -1, -1)
                self._free.append(seq)
                return None
            return LlamaSequence(self, seq, list(buf[: count.value]), torch.empty(0))

    def adopt_prefix(self, state: LlamaSequence, front: bool = False) -> None:
        """Keep `state` (e.g. a loaded prompt prefix) as a prefix-cache entry."""
        with self.lock:
            keep = self._alloc()
            self._ll.llama_memory_seq_cp(self._mem, state.seq_id, keep, -1, -1)
            self._prefixes.insert(0 if front else len(self._prefixes), _Entry(list(state.ids), keep))
            if len(self._prefixes) > self.prefix_cache_size:
                self._evict(len(self._prefixes) - self.prefix_cache_size)


def _decode_chunks(items: list, max_tokens: int = N_BATCH, max_outputs: int = N_OUTPUTS) -> list[list]:
    """Split decode work into calls of at most `max_tokens` tokens and `max_outputs` logits rows.

    llama.cpp reserves `n_outputs_max` rows of logits per decode and aborts the whole process
    (GGML_ASSERT) when one call asks for more, so a long extend that wants every position's
    log-probs must be cut by its outputs, not only by its tokens.
    """
    chunks: list[list] = []
    current: list = []
    outputs = 0
    for item in items:
        want = bool(item[-1])
        if current and (len(current) >= max_tokens or (want and outputs >= max_outputs)):
            chunks.append(current)
            current, outputs = [], 0
        current.append(item)
        outputs += want
    if current:
        chunks.append(current)
    return chunks

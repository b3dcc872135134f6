"""What every in-process backend shares: text handling, greedy generation, scoring, trace records.

A backend subclass supplies the sequence operations (``prefill``, ``step``,
``extend``, ``extend_many``, ``fork``, ``release``); generation and
continuation scoring are written once here on top of them, so both backends
decode and score with the same code and differ only in the network.

One model may serve several app sessions at once: every public call holds
``lock`` (re-entrant, so a method may hold it across a whole decode).
"""

from __future__ import annotations

import time
from typing import Any, Sequence as Seq

import torch

from .. import progress
from ..trace.schema import ModelCall
from .generation import GenerationConfig
from .lookup import lookup_draft, lookup_draft_tokens
from .interface import (
    ContinuationScore,
    Generation,
    PromptText,
    PromptTooLongError,
    ScoreList,
    Sequence,
)

NAMED_EOS = ("<|im_end|>", "<|endoftext|>", "<|eot_id|>")


class ModelBase:
    """Shared implementation of `LanguageModel` (see `interface`); subclasses set the fields."""

    name: str
    backend: str
    tokenizer: Any
    context_length: int

    # ------------------------------------------------------------- text
    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    def decode(self, ids: Seq[int]) -> str:
        return self.tokenizer.decode(list(ids), skip_special_tokens=False)

    def token_text(self, token_id: int) -> str:
        return self.tokenizer.decode([token_id], skip_special_tokens=False)

    @property
    def vocab_size(self) -> int:
        """Rows of the next-token distribution; the tokenizer's size where the backend knows no other (a server)."""
        return len(self.tokenizer)

    def _backend_eos(self) -> set[int]:
        return set()

    @property
    def eos_ids(self) -> set[int]:
        cached = getattr(self, "_eos_cache", None)
        if cached is not None:
            return cached
        ids: set[int] = set(self._backend_eos())
        source = self.tokenizer.eos_token_id
        if isinstance(source, int):
            ids.add(source)
        vocab = self.tokenizer.get_vocab()
        for tok in NAMED_EOS:
            tid = vocab.get(tok)
            if isinstance(tid, int) and tid >= 0:
                ids.add(tid)
        self._eos_cache = ids
        return ids

    def chat_prompt(self, user: str, system: str | None = None) -> str:
        """The chat-templated prompt, ending where the assistant's answer starts."""
        messages = []
        if system:
            messages.append({"role": "system", "content": system})
        messages.append({"role": "user", "content": user})
        if getattr(self.tokenizer, "chat_template", None):
            try:
                return self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
            except Exception:  # a broken template must not stop the method
                pass
        prefix = f"{system}\n\n" if system else ""
        return f"{prefix}{user}\n"

    def continuation_ids(self, prompt_ids: Seq[int], prompt: str, continuation: str) -> list[int]:
        """Token ids of ``continuation`` as tokenised right after ``prompt``.

        BPE merges across the boundary would change the prompt's own ids, so
        when joint tokenisation does not keep the prompt as a prefix we fall
        back to tokenising the continuation alone.
        """
        joint = self.encode(prompt + continuation)
        n = len(prompt_ids)
        if joint[:n] == list(prompt_ids) and len(joint) > n:
            return joint[n:]
        return self.encode(continuation)

    def _prompt_ids(self, ids: Seq[int]) -> list[int]:
        """A prompt's ids as a list, refused when empty or longer than the model reads (every backend's prefill)."""
        if not ids:
            raise ValueError("cannot prefill an empty prompt")
        ids = list(ids)
        self._check_length(len(ids))
        return ids

    def _state_for(self, prompt: str, state: Sequence | None) -> tuple[Sequence, bool]:
        """`state` when given, else `prompt` read now; and whether the state is the call's own (released after)."""
        if state is not None:
            return state, False
        ids = self.encode(prompt)
        return self.prefill(ids, fixed=self.fixed_tokens(getattr(prompt, "fixed", ""), ids)), True

    def fixed_tokens(self, fixed_text: str, ids: Seq[int]) -> int:
        """How many first tokens of `ids` (a prompt's) are its fixed start `fixed_text` (`PromptText`), 0 when none.

        The fixed text's last token may merge with what follows it in the
        prompt; only the tokens both tokenisations share are counted.
        """
        if not fixed_text:
            return 0
        known = self.__dict__.setdefault("_fixed_ids", {})  # a method's fixed text is encoded once, not per read
        if fixed_text not in known:
            if len(known) >= 16:
                known.clear()
            known[fixed_text] = self.encode(fixed_text)
        return common_prefix(known[fixed_text], ids)

    def _check_length(self, n: int) -> None:
        if n > self.context_length:
            raise PromptTooLongError(
                f"prompt has {n} tokens but {self.name} takes at most {self.context_length}; "
                "lower the prompt budget (max prompt triplets)"
            )

    # ------------------------------------------------------- sequences
    def fork(self, state: Sequence) -> Sequence:
        return state.fork()

    def release(self, state: Sequence) -> None:
        """Free what `state` holds outside Python (nothing for backends whose caches are tensors)."""

    # ------------------------------------------------------- generation
    def generate(
        self, prompt: str, config: GenerationConfig = GenerationConfig(), state: Sequence | None = None
    ) -> Generation:
        """Greedy decoding with a KV cache, stopping at EOS or any of ``config.stop_strings``.

        ``config.logits_processor`` (optional) is called as ``fn(generated_ids,
        logits) -> logits`` before the argmax, the transformers convention.
        """
        started = time.perf_counter()
        logits_processor = config.logits_processor
        with self.lock:
            before = self.counter.forward_passes
            state, own = self._state_for(prompt, state)
            prompt_tokens = len(state.ids)
            eos = self.eos_ids
            out_ids: list[int] = []
            stopped_by = "length"
            text = ""
            draft_len = lookup_draft_tokens(self) if hasattr(self, "rewind") else 0

            def take(token: int) -> bool:
                """Write `token`; True when a stop string ends the text there (the token is then not fed)."""
                nonlocal text, stopped_by
                out_ids.append(token)
                act.advance(1)
                text = self.decode(out_ids)
                hit = _first_stop(text, config.stop_strings)
                if hit is None:
                    return False
                text, stopped_by = text[: text.index(hit)], f"stop:{hit}"
                return True

            try:
                # reported while it lasts (one token at a time) and measured for the ETA (kgqa_core.progress)
                with progress.activity(progress.WRITE, f"writing (at most {config.max_new_tokens} tokens)",
                                       config.max_new_tokens) as act:
                    while len(out_ids) < config.max_new_tokens:
                        logits = state.logits
                        if logits_processor is not None:
                            logits = logits_processor(out_ids, logits)
                        next_id = int(torch.argmax(logits).item())
                        if next_id in eos:
                            stopped_by = "eos"
                            break
                        if take(next_id):
                            break
                        room = min(draft_len, config.max_new_tokens - len(out_ids))
                        draft = lookup_draft(state.ids + [next_id], room) if room > 0 else []
                        if not draft:
                            self.step(state, [next_id])
                            continue
                        # prompt lookup decoding (kgqa_core.models.lookup): keep the guesses greedy agrees with
                        base = len(state.ids) + 1
                        rows = self.extend(state, [next_id] + draft)
                        kept = 0
                        for j, guess in enumerate(draft):
                            row = rows[j] if logits_processor is None else logits_processor(out_ids, rows[j])
                            if int(torch.argmax(row).item()) != guess or guess in eos or take(guess):
                                break
                            kept += 1
                        self.rewind(state, base + kept, rows[kept])
                        if stopped_by != "length":
                            break
            finally:
                if own:
                    self.release(state)
            self.counter.tokens_out += len(out_ids)
            return Generation(
                text=text if out_ids else "",
                token_ids=out_ids,
                prompt_tokens=prompt_tokens,
                output_tokens=len(out_ids),
                forward_passes=self.counter.forward_passes - before,
                seconds=time.perf_counter() - started,
                stopped_by=stopped_by,
            )

    # ---------------------------------------------------------- scoring
    def score_continuations(
        self,
        prompt: str,
        continuations: Seq[str],
        state: Sequence | None = None,
        batch_size: int = 16,
    ) -> ScoreList:
        """Log-probabilities of each continuation, sharing the prompt's cache.

        The prompt is read once; each batch of ``batch_size`` options is one
        `_score_batch` call (one forward pass where the backend batches).
        Options of one token need no pass: the prompt's logits suffice.
        """
        started = time.perf_counter()
        with self.lock:
            before = self.counter.forward_passes
            state, own = self._state_for(prompt, state)
            try:
                prompt_ids = list(state.ids)
                option_ids = [self.continuation_ids(prompt_ids, prompt, c) for c in continuations]
                results: list[ContinuationScore] = []
                for text, ids, lps in zip(continuations, option_ids, self.option_logprobs(state, option_ids, batch_size)):
                    total = float(sum(lps)) if lps else float("-inf")
                    results.append(ContinuationScore(text=text, token_ids=list(ids), token_logprobs=lps, total=total,
                                                     mean=total / len(lps) if lps else float("-inf")))
            finally:
                if own:
                    self.release(state)
            scores = ScoreList(results)
            scores.prompt_tokens = len(prompt_ids)
            scores.forward_passes = self.counter.forward_passes - before
            scores.seconds = time.perf_counter() - started
            return scores

    def option_logprobs(self, state: Sequence, options: Seq[Seq[int]], batch_size: int = 16) -> list[list[float]]:
        """The log-prob of every token of every option after `state`: the first from the prompt's logits, the rest
        `batch_size` options to a `_score_batch` call.

        Shared by `score_continuations` and the workbench's own model server
        (`llama_server`, its exact-scoring route), so an option scored over
        that server gets the numbers it gets in process.
        """
        first = torch.log_softmax(state.logits, dim=-1)
        options = [list(o) for o in options]
        out: list[list[float]] = []
        with progress.activity(progress.SCORE, f"scoring {len(options)} options", len(options)) as act:
            for start in range(0, len(options), batch_size):
                chunk = options[start : start + batch_size]
                rest = self._score_batch(state, chunk)
                out += [([float(first[ids[0]])] if ids else []) + rest[i] for i, ids in enumerate(chunk)]
                act.advance(len(chunk))
        return out

    def _score_batch(self, state: Sequence, options: list[list[int]]) -> list[list[float]]:
        """Log-probs of tokens 2.. of each option after `state` (generic: forks and one `extend_many`)."""
        todo = [i for i, ids in enumerate(options) if len(ids) > 1]
        out: list[list[float]] = [[] for _ in options]
        if not todo:
            return out
        forks = [self.fork(state) for _ in todo]
        try:
            rows = self.extend_many(forks, [options[i][:-1] for i in todo])
            for i, r in zip(todo, rows):
                ids = options[i]
                out[i] = [float(r[j - 1, ids[j]]) for j in range(1, len(ids))]
        finally:
            for f in forks:
                self.release(f)
        return out

    # ------------------------------------------------------------ trace
    def call_record(self, purpose: str, result: Any, prompt: str = "", keep_prompt: bool = True) -> ModelCall:
        """A trace record of one model request (a Generation or a list of scores)."""
        if isinstance(result, Generation):
            return ModelCall(
                purpose=purpose,
                prompt_tokens=result.prompt_tokens,
                output_tokens=result.output_tokens,
                forward_passes=result.forward_passes,
                seconds=round(result.seconds, 4),
                prompt=prompt if keep_prompt else "",
                output=result.text,
            )
        scores = list(result or [])
        return ModelCall(
            purpose=purpose,
            prompt_tokens=getattr(result, "prompt_tokens", 0) or (len(self.encode(prompt)) if prompt else 0),
            output_tokens=0,
            forward_passes=getattr(result, "forward_passes", 0),
            seconds=round(getattr(result, "seconds", 0.0), 4),
            prompt=prompt if keep_prompt else "",
            output="\n".join(f"{s.text!r}: {s.mean:.3f}" for s in scores),
        )


def common_prefix(a: Seq[int], b: Seq[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _first_stop(text: str, stops: Seq[str]) -> str | None:
    best: tuple[int, str] | None = None
    for s in stops:
        i = text.find(s)
        if i >= 0 and (best is None or i < best[0]):
            best = (i, s)
    return best[1] if best else None

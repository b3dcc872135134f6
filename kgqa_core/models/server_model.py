"""`ServerBackend`: the model interface over an OpenAI-compatible ``/v1/completions`` server.

A lab serves a 7B-70B model from a GPU box (vLLM, llama.cpp's server,
llama-cpp-python's server); the workbench runs every method against it
through the same interface and the same traces as an in-process model.

What a server gives is coarser than an in-process model: a request returns
generated text and log-probs of a few tokens per position, never the whole
next-token distribution.  So a `ServerSequence` is only the token ids read
so far (no request is made to "prefill" or "step"); requests happen where a
method asks for text or scores:

* ``generate``: one request (greedy, server-side stop strings);
* ``score_continuations``: one batched request where the server returns
  aligned prompt log-probs for token-id prompts (vLLM), else one request per
  continuation that forces it (a grammar for its text plus a logit bias on
  its tokens; the returned log-probs are the model's unconstrained ones,
  checked token by token, with a per-token fallback);
* DoG's free text and triplet steps: `kgqa_core.decoding.server_steps`
  (``remote_decoding``), one request for each stretch of free text and one
  for each triplet in the usual case.

Anything needing the full distribution at every token (``extend``,
``Sequence.logits``, an arbitrary logits processor) raises
`BackendCapabilityError` in one line.  Capabilities are probed at connect
(`server_caps.detect`) and recorded in every trace.
"""

from __future__ import annotations

import contextlib
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Sequence as Seq

import torch

from ..bounds import timeout_option
from .backend_fields import BackendFields
from .base import ModelBase
from .exact_reuse import N_BATCH, batch_cuts
from .generation import GenerationConfig
from .interface import (
    BackendCapabilityError,
    ContinuationScore,
    Generation,
    ScoreList,
)
from .server_caps import ServerCapabilities, detect, greedy_fields, list_models, pick_model, token_terminal
from .server_http import DEFAULT_TIMEOUT, ServerClient, ServerError
from .server_reply import Expect, check_completion, reply_byte_cap

FORCE_BIAS = 100.0  # logit bias that makes the allowed tokens win (logits span a few tens)
TOKENIZER_CHECK = "Which films did Ridley Scott direct? < Alien -> directed_by -> Ridley Scott > 1979, été.\n"


class ServerSequence:
    """Token ids a server will be sent as (or as the text of) a prompt; nothing is computed until a request.

    ``fixed`` and ``prefilled``: the method's fixed part of the prompt first
    read and how many ids that read held (the rest stepped on after it), so
    the workbench's server scores after it as the in-process backend would
    have read it (`exact_scoring`).
    """

    __slots__ = ("ids", "fixed", "prefilled", "cuts", "__weakref__")

    def __init__(self, ids: list[int], fixed: int = 0, prefilled: int = 0, cuts: list[int] | None = None) -> None:
        self.ids = ids
        self.fixed = fixed
        self.prefilled = prefilled or len(ids)
        # where an in-process read of these ids ends its batches (`exact_reuse.batch_cuts`, then each step's);
        # the workbench's server reads a request's ids with the same cuts (``kgqa_cuts``, `llama_server`)
        self.cuts = list(cuts) if cuts is not None else batch_cuts(len(ids), fixed, N_BATCH) + [len(ids)]

    @property
    def logits(self) -> torch.Tensor:
        raise BackendCapabilityError(
            "a model server returns no full next-token distribution; this step needs an in-process backend"
        )

    def fork(self) -> "ServerSequence":
        return ServerSequence(list(self.ids), self.fixed, self.prefilled, self.cuts)


@dataclass(eq=False)
class ServerBackend(BackendFields, ModelBase):
    """The model served at ``url`` (see the module docstring); build it with `connect_server`."""

    name: str
    url: str
    client: ServerClient
    caps: ServerCapabilities
    tokenizer: Any
    tokenizer_source: str = ""
    retokenised: int = 0  # text prompts whose re-tokenisation differs from the ids we hold
    eos_bounds: int = 0  # EOS log-probs outside the server's top 20: scored at their upper bound
    _token_chars: int = 0  # the longest token's length in characters (bounds a reply's text)
    _sequences: weakref.WeakSet = field(default_factory=weakref.WeakSet, repr=False)

    backend = "server"

    @property
    def device_label(self) -> str:
        return f"server {self.url}"

    def describe(self) -> dict[str, Any]:
        """What a trace records about the server (never the API key)."""
        caps = self.caps.as_dict()
        caps.pop("models", None)
        return {"url": self.url, "model": self.name, "tokenizer": self.tokenizer_source,
                "triplet_strategy": self.caps.triplet_strategy, "capabilities": caps}

    # Decoding (free text, triplet steps) runs as requests through `decoding.server_steps.remote_decoding`,
    # which keys on this flag: the model layer never imports the decoding layer above it.
    wants_remote_decoding = True

    # ------------------------------------------------------- sequences
    def prefill(self, ids: Seq[int], fixed: int = 0) -> ServerSequence:  # the server reuses prefixes its own way
        if not ids:
            raise ValueError("cannot prefill an empty prompt")
        self._check_length(len(ids))
        return self._track(ServerSequence(list(ids), fixed=max(0, int(fixed)) if 0 < fixed < len(ids) else 0))

    def step(self, state: ServerSequence, new_ids: Seq[int], generated: bool = False) -> ServerSequence:
        """Append ids; `generated`: the server wrote them one at a time (free text, a triplet walk), so their reads
        end after each (as the server's own), else they are read as batches from here, as in process."""
        start = len(state.ids)
        state.ids.extend(int(i) for i in new_ids)
        end = len(state.ids)
        if end > start:
            state.cuts += list(range(start + 1, end + 1)) if generated else \
                list(range(start + N_BATCH, end, N_BATCH)) + [end]
        return self._track(state)

    def _track(self, state: ServerSequence) -> ServerSequence:
        """Keep the sequence (weakly) so a request that goes on from its ids is sent its cuts (`_cuts_for`)."""
        self._sequences.add(state)
        return state

    def _cuts_for(self, ids: list[int]) -> list[int] | None:
        """The batch cuts below len(ids) of the longest tracked sequence whose ids begin `ids` (the workbench's
        server only; None elsewhere or when no sequence matches)."""
        if not self.caps.exact_scoring:
            return None
        best = None
        for seq in list(self._sequences):
            n = len(seq.ids)
            if n <= len(ids) and (best is None or n > len(best.ids)) and seq.ids == ids[:n]:
                best = seq
        if best is None:
            return None
        return [c for c in best.cuts if c < len(ids)]

    def extend(self, state: Any, new_ids: Seq[int]) -> torch.Tensor:
        raise BackendCapabilityError(
            "a model server returns no log-probabilities for every vocabulary token; "
            "this step needs an in-process backend or the server strategy"
        )

    def extend_many(self, states: Seq[Any], new_ids: Seq[Seq[int]]) -> list[torch.Tensor]:
        return [self.extend(s, i) for s, i in zip(states, new_ids)]

    def rewind(self, state: ServerSequence, n: int, logits: Any = None) -> None:
        """Keep the first `n` ids (the server reads the whole text again with the next request)."""
        del state.ids[n:]
        state.prefilled = min(state.prefilled, max(n, 1))
        state.cuts = [c for c in state.cuts if c < n] + [n]

    def clear_prefix_cache(self) -> None:
        """The server keeps its own cache; nothing is held here."""

    # ------------------------------------------------------------ requests
    def decode(self, ids: Seq[int]) -> str:
        return self.tokenizer.decode(list(ids), skip_special_tokens=False, clean_up_tokenization_spaces=False)

    def token_text(self, token_id: int) -> str:
        return self.decode([token_id])

    def prompt_field(self, ids: Seq[int]) -> Any:
        """The ``prompt`` of a request: the ids where the server takes them, else their text."""
        ids = list(ids)
        if self.caps.token_prompts:
            return ids
        text = self.decode(ids)
        if self.encode(text) != ids:
            self.retokenised += 1
        return text

    @property
    def token_chars(self) -> int:
        """The most characters one token can decode to: what bounds a reply's text per token."""
        if not self._token_chars:
            try:
                vocab = self.tokenizer.get_vocab()
                longest = max((len(t) for t in vocab), default=0)
            except Exception:  # a tokenizer without a readable vocabulary: a generous bound
                longest = 0
            self._token_chars = max(longest, 16) if longest else 256
        return self._token_chars

    def _post_completion(self, body: dict[str, Any], expect: Expect) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """One request, its reply held to the request's size and checked field by field."""
        reply = self.client.post("/v1/completions", body, max_bytes=reply_byte_cap(expect, self.token_chars))
        choices = check_completion(reply, f"the model server at {self.url}", expect, self.token_chars)
        return reply, choices

    def complete(self, ids: Seq[int], purpose: str = "completion", **fields: Any) -> dict[str, Any]:
        """One greedy ``/v1/completions`` request after `ids`; returns its first choice."""
        ids = list(ids)
        body = {"model": self.caps.model, "prompt": self.prompt_field(ids), "temperature": 0.0,
                **greedy_fields(self.caps.kind), **fields}
        cuts = self._cuts_for(ids)
        if cuts is not None:
            body["kgqa_cuts"] = cuts
        reply, choices = self._post_completion(body, Expect.of(purpose, fields, len(ids)))
        self._count(reply, len(ids))
        choice = dict(choices[0])
        choice["_usage"] = reply.get("usage") or {}
        return choice

    def complete_batch(self, prompts: list[list[int]], purpose: str, **fields: Any) -> list[dict[str, Any]]:
        """One request with several token-id prompts (servers with ``batch_prompts``); choices in order."""
        body = {"model": self.caps.model, "prompt": prompts, "temperature": 0.0,
                **greedy_fields(self.caps.kind), **fields}
        longest = max((len(p) for p in prompts), default=0)
        reply, choices = self._post_completion(body, Expect.of(purpose, fields, longest, prompts=len(prompts)))
        if len(choices) != len(prompts):
            raise ServerError(f"the model server at {self.url} answered {len(choices)} of {len(prompts)} prompts for {purpose}")
        self._count(reply, sum(len(p) for p in prompts))
        return choices

    def _count(self, reply: dict[str, Any], prompt_tokens: int) -> None:
        usage = reply.get("usage") or {}
        self.counter.forward_passes += 1  # one request: the unit of cost over a server
        self.counter.tokens_in += int(usage.get("prompt_tokens") or prompt_tokens)
        self.counter.tokens_out += int(usage.get("completion_tokens") or 0)

    def generate(
        self, prompt: str, config: GenerationConfig = GenerationConfig(), state: ServerSequence | None = None
    ) -> Generation:
        """Greedy generation in one request (two more when the first token must not be blank, see RoK)."""
        started = time.perf_counter()
        logits_processor = config.logits_processor
        if logits_processor is not None and not getattr(logits_processor, "bans_blank_first_token", False):
            raise BackendCapabilityError(
                f"a logits processor ({type(logits_processor).__name__}) cannot run on a model server"
            )
        with self.lock:
            before = self.counter.forward_passes
            ids = list(state.ids) if state is not None else self.encode(prompt)
            self._check_length(len(ids))
            # read as in process: the prompt's fixed part a batch of its own (its cuts go with the request)
            read = state if state is not None else self.prefill(ids, self.fixed_tokens(getattr(prompt, "fixed", ""), ids))
            stops = list(config.stop_strings)
            fields: dict[str, Any] = {"max_tokens": config.max_new_tokens}
            if stops:
                fields["stop"] = stops
            choice = self.complete(ids, "generate", **fields)
            text = str(choice.get("text", ""))
            head: list[int] = []
            if logits_processor is not None and self._blank_start(text):
                head, choice = self._non_blank_start(ids, config.max_new_tokens, fields)
                text = self.decode(head) + str(choice.get("text", ""))
            out_ids = head + self.encode(str(choice.get("text", "")))
            if state is not None:
                self.step(state, out_ids, generated=True)
            del read
            return Generation(
                text=text, token_ids=out_ids, prompt_tokens=len(ids), output_tokens=len(out_ids),
                forward_passes=self.counter.forward_passes - before, seconds=time.perf_counter() - started,
                stopped_by=self._stopped_by(choice, stops),
            )

    def _blank_start(self, text: str) -> bool:
        ids = self.encode(text)
        return not ids or not self.decode(ids[:1]).strip()

    def _non_blank_start(self, ids: list[int], max_new_tokens: int, fields: dict[str, Any]) -> tuple[list[int], dict]:
        """The best first token with visible text (RoK's `_NonEmptyStart`), then the rest greedily."""
        self.caps.needs("logprobs", "choosing a non-blank first token")
        k = max(1, min(self.caps.top_logprobs, 20))
        first = self.complete(ids, "first token", max_tokens=1, logprobs=k)
        tops = ((first.get("logprobs") or {}).get("top_logprobs") or [{}])[0] or {}
        for text, _lp in sorted(tops.items(), key=lambda kv: -kv[1]):
            tid = token_id_of(self, text)
            tok = [tid] if tid is not None else []
            if tok and tok[0] not in self.eos_ids and self.decode(tok).strip():
                rest = self.complete(ids + tok, "generate", **{**fields, "max_tokens": max(1, max_new_tokens - 1)})
                return tok, rest
        return [], first

    def _stopped_by(self, choice: dict[str, Any], stops: list[str]) -> str:
        reason = choice.get("finish_reason")
        if reason == "length":
            return "length"
        if "stop_reason" in choice:
            sr = choice.get("stop_reason")
            return f"stop:{sr}" if isinstance(sr, str) else "eos"
        return "stop" if stops else "eos"

    # ---------------------------------------------------------- scoring
    def score_continuations(
        self, prompt: str, continuations: Seq[str], state: ServerSequence | None = None, batch_size: int = 16
    ) -> ScoreList:
        """Joint log-probs of each continuation after the prompt, under the model's full distribution."""
        started = time.perf_counter()
        with self.lock:
            before = self.counter.forward_passes
            if state is not None:
                prompt_ids, fixed, prefilled = list(state.ids), state.fixed, state.prefilled
            else:
                prompt_ids = self.encode(prompt)
                fixed, prefilled = self.fixed_tokens(getattr(prompt, "fixed", ""), prompt_ids), 0
            options = [self.continuation_ids(prompt_ids, prompt, c) for c in continuations]
            lps = self.token_logprobs(prompt_ids, options, "scoring continuations", fixed=fixed,
                                      prefilled=prefilled, batch_size=batch_size)
            results = []
            for text, ids, lp in zip(continuations, options, lps):
                total = float(sum(lp)) if lp else float("-inf")
                results.append(ContinuationScore(text=text, token_ids=list(ids), token_logprobs=lp, total=total,
                                                 mean=total / len(lp) if lp else float("-inf")))
            scores = ScoreList(results)
            scores.prompt_tokens = len(prompt_ids)
            scores.forward_passes = self.counter.forward_passes - before
            scores.seconds = time.perf_counter() - started
            return scores

    def token_logprobs(self, prompt_ids: list[int], options: list[list[int]], purpose: str, fixed: int = 0,
                       prefilled: int = 0, batch_size: int = 16) -> list[list[float]]:
        """Log-prob of every token of every option after `prompt_ids` (full vocabulary; a final EOS outside the
        top log-probs is a bound, except on the workbench's own server, whose route scores as in process).

        `fixed`, `prefilled`, `batch_size`: how the in-process backend would read the prompt and batch the options
        (`exact_scoring`; other servers ignore them).
        """
        if self.caps.exact_scoring:
            return self._route_logprobs(prompt_ids, options, purpose, fixed, prefilled, batch_size)
        self.caps.needs("scoring", purpose)
        if self.caps.prompt_logprobs and self.caps.token_prompts and self.caps.batch_prompts:
            return self._echo_logprobs(prompt_ids, options, purpose)
        return [self._forced_logprobs(prompt_ids, ids, purpose) for ids in options]

    def _route_logprobs(self, prompt_ids: list[int], options: list[list[int]], purpose: str, fixed: int,
                        prefilled: int, batch_size: int) -> list[list[float]]:
        """One request to the workbench server's scoring route (`exact_scoring`): in-process numbers, EOS exact."""
        from .exact_scoring import SCORING_PATH

        if not options:
            return []
        body = {"model": self.caps.model, "prompt": [int(t) for t in prompt_ids], "fixed": int(fixed),
                "prefilled": int(prefilled), "options": [[int(t) for t in o] for o in options],
                "batch_size": int(batch_size)}
        cap = 4096 + 32 * sum(len(o) + 1 for o in options)
        reply = self.client.post(SCORING_PATH, body, max_bytes=cap)
        got = reply.get("token_logprobs") if isinstance(reply, dict) else None
        if not isinstance(got, list) or len(got) != len(options) or any(
                not isinstance(g, list) or len(g) != len(o) or not all(isinstance(v, (int, float)) for v in g)
                for g, o in zip(got, options)):
            raise ServerError(f"the model server at {self.url} returned malformed log-probs for {purpose}")
        self.counter.forward_passes += 1
        self.counter.tokens_in += len(prompt_ids)
        return [[float(v) for v in g] for g in got]

    def _echo_logprobs(self, prompt_ids: list[int], options: list[list[int]], purpose: str) -> list[list[float]]:
        todo = [i for i, o in enumerate(options) if o]
        out: list[list[float]] = [[] for _ in options]
        if not todo:
            return out
        extra = {"return_tokens_as_token_ids": True} if self.caps.kind == "vllm" else {}
        choices = self.complete_batch([prompt_ids + options[i] for i in todo], purpose, max_tokens=1, echo=True,
                                      logprobs=0, **extra)
        for i, ch in zip(todo, choices):
            lps = (ch.get("logprobs") or {}).get("token_logprobs") or []
            n = len(options[i])
            got = lps[-(n + 1):-1]  # the option's tokens, before the one generated token
            if len(got) != n or any(v is None for v in got):
                raise ServerError(f"the model server at {self.url} returned no prompt log-probs for {purpose}")
            out[i] = [float(v) for v in got]
        return out

    def _forced_logprobs(self, prompt_ids: list[int], ids: list[int], purpose: str) -> list[float]:
        """Force `ids` with a grammar (and a bias on them): one request whose log-probs are the model's own.

        A final end-of-sequence token (READS' terminator) is never returned by
        llama.cpp's servers, so the request writes one more character with
        EOS banned and reads EOS's log-prob from that position's top log-probs
        (see `_eos_from_tops`).
        """
        if not ids:
            return []
        body, eos = (ids[:-1], ids[-1]) if ids[-1] in self.eos_ids else (ids, None)
        if self.caps.grammar and self.caps.generated_logprobs:
            exact = self.caps.token_grammar  # token-id terminals: exactly these ids, no other tokenisation
            forced = (" ".join(token_terminal(t) for t in body) if exact else gbnf_literal(self.decode(body))) if body else '""'
            grammar = "root ::= " + forced + (" [^\\x00]" if eos is not None else "")
            fields: dict[str, Any] = {"max_tokens": len(body) + 2, "logprobs": 20 if eos is not None else 1,
                                      "grammar": grammar}
            bias = {str(t): FORCE_BIAS for t in set(body)} if self.caps.logit_bias and not exact else {}
            if eos is not None:
                bias.update({str(t): -FORCE_BIAS for t in self.eos_ids})
            if bias:
                fields["logit_bias"] = bias
            choice = self.complete(prompt_ids, purpose, **fields)
            lp = choice.get("logprobs") or {}
            tokens, values, tops = lp.get("tokens") or [], lp.get("token_logprobs") or [], lp.get("top_logprobs") or []
            n = len(body)
            if len(tokens) >= n and all(token_matches(self, a, b) for a, b in zip(tokens[:n], body)) and \
                    all(v is not None for v in values[:n]) and (eos is None or len(tops) > n):
                out = [float(v) for v in values[:n]]
                if eos is not None:
                    out.append(self._eos_from_tops(tops[n]))
                return out
        # the server took another tokenisation (or has no grammar): one token at a time
        self.caps.needs("constraint", purpose)
        out = []
        for j, tok in enumerate(ids):
            if tok in self.eos_ids:
                choice = self.complete(prompt_ids + ids[:j], purpose, max_tokens=1, logprobs=20,
                                       logit_bias={str(t): -FORCE_BIAS for t in self.eos_ids})
                tops = (choice.get("logprobs") or {}).get("top_logprobs") or [None]
                out.append(self._eos_from_tops(tops[0]))
                continue
            choice = self.complete(prompt_ids + ids[:j], purpose, **self.only_tokens_fields([tok]), max_tokens=1, logprobs=1)
            out.append(self.chosen_logprob(choice, [tok]))
        return out

    def _eos_from_tops(self, tops: Any) -> float:
        """EOS's log-prob from one position's top log-probs (llama.cpp lists special tokens as "").

        Outside the listed top tokens, EOS is at most the smallest listed
        log-prob: that bound is used and counted (``eos_bounds``).
        """
        if not isinstance(tops, dict) or not tops:
            raise ServerError(f"the model server at {self.url} returned no log-probs (was logprobs stripped?)")
        for key in ("", *(self.token_text(t) for t in sorted(self.eos_ids))):
            if key in tops and tops[key] is not None:
                return float(tops[key])
        self.eos_bounds += 1
        return float(min(tops.values()))

    def only_tokens_fields(self, allowed: Seq[int]) -> dict[str, Any]:
        """Request fields that restrict the next token to `allowed` (returned log-probs stay unconstrained)."""
        if self.caps.allowed_token_ids:
            return {"allowed_token_ids": [int(t) for t in allowed]}
        return {"logit_bias": {str(int(t)): FORCE_BIAS for t in allowed}}

    def chosen_logprob(self, choice: dict[str, Any], allowed: Seq[int]) -> float:
        lp = choice.get("logprobs") or {}
        tokens, values = lp.get("tokens") or [], lp.get("token_logprobs") or []
        if not tokens or not values or values[0] is None:
            raise ServerError(f"the model server at {self.url} returned no log-probs (was logprobs stripped?)")
        return float(values[0])


def token_id_of(model: Any, token: str) -> int | None:
    """The id of a listed token: vLLM's ``token_id:123``, else the text's id when it is one token."""
    if token.startswith("token_id:") and token[9:].lstrip("-").isdigit():
        return int(token[9:])
    ids = model.encode(token)
    return ids[0] if len(ids) == 1 else None


def token_matches(model: Any, token: str, token_id: int) -> bool:
    if token.startswith("token_id:"):
        return token == f"token_id:{token_id}"
    return token == model.token_text(token_id)


def gbnf_literal(text: str) -> str:
    """`text` as a GBNF string literal."""
    esc = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    return f'"{esc}"'


# ------------------------------------------------------------------ connect
def local_tokenizer(source: str) -> tuple[Any, str]:
    """A Hugging Face tokenizer for the served model: a packaged model key, a .gguf file or a folder/hub id."""
    from .manager import ModelLoadError, gguf_tokenizer, packaged_gguf
    from .registry import PACKAGED_MODELS

    by_file = {spec.gguf_filename: key for key, spec in PACKAGED_MODELS.items()}
    key = source if source in PACKAGED_MODELS else by_file.get(Path(source).name)
    if key is not None:
        spec = PACKAGED_MODELS[key]
        path = packaged_gguf(spec)
        return gguf_tokenizer(path, f"{path.stem}-{spec.sha256[:12]}", None), key
    path = Path(source).expanduser()
    if path.suffix.lower() == ".gguf":
        if not path.is_file():
            raise ModelLoadError(f"GGUF file not found for the server's tokenizer: {path}")
        rev = f"{path.stat().st_size}-{int(path.stat().st_mtime)}"
        return gguf_tokenizer(path, f"{path.stem}-{rev}", None), str(path)
    try:
        from transformers import AutoTokenizer

        return AutoTokenizer.from_pretrained(source, local_files_only=True), source
    except Exception:
        raise ModelLoadError(
            f"no local tokenizer for {source!r}: pass --server-tokenizer (a packaged model, a .gguf file or a "
            "tokenizer folder)"
        ) from None


def connect_server(
    url: str,
    model: str | None = None,
    tokenizer: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    context_length: int | None = None,
    max_reply_mb: float | None = None,
) -> ServerBackend:
    """Connect, pick the model, load its tokenizer locally, probe the capabilities (a second or two)."""
    from .server_http import max_reply_mb as reply_mb

    started = time.perf_counter()
    client = ServerClient(url, timeout=timeout, max_reply_bytes=int(reply_mb(max_reply_mb) * 1024 * 1024))
    with _probe_shapes(client.url):
        models = list_models(client)
        name = pick_model(models, model, client.url)
    tok, tok_source = local_tokenizer(tokenizer or name)
    if tok.pad_token_id is None and tok.eos_token is not None:
        tok.pad_token = tok.eos_token
    with _probe_shapes(client.url):
        caps = detect(client, name, encode=lambda s: list(tok.encode(s, add_special_tokens=False)))
        if caps.tokenize_path:
            _check_tokenizer(client, caps, tok)
        max_len = next((m.get("max_model_len") for m in models if m.get("id") == name and m.get("max_model_len")),
                       None)
        context = int(context_length or max_len or 8192)
    backend = ServerBackend(
        name=name, url=client.url, client=client, caps=caps, tokenizer=tok, tokenizer_source=tok_source,
        revision="", source=f"{client.url} ({name})", context_length=context,
    )
    backend.load_seconds = time.perf_counter() - started
    return backend


@contextlib.contextmanager
def _probe_shapes(url: str) -> Iterator[None]:
    """A probe reply of the wrong shape (a list where an object belongs, a missing field) as one ServerError."""
    try:
        yield
    except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:  # ServerError is none of these
        raise ServerError(f"the model server at {url} answered the connection probes with a reply of an "
                          f"unexpected shape ({type(exc).__name__})") from None


def _check_tokenizer(client: ServerClient, caps: ServerCapabilities, tok: Any) -> None:
    """The ids we build tries and options from must be the server's ids."""
    path = caps.tokenize_path
    body = ({"model": caps.model, "prompt": TOKENIZER_CHECK, "add_special_tokens": False} if path == "/tokenize"
            else {"model": caps.model, "input": TOKENIZER_CHECK})
    got = client.post(path, body).get("tokens")
    ours = list(tok.encode(TOKENIZER_CHECK, add_special_tokens=False))
    bos = tok.bos_token_id
    if isinstance(got, list) and got and got[0] == bos and ours[:1] != [bos]:
        got = got[1:]
    if got != ours:
        raise ServerError(
            f"the local tokenizer does not match the server's for {caps.model!r} ({ours[:6]} vs {got[:6] if isinstance(got, list) else got}): "
            "pass --server-tokenizer with the served model's tokenizer"
        )


# ---------------------------------------------------------------------- CLI
def add_server_arguments(parser: Any) -> None:
    """``--server URL --server-model NAME`` (and the tokenizer/timeout) for `ask` and `eval`."""
    parser.add_argument("--server", default=None,
                        help="run the model on an OpenAI-compatible server (vLLM, llama.cpp), e.g. http://gpu-box:8000; "
                             "API key from $KGQA_SERVER_API_KEY")
    parser.add_argument("--server-model", default=None, help="the served model's name (default: the only one served)")
    parser.add_argument("--server-tokenizer", default=None,
                        help="local tokenizer of the served model: packaged model, .gguf or folder (default: from its name)")
    parser.add_argument("--server-timeout", type=timeout_option("--server-timeout"), default=DEFAULT_TIMEOUT,
                        help="seconds for one whole request: connecting, the reply and reading it (default 600)")
    parser.add_argument("--server-max-reply-mb", type=_reply_mb_option, default=None,
                        help="largest reply read from the server, in MB (default $KGQA_SERVER_MAX_REPLY_MB, else 64); "
                             "a completion is also held to what its max_tokens allows")


def server_from_args(args: Any, progress: Any = None) -> ServerBackend | None:
    """The connected server when ``--server`` was given, else None."""
    if not getattr(args, "server", None):
        return None
    if progress:
        progress(f"Connecting to the model server at {normalise_url_safe(args.server)}")
    model = connect_server(args.server, model=args.server_model, tokenizer=args.server_tokenizer,
                           timeout=args.server_timeout, max_reply_mb=getattr(args, "server_max_reply_mb", None))
    if progress:
        progress(f"Model server: {model.name} ({model.caps.kind}); DoG triplet steps: "
                 f"{model.caps.triplet_strategy or 'not available'}")
    return model


def _reply_mb_option(text: str) -> float:
    from ..bounds import argparse_type, bounded_number
    from .server_http import MAX_REPLY_MB

    return float(argparse_type(lambda n, v: bounded_number(n, v, 0.0, MAX_REPLY_MB, low_inclusive=False),
                               "--server-max-reply-mb")(text))


def normalise_url_safe(url: str) -> str:
    """The URL as shown: normalised, with any ``user:password@`` replaced by ``***``."""
    from ..redact import safe_url
    from .server_http import normalise_url

    try:
        return safe_url(normalise_url(url))
    except ServerError:
        return safe_url(url)

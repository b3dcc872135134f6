"""What a ``/v1/completions`` reply may be: its shape, and its size given what the request allowed.

The decoders read a reply's fields directly (``choice["logprobs"]["tokens"][0]``,
``float(value)``, ``max(top.items())``), so a server that answers
``{"choices": {"0": 1}}``, ``"logprobs": ["x"]`` or ``"token_logprobs": ["abc"]``
would surface as ``KeyError: 0`` or ``could not convert string to float``.
`check_completion` reads every field the workbench uses once, right after
the reply arrives, and refuses the first one out of shape with its path in
one line.  It also holds the reply to what the request asked for: no more
generated tokens than ``max_tokens``, no more text than those tokens can
spell (the tokenizer's longest token), and `reply_byte_cap` bounds the bytes
read at all, so a 20 MB completion to a 48-token request is refused before
anything decodes it.

Hand-written rather than a schema library: the rules are the workbench's
own (``null`` where a server has no value, ``-Infinity`` as a log-prob, ids
or ``token_id:N`` strings as tokens) and the message must name the field the
way a user reading the server's JSON would.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .server_http import ServerError

REPLY_OVERHEAD = 64 * 1024  # ids, usage, system fingerprints and other fields of a whole reply
JSON_CHARS_PER_CHAR = 6  # "\u00e9": the worst case of one character written as JSON
POSITION_OVERHEAD = 64  # a log-prob, separators and a text offset per position


@dataclass(frozen=True)
class Expect:
    """What one request allows: `prompts` choices of at most `max_tokens` tokens (plus the echoed prompt)."""

    purpose: str
    prompts: int = 1
    max_tokens: int | None = None
    echo_tokens: int = 0  # prompt tokens echoed back per choice (0 without echo)
    top_k: int = 0  # top log-probs per position

    @classmethod
    def of(cls, purpose: str, fields: dict[str, Any], prompt_tokens: int, prompts: int = 1) -> "Expect":
        max_tokens = fields.get("max_tokens")
        return cls(purpose, prompts, int(max_tokens) if isinstance(max_tokens, int) else None,
                   prompt_tokens if fields.get("echo") else 0, int(fields.get("logprobs") or 0))


def reply_byte_cap(expect: Expect, token_chars: int) -> int | None:
    """The most bytes a valid reply to the request can take (None: the request set no max_tokens)."""
    if expect.max_tokens is None:
        return None
    positions = expect.prompts * (expect.echo_tokens + expect.max_tokens + 1)
    per_token = JSON_CHARS_PER_CHAR * max(token_chars, 24) + POSITION_OVERHEAD  # 24: vLLM's "token_id:123456"
    return REPLY_OVERHEAD + positions * (expect.top_k + 2) * per_token


class _Bad(Exception):
    def __init__(self, path: str, what: str) -> None:
        super().__init__(f"{path} {what}")


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return f"the string {value[:40]!r}"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    return {dict: "an object", list: "a list"}.get(type(value), type(value).__name__)


def _need(value: Any, types: type | tuple[type, ...], path: str, what: str, optional: bool = True) -> Any:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, types):
        raise _Bad(path, f"is {_kind(value)}, not {what}")
    return value


def _logprob(value: Any, path: str, optional: bool) -> None:
    if value is None and optional:
        return
    _need(value, (int, float), path, "a log-prob (a number)", optional=False)
    if math.isnan(value) or value == math.inf:
        raise _Bad(path, f"is {value!r}, not a log-prob")


def _check_logprobs(lp: Any, path: str) -> None:
    if _need(lp, dict, path, "an object") is None:
        return
    tokens = _need(lp.get("tokens"), list, f"{path}.tokens", "a list")
    for i, tok in enumerate(tokens or []):
        _need(tok, str, f"{path}.tokens[{i}]", "a token string", optional=False)
    values = _need(lp.get("token_logprobs"), list, f"{path}.token_logprobs", "a list")
    for i, v in enumerate(values or []):
        _logprob(v, f"{path}.token_logprobs[{i}]", optional=True)
    tops = _need(lp.get("top_logprobs"), list, f"{path}.top_logprobs", "a list")
    for i, top in enumerate(tops or []):
        if _need(top, dict, f"{path}.top_logprobs[{i}]", "an object of token: log-prob") is None:
            continue
        for key, v in top.items():
            _logprob(v, f"{path}.top_logprobs[{i}][{key[:20]!r}]", optional=False)


def _check_choice(choice: Any, path: str) -> None:
    _need(choice, dict, path, "an object", optional=False)
    _need(choice.get("text"), str, f"{path}.text", "a string")
    _need(choice.get("finish_reason"), str, f"{path}.finish_reason", "a string")
    _need(choice.get("index"), int, f"{path}.index", "a whole number")
    _need(choice.get("stop_reason"), (str, int), f"{path}.stop_reason", "a string or a token id")
    _check_logprobs(choice.get("logprobs"), f"{path}.logprobs")


def _check_usage(usage: Any) -> None:
    if _need(usage, dict, "usage", "an object") is None:
        return
    for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
        n = _need(usage.get(key), int, f"usage.{key}", "a whole number")
        if n is not None and n < 0:
            raise _Bad(f"usage.{key}", f"is {n}, not a count")


def _check_length(choice: dict[str, Any], path: str, expect: Expect, token_chars: int) -> None:
    """No more generated tokens, and no more text, than `max_tokens` allows."""
    if expect.max_tokens is None:
        return
    allowed = expect.max_tokens + expect.echo_tokens + 1  # + 1: a server may count the stop token
    lp = choice.get("logprobs") or {}
    for key in ("tokens", "token_logprobs", "top_logprobs"):
        n = len(lp.get(key) or [])
        if n > allowed:
            raise _Bad(f"{path}.logprobs.{key}", f"has {n:,} positions for max_tokens {expect.max_tokens}")
    text = choice.get("text") or ""
    if len(text) > allowed * max(token_chars, 1):
        raise _Bad(f"{path}.text", f"has {len(text):,} characters, more than {expect.max_tokens} tokens can hold")


def check_completion(reply: Any, where: str, expect: Expect, token_chars: int) -> list[dict[str, Any]]:
    """The reply's choices in prompt order, each checked; `ServerError` naming the first field out of shape."""
    try:
        _need(reply, dict, "the reply", "a JSON object", optional=False)
        choices = reply.get("choices")
        if not choices:
            raise ServerError(f"{where} returned no completion for {expect.purpose}")
        _need(choices, list, "choices", "a list", optional=False)
        for i, choice in enumerate(choices):
            _check_choice(choice, f"choices[{i}]")
            _check_length(choice, f"choices[{i}]", expect, token_chars)
        _check_usage(reply.get("usage"))
        if expect.max_tokens is not None:
            used = (reply.get("usage") or {}).get("completion_tokens")
            if used is not None and used > expect.prompts * (expect.max_tokens + 1):
                raise _Bad("usage.completion_tokens", f"is {used:,} for max_tokens {expect.max_tokens}")
    except _Bad as exc:
        raise ServerError(f"{where} returned a malformed completion for {expect.purpose}: {exc}") from None
    if expect.prompts > 1 or len(choices) > 1:
        choices = sorted(choices, key=lambda c: c.get("index") or 0)
    return choices

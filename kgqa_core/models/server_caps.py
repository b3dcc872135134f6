"""What a model server can do, found out at connect time by asking it.

The OpenAI completions protocol leaves the parts DoG and READS need
optional, and servers differ: llama-cpp-python's server takes text prompts
only, one per request, and its ``echo`` log-probs are shifted by one token;
vLLM takes token-id prompts in batches and returns exact prompt log-probs.
Rather than trust a server's name, each capability is probed with a tiny
request (about ten requests in all, a second on a loopback server):

* ``generated_logprobs`` / ``top_logprobs``: log-probs of generated tokens
  and how many alternatives per position;
* ``prompt_logprobs``: ``echo`` log-probs of given tokens that are *aligned*
  (the log-prob of a token echoed back equals the one it had when generated);
* ``token_prompts`` and ``batch_prompts``: token-id prompts, several per request;
* ``logit_bias``, ``allowed_token_ids``, ``grammar``: ways to constrain;
* ``token_grammar``: a grammar whose terminals are token ids (llama.cpp's
  ``<[123]>``, in llama.cpp since mid-2025), which constrains to exactly the
  canonical token sequences of a trie (a text grammar accepts any
  tokenisation of its strings), with the model's own log-probs returned;
* ``stop_reason``: whether a reply says which stop string ended it;
* ``tokenize_path``: the server's tokenizer endpoint (checked against ours).

``needs`` turns a missing capability into the one line a method raises.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from .interface import BackendCapabilityError
from .server_http import ServerClient, ServerError

PROBE_PROMPT = "The capital of France is"
ALIGN_TOLERANCE = 0.05


@dataclass
class ServerCapabilities:
    kind: str = "openai-compatible"  # "llama-cpp-python", "vllm", "llama.cpp", ...
    model: str = ""
    models: list[str] = field(default_factory=list)
    generated_logprobs: bool = False
    top_logprobs: int = 0
    prompt_logprobs: bool = False
    token_prompts: bool = False
    batch_prompts: bool = False
    logit_bias: bool = False
    allowed_token_ids: bool = False
    grammar: bool = False
    token_grammar: bool = False  # ``<[id]>`` terminals, log-probs returned unconstrained
    stop_reason: bool = False
    constrained_logprobs_raw: bool = False  # log-probs under logit_bias/allowed_token_ids are unconstrained ones
    exact_scoring: bool = False  # the workbench server's scoring route (`exact_scoring`): in-process numbers
    tokenize_path: str = ""
    prefix_caching: str = "unknown"
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def triplet_strategy(self) -> str:
        """How DoG's triplet step runs here: "score" (one batched request) or "walk" (the trie, node by node)."""
        if self.prompt_logprobs and self.token_prompts and self.batch_prompts:
            return "score"
        if self.generated_logprobs and (self.token_grammar or (
                self.constrained_logprobs_raw and (self.logit_bias or self.allowed_token_ids))):
            return "walk"
        return ""

    def needs(self, what: str, purpose: str) -> None:
        """Raise `BackendCapabilityError` in one line when the server lacks `what`."""
        ok = {
            "logprobs": self.generated_logprobs,
            "constraint": self.logit_bias or self.allowed_token_ids or self.token_grammar,
            "triplet": bool(self.triplet_strategy),
            "scoring": self.exact_scoring or self.generated_logprobs and (self.prompt_logprobs or self.grammar
                                                                          or self.logit_bias or self.token_grammar),
        }[what]
        if not ok:
            need = {
                "logprobs": "log-probabilities of generated tokens",
                "constraint": "logit_bias or allowed_token_ids",
                "triplet": "exact token log-probabilities under a constraint (logprobs with logit_bias or "
                           "allowed_token_ids, or batched prompt log-probs)",
                "scoring": "log-probabilities of given continuations (logprobs with echo, a grammar or logit_bias)",
            }[what]
            raise BackendCapabilityError(f"{purpose} needs {need}, which the server of {self.model or 'this model'} "
                                         "does not provide")


def list_models(client: ServerClient) -> list[dict[str, Any]]:
    data = client.get("/v1/models", timeout=min(client.timeout, 30))
    items = data.get("data", []) if isinstance(data, dict) else []
    return [m for m in items if isinstance(m, dict) and m.get("id")]


def pick_model(models: list[dict[str, Any]], wanted: str | None, url: str) -> str:
    ids = [str(m["id"]) for m in models]
    if wanted:
        if ids and wanted not in ids:
            raise ServerError(f"the model server at {url} does not serve {wanted!r}; it serves: {', '.join(ids)}")
        return wanted
    if len(ids) == 1:
        return ids[0]
    if not ids:
        raise ServerError(f"the model server at {url} lists no model (GET /v1/models)")
    raise ServerError(f"the model server at {url} serves several models; choose one with --server-model: {', '.join(ids)}")


def guess_kind(models: list[dict[str, Any]], client: ServerClient) -> str:
    owners = {str(m.get("owned_by", "")).lower() for m in models}
    if "vllm" in owners:
        return "vllm"
    if "llamacpp" in owners:
        return "llama.cpp"
    try:
        info = client.get("/openapi.json", timeout=min(client.timeout, 30))
        if "llama.cpp python" in str(info.get("info", {}).get("title", "")).lower():
            return "llama-cpp-python"
    except ServerError:
        pass
    return "openai-compatible"


def detect(client: ServerClient, wanted_model: str | None, encode: Any = None) -> ServerCapabilities:
    """Probe the server; `encode` (text -> ids, the local tokenizer) enables the token-level probes."""
    models = list_models(client)
    caps = ServerCapabilities(models=[str(m["id"]) for m in models])
    caps.model = pick_model(models, wanted_model, client.url)
    caps.kind = guess_kind(models, client)
    caps.tokenize_path = _tokenize_path(client, caps.model)

    base = {"model": caps.model, "temperature": 0.0, **greedy_fields(caps.kind)}
    gen = _try(client, {**base, "prompt": PROBE_PROMPT, "max_tokens": 1, "logprobs": 5})
    choice = _choice(gen)
    if choice is None:
        raise ServerError(f"the model server at {client.url} failed a one-token completion of {caps.model!r}")
    lp = choice.get("logprobs") or {}
    token_lps = lp.get("token_logprobs") or []
    if token_lps and token_lps[0] is not None:
        caps.generated_logprobs = True
        tops = lp.get("top_logprobs") or [{}]
        caps.top_logprobs = max(len(tops[0] or {}), 1)
        if caps.top_logprobs >= 5:
            wide = _choice(_try(client, {**base, "prompt": PROBE_PROMPT, "max_tokens": 1, "logprobs": 20}))
            if wide is not None:
                caps.top_logprobs = max(caps.top_logprobs, len(((wide.get("logprobs") or {}).get("top_logprobs") or [{}])[0] or {}))
    caps.stop_reason = "stop_reason" in choice
    first_text = str(choice.get("text", ""))

    if encode is not None:
        ids = list(encode(PROBE_PROMPT))
        caps.token_prompts = _choice(_try(client, {**base, "prompt": ids, "max_tokens": 1})) is not None
        batch = _try(client, {**base, "prompt": [PROBE_PROMPT, PROBE_PROMPT + first_text], "max_tokens": 1})
        caps.batch_prompts = bool(batch) and len(batch.get("choices", [])) == 2
        if caps.generated_logprobs and first_text:
            caps.prompt_logprobs = _echo_aligned(client, base, first_text, token_lps[0], caps)
        first_ids = encode(first_text)
        if caps.generated_logprobs and len(first_ids) == 1:
            caps.constrained_logprobs_raw = _raw_under_constraint(client, base, first_ids[0], token_lps[0], caps)
        target = encode(" London")
        if len(target) == 1:
            biased = _choice(_try(client, {**base, "prompt": PROBE_PROMPT, "max_tokens": 1,
                                           "logit_bias": {str(target[0]): 100.0}}))
            caps.logit_bias = biased is not None and biased.get("text") == " London"
            allowed = _choice(_try(client, {**base, "prompt": PROBE_PROMPT, "max_tokens": 1,
                                            "allowed_token_ids": [target[0]]}))
            caps.allowed_token_ids = allowed is not None and allowed.get("text") == " London" and not (
                caps.kind == "llama-cpp-python")
        caps.exact_scoring = _exact_scoring(client, caps.model, ids)
    grammar = _choice(_try(client, {**base, "prompt": PROBE_PROMPT, "max_tokens": 4, "grammar": 'root ::= " Rome."'}))
    caps.grammar = grammar is not None and grammar.get("text") == " Rome."
    if caps.grammar and caps.generated_logprobs and encode is not None:
        caps.token_grammar = _token_grammar(client, base, encode, first_text, token_lps[0], caps)
    caps.prefix_caching = {
        "llama-cpp-python": "the previous request's prompt (one slot): consecutive requests sharing a prefix reuse it",
        "vllm": "automatic prefix caching when launched with --enable-prefix-caching (not for prompt log-probs)",
        "llama.cpp": "per slot (cache_prompt)",
    }.get(caps.kind, "unknown")
    if not caps.prompt_logprobs and caps.generated_logprobs:
        caps.notes.append("echo log-probs are not aligned with generated ones (or absent): given continuations are scored by forcing them")
    if not caps.token_prompts:
        caps.notes.append("text prompts only: the server re-tokenises every prompt (checked to match the local tokenizer)")
    return caps


def greedy_fields(kind: str) -> dict[str, Any]:
    """Fields that make a server's sampling plain greedy (llama-cpp-python applies a repeat penalty by default)."""
    if kind == "llama-cpp-python":
        return {"repeat_penalty": 1.0, "top_k": 1, "top_p": 1.0, "min_p": 0.0}
    return {"top_p": 1.0}


def _echo_aligned(client: ServerClient, base: dict[str, Any], token_text: str, generated_lp: float,
                  caps: ServerCapabilities) -> bool:
    """Echo the prompt plus the token the server generated: its echoed log-prob must equal the generated one."""
    echo = _choice(_try(client, {**base, "prompt": PROBE_PROMPT + token_text, "max_tokens": 1, "echo": True,
                                 "logprobs": 1}))
    if echo is None:
        return False
    lps = (echo.get("logprobs") or {}).get("token_logprobs") or []
    if len(lps) < 2 or lps[-2] is None:
        return False
    aligned = abs(float(lps[-2]) - float(generated_lp)) <= ALIGN_TOLERANCE
    if not aligned:
        caps.notes.append(
            f"echo log-probs are shifted (the generated token had {generated_lp:.3f}, echoed {float(lps[-2]):.3f})"
        )
    return aligned


def _raw_under_constraint(client: ServerClient, base: dict[str, Any], token: int, raw_lp: float,
                          caps: ServerCapabilities) -> bool:
    """Are log-probs returned under a constraint the model's own? (Renormalised ones must not be scores.)

    The greedy token is biased further (+100, and alone allowed where the
    server takes allowed_token_ids): a server that returns processed log-probs
    then reports about 0 for it instead of its unconstrained log-prob.
    """
    ok = True
    for extra in ({"logit_bias": {str(token): 100.0}}, {"allowed_token_ids": [token]}):
        got = _choice(_try(client, {**base, "prompt": PROBE_PROMPT, "max_tokens": 1, "logprobs": 1, **extra}))
        lps = ((got or {}).get("logprobs") or {}).get("token_logprobs") or []
        if lps and lps[0] is not None and abs(float(lps[0]) - float(raw_lp)) > ALIGN_TOLERANCE:
            ok = False
            caps.notes.append(f"log-probs under {next(iter(extra))} are renormalised ({float(lps[0]):.3f} vs "
                              f"{float(raw_lp):.3f}): not used as scores")
    return ok


def token_terminal(token_id: int) -> str:
    """A GBNF terminal matching exactly one token id (llama.cpp's ``<[id]>``)."""
    return f"<[{int(token_id)}]>"


def _token_grammar(client: ServerClient, base: dict[str, Any], encode: Any, greedy_text: str, greedy_lp: float,
                   caps: ServerCapabilities) -> bool:
    """Does the server take token-id grammar terminals, and return unconstrained log-probs under them?

    Two requests: the greedy token forced by its id must come back with the
    log-prob it had unconstrained, and a non-greedy token (" London") forced
    alone must not come back with a log-prob of 0 (renormalised over itself).
    """
    greedy, london = encode(greedy_text), encode(" London")
    if len(greedy) != 1 or len(london) != 1 or greedy == london:
        return False
    lps = []
    for tok, text in ((greedy[0], greedy_text), (london[0], " London")):
        got = _choice(_try(client, {**base, "prompt": PROBE_PROMPT, "max_tokens": 2, "logprobs": 1,
                                    "grammar": f"root ::= {token_terminal(tok)}"}))
        values = ((got or {}).get("logprobs") or {}).get("token_logprobs") or []
        if got is None or got.get("text") != text or not values or values[0] is None:
            return False
        lps.append(float(values[0]))
    raw = abs(lps[0] - float(greedy_lp)) <= ALIGN_TOLERANCE and lps[1] < -ALIGN_TOLERANCE
    if not raw:
        caps.notes.append("log-probs under a token grammar are renormalised: the token grammar is not used")
    return raw


def _exact_scoring(client: ServerClient, model: str, ids: list[int]) -> bool:
    """Whether the server has the workbench launcher's scoring route (`exact_scoring`), checked on one option."""
    from .exact_scoring import SCORING_PATH

    if len(ids) < 2:
        return False
    got = _try(client, {"model": model, "prompt": ids[:-1], "options": [ids[-1:]]}, path=SCORING_PATH)
    lps = got.get("token_logprobs") if isinstance(got, dict) else None
    return isinstance(lps, list) and len(lps) == 1 and isinstance(lps[0], list) and len(lps[0]) == 1 and \
        isinstance(lps[0][0], (int, float)) and lps[0][0] <= 0.0


def _tokenize_path(client: ServerClient, model: str) -> str:
    for path, body in (("/tokenize", {"model": model, "prompt": "a b"}), ("/extras/tokenize", {"model": model, "input": "a b"}),
                       ("/tokenize", {"content": "a b"})):
        got = _try(client, body, path=path)
        if isinstance(got, dict) and isinstance(got.get("tokens"), list):
            return path
    return ""


def _try(client: ServerClient, body: dict[str, Any], path: str = "/v1/completions") -> Any:
    """A probe: the reply, or None when the server rejects it (4xx/5xx); transport failures still raise."""
    try:
        return client.post(path, body, timeout=min(client.timeout, 120))
    except ServerError as exc:
        if "HTTP" in str(exc):
            return None
        raise


def _choice(reply: Any) -> dict[str, Any] | None:
    if isinstance(reply, dict) and reply.get("choices"):
        first = reply["choices"][0]
        return first if isinstance(first, dict) else None
    return None

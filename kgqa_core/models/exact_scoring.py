"""The workbench server's scoring route: continuations scored by the in-process backend's code, in the server.

Why: over llama-cpp-python's server a continuation's log-probs can only be
had by forcing it token by token (`ServerBackend._forced_logprobs`), whose
last end-of-sequence token is read from the top 20 log-probs of its position
and is only a bound when less likely than those (measured: -5.2 for a token
whose log-prob is -20.2, which gave an unlikely walk of a question's reading
a third of the likely one's weight), and whose other tokens are computed one
at a time where the in-process backend reads an option in one batch.  So the
launcher (`kgqa_core.models.llama_server`) loads the served GGUF file a second
time as a `LlamaCppModel` and scores with its `prefill` and `option_logprobs`:
the numbers the in-process backend gives for the same prompt, its fixed part
and the same options, end-of-sequence included, in one request.

    POST /extras/kgqa/token_logprobs
    {"model": "...", "prompt": [ids], "fixed": 0, "prefilled": 0, "options": [[ids], ...], "batch_size": 16}
    -> {"token_logprobs": [[...], ...], "prompt_tokens": n}

``fixed``: how many first prompt tokens are the method's fixed part (read as
batches of their own, as in process); ``prefilled``: where the caller's
sequence was first read, the rest stepped on after it (READS' listing
orders), 0 for all of it.  The route holds the server's own lock, so it never
runs beside a completion.
"""

from __future__ import annotations

import threading
from typing import Any

SCORING_PATH = "/extras/kgqa/token_logprobs"
MAX_OPTIONS = 4096


class ExactScorer:
    """The served file loaded as the in-process backend (once per file), and the scoring it does."""

    def __init__(self) -> None:
        self._models: dict[tuple[str, int], Any] = {}
        self._lock = threading.Lock()

    def model_for(self, path: str, threads: int) -> Any:
        from .manager import _load_llama

        key = (str(path), int(threads))
        with self._lock:
            if key not in self._models:
                self._models[key] = _load_llama(str(path), None, threads=int(threads))
            return self._models[key]

    def score(self, model: Any, body: dict[str, Any]) -> dict[str, Any]:
        """Validate a request and score it (see the module docstring); ValueError names the bad field."""
        prompt = _ids(body.get("prompt"), "prompt", model.vocab_size)
        if not prompt:
            raise ValueError("prompt: empty")
        options = body.get("options")
        if not isinstance(options, list) or len(options) > MAX_OPTIONS:
            raise ValueError(f"options: a list of at most {MAX_OPTIONS} token-id lists")
        options = [_ids(o, f"options[{i}]", model.vocab_size) for i, o in enumerate(options)]
        fixed = _count(body.get("fixed", 0), "fixed")
        prefilled = _count(body.get("prefilled", 0), "prefilled")
        batch_size = max(1, min(_count(body.get("batch_size", 16), "batch_size") or 16, 64))
        if len(prompt) + max((len(o) for o in options), default=0) > model.context_length:
            raise ValueError(f"prompt and option: more than the {model.context_length} tokens the model reads")
        with model.lock:
            first = prompt[:prefilled] if 0 < prefilled < len(prompt) else prompt
            state = model.prefill(first, fixed=fixed)
            try:
                if len(first) < len(prompt):
                    model.step(state, prompt[len(first):])
                lps = model.option_logprobs(state, options, batch_size)
            finally:
                model.release(state)
        return {"token_logprobs": lps, "prompt_tokens": len(prompt)}


def _ids(value: Any, field: str, vocab: int) -> list[int]:
    if not isinstance(value, list) or not all(isinstance(t, int) and not isinstance(t, bool) for t in value):
        raise ValueError(f"{field}: a list of token ids")
    bad = next((t for t in value if not 0 <= t < vocab), None)
    if bad is not None:
        raise ValueError(f"{field}: token id {bad} is outside the vocabulary (0-{vocab - 1})")
    return list(value)


def _count(value: Any, field: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{field}: a whole number, 0 or more")
    return value


def add_scoring_route(app: Any, server_app: Any) -> None:
    """Add the route to a llama-cpp-python server `app` (`server_app`: its ``llama_cpp.server.app`` module)."""
    from fastapi import Body, Depends, HTTPException
    from starlette.concurrency import run_in_threadpool

    scorer = ExactScorer()

    async def token_logprobs(body: dict = Body(...), llama_proxy: Any = Depends(server_app.get_llama_proxy)):
        if not isinstance(body, dict):
            raise HTTPException(status_code=400, detail="the body must be a JSON object")
        name = body.get("model")
        try:
            llama = llama_proxy(name if isinstance(name, str) and name else None)
        except Exception as exc:  # an unknown model alias
            raise HTTPException(status_code=400, detail=f"model: {exc}") from None
        threads = int(getattr(llama, "n_threads", 0) or 0)

        def run() -> dict[str, Any]:
            return scorer.score(scorer.model_for(llama.model_path, threads), body)

        try:
            return await run_in_threadpool(run)
        except ValueError as exc:
            raise HTTPException(status_code=400, detail=str(exc)) from None

    app.add_api_route(SCORING_PATH, token_logprobs, methods=["POST"],
                      dependencies=[Depends(server_app.authenticate)], tags=["Extras"])

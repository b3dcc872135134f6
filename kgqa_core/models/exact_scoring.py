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

And DoG's greedy triplet, walked as in process (`walk_rows`):

    POST /extras/kgqa/triplet_walk
    {"model": "...", "prompt": [ids], "fixed": 0, "prefilled": 0, "cuts": [positions], "readings": [[ids], ...],
     "closes_text": false}
    -> {"tokens": [ids], "rows": [{"children": [[id, logprob], ...], "top": [id, logprob]}, ...], "prompt_tokens": n}

Why: over the server's completions a triplet is written one token at a
time under a grammar of the trie, where in process a trie node's forced run
is read with the next choice as one batch; llama.cpp's numbers depend on the
batches (more so at two threads: a near tie at a chain's second triplet went
the other way on a two-thread server).  Here the prompt is read in the
batches the client's in-process reads end theirs (``cuts``, as `ServerSequence`
records them) and the trie of ``readings`` walked with the in-process reads;
each row read on the way is returned as its trie node's children's log-probs
and the unconstrained top token (row i: after ``tokens[:i]``), so the
client's decoders choose on the in-process numbers.
"""

from __future__ import annotations

import threading
from typing import Any

SCORING_PATH = "/extras/kgqa/token_logprobs"
WALK_PATH = "/extras/kgqa/triplet_walk"
MAX_OPTIONS = 4096
MAX_READINGS = 200_000  # a whole KB's G_q stays far below this


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

    def walk(self, model: Any, body: dict[str, Any]) -> dict[str, Any]:
        """Validate a triplet walk and run it (see the module docstring); ValueError names the bad field."""
        prompt = _ids(body.get("prompt"), "prompt", model.vocab_size)
        if not prompt:
            raise ValueError("prompt: empty")
        readings = body.get("readings")
        if not isinstance(readings, list) or not 0 < len(readings) <= MAX_READINGS:
            raise ValueError(f"readings: a list of 1 to {MAX_READINGS} token-id lists")
        readings = [_ids(r, f"readings[{i}]", model.vocab_size) for i, r in enumerate(readings)]
        if not all(readings):
            raise ValueError("readings: an empty reading")
        cuts = body.get("cuts") or []
        if not isinstance(cuts, list) or not all(isinstance(c, int) and not isinstance(c, bool) and 0 < c <= len(prompt)
                                                 for c in cuts):
            raise ValueError(f"cuts: positions from 1 to {len(prompt)}")
        fixed = _count(body.get("fixed", 0), "fixed")
        prefilled = _count(body.get("prefilled", 0), "prefilled")
        if len(prompt) + max(len(r) for r in readings) > model.context_length:
            raise ValueError(f"prompt and reading: more than the {model.context_length} tokens the model reads")
        with model.lock:
            state = _read_in_cuts(model, prompt, fixed, prefilled, cuts)
            try:
                tokens, rows = walk_rows(model, state, readings, bool(body.get("closes_text", False)))
            finally:
                model.release(state)
        return {"tokens": tokens, "rows": rows, "prompt_tokens": len(prompt)}


def _read_in_cuts(model: Any, prompt: list[int], fixed: int, prefilled: int, cuts: list[int]) -> Any:
    """`prompt` read as the client's in-process model read it: its first `prefilled` ids as one prompt (the
    method's `fixed` part first), the rest stepped on in reads that end at `cuts`."""
    first = prompt[:prefilled] if 0 < prefilled < len(prompt) else prompt
    state = model.prefill(first, fixed=fixed)
    start = len(first)
    try:
        for end in sorted({c for c in cuts if c > start} | {len(prompt)}):
            if end > start:
                model.step(state, prompt[start:end])
                start = end
    except BaseException:
        model.release(state)
        raise
    return state


def walk_rows(model: Any, state: Any, readings: list[list[int]], closes_text: bool) -> tuple[list[int], list[dict]]:
    """DoG's greedy triplet over the trie of `readings` after `state`, read as `decoding.beam.greedy_triplet` reads it.

    The same reads: a node with one child that ends no reading is a forced
    run, fed with the next choice in one `extend`; at a choice the argmax over
    the node's children (in the trie's order), or the end where the node ends
    a reading and the unconstrained argmax is no child; the run after the
    last choice is read too unless nothing is decoded after it
    (`closes_text`).  Kept here, not imported: the model layer does not import
    the decoding layer above it (the server tests check the two agree).
    Returns the tokens walked and, for each row read, its node's children's
    log-probs and the unconstrained top token (row i: after ``tokens[:i]``).
    """
    import torch

    children: list[dict[int, int]] = [{}]
    ends: list[bool] = [False]
    for ids in readings:
        node = 0
        for tok in ids:
            if tok not in children[node]:
                children[node][tok] = len(children)
                children.append({})
                ends.append(False)
            node = children[node][tok]
        ends[node] = True
    rows = [torch.log_softmax(state.logits, dim=-1)]
    tokens: list[int] = []
    pending: list[int] = []
    node = 0
    while children[node]:
        kids = children[node]
        if len(kids) > 1 or ends[node]:  # a choice (else a forced run, read with the next choice)
            if len(rows) <= len(tokens):
                rows.extend(model.extend(state, pending))
                pending = []
            row = rows[len(tokens)]
            if ends[node] and int(torch.argmax(row)) not in kids:
                break  # the model would leave the trie: the shorter reading ends here
            order = list(kids)
            tok = order[int(torch.argmax(row[order]))]
        else:
            tok = next(iter(kids))
        tokens.append(tok)
        pending.append(tok)
        node = kids[tok]
    if pending and not closes_text:
        rows.extend(model.extend(state, pending))
    out, node = [], 0
    for i, row in enumerate(rows):
        kids = list(children[node])
        top = int(torch.argmax(row))
        out.append({"children": [[t, float(row[t])] for t in kids], "top": [top, float(row[top])]})
        if i < len(tokens):
            node = children[node][tokens[i]]
    return tokens, out


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
    """Add the routes to a llama-cpp-python server `app` (`server_app`: its ``llama_cpp.server.app`` module)."""
    from fastapi import Body, Depends, HTTPException
    from starlette.concurrency import run_in_threadpool

    scorer = ExactScorer()

    async def answer(body: Any, llama_proxy: Any, what: str) -> dict[str, Any]:
        """`scorer`'s `what` ("score" or "walk") on the served file's in-process copy, off the event loop."""
        if not isinstance(body, dict):
            raise HTTPException(status_code=400, detail="the body must be a JSON object")
        name = body.get("model")
        try:
            llama = llama_proxy(name if isinstance(name, str) and name else None)
        except Exception as exc:  # an unknown model alias
            raise HTTPException(status_code=400, detail=f"model: {exc}") from None
        threads = int(getattr(llama, "n_threads", 0) or 0)

        def run() -> dict[str, Any]:
            return getattr(scorer, what)(scorer.model_for(llama.model_path, threads), body)

        try:
            return await run_in_threadpool(run)
        except ValueError as exc:
            raise HTTPException(status_code=400, detail=str(exc)) from None

    async def token_logprobs(body: dict = Body(...), llama_proxy: Any = Depends(server_app.get_llama_proxy)):
        return await answer(body, llama_proxy, "score")

    async def triplet_walk(body: dict = Body(...), llama_proxy: Any = Depends(server_app.get_llama_proxy)):
        return await answer(body, llama_proxy, "walk")

    for path, route in ((SCORING_PATH, token_logprobs), (WALK_PATH, triplet_walk)):
        app.add_api_route(path, route, methods=["POST"], dependencies=[Depends(server_app.authenticate)],
                          tags=["Extras"])

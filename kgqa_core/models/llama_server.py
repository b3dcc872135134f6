"""``python -m llama_cpp.server`` with llama.cpp's CPU weight repacking off, as the in-process backend runs.

    python -m kgqa_core.models.llama_server --model SmolLM2-135M-Instruct.Q4_1.gguf --host 127.0.0.1 --port 8000 ...

Takes exactly ``llama_cpp.server``'s arguments.  Why: llama-cpp-python's
server always lets llama.cpp copy the weights into its CPU-repacked layouts
(it has no switch for it), and on a CPU with AMX (Intel Xeon, seen here with
llama-cpp-python 0.3.36) the first completion then crashes the server with a
segmentation fault; the in-process backend runs with repacking off
(`llama_model.repack_weights`, ``KGQA_LLAMA_REPACK=1`` turns it on) for the
same reason and because it read prompts slower on this project's CPUs.  The
server started here loads the model the same way, so its answers and the
in-process ones are computed alike.

It also reads a new prompt the way the in-process backend does
(`exact_reuse`): llama-cpp-python reuses the longest prefix a request shares
with the one before and reads the rest from there, so a question's numbers
depended on the request before it (another question's prompt shares the
method's instructions, cut anywhere).  Here a prompt that parts from the
one before is read again from the last whole batch (``--n_batch``) before
the parting, as a new server would read it; a request that only goes on
from the one before (DoG's next triplet) reads only its new tokens.
``KGQA_LLAMA_EXACT=0`` keeps llama-cpp-python's reuse.

It takes a prompt of token ids (``"prompt": [ids]``), which llama-cpp-python's
server declares it does not (`_token_id_prompts`), so a request continues the
very ids the in-process model holds, not a re-tokenisation of their text; and
``"kgqa_cuts"``: where the client's in-process reads of those ids end their
batches (a method's fixed part, a text stepped on, each generated token), so
the server ends its batches there too and, where a request parts from the one
before, keeps only cells read as both reads read them (`shared_cut`).  Its
replies say which stop string ended a text (``stop_reason``, `_stop_reason`).

And it scores given continuations the way the in-process backend does
(``POST /extras/kgqa/token_logprobs``, `exact_scoring`): llama-cpp-python's
server has no aligned prompt log-probs at a usable cost (its ``echo`` sorts
the whole vocabulary at every prompt token: 15 s for a 448-token prompt with
the 135M), so a client forces each continuation token by token and reads a
final end-of-sequence token from the top 20 log-probs, which hold it only
when it is likely (else only a bound: 11 nats off on a question's reading).
The route reads the prompt and the options with the in-process backend's
own code (`LlamaCppModel`, the same file, in this process) and returns every
option token's log-prob, end-of-sequence included: the numbers an in-process
model gives, in one request.  `server_caps` finds the route; other servers
keep the forced scoring.
"""

from __future__ import annotations

import contextvars


def _no_repacking() -> None:
    """Make every llama.cpp model this process loads keep its weights as the file has them (unless asked)."""
    import llama_cpp.llama_cpp as raw

    from .llama_model import repack_weights

    if repack_weights():
        return
    default = raw.llama_model_default_params

    def params():
        p = default()
        if hasattr(p, "use_extra_bufts"):
            p.use_extra_bufts = False
        return p

    raw.llama_model_default_params = params


# where the client's in-process reads of a request's ids end their batches (``kgqa_cuts``; None: not given)
WANTED_CUTS: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar("kgqa_cuts", default=None)
# the tokens a request's generation sampled, each with whether it ends the text (for the reply's ``stop_reason``)
SAMPLED: contextvars.ContextVar[list[tuple[int, bool]] | None] = contextvars.ContextVar("kgqa_sampled", default=None)


def _exact_reads() -> None:
    """Read a prompt that parts from the previous request's from a cut both reads share (see the module docstring)."""
    from llama_cpp import llama as module

    from .base import common_prefix
    from .exact_reuse import exact_reuse_default, whole_batches

    if not exact_reuse_default():
        return
    Llama = module.Llama
    generate, evaluate = Llama.generate, Llama.eval

    def eval_recorded(self, tokens):
        """`Llama.eval`, keeping where each batch ended (the cells' read, from the first)."""
        start = self.n_tokens
        cuts = [c for c in getattr(self, "_kgqa_cuts", []) if c <= start]
        evaluate(self, tokens)
        if len(tokens):
            cuts += list(range(start + self.n_batch, start + len(tokens), self.n_batch)) + [start + len(tokens)]
        self._kgqa_cuts = cuts

    def generate_exact(self, tokens, *args, **kwargs):
        tokens = list(tokens)
        wanted = WANTED_CUTS.get()
        kept = common_prefix(list(self.input_ids[: self.n_tokens]), tokens)
        # parted from the tokens read before, or the same prompt again (whose logits a new server computes afresh):
        # keep only cells read as a new read of these tokens reads them, so the rest is read in its batches
        if kept < self.n_tokens or kept >= len(tokens):
            limit = min(kept, len(tokens) - 1)
            if wanted is None:
                self.n_tokens = whole_batches(limit, self.n_batch)
            else:
                self.n_tokens = shared_cut(getattr(self, "_kgqa_cuts", []), wanted, limit)
        if wanted:  # end a batch at every cut the client's reads end one (a method's fixed part, a stepped text)
            for cut in sorted(c for c in set(wanted) if self.n_tokens < c < len(tokens)):
                self.eval(tokens[self.n_tokens:cut])
        return generate(self, tokens, *args, **kwargs)

    Llama.eval = eval_recorded
    Llama.generate = generate_exact


def _stop_reason(choice: dict, stops: list[str], seen: list[tuple[int, bool]]) -> str | None:
    """The stop string that ended a choice, None when the text ended (EOS) or ran to its length (as vLLM says).

    Why: llama-cpp-python answers "stop" for both, and its count of generated
    tokens cannot tell them apart where the stop string makes one token with
    the text's last character (``"."`` and ``"<"``): "... the answer is * X."
    ended by EOS was read as a triplet's opening and lost its period.
    """
    if choice.get("finish_reason") != "stop" or not stops:
        return None
    if seen and seen[-1][1]:
        return None  # the last token sampled ends the text
    return next((s for s in stops if s), None)  # one of them (the workbench asks with one)


def shared_cut(recorded: list[int], wanted: list[int], limit: int) -> int:
    """The last position up to `limit` where both reads end a batch and end the same batches before it (else 0).

    `recorded`: where the server's reads of its cells ended batches;
    `wanted`: where the client's reads of the new request's ids do.

    >>> shared_cut([256, 512, 700, 701], [256, 512, 650, 906], 900)
    512
    >>> shared_cut([256, 300], [256, 512], 600)
    256
    >>> shared_cut([100], [256], 400)
    0
    """
    mine, theirs = sorted(set(recorded)), sorted(set(wanted))
    best = 0
    for a, b in zip(mine, theirs):
        if a != b or a > limit:
            break
        best = a
    return best


def _routes() -> None:
    """Every app the server builds takes token-id prompts and has the scoring route (see the module docstring).

    ``KGQA_SERVER_ROUTES=0``: neither (llama-cpp-python's own routes, as ``python -m llama_cpp.server`` has them).
    """
    import os

    from llama_cpp.server import app as module

    if os.environ.get("KGQA_SERVER_ROUTES", "1").strip().lower() in ("0", "false", "no", "off"):
        return

    from .exact_scoring import add_scoring_route

    create_app = module.create_app

    def create_app_with_routes(*args, **kwargs):
        app = create_app(*args, **kwargs)
        _token_id_prompts(app, module)
        add_scoring_route(app, module)
        return app

    module.create_app = create_app_with_routes


def _token_id_prompts(app, module) -> None:
    """``/v1/completions`` takes a prompt of token ids too (``"prompt": [1, 2, 3]``), as `Llama` itself does.

    Why: llama-cpp-python's server declares text prompts only, so a client
    sent the text of its ids and the server tokenised it again: ids a model
    wrote need not be the ones its text encodes to, and the batch cuts a
    request carries (``kgqa_cuts``) are positions in the client's ids.  Here
    a list of ints is given to the server's own handler as its one prompt,
    which hands it to `Llama` as ids.  The route also says which stop string
    ended a text (`_stop_reason`).
    """
    from typing import List, Optional, Union

    import json

    from fastapi import Depends, Request
    from fastapi.responses import JSONResponse
    from pydantic import Field

    import llama_cpp
    from llama_cpp import llama as llama_module

    generate = llama_module.Llama.generate

    def generate_seen(self, *args, **kwargs):
        seen = SAMPLED.get()
        for tok in generate(self, *args, **kwargs):
            if seen is not None:
                seen.append((int(tok), bool(llama_cpp.llama_token_is_eog(self._model.vocab, tok))))
            yield tok

    llama_module.Llama.generate = generate_seen

    class TokenIdCompletionRequest(module.CreateCompletionRequest):
        prompt: Union[str, List[str], List[int]] = Field(default="", description="Text, or token ids.")
        kgqa_cuts: Optional[List[int]] = Field(default=None, description="Where the client's reads end batches.")

    async def create_completion(request: Request, body: TokenIdCompletionRequest):
        fields = {name: getattr(body, name) for name in module.CreateCompletionRequest.model_fields}
        if isinstance(body.prompt, list) and body.prompt and all(isinstance(t, int) for t in body.prompt):
            fields["prompt"] = [body.prompt]  # the handler takes a one-prompt list's only prompt: these ids
        inner = module.CreateCompletionRequest.model_construct(**fields)
        token = WANTED_CUTS.set([int(c) for c in body.kgqa_cuts if c > 0] if body.kgqa_cuts is not None else None)
        seen: list[tuple[int, bool]] = []
        sampled = SAMPLED.set(seen)
        try:
            reply = await module.create_completion(request, inner)
        finally:
            WANTED_CUTS.reset(token)
            SAMPLED.reset(sampled)
        if not isinstance(reply, dict):
            return reply  # a stream
        stops = [body.stop] if isinstance(body.stop, str) else list(body.stop or [])
        for choice in reply.get("choices") or []:
            choice["stop_reason"] = _stop_reason(choice, stops, seen)
        # as JSON here: the server's response model would drop the field (its log-probs are numpy floats)
        return JSONResponse(content=json.loads(json.dumps(reply, default=float)))

    # this module's annotations are strings (``from __future__``): FastAPI reads the endpoint's types from here
    create_completion.__annotations__ = {"request": Request, "body": TokenIdCompletionRequest}

    app.router.add_api_route("/v1/completions", create_completion, methods=["POST"], summary="Completion",
                      dependencies=[Depends(module.authenticate)], tags=["OpenAI V1"], include_in_schema=False,
                      route_class_override=module.RouteErrorHandler,  # errors answered as the server's own
                      response_model=None)
    # first, so it answers before the server's own route (in the router it includes, which stays for its schema)
    app.router.routes.insert(0, app.router.routes.pop())


def main() -> None:
    _no_repacking()
    _exact_reads()
    _routes()
    from llama_cpp.server.__main__ import main as serve

    serve()


if __name__ == "__main__":
    main()

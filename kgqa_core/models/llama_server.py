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


def _exact_reads() -> None:
    """Read a prompt that parts from the previous request's from its last whole batch (see the module docstring)."""
    from llama_cpp import llama as module

    from .base import common_prefix
    from .exact_reuse import exact_reuse_default, whole_batches

    if not exact_reuse_default():
        return
    Llama = module.Llama
    generate = Llama.generate

    def generate_exact(self, tokens, *args, **kwargs):
        tokens = list(tokens)
        kept = common_prefix(list(self.input_ids[: self.n_tokens]), tokens)
        # parted from the tokens read before, or the same prompt again (whose logits a new server computes afresh):
        # keep only whole batches, so the rest is read in the batches a new server reads it in
        if kept < self.n_tokens or kept >= len(tokens):
            self.n_tokens = whole_batches(min(kept, len(tokens) - 1), self.n_batch)
        return generate(self, tokens, *args, **kwargs)

    Llama.generate = generate_exact


def _scoring_route() -> None:
    """Add ``POST /extras/kgqa/token_logprobs`` to every app the server builds (see `exact_scoring`)."""
    from llama_cpp.server import app as module

    from .exact_scoring import add_scoring_route

    create_app = module.create_app

    def create_app_with_scoring(*args, **kwargs):
        app = create_app(*args, **kwargs)
        add_scoring_route(app, module)
        return app

    module.create_app = create_app_with_scoring


def main() -> None:
    _no_repacking()
    _exact_reads()
    _scoring_route()
    from llama_cpp.server.__main__ import main as serve

    serve()


if __name__ == "__main__":
    main()

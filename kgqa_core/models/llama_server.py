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


def main() -> None:
    _no_repacking()
    from llama_cpp.server.__main__ import main as serve

    serve()


if __name__ == "__main__":
    main()

"""The "Model server" part of the app's settings: URL, model, tokenizer, and a connection test.

A tested server becomes one more choice in the Ask page's model list
(``server:`` names); `running.get_model` connects it once per process.  The
API key is read from ``$KGQA_SERVER_API_KEY`` by the client and never shown,
stored in the session or written to a run.  Everything the server says
(model names, errors) is shown as plain text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import streamlit as st

from kgqa_core.redact import safe_url

SERVER_PREFIX = "server:"
CAPABILITY_NAMES = ("generated_logprobs", "prompt_logprobs", "token_prompts", "batch_prompts", "logit_bias",
                    "allowed_token_ids", "grammar", "token_grammar")


@dataclass
class ConnectionReport:
    ok: bool
    message: str
    model: str = ""
    kind: str = ""
    strategy: str = ""
    capabilities: dict[str, Any] = field(default_factory=dict)

    def lines(self) -> list[str]:
        if not self.ok:
            return [self.message]
        caps = self.capabilities
        yes = [k for k in CAPABILITY_NAMES if caps.get(k)]
        no = [k for k in CAPABILITY_NAMES if not caps.get(k)]
        out = [self.message, f"server kind: {self.kind}", f"DoG triplet steps: {self.strategy or 'not possible here'}",
               f"can: {', '.join(yes) or 'nothing beyond text'}", f"cannot: {', '.join(no) or '-'}",
               f"prefix caching: {caps.get('prefix_caching', 'unknown')}",
               "option scoring: " + ("as in process (the workbench server's scoring route)" if caps.get("exact_scoring")
                                     else "option by option through completions (an unlikely end-of-turn token "
                                          "is only bounded)")]
        out += [f"note: {n}" for n in caps.get("notes", [])]
        return out


def model_key(url: str, model: str = "", tokenizer: str = "") -> str:
    """The model-list name of a server (what `running.get_model` receives)."""
    return SERVER_PREFIX + json.dumps({"url": url.strip(), "model": model.strip(), "tokenizer": tokenizer.strip()},
                                      sort_keys=True)


def parse_key(key: str) -> dict[str, str]:
    return json.loads(key[len(SERVER_PREFIX):])


def is_server_key(name: str) -> bool:
    return isinstance(name, str) and name.startswith(SERVER_PREFIX)


def label(key: str) -> str:
    """The model list's name of a server (its URL with any ``user:password@`` as ``***``)."""
    spec = parse_key(key)
    return f"Model server · {spec.get('model') or 'its model'} @ {safe_url(spec['url'])}"


def describe(key: str) -> str:
    """The Ask page's caption under a server choice: what runs where (plain text, no markup)."""
    spec = parse_key(key)
    backend = _CONNECTED.get(key)
    strategy = f"; DoG triplet steps: {backend.caps.triplet_strategy or 'not possible'}" if backend is not None else ""
    return (f"Runs on the model server {safe_url(spec['url'])} ({spec.get('model') or 'its only model'}){strategy}. "
            "Requests and their cost are recorded in each run; the API key is not.")


_CONNECTED: dict[str, Any] = {}  # one connection per server per process, shared by sessions (it has a lock)


def connect(key: str, timeout: float | None = None, fresh: bool = False):
    """The connected `ServerBackend` of a model-list name (raises ServerError / ModelLoadError in one line)."""
    from kgqa_core.models.server_model import connect_server

    if not fresh and key in _CONNECTED:
        return _CONNECTED[key]
    spec = parse_key(key)
    kwargs = {"timeout": timeout} if timeout else {}
    backend = connect_server(spec["url"], model=spec.get("model") or None, tokenizer=spec.get("tokenizer") or None,
                             **kwargs)
    _CONNECTED[key] = backend
    return backend


def connection_test(url: str, model: str = "", tokenizer: str = "") -> tuple[ConnectionReport, Any]:
    """Connect and probe; never raises (the report says what went wrong, in one line)."""
    if not url.strip():
        return ConnectionReport(False, "enter the server's URL (e.g. http://gpu-box:8000)"), None
    try:
        backend = connect(model_key(url, model, tokenizer), timeout=60, fresh=True)
    except Exception as exc:  # ServerError, ModelLoadError, ValueError: all one line
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return ConnectionReport(False, f"connection failed: {first}"), None
    from kgqa_core.models.server_http import DEFAULT_TIMEOUT

    backend.client.timeout = DEFAULT_TIMEOUT  # the test's 60 s was for probing; runs get the usual limit
    _CONNECTED[model_key(url, backend.name, tokenizer)] = backend  # the key the Ask page will run: no reconnect
    caps = backend.caps.as_dict()
    return ConnectionReport(True, f"connected to {backend.url}: {backend.name} ({backend.load_seconds:.1f}s)",
                            model=backend.name, kind=backend.caps.kind, strategy=backend.caps.triplet_strategy,
                            capabilities=caps), backend


def model_choices() -> list[str]:
    """The tested server, as a model-list name (empty until a connection test succeeded)."""
    key = st.session_state.get("model_server_key")
    return [key] if key else []


def render_server_settings() -> None:
    """Inputs, the connection test, and its report (plain text)."""
    ss = st.session_state
    st.markdown("**Model server** (vLLM, llama.cpp: OpenAI-compatible /v1/completions)")
    url = st.text_input("Server URL", key="set_server_url", placeholder="http://gpu-box:8000")
    model = st.text_input("Served model (blank: the only one served)", key="set_server_model")
    tokenizer = st.text_input("Local tokenizer (blank: from the model's name)", key="set_server_tokenizer",
                              help="A packaged model name, a .gguf file or a tokenizer folder.")
    st.caption("API key: set the environment variable KGQA_SERVER_API_KEY before starting the app; it is never stored in runs.")
    if st.button("Test connection", key="set_server_test"):
        with st.spinner("Connecting and probing the server…"):
            report, _backend = connection_test(url, model, tokenizer)
        ss["model_server_report"] = report
        if report.ok:
            ss["model_server_key"] = model_key(url, report.model, tokenizer)
        else:
            ss.pop("model_server_key", None)
    report = ss.get("model_server_report")
    if report is not None:
        (st.success if report.ok else st.error)("Model server ready: choose it as the model on the Ask page"
                                                if report.ok else "The model server is not usable")
        st.text("\n".join(report.lines()))

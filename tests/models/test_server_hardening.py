"""A model server that misbehaves: every case ends in one line naming the server and the problem.

Each test runs against a real HTTP server on 127.0.0.1 (`tests/misbehaving_http.py`):
a reply that drips a byte a second after its headers, one far larger than
the request allows (20 MB for 24 tokens, 1 GB), malformed shapes of a
completion, an error body that echoes the request's headers (the API key),
and a URL with ``user:password@``.  `FakeModelServer` passes the connection
probes like a plain completion server, then misbehaves during the run.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from misbehaving_http import (  # noqa: E402
    FakeModelServer, MisbehavingServer, completion, drip, echo_headers, json_reply, stream,
)

from kgqa_core.cli import main  # noqa: E402
from kgqa_core.graph.knowledge_graph import KnowledgeGraph  # noqa: E402
from kgqa_core.methods.base import MethodRequest, run_method  # noqa: E402
from kgqa_core.models.server_http import ServerClient, ServerError  # noqa: E402
from kgqa_core.models.server_model import connect_server  # noqa: E402
from kgqa_core.trace.schema import load_trace  # noqa: E402

SECRET = "sk-test-0123456789abcdef-SECRET"
QUESTION = "who directed the movie Heat?"
GRAPH_TSV = "Heat\tdirected_by\tMichael Mann\nHeat\trelease_year\t1995\n"


def _heat() -> KnowledgeGraph:
    return KnowledgeGraph.from_triplets([("Heat", "directed_by", "Michael Mann"), ("Heat", "release_year", "1995")])


@pytest.fixture(scope="module")
def tokenizer_available():
    from kgqa_core.models.manager import ModelLoadError
    from kgqa_core.models.server_model import local_tokenizer

    try:
        local_tokenizer("smollm2-135m")
    except (ModelLoadError, OSError) as exc:
        pytest.skip(f"the packaged 135M model's tokenizer is not installed: {exc}")


def _connected(server: FakeModelServer):
    model = connect_server(server.url, model="fake", tokenizer="smollm2-135m", timeout=30)
    server.after = server.seen
    return model


def _run(method: str, model, **params):
    req = MethodRequest(graph=_heat(), question=QUESTION, model=model, topic_entities=["Heat"], params=params)
    return run_method(method, req)


# ------------------------------------------------------------------ one deadline per request
def test_a_server_that_drips_its_reply_ends_at_the_timeout():
    """Headers at once, then a byte a second: `--server-timeout 2` must hold for the whole request."""
    with MisbehavingServer(drip(every=0.5)) as server:
        client = ServerClient(server.url, timeout=2)
        started = time.monotonic()
        with pytest.raises(ServerError) as info:
            client.get("/v1/models")
        elapsed = time.monotonic() - started
    assert elapsed < 4, elapsed  # the old per-read timeout kept it alive 100+ s
    assert str(info.value) == f"the model server at {server.url} did not answer /v1/models within 2 s (timeout)"


def test_the_cli_ends_a_dripping_server_at_server_timeout(tmp_path, capsys):
    graph = tmp_path / "g.tsv"
    graph.write_text(GRAPH_TSV)
    with MisbehavingServer(drip(every=0.5)) as server:
        started = time.monotonic()
        code = main(["ask", "--graph", str(graph), "--question", QUESTION, "--topic", "Heat", "--method", "direct",
                     "--server", server.url, "--server-timeout", "2"])
        elapsed = time.monotonic() - started
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and elapsed < 8, elapsed
    assert err[-1] == f"error: the model server at {server.url} did not answer /v1/models within 2 s (timeout)"


# ------------------------------------------------------------------ size caps
def test_a_reply_larger_than_the_byte_limit_is_cut_without_reading_it(monkeypatch):
    """1 GB streamed without a length: reading stops at the limit; with a length: nothing is read."""
    monkeypatch.setenv("KGQA_SERVER_MAX_REPLY_MB", "8")
    gb = 1 << 30
    with MisbehavingServer(stream(b'{"data": "', b"x" * 4096, gb, b'"}')) as server:
        started = time.monotonic()
        with pytest.raises(ServerError, match=r"sent a reply to /v1/models larger than 8\.0 MB \(the limit; raise "
                                              r"it with --server-max-reply-mb"):
            ServerClient(server.url, timeout=60).get("/v1/models")
        assert time.monotonic() - started < 10
    assert server.bytes_sent < 64 * 2**20  # the server stopped when the client hung up, far from 1 GB
    with MisbehavingServer(stream(b'{"data": "', b"x" * 4096, gb, b'"}', declare=True)) as server:
        with pytest.raises(ServerError, match=r"larger than 8\.0 MB \(1024\.0 MB declared\)"):
            ServerClient(server.url, timeout=60).get("/v1/models")
    assert server.bytes_sent < 16 * 2**20


def test_a_completion_longer_than_max_tokens_allows_is_refused_at_once(tokenizer_available):
    """20 MB of text for a 24-token answer: refused while reading, not decoded token by token for minutes."""
    head = json.dumps(completion("")).encode()
    head, tail = head.split(b'"text": ""')
    with FakeModelServer(stream(head + b'"text": "', b"Michael Mann ", 20 * 2**20, b'"' + tail)) as server:
        model = _connected(server)
        started = time.monotonic()
        for method, params in (("direct", {"max_new_tokens": 24}), ("cot", {"max_new_tokens": 24})):
            trace = _run(method, model, **params)
            assert trace.error.startswith(f"the model server at {server.url} sent a reply to /v1/completions larger "
                                          "than "), trace.error
            assert trace.error.endswith(": more than the request's max_tokens allows")
            assert "\n" not in trace.error and not trace.answers
        assert time.monotonic() - started < 20


def test_text_longer_than_max_tokens_can_spell_is_refused(tokenizer_available):
    """Under the byte cap but more characters than 24 tokens can hold: refused by the shape check."""
    with FakeModelServer(json_reply(completion("Mann " * 3000))) as server:
        model = _connected(server)
        trace = _run("direct", model, max_new_tokens=24)
    assert trace.error.startswith(f"the model server at {server.url} returned a malformed completion for free text: "
                                  "choices[0].text has 15,000 characters, more than 24 tokens can hold"), trace.error


# ------------------------------------------------------------------ malformed shapes
@pytest.mark.parametrize("reply,problem", [
    ({"choices": {"0": 1}}, "choices is an object, not a list"),
    ({"choices": [1]}, "choices[0] is the number 1, not an object"),
    (completion(logprobs=["x"]), "choices[0].logprobs is a list, not an object"),
    (completion(logprobs={"tokens": [" M"], "token_logprobs": ["abc"]}),
     "choices[0].logprobs.token_logprobs[0] is the string 'abc', not a log-prob (a number)"),
    (completion(logprobs={"tokens": [" M"], "token_logprobs": [-0.1], "top_logprobs": [{" M": None}]}),
     "choices[0].logprobs.top_logprobs[0][' M'] is null, not a log-prob (a number)"),
    ({**completion(), "usage": {"completion_tokens": -1000}}, "usage.completion_tokens is -1000, not a count"),
    (completion(text=12), "choices[0].text is the number 12, not a string"),
    ([1, 2], "the reply is a list, not a JSON object"),
])
def test_a_malformed_completion_is_one_line_naming_the_field(tokenizer_available, reply, problem):
    with FakeModelServer(json_reply(reply)) as server:
        model = _connected(server)
        trace = _run("direct", model, max_new_tokens=24)
    assert trace.error == f"the model server at {server.url} returned a malformed completion for free text: {problem}"
    assert "\n" not in trace.error
    assert "KeyError" not in trace.error and "traceback" not in trace.extra


def test_a_reply_that_is_not_json_names_the_server():
    with MisbehavingServer(json_reply(b"<html>gateway</html>")) as server:
        with pytest.raises(ServerError, match=f"the model server at {server.url} answered /v1/models with something "
                                              "that is not JSON"):
            ServerClient(server.url, timeout=10).get("/v1/models")


# ------------------------------------------------------------------ secrets
def test_an_api_key_echoed_in_an_error_body_never_reaches_the_cli_or_the_trace(tokenizer_available, tmp_path, capsys,
                                                                              monkeypatch):
    monkeypatch.setenv("KGQA_SERVER_API_KEY", SECRET)
    graph = tmp_path / "g.tsv"
    graph.write_text(GRAPH_TSV)
    with FakeModelServer(echo_headers(400)) as server:
        probe = FakeModelServer(echo_headers(400))
        try:
            _connected(probe)
            connect_requests = probe.seen
        finally:
            probe.close()
        server.after = connect_requests  # the run's first completion is answered with the echo
        out = tmp_path / "run.json"
        code = main(["ask", "--graph", str(graph), "--question", QUESTION, "--topic", "Heat", "--method", "direct",
                     "--server", server.url, "--server-tokenizer", "smollm2-135m", "--trace-out", str(out)])
        sent = [r["headers"].get("Authorization") for r in server.requests]
    printed = capsys.readouterr()
    assert f"Bearer {SECRET}" in sent  # the key was sent ...
    assert code == 1 and SECRET not in printed.out + printed.err  # ... and never shown
    trace_text = out.read_text()
    assert SECRET not in trace_text
    error = load_trace(out).error
    assert error.startswith(f"the model server at {server.url} answered /v1/completions with HTTP 400: bad request")
    assert "Bearer ***" in error
    # the same at connect time: the CLI's one line
    with MisbehavingServer(echo_headers(400)) as server:
        code = main(["ask", "--graph", str(graph), "--question", QUESTION, "--topic", "Heat", "--method", "direct",
                     "--server", server.url])
    err = capsys.readouterr().err
    assert code == 1 and SECRET not in err and "Bearer ***" in err.splitlines()[-1]
    assert err.splitlines()[-1].startswith(f"error: the model server at {server.url} answered /v1/models with HTTP 400")


def test_credentials_in_the_url_are_sent_as_basic_auth_and_stored_as_stars(tokenizer_available):
    with FakeModelServer(json_reply(completion())) as server:
        host = server.url.split("://", 1)[1]
        model = connect_server(f"http://lab:pa55w0rd-x@{host}", model="fake", tokenizer="smollm2-135m", timeout=30)
        server.after = server.seen
        trace = _run("direct", model, max_new_tokens=24)
        auth = {r["headers"].get("Authorization") for r in server.requests}
    assert auth == {"Basic bGFiOnBhNTV3MHJkLXg="}  # lab:pa55w0rd-x
    assert model.url == f"http://***@{host}" and trace.extra["server"]["url"] == f"http://***@{host}"
    assert "pa55w0rd" not in trace.to_json() and "lab:" not in trace.to_json()
    assert "pa55w0rd" not in repr(model.client)


def test_credentials_in_the_url_are_never_printed(tmp_path, capsys):
    graph = tmp_path / "g.tsv"
    graph.write_text(GRAPH_TSV)
    with MisbehavingServer(echo_headers(502)) as server:
        host = server.url.split("://", 1)[1]
        code = main(["ask", "--graph", str(graph), "--question", QUESTION, "--topic", "Heat", "--method", "direct",
                     "--server", f"http://lab:pa55w0rd-x@{host}"])
    err = capsys.readouterr().err
    assert code == 1 and "pa55w0rd" not in err and "bGFiOnBhNTV3MHJkLXg=" not in err
    assert err.splitlines() == [f"Connecting to the model server at http://***@{host}", err.splitlines()[1]]
    assert err.splitlines()[1].startswith(f"error: the model server at http://***@{host} answered /v1/models with HTTP 502")


# ------------------------------------------------------------------ option values
@pytest.mark.parametrize("value", ["0", "-5", "nan", "inf", "1e308", "abc"])
def test_server_timeout_values_are_refused_by_name(tmp_path, capsys, value):
    code = main(["ask", "--graph", "g.tsv", "--question", QUESTION, "--method", "direct", "--server", "127.0.0.1:9",
                 f"--server-timeout={value}"])
    err = capsys.readouterr().err
    assert code == 2 and "argument --server-timeout:" in err and value in err
    assert "time_t" not in err and "Invalid value" not in err


@pytest.mark.parametrize("value", ["0", "nan", "inf", "-1"])
def test_server_max_reply_mb_values_are_refused_by_name(capsys, value):
    code = main(["ask", "--graph", "g.tsv", "--question", QUESTION, "--method", "direct", "--server", "127.0.0.1:9",
                 f"--server-max-reply-mb={value}"])
    assert code == 2 and "argument --server-max-reply-mb:" in capsys.readouterr().err


def test_a_timeout_given_in_code_is_checked_by_name():
    with pytest.raises(ServerError, match="--server-timeout must be a finite number, got nan"):
        ServerClient("http://127.0.0.1:9", timeout=float("nan"))


@pytest.mark.parametrize("models", [{"data": [1, 2]}, [1], {"data": [{"id": "fake", "max_model_len": "lots"}]}])
def test_connection_probes_of_the_wrong_shape_are_one_line(tokenizer_available, models):
    with MisbehavingServer(json_reply(models)) as server:
        with pytest.raises(ServerError) as info:
            connect_server(server.url, tokenizer="smollm2-135m", timeout=10)
    assert str(info.value).startswith(f"the model server at {server.url} ")
    assert "\n" not in str(info.value)


def test_a_redirect_that_is_not_followed_says_so():
    """A POST answered with 307 is not re-sent elsewhere (the key stays with the server given)."""

    def redirect(handler) -> None:
        handler.send_response(307)
        handler.send_header("Location", "http://lab:pw-in-location@elsewhere.example/v1/completions")
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    with MisbehavingServer(redirect) as server:
        with pytest.raises(ServerError) as info:
            ServerClient(server.url, timeout=10).post("/v1/completions", {"prompt": "x"})
    assert str(info.value) == (f"the model server at {server.url} answered /v1/completions with a redirect (HTTP 307) "
                               "to http://***@elsewhere.example/v1/completions; give the server's final URL")


def test_a_redirect_to_another_host_does_not_carry_the_api_key(monkeypatch):
    monkeypatch.setenv("KGQA_SERVER_API_KEY", SECRET)
    with MisbehavingServer(json_reply({"data": []})) as other:
        def redirect(handler) -> None:
            handler.send_response(302)
            handler.send_header("Location", other.url + "/v1/models")
            handler.send_header("Content-Length", "0")
            handler.end_headers()

        with MisbehavingServer(redirect) as server:
            assert ServerClient(server.url, timeout=10).get("/v1/models") == {"data": []}
    assert server.requests[0]["headers"].get("Authorization") == f"Bearer {SECRET}"
    assert "Authorization" not in other.requests[0]["headers"]

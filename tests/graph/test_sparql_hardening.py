"""A SPARQL endpoint that misbehaves: one deadline per query (connect, answer, parse), a byte cap, no credentials shown.

Real HTTP servers on 127.0.0.1 (`tests/misbehaving_http.py`): an endpoint that
sends its headers and then a byte a second, one whose valid answer is 50 MB,
one that answers more than the byte cap, and a URL holding ``user:password@``.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from misbehaving_http import MisbehavingServer, drip, echo_headers, json_reply, stream  # noqa: E402

from kgqa_core.cli import main  # noqa: E402
from kgqa_core.graph.sparql import SparqlError, SparqlGraphStore, SparqlTimeout  # noqa: E402
from kgqa_core.graph.sparql.client import BadEndpointError, SparqlClient  # noqa: E402
from kgqa_core.graph.sparql.options import SparqlSource  # noqa: E402

ROW = b'{"s": {"type": "uri", "value": "http://example.org/entity/a-long-name"}, ' \
      b'"p": {"type": "uri", "value": "http://example.org/relation/r"}, ' \
      b'"o": {"type": "literal", "value": "some literal value", "xml:lang": "en"}},'
HEAD = b'{"head": {"vars": ["s", "p", "o"]}, "results": {"bindings": ['
TAIL = ROW.rstrip(b",") + b"]}}"


def _answer(mb: int):
    """A valid SPARQL JSON answer of about `mb` MB, sent as fast as the client reads."""
    return stream(HEAD, ROW, mb * 2**20 // len(ROW) * len(ROW), TAIL, content_type="application/sparql-results+json")


def test_an_endpoint_that_drips_its_answer_ends_at_the_query_timeout():
    with MisbehavingServer(drip(every=0.5, first=HEAD)) as server:
        client = SparqlClient(server.url + "/sparql", timeout=2)
        started = time.monotonic()
        with pytest.raises(SparqlTimeout) as info:
            client.select("SELECT * WHERE { ?s ?p ?o }")
        assert time.monotonic() - started < 4  # the old per-read check kept it alive 100+ s
    assert str(info.value) == f"SPARQL endpoint {server.url}/sparql did not answer within 2 s (query timeout)"
    assert client.stats.errors == 1


def test_a_huge_valid_answer_is_parsed_within_the_deadline_or_refused_by_it():
    """50 MB of valid results under a 2 s timeout: a timeout error at about 2 s, not 49 s and a wrong answer."""
    with MisbehavingServer(_answer(50)) as server:
        client = SparqlClient(server.url + "/sparql", timeout=2)
        started = time.monotonic()
        with pytest.raises(SparqlTimeout, match="did not answer within 2 s"):
            client.select("SELECT * WHERE { ?s ?p ?o }")
        assert time.monotonic() - started < 5


def test_an_answer_over_the_byte_cap_is_refused_naming_the_limit():
    with MisbehavingServer(_answer(8)) as server:
        client = SparqlClient(server.url + "/sparql", timeout=60, max_reply_mb=1)
        with pytest.raises(SparqlError, match=r"sent more than 1 MB for one query; ask for less or raise "
                                              r"\$KGQA_SPARQL_MAX_REPLY_MB"):
            client.select("SELECT * WHERE { ?s ?p ?o }")
    assert server.bytes_sent < 8 * 2**20


def test_the_cli_ends_a_dripping_endpoint_at_sparql_timeout(capsys):
    with MisbehavingServer(drip(every=0.5, first=HEAD)) as server:
        started = time.monotonic()
        code = main(["ask", "--sparql", server.url + "/sparql", "--sparql-timeout", "2", "--topic", "Heat",
                     "--question", "who directed Heat?", "--method", "direct"])
        elapsed = time.monotonic() - started
    err = capsys.readouterr().err
    assert code == 1 and elapsed < 6, elapsed
    assert err == f"error: SPARQL endpoint {server.url}/sparql did not answer within 2 s (query timeout)\n"


def test_the_cli_says_timeout_for_a_huge_answer_not_no_topic_entity(capsys):
    with MisbehavingServer(_answer(50)) as server:
        started = time.monotonic()
        code = main(["ask", "--sparql", server.url + "/sparql", "--sparql-timeout", "2",
                     "--question", "who directed [Heat]?", "--method", "direct"])
        elapsed = time.monotonic() - started
    err = capsys.readouterr().err
    assert code == 1 and elapsed < 8, elapsed
    assert err == f"error: SPARQL endpoint {server.url}/sparql did not answer within 2 s (query timeout)\n"


def test_credentials_in_the_endpoint_url_are_sent_and_never_shown():
    empty = {"head": {"vars": ["n"]}, "results": {"bindings": [{"n": {"type": "literal", "value": "3"}}]}}
    with MisbehavingServer(json_reply(empty)) as server:
        host = server.url.split("://", 1)[1]
        store = SparqlGraphStore(f"http://lab:pa55w0rd-x@{host}/sparql")
        store.client.select("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }")
        auth = server.requests[-1]["headers"].get("Authorization")
    assert auth == "Basic bGFiOnBhNTV3MHJkLXg="
    assert store.endpoint == f"http://***@{host}/sparql" and "pa55w0rd" not in json.dumps(store.describe())
    assert "pa55w0rd" not in store.name
    with MisbehavingServer(echo_headers(400)) as server:
        host = server.url.split("://", 1)[1]
        client = SparqlClient(f"http://lab:pa55w0rd-x@{host}/sparql", timeout=10)
        with pytest.raises(SparqlError) as info:
            client.select("ASK {}")
    assert "pa55w0rd" not in str(info.value) and "bGFiOnBhNTV3MHJkLXg=" not in str(info.value)
    assert str(info.value).startswith(f"http://***@{host}/sparql answered HTTP 400")


@pytest.mark.parametrize("value", ["nan", "inf", "1e308", "0", "-5"])
def test_sparql_timeout_values_are_refused_by_name(capsys, value):
    code = main(["ask", "--sparql", "http://127.0.0.1:9/sparql", f"--sparql-timeout={value}", "--question", "q",
                 "--method", "direct"])
    err = capsys.readouterr().err
    assert code == 2 and "argument --sparql-timeout:" in err and value in err
    assert "Invalid value" not in err and "too large" not in err


@pytest.mark.parametrize("field,value,words", [
    ("timeout", float("nan"), "sparql timeout must be a finite number"),
    ("timeout", 1e308, "sparql timeout must be more than 0 and at most 86400"),
    ("hops", 1e9, "sparql hops must be at least 1 and at most 10"),
    ("max_reply_mb", float("inf"), "sparql max_reply_mb must be a finite number"),
])
def test_dataset_and_form_settings_are_checked_by_name(field, value, words):
    with pytest.raises(ValueError, match="line 3 sparql: " + words):
        SparqlSource.from_dict({"endpoint": "http://127.0.0.1:9/sparql", field: value}, where="line 3 sparql")
    with pytest.raises(BadEndpointError, match=words):  # the Ask page's form builds it directly
        SparqlSource("http://127.0.0.1:9/sparql", **{field: value})

"""ServerBackend against a real llama-cpp-python server on 127.0.0.1 (the packaged 135M GGUF).

Parity: every method's answers over the server equal the in-process llama.cpp
backend's on the fixture question, and DoG's chain and its scores match.
Tolerance: the server and the in-process backend run the same GGUF with the
same kernels, but llama.cpp's quantised matmuls round differently with other
batch splits, cache layouts (the in-process context holds 64 sequences in a
unified cache) and prefix reuse, so a token's log-prob differs a little:
measured here, up to 0.31 nats for one token ("Lyon" after the capital
question), 0.31 over a whole DoG chain (about 20 tokens).  Tests allow 0.5
nats per token and 0.15 on average (SCORE_TOL, MEAN_TOL), the same order
as the transformers/llama.cpp tolerance of tests/models/test_backends.py.
Greedy choices (texts, chains, answers) must be identical.

Error paths, each against the real server (behind a small fault proxy where
the fault must be injected): the server killed mid-run, a 500, a timeout,
a server whose replies carry no log-probs.  Each gives one line, and the run
is saved as failed with the steps done so far.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_core.methods.base import MethodRequest, run_method
from kgqa_core.models.generation import GenerationConfig
from kgqa_core.models.interface import BackendCapabilityError, LanguageModel
from kgqa_core.models.server_http import ServerClient, ServerError
from kgqa_core.models.server_model import connect_server

from server_fixtures import FaultProxy, LlamaServer

# nats per scored token: llama.cpp moves a log-prob by up to 0.58 nats with where a prompt's cells lie in its
# cache and how the prompt was split into batches (measured for issue 32, branch determ32)
SCORE_TOL = 0.6
MEAN_TOL = 0.15
QUESTION = "who directed the movie Heat?"


def _heat() -> KnowledgeGraph:
    return KnowledgeGraph.from_triplets([
        ("Heat", "directed_by", "Michael Mann"), ("Heat", "starred_actors", "Al Pacino"),
        ("Heat", "release_year", "1995"), ("Collateral", "directed_by", "Michael Mann"),
    ], name="heat")


# the paper's offer at each step (see tests/models/test_backends.py: with the question's relations the 135M's
# answer line on this question is a near tie)
# the question read by the relations' names alone (no model call): DoG's own requests are what these tests compare
DOG_PARAMS = {"max_new_tokens": 48, "max_steps": 2, "question_relations": False, "stay_at_depth": False,
              "reader": "lexicon"}


@pytest.fixture(scope="module")
def gguf():
    from kgqa_core.models.manager import packaged_gguf
    from kgqa_core.models.registry import PACKAGED_MODELS

    if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("fastapi") is None:
        pytest.skip("llama-cpp-python[server] is not installed")
    return packaged_gguf(PACKAGED_MODELS["smollm2-135m"])


@pytest.fixture(scope="module")
def llama_server(gguf, tmp_path_factory):
    server = LlamaServer(gguf, tmp_path_factory.mktemp("server") / "server.log")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def server_model(llama_server):
    return connect_server(llama_server.url)


def _run(method: str, model, params=None, on_step=None):
    req = MethodRequest(graph=_heat(), question=QUESTION, model=model, topic_entities=["Heat"],
                        params=dict(params or {}), on_step=on_step)
    return run_method(method, req)


# ------------------------------------------------------------------ connect
def test_capabilities_are_probed_at_connect(server_model):
    caps = server_model.caps
    assert isinstance(server_model, LanguageModel)
    assert caps.kind == "llama-cpp-python"
    assert caps.generated_logprobs and caps.top_logprobs >= 5
    assert caps.logit_bias and caps.grammar
    assert caps.token_grammar  # llama.cpp's <[id]> terminals: the walk follows the canonical trie exactly
    # llama-cpp-python takes one prompt per request and its echo log-probs are shifted by a token; the workbench's
    # launcher lets it take token ids and adds the scoring route
    assert caps.token_prompts and not caps.batch_prompts and not caps.prompt_logprobs and caps.exact_scoring
    assert caps.stop_reason  # the launcher says which stop string ended a text (None: the text ended)
    assert any("shifted" in n for n in caps.notes)
    assert caps.tokenize_path == "/extras/tokenize"
    assert caps.triplet_strategy == "walk"
    assert server_model.tokenizer_source == "smollm2-135m"


def test_a_dead_url_and_an_unknown_model_are_one_line_errors(llama_server):
    from server_fixtures import free_port

    with pytest.raises(ServerError, match="not reachable"):
        connect_server(f"127.0.0.1:{free_port()}")
    with pytest.raises(ServerError, match="does not serve 'no-such-model'"):
        connect_server(llama_server.url, model="no-such-model")


def test_the_api_key_is_sent_but_never_recorded(server_model, monkeypatch):
    monkeypatch.setenv("KGQA_SERVER_API_KEY", "sk-secret-123")
    assert ServerClient(server_model.url)._headers() == {"Authorization": "Bearer sk-secret-123"}
    assert "sk-secret" not in json.dumps(server_model.describe())


# ------------------------------------------------------------------ parity
def test_generation_and_scores_match_in_process(server_model, llama_model):
    prompt = llama_model.chat_prompt("Which city is the capital of France? Answer with the city only.")
    options = ["Paris", "Lyon", "Marseille"]
    a = llama_model.score_continuations(prompt, options)
    b = server_model.score_continuations(prompt, options)
    assert [s.token_ids for s in a] == [s.token_ids for s in b]
    diffs = [abs(u - v) for x, y in zip(a, b) for u, v in zip(x.token_logprobs, y.token_logprobs)]
    assert max(diffs) < SCORE_TOL and sum(diffs) / len(diffs) < MEAN_TOL, diffs
    assert b.forward_passes == 1  # the workbench server's scoring route: one request for every option
    ga = llama_model.generate(prompt, GenerationConfig(max_new_tokens=12, stop_strings=["\n"]))
    gb = server_model.generate(prompt, GenerationConfig(max_new_tokens=12, stop_strings=["\n"]))
    assert ga.text == gb.text and gb.forward_passes == 1


def test_dog_chain_and_scores_match_in_process(server_model, llama_model, monkeypatch):
    # a cold cache, as the server's first request of a question: none in memory, and no prefix saved on disk
    # by an earlier test (the suite's order decided whether the instructions came from disk: a near tie moved)
    llama_model.clear_prefix_cache()
    monkeypatch.setattr(llama_model, "_store", None)
    local = _run("dog", llama_model, DOG_PARAMS)
    before = server_model.client.requests_made
    remote = _run("dog", server_model, DOG_PARAMS)
    assert not remote.error, remote.error
    assert [c.triplet_id for c in remote.best_chain] == [c.triplet_id for c in local.best_chain]
    assert remote.answer_texts == local.answer_texts
    steps = [s for s in remote.steps if s.kind == "dog.triplet"]
    local_steps = [s for s in local.steps if s.kind == "dog.triplet"]
    # step by step while the free text agrees (a near-tie in free text may differ in the last digits)
    compared = 0
    for a, b in zip(local_steps, steps):
        if a.model_text != b.model_text:
            break
        assert a.choice == b.choice
        assert abs(a.extra["triplet_score"] - b.extra["triplet_score"]) < MEAN_TOL * max(a.tokens_out, 1) + SCORE_TOL
        compared += 1
    assert compared >= 1
    if remote.raw_output == local.raw_output:
        n_tokens = sum(s.tokens_out for s in local_steps)
        assert abs(remote.chain_scores[0] - local.chain_scores[0]) < MEAN_TOL * n_tokens + SCORE_TOL
    assert steps and all(s.extra["server_strategy"] == "walk" for s in steps)
    assert all(s.extra["forward_passes"] == 1 for s in steps)  # one token-grammar request per triplet step
    assert remote.backend == "server" and remote.extra["server"]["model"] == server_model.name
    assert remote.extra["server"]["triplet_strategy"] == "walk"
    assert server_model.client.requests_made - before >= len(steps) + 1


def test_a_chain_at_its_limit_concludes_in_one_request_as_in_process(server_model, llama_model):
    """At the triplet limit the server stops at the opener like in process ("limit"): one request, no logit
    bias (which needs a capability some servers lack), the same text, nothing of the opener committed."""
    from kgqa_core.decoding.constraint import OpeningDetector
    from kgqa_core.decoding.free_text import decode_free_text
    from kgqa_core.decoding.server_steps import RemoteDecoding
    from kgqa_core.models.server_model import ServerSequence

    facts = ("Facts used:\n1. <Heat -> directed_by -> Michael Mann>\n2. <Heat -> starred_actors -> Al Pacino>\n"
             "3. <Heat -> release_year -> 1995>\n4.")
    ids = llama_model.encode(facts)
    detector = OpeningDetector.for_tokenizer(llama_model.tokenizer)
    local = decode_free_text(llama_model, llama_model.prefill(ids), 40, detector, allow_open=False)
    before = server_model.client.requests_made
    state = ServerSequence(list(ids))
    remote = RemoteDecoding(server_model).free_text(state, 40, detector, allow_open=False)
    assert server_model.client.requests_made - before == 1
    assert local.stop == remote.stop == "limit"
    assert remote.text == local.text and remote.ids == local.ids
    assert list(state.ids) == ids + remote.ids  # the opener is not in the sequence


def test_dog_free_text_cap_cuts_on_a_server_where_it_cuts_in_process(server_model, llama_model):
    """Issue 32: the per-step free-text cap is a token count both paths decode to, so a server run is cut at the
    same token, noted the same way, and concludes with the same answer line."""
    params = {**DOG_PARAMS, "max_new_tokens": 96, "prompt_examples": "paper", "free_text_cap": 8}
    llama_model.clear_prefix_cache()  # a cold cache, as the server's
    local = _run("dog", llama_model, params)
    remote = _run("dog", server_model, params)
    assert not remote.error, remote.error
    for trace in (local, remote):
        answer = [s for s in trace.steps if s.kind == "dog.answer"][0]
        assert answer.extra["stop"] == "cap" and answer.note.startswith("free text cut at 8 tokens")
        assert trace.extra["free_text_cuts"] == 1 and trace.parameters["free_text_cap"] == 8
    assert [c.triplet_id for c in remote.best_chain] == [c.triplet_id for c in local.best_chain]
    # the words of the 8 tokens may differ at a near tie (a prefix the in-process cache held before: issue
    # 32's cold = warm = server, not solved); the cut is the same token count on both paths
    for trace in (local, remote):
        assert "Therefore, the answer is" in trace.raw_output and trace.answer_texts


def _sample_question_trie(model, opener=" <"):
    """The trie over the 1-hop neighbourhood of the first sample question's topic (a large G_q: 50+ readings)."""
    from pathlib import Path

    from kgqa_core.decoding.triplet_trie import TripletTrie

    sample = Path(__file__).resolve().parents[2] / "datasets" / "metaqa_sample" / "metaqa_dev_50.jsonl"
    row = json.loads(sample.read_text(encoding="utf-8").splitlines()[0])
    graph = KnowledgeGraph.from_triplets(row["graph"], name=row["id"])
    topic = row["topic_entities"][0]
    near = {t.id: t for t in graph.neighbours(topic)}
    for t in list(near.values()):  # and one hop further, as G_q grows
        for u in graph.neighbours(t.tail if t.head == topic else t.head)[:40]:
            near.setdefault(u.id, u)
    return row, TripletTrie.build(list(near.values()), tokenizer=model.tokenizer, opener=opener)


@pytest.mark.parametrize("token_grammar", [True, False], ids=["token-grammar", "text-grammar"])
def test_triplet_walk_equals_in_process_greedy_on_a_large_trie(server_model, llama_model, token_grammar):
    """The walk over 50+ readings picks the in-process greedy triplet with the same scores; with token-id
    terminals in ONE request, with a text grammar (which accepts other tokenisations) in a few, never one per token."""
    from kgqa_core.decoding.beam import greedy_triplet
    from kgqa_core.decoding.constraint import TripletGuide
    from kgqa_core.decoding.server_steps import MAX_WALKS, RemoteDecoding
    from kgqa_core.models.server_model import ServerSequence

    row, trie = _sample_question_trie(llama_model)
    assert len(trie) >= 50
    leads = ["The author is given by", "We look for the writer:", "Reasoning over the graph, first"]
    saved = server_model.caps.token_grammar
    server_model.caps.token_grammar = token_grammar
    try:
        for lead in leads:
            ids = llama_model.encode(llama_model.chat_prompt(row["question"]) + lead + " <")
            llama_model.clear_prefix_cache()  # a cold cache, as the server's (see the module docstring)
            local = greedy_triplet(llama_model, llama_model.prefill(ids), TripletGuide(trie))
            result = RemoteDecoding(server_model).triplet_search(ServerSequence(list(ids)), TripletGuide(trie), 1)
            remote = result.hypotheses[0]
            assert remote.token_ids == local.token_ids and remote.triplet_ids == local.triplet_ids, lead
            diffs = [abs(a.logprob - b.logprob) for a, b in zip(local.positions, remote.positions)]
            assert max(diffs) < SCORE_TOL and sum(diffs) / len(diffs) < MEAN_TOL, (lead, diffs)
            if token_grammar:
                assert result.forward_passes == 1, lead
            else:
                assert result.forward_passes <= 1 + 2 * MAX_WALKS and result.forward_passes < len(remote.token_ids)
    finally:
        server_model.caps.token_grammar = saved


def test_token_trie_grammar_is_the_trie(server_model):
    """The grammar built from a trie, sent to the real server from a reading's prefix, completes a reading
    below that node with exactly the trie's token ids."""
    from kgqa_core.decoding.server_steps import token_trie_grammar

    _, trie = _sample_question_trie(server_model)
    prompt = server_model.encode("Facts: <")
    seq = next(iter(trie.sequences.values()))
    for cut in (0, 2):
        node = trie.walk(seq[:cut])
        choice = server_model.complete(prompt + list(seq[:cut]), "test", max_tokens=64, logprobs=1,
                                       grammar="root ::= " + token_trie_grammar(trie, node))
        end = node
        for token in choice["logprobs"]["tokens"]:  # every returned token is a child of the node reached
            end = next((c for t, c in trie.children[end].items() if server_model.token_text(t) == token), None)
            assert end is not None, (cut, choice["logprobs"]["tokens"])
        assert trie.is_leaf(end) and choice["text"] == server_model.decode(list(trie.sequences[trie.ends[end][0]])[cut:])


@pytest.mark.parametrize("method", ["reads", "rok", "lpkg"])
def test_every_method_answers_as_in_process(server_model, llama_model, method):
    params: dict = {}
    llama_model.clear_prefix_cache()
    local = _run(method, llama_model, params)
    remote = _run(method, server_model, params)
    assert not remote.error, remote.error
    assert remote.answer_texts == local.answer_texts


def test_the_relation_look_over_the_server_gives_the_in_process_gains(server_model, llama_model):
    """`reading_look`'s one batch (and its no-question priors, kept per loaded model) over HTTP: the same relations
    raised, by about the same nats."""
    from kgqa_core.reading.relation_look import relation_look

    relations = ["directed_by", "starred_actors", "release_year", "has_genre"]
    local = relation_look(llama_model, "who directed Heat", relations)
    remote = relation_look(server_model, "who directed Heat", relations)
    assert max(remote.gain, key=remote.gain.get) == max(local.gain, key=local.gain.get)
    assert all(abs(remote.gain[r] - local.gain[r]) < MEAN_TOL for r in relations), (local.gain, remote.gain)
    assert remote.calls[0].purpose == "reads.reading (the relations the question asks about)"


def test_dog_beam_over_a_walk_server_says_what_it_needs(server_model):
    trace = _run("dog", server_model, {**DOG_PARAMS, "beam_size": 2})
    assert "beam_size 2 over this server needs batched prompt log-probs" in trace.error
    assert "traceback" not in trace.extra


# ------------------------------------------------------------------ errors
def test_server_killed_mid_run_fails_the_run_keeping_its_steps(gguf, tmp_path):
    server = LlamaServer(gguf, tmp_path / "doomed.log")
    try:
        model = connect_server(server.url, timeout=60)
        trace = _run("dog", model, DOG_PARAMS, on_step=lambda step: server.kill())
    finally:
        server.stop()
    assert "is not reachable" in trace.error and model.url in trace.error
    assert len(trace.steps) >= 1 and "traceback" not in trace.extra
    assert "Traceback" not in trace.error


@pytest.mark.parametrize("mode,passing,timeout,expect", [
    ("500", 1, 600, "HTTP 500: injected failure"),  # the run's first request passes, the next fails
    ("slow", 0, 2, "did not answer /v1/completions within 2 s (timeout)"),
])
def test_a_500_or_a_timeout_mid_run_is_one_line(llama_server, mode, passing, timeout, expect):
    proxy = FaultProxy(llama_server.url, mode=mode, after=10_000, delay=6)
    try:
        model = connect_server(proxy.url, timeout=timeout)
        proxy.after = proxy.seen + passing
        trace = _run("dog", model, DOG_PARAMS)
    finally:
        proxy.close()
    assert expect in trace.error, trace.error
    assert "\n" not in trace.error and not trace.answers


def test_a_server_without_logprobs_is_refused_by_the_steps_that_need_them(llama_server):
    proxy = FaultProxy(llama_server.url, mode="strip-logprobs")
    try:
        model = connect_server(proxy.url)
        assert not model.caps.generated_logprobs and model.caps.triplet_strategy == ""
        dog = _run("dog", model, DOG_PARAMS)
        reads = _run("reads", model, {"question_relations": False})  # a choice to score (one option needs no call)
        direct = _run("direct", model, {"max_new_tokens": 24})
    finally:
        proxy.close()
    assert "DoG's triplet step needs exact token log-probabilities" in dog.error
    # the default reader cannot score the model's path choice there: the question is read by the names alone
    default = _run("dog", connect_server(llama_server.url), {"max_new_tokens": 8, "max_steps": 1})
    assert not default.error or "log-probabilities" not in default.error
    assert dog.steps == [] or all(s.kind != "dog.triplet" for s in dog.steps)
    assert "needs log-probabilities of given continuations" in reads.error
    assert not direct.error  # plain generation needs no log-probs


def test_cli_reports_a_dead_server_in_one_line(tmp_path, capsys):
    from kgqa_core.cli import main
    from server_fixtures import free_port

    graph = tmp_path / "heat.tsv"
    graph.write_text("Heat\tdirected_by\tMichael Mann\n", encoding="utf-8")
    rc = main(["ask", "--graph", str(graph), "--question", QUESTION, "--topic", "Heat", "--method", "direct",
               "--server", f"127.0.0.1:{free_port()}"])
    err = capsys.readouterr().err
    assert rc != 0 and "is not reachable (connection refused" in err and "Traceback" not in err


def test_eval_saves_a_failed_run_when_the_server_dies(server_model, llama_server, tmp_path):
    from kgqa_core.eval.runner import load_results, run_eval

    dataset = tmp_path / "q.jsonl"
    triples = [list(t.as_tuple) for t in _heat().triplets]
    rows = [{"id": f"q{i}", "question": QUESTION, "answers": ["Michael Mann"], "topic_entities": ["Heat"],
             "graph": triples} for i in range(2)]
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    proxy = FaultProxy(llama_server.url, mode="500", after=10_000)
    try:
        model = connect_server(proxy.url)
        proxy.after = proxy.seen + 1  # q0 runs, q1 meets the 500
        run_eval(dataset, ["direct"], model.name, tmp_path / "run", model=model, progress=False,
                 params={"max_new_tokens": 24}, n_boot=10)
    finally:
        proxy.close()
    records = {r["id"]: r for r in load_results(tmp_path / "run")}
    assert set(records) == {"q0", "q1"}
    assert not records["q0"]["error"] and "HTTP 500: injected failure" in records["q1"]["error"]


# ------------------------------------------------------------------ vLLM
def _gpu_and_vllm() -> bool:
    import torch

    return torch.cuda.is_available() and importlib.util.find_spec("vllm") is not None


@pytest.mark.skipif(not _gpu_and_vllm(), reason="needs a GPU and vllm")
def test_vllm_server_scores_triplets_in_one_batched_request(tmp_path, llama_model):
    """vLLM serving the 135M model: token-id prompts, batched, aligned prompt log-probs -> the 'score' strategy."""
    import subprocess
    import sys
    import time

    import requests

    from server_fixtures import free_port

    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model",
                             "HuggingFaceTB/SmolLM2-135M-Instruct", "--host", "127.0.0.1", "--port", str(port),
                             "--enable-prefix-caching", "--max-logprobs", "20"],
                            stdout=open(tmp_path / "vllm.log", "wb"), stderr=subprocess.STDOUT)
    try:
        deadline = time.time() + 600
        while time.time() < deadline:
            try:
                if requests.get(f"http://127.0.0.1:{port}/v1/models", timeout=2).ok:
                    break
            except requests.RequestException:
                time.sleep(2)
        model = connect_server(f"127.0.0.1:{port}", tokenizer="HuggingFaceTB/SmolLM2-135M-Instruct")
        assert model.caps.kind == "vllm" and model.caps.triplet_strategy == "score"
        trace = _run("dog", model, DOG_PARAMS)
        assert not trace.error
        assert all(s.extra["server_strategy"] == "score" and s.extra["forward_passes"] == 1
                   for s in trace.steps if s.kind == "dog.triplet")
        assert trace.answer_texts == _run("dog", llama_model, DOG_PARAMS).answer_texts
    finally:
        proc.terminate()
        proc.wait(timeout=60)


# ------------------------------------------------------------------ app
def test_app_connection_test_reports_capabilities_or_one_line(llama_server):
    from kgqa_ui.server_panel import connection_test, is_server_key, model_key, parse_key

    from server_fixtures import free_port

    report, backend = connection_test(llama_server.url)
    assert report.ok and backend is not None and report.strategy == "walk"
    text = "\n".join(report.lines())
    assert "DoG triplet steps: walk" in text and "cannot: " in text and "prompt_logprobs" in text
    assert "option scoring: as in process" in text  # the launcher's scoring route
    key = model_key(llama_server.url, report.model)
    assert is_server_key(key) and parse_key(key)["url"] == llama_server.url
    bad, none = connection_test(f"http://127.0.0.1:{free_port()}")
    assert not bad.ok and none is None
    assert bad.lines() == [bad.message] and "not reachable" in bad.message and "\n" not in bad.message


def _server_settings_page():
    from kgqa_ui.server_panel import render_server_settings

    render_server_settings()


def test_app_settings_panel_reports_a_dead_server_in_one_line():
    from streamlit.testing.v1 import AppTest

    from server_fixtures import free_port

    panel = AppTest.from_function(_server_settings_page, default_timeout=120).run()
    panel.text_input(key="set_server_url").set_value(f"http://127.0.0.1:{free_port()}").run()
    panel.button(key="set_server_test").click().run()
    assert not panel.exception and [e.value for e in panel.error] == ["The model server is not usable"]
    lines = [t.value for t in panel.text]
    assert len(lines) == 1 and "not reachable" in lines[0] and "\n" not in lines[0]
    assert "model_server_key" not in panel.session_state


def test_app_model_server_setting_runs_and_fails_in_one_line(llama_server, tmp_path, monkeypatch):
    """The app's journey: Settings -> Model server -> Test connection, then Ask over that server; a 500 mid-run
    shows one line on the page and the run is saved as failed with the steps done so far."""
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    from kgqa_ui.run_store import RunStore

    monkeypatch.setenv("KGQA_RUNS_DIR", str(tmp_path / "runs"))
    proxy = FaultProxy(llama_server.url, mode="500", after=10_000)
    try:
        panel = AppTest.from_function(_server_settings_page, default_timeout=300).run()
        panel.text_input(key="set_server_url").set_value(proxy.url).run()
        panel.button(key="set_server_test").click().run()
        assert not panel.exception and [s.value for s in panel.success]
        report = "\n".join(t.value for t in panel.text)
        assert "DoG triplet steps: walk" in report and "token_grammar" in report, report
        key = panel.session_state["model_server_key"]
        at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=300)
        at.session_state["model_server_key"] = key  # what the settings panel set in this session
        at.run()
        at.selectbox(key="ask_model").set_value(key).run()
        at.selectbox(key="ask_example").set_value(0).run()
        at.multiselect(key="ask_methods").set_value(["dog"]).run()
        for name, value in (("ask_beam", 1), ("ask_steps", 2), ("ask_budget", 30)):
            if name in {w.key for w in at.number_input}:
                at.number_input(key=name).set_value(value)
        if "ask_param_reader" in {w.key for w in at.selectbox}:  # the question read by names: no request of its own
            at.selectbox(key="ask_param_reader").set_value("lexicon")
        at.run()
        proxy.after = proxy.seen + 2  # the free text and the first triplet pass; the next request fails
        at.button(key="ask_run").click().run()
        for _ in range(300):
            job = at.session_state["ask_job"] if "ask_job" in at.session_state else None
            if job is None or job.done:
                break
            import time

            time.sleep(1)
            at.run()
        at.run()
    finally:
        proxy.close()
    assert not at.exception, [e.value for e in at.exception]
    errors = [e.value.replace("\\", "").replace("\u2060", "") for e in at.error]  # shown escaped (plain text)
    assert any("HTTP 500: injected failure" in e and "\n" not in e for e in errors), errors
    assert not any("Traceback" in e for e in errors)
    runs = RunStore(tmp_path / "runs").list()
    assert len(runs) == 1 and "HTTP 500" in runs[0].error and runs[0].n_steps >= 1


# ------------------------------------------------------------------ CLI, every method
def _heat_file(tmp_path):
    graph = tmp_path / "heat.tsv"
    graph.write_text("".join("\t".join(t.as_tuple) + "\n" for t in _heat().triplets), encoding="utf-8")
    return graph


CLI_PARAMS = {"dog": ["--max-steps", "2", "--param", "max_new_tokens=48", "--param", "reader=lexicon"], "cot": ["--param", "max_new_tokens=48"],
              "direct": ["--param", "max_new_tokens=24"], "reads": [], "rok": [], "lpkg": []}


@pytest.mark.parametrize("method", ["dog", "rok"])  # the same path for every method; eval below runs all six
def test_cli_ask_runs_a_method_over_the_server(server_model, llama_server, tmp_path, capsys, monkeypatch, method):
    from kgqa_core.cli import main

    monkeypatch.setenv("KGQA_SERVER_API_KEY", "sk-never-stored")
    out = tmp_path / "trace.json"
    rc = main(["ask", "--graph", str(_heat_file(tmp_path)), "--question", QUESTION, "--topic", "Heat", "--method",
               method, "--server", llama_server.url, "--server-model", server_model.name, "--trace-out", str(out),
               *CLI_PARAMS[method]])
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    saved = json.loads(out.read_text(encoding="utf-8"))
    assert not saved["error"] and saved["backend"] == "server"
    assert saved["extra"]["server"]["model"] == server_model.name and "capabilities" in saved["extra"]["server"]
    assert "sk-never-stored" not in out.read_text(encoding="utf-8") + captured.out + captured.err


def test_cli_ask_a_500_mid_run_is_one_line_and_the_trace_keeps_its_steps(server_model, llama_server, tmp_path,
                                                                         capsys):
    from kgqa_core.cli import main

    proxy = FaultProxy(llama_server.url, mode="500", after=10_000)
    out = tmp_path / "failed.json"
    try:
        import kgqa_core.models.server_model as sm

        real_connect = sm.connect_server

        def connect_then_arm(*a, **k):  # the probes pass; the run's third request fails
            backend = real_connect(*a, **k)
            proxy.after = proxy.seen + 2
            return backend

        sm.connect_server = connect_then_arm
        rc = main(["ask", "--graph", str(_heat_file(tmp_path)), "--question", QUESTION, "--topic", "Heat",
                   "--method", "dog", "--server", proxy.url, "--trace-out", str(out), *CLI_PARAMS["dog"]])
    finally:
        sm.connect_server = real_connect
        proxy.close()
    captured = capsys.readouterr()
    assert rc != 0 and "Traceback" not in captured.out + captured.err
    error_lines = [line for line in captured.out.splitlines() if line.startswith("error:")]
    assert len(error_lines) == 1 and "HTTP 500: injected failure" in error_lines[0]
    saved = json.loads(out.read_text(encoding="utf-8"))
    assert "HTTP 500" in saved["error"] and len(saved["steps"]) >= 1


def test_cli_eval_runs_every_method_over_the_server(server_model, llama_server, tmp_path):
    from kgqa_core.cli import main
    from kgqa_core.eval.runner import load_results

    dataset = tmp_path / "q.jsonl"
    row = {"id": "heat", "question": QUESTION, "answers": ["Michael Mann"], "topic_entities": ["Heat"],
           "graph": [list(t.as_tuple) for t in _heat().triplets]}
    dataset.write_text(json.dumps(row) + "\n", encoding="utf-8")
    rc = main(["eval", "--dataset", str(dataset), "--methods", ",".join(CLI_PARAMS), "--server", llama_server.url,
               "--server-model", server_model.name, "--out", str(tmp_path / "run"), "--param", "max_steps=2",
               "--param", "max_new_tokens=48"])
    assert rc == 0
    records = load_results(tmp_path / "run")
    assert sorted(r["method"] for r in records) == sorted(CLI_PARAMS)
    assert not [r["error"] for r in records if r["error"]]
    summary = json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))
    assert "server" in json.dumps(summary)


def _first_token_logprobs(url: str, prompt: str) -> dict[str, float]:
    """The server's top log-probs of the first token after `prompt` (greedy, one token)."""
    import requests

    reply = requests.post(url + "/v1/completions", json={"prompt": prompt, "max_tokens": 1, "temperature": 0.0,
                                                          "logprobs": 5}, timeout=120)
    reply.raise_for_status()
    return reply.json()["choices"][0]["logprobs"]["top_logprobs"][0]


def test_the_launchers_scoring_route_gives_the_in_process_numbers(server_model, llama_model, monkeypatch):
    """Issue 32 (`kgqa_core.models.exact_scoring`): over the workbench's server, options are scored with the in-process
    backend's own reads, so every log-prob equals the in-process one to the last digit: the prompt's fixed part cut as
    in process (a question's reading), READS' listing read on after a shared start, and an end-of-sequence token far
    down the distribution, which llama-cpp-python's own server only bounds (from its top 20 log-probs)."""
    from kgqa_core.models.interface import PromptText

    assert server_model.caps.exact_scoring
    head = llama_model.chat_prompt("Examples: " + " ".join(f"< film{i} -> directed_by -> person{i} >" for i in range(12))
                                   + "\nName a film genre in one word.")
    fixed = head[: head.index("Name a film")]
    prompt = PromptText(head, fixed)
    options = ["Western<|im_end|>", "Comedy<|im_end|>", "Drama is good<|im_end|>"]
    for model in (llama_model, server_model):
        model.clear_prefix_cache()
    local = llama_model.score_continuations(prompt, options)
    remote = server_model.score_continuations(prompt, options)
    assert [s.token_logprobs for s in remote] == [s.token_logprobs for s in local]
    assert remote.forward_passes == 1
    assert local[0].token_logprobs[-1] < -12  # "Western" then the end: far outside the top 20
    # READS: a shared start read first, the listing stepped on after it, then the options
    ids = llama_model.encode(prompt)
    cut = len(llama_model.encode(fixed)) - 1
    scores = []
    for model in (llama_model, server_model):
        state = model.prefill(ids[:cut], fixed=cut - 3)
        model.step(state, ids[cut:])
        scores.append([s.token_logprobs for s in model.score_continuations(prompt, options, state=state)])
        model.release(state)
    assert scores[1] == scores[0]
    # without the route (llama-cpp-python's own server): each option forced, the end token only bounded
    monkeypatch.setattr(server_model.caps, "exact_scoring", False)
    bounds = server_model.eos_bounds
    forced = server_model.score_continuations(prompt, options)
    assert server_model.eos_bounds > bounds and forced.forward_passes == len(options)
    assert forced[0].token_logprobs[-1] > local[0].token_logprobs[-1] + 5


def test_llama_cpp_pythons_own_server_is_used_through_text_prompts_and_forced_scores(gguf, llama_model, tmp_path):
    """llama-cpp-python's own server (the launcher with ``KGQA_SERVER_ROUTES=0`` and ``KGQA_LLAMA_EXACT=0``: only its
    weights loaded as the file has them, as ``python -m llama_cpp.server`` crashes at its first completion on this
    project's CPUs): text prompts (re-tokenised), each option forced with an end-of-turn token read from the top
    log-probs, no batch cuts sent; a method still answers as in process on the fixture question."""
    stock = LlamaServer(gguf, tmp_path / "stock.log", env={"KGQA_SERVER_ROUTES": "0", "KGQA_LLAMA_EXACT": "0"})
    try:
        model = connect_server(stock.url)
        caps = model.caps
        assert not caps.token_prompts and not caps.exact_scoring and not caps.stop_reason
        assert any("text prompts only" in n for n in caps.notes)
        prompt = llama_model.chat_prompt("Which city is the capital of France? Answer with the city only.")
        a = llama_model.score_continuations(prompt, ["Paris<|im_end|>", "Lyon<|im_end|>"])
        b = model.score_continuations(prompt, ["Paris<|im_end|>", "Lyon<|im_end|>"])
        assert b.forward_passes == 2  # one forcing request per option
        diffs = [abs(u - v) for x, y in zip(a, b) for u, v in zip(x.token_logprobs, y.token_logprobs)]
        assert max(diffs) < SCORE_TOL, diffs
        assert model._cuts_for(model.encode(prompt)) is None
        local, remote = _run("dog", llama_model, DOG_PARAMS), _run("dog", model, DOG_PARAMS)
        assert not remote.error and remote.answer_texts == local.answer_texts
    finally:
        stock.stop()


@pytest.mark.parametrize("question", ["what were the release dates of Josette Day acted films",
                                      "who directed the film Halls of Montezuma"])
def test_a_server_chain_is_read_in_the_batches_of_the_in_process_one(gguf, tmp_path, monkeypatch, question):
    """Issue 32: the launcher ends a request's batches where the in-process reads end theirs (``kgqa_cuts``: a
    method's fixed part, the prompt before the chain's opening words), so the server's first triplet is the
    in-process one where a plain read of the same ids chose another (MetaQA "what were the release dates of Josette
    Day acted films": a fresh read gives " Jos" -2.19 and " Beauty" -2.24, the in-process reads 2.99 nats apart).
    And the launcher says what ended a text (``stop_reason``), so an answer line ended by EOS right after its period
    ("... * The General Died at Dawn.") is not taken for a triplet's opening ("." and "<" make one token).
    Both sides at one thread: llama.cpp's numbers move with the thread count (at two threads each, the first of
    these chains parts at its second triplet)."""
    from kgqa_core.models.manager import _load_llama
    from kgqa_core.reading import guidance

    rows = [json.loads(line) for line in (Path(__file__).resolve().parents[2] / "datasets" / "metaqa_sample" /
                                         "metaqa_dev_50.jsonl").read_text(encoding="utf-8").splitlines() if line]
    q = next(r for r in rows if r["question"] == question)
    monkeypatch.setenv("KGQA_THREADS", "1")
    llama_model = _load_llama("smollm2-135m", None)
    assert llama_model.threads == 1
    server = LlamaServer(gguf, tmp_path / "server.log", threads=1)
    traces = []
    try:
        for model in (llama_model, connect_server(server.url)):
            guidance.clear_readings()
            req = MethodRequest(graph=KnowledgeGraph.from_triplets(q["graph"], name=q["id"]), question=q["question"],
                                model=model, topic_entities=q["topic_entities"])
            traces.append(run_method("dog", req))
    finally:
        server.stop()
    local, remote = traces
    assert not remote.error
    assert remote.raw_output == local.raw_output
    assert remote.answer_texts == local.answer_texts


def test_the_scoring_route_refuses_bad_requests_in_one_line(llama_server):
    from kgqa_core.models.exact_scoring import SCORING_PATH

    client = ServerClient(llama_server.url)
    for body, expect in (({"prompt": [], "options": [[1]]}, "prompt: empty"),
                         ({"prompt": [1, 2], "options": [["a"]]}, "options[0]: a list of token ids"),
                         ({"prompt": [1, 10 ** 9], "options": []}, "outside the vocabulary"),
                         ({"prompt": [1, 2], "options": [[3]], "fixed": -1}, "fixed: a whole number")):
        with pytest.raises(ServerError, match="HTTP 400") as err:
            client.post(SCORING_PATH, body)
        assert expect in str(err.value)


def test_launcher_reads_a_parting_prompt_as_a_new_server_does(gguf, tmp_path):
    """Issue 32 on the server (`kgqa_core.models.llama_server`): a prompt that shares 300 tokens with the request before
    it is read from the last whole batch, so its log-probs are those of a new server reading it, to the last digit.
    (llama-cpp-python alone reads on from token 300: a batch of under 64 tokens where a new server reads one of 94,
    which moved the numbers on this project's CPUs.)"""
    shared = "Examples: " + " ".join(f"< film{i} -> directed_by -> person{i} >" for i in range(30))
    first = shared + " Question: who directed film3? Answer:"
    second = shared + " Question: who directed film7, and who directed film9? Answer: <"
    warm = LlamaServer(gguf, tmp_path / "warm.log")
    try:
        _first_token_logprobs(warm.url, "Something else entirely. " * 40)
        _first_token_logprobs(warm.url, first)
        after_first = _first_token_logprobs(warm.url, second)
        again = _first_token_logprobs(warm.url, second)  # the same prompt again: served from the cache
    finally:
        warm.stop()
    cold = LlamaServer(gguf, tmp_path / "cold.log")
    try:
        fresh = _first_token_logprobs(cold.url, second)
    finally:
        cold.stop()
    assert after_first == fresh
    assert again == fresh


def test_the_answer_item_among_reached_names_is_the_same_over_the_server(server_model, llama_model):
    """`decoders.answer_among` (DoG's first answer at a sure reading's depth) walks the names' trie over the server
    as in process: the same item, the same tokens."""
    from kgqa_core.decoding.decoders import answer_among

    prompt = ("Context: [ Heat -> starred_actors -> Al Pacino | Heat -> starred_actors -> Robert De Niro ]\n"
              "Question: who starred in Heat?\nAnswer: < Heat -> starred_actors -> Al Pacino > Therefore, the answer is")
    names = ["Robert De Niro", "Al Pacino", "Tom Cruise"]
    items = []
    for m in (llama_model, server_model):
        state = m.prefill(m.encode(prompt))
        items.append(answer_among(m, state, names))
    local, remote = items
    assert remote.text == local.text and remote.ids == local.ids, (local.text, remote.text)
    assert remote.text.removeprefix(" * ") in names


def test_a_run_is_dropped_on_a_server_as_in_process(server_model, llama_model):
    """The run cut (`free_text.drop_run`) replayed over a server's reply: the same kept text, run and sequence."""
    from kgqa_core.decoding.free_text import decode_free_text
    from kgqa_core.decoding.server_steps import RemoteDecoding
    from kgqa_core.models.server_model import ServerSequence

    run = "Steps: 1. < A -> r -> B > 2. < B -> s -> C >3." + "2." * 12
    ids = llama_model.encode(run)
    local = decode_free_text(llama_model, llama_model.prefill(ids), 60, detector=None)
    state = ServerSequence(list(ids))
    remote = RemoteDecoding(server_model).free_text(state, 60, None)
    assert local.stop == remote.stop == "repeat" and local.dropped and remote.dropped == local.dropped
    assert remote.text == local.text and remote.ids == local.ids
    assert list(state.ids) == ids + remote.ids


def test_a_forced_line_that_names_nothing_chooses_among_the_chain_entities_over_the_server(
        server_model, llama_model, monkeypatch):
    """A forced answer line whose only item began copying a triplet names nothing: what the model wrote leaves the
    sequence and the item is chosen among the chain's entities (`force_conclusion`'s ``fallback``), over the
    server as in process: the same item, the same tokens, the same sequence after it."""
    import kgqa_core.decoding.decoders as decoders
    from kgqa_core.decoding.free_text import FreeText

    def copies_a_triplet(model, state, *args, **kwargs):  # what the 135M wrote: ' Heat ->', cut by the line's rule
        ids = model.encode(" Heat ->")
        model.step(state, ids[:-1])
        return FreeText("", ids, "stop")

    prompt = ("Context: [ Heat -> starred_actors -> Al Pacino | Heat -> starred_actors -> Robert De Niro ]\n"
              "Question: who starred in Heat?\nAnswer: < Heat -> starred_actors -> Al Pacino >")
    names = ["Robert De Niro", "Al Pacino"]
    monkeypatch.setattr(decoders, "free_text", copies_a_triplet)
    lines, states = [], []
    for m in (llama_model, server_model):
        state = m.prefill(m.encode(prompt))
        lines.append(decoders.force_conclusion(m, state, item_marker=True, fallback=names))
        states.append(list(state.ids))
    local, remote = lines
    assert local.chosen_among and remote.chosen_among
    assert remote.text == local.text and remote.ids == local.ids, (local.text, remote.text)
    assert states[0] == states[1] and local.text.removeprefix(" Therefore, the answer is * ") in names


def test_an_answer_taken_back_goes_on_over_the_server_as_in_process(server_model, llama_model):
    """DoG takes back an answer line written before the reading's depth and goes on (`ChainBeam._walk_on`); over a
    server that step read the sequence's logits, which a server does not return, and the question failed with "a
    model server returns no full next-token distribution" (seen in `benchmarks/cold_warm.py --server`, two of 20).
    The MetaQA question whose 135M chain answers after one hop of its two, with its whole sample graph."""
    from kgqa_core.eval.dataset import load_dataset
    from kgqa_core.reading import guidance

    path = Path(__file__).resolve().parents[2] / "datasets/metaqa_sample/metaqa_dev_50.jsonl"
    q = next(q for q in load_dataset(path) if q.question == "which film did Luke Wilson write the story for")
    traces = []
    for m in (llama_model, server_model):
        guidance.clear_readings()
        traces.append(run_method("dog", MethodRequest(graph=q.graph(), question=q.question, model=m,
                                                      topic_entities=q.topic_entities)))
    local, remote = traces
    assert not local.error and not remote.error, remote.error
    assert remote.raw_output == local.raw_output and remote.answers[0].text == local.answers[0].text
    assert remote.extra.get("answers_taken_back", 0) >= 1, "the chain took an answer back and went on"

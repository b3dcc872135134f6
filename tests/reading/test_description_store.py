"""The model's relation descriptions kept on disk (`reading/description_store.py`): a new process reads back what
the same model file said to the same prompt, and asks again when anything about them differs.

Real components: the packaged embedder, the 135M model on both backends, and for the new process a real second
`python -m kgqa_core ask` run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kgqa_core.graph import KnowledgeGraph
from kgqa_core.reading.description_store import DescriptionStore, model_identity
from kgqa_core.reading.drafting import describe_relations, forget_descriptions
from kgqa_core.reading.paths import relation_paths
from test_describe_relations import FRENCH, embedder  # noqa: F401  (the same graph, and the embedder fixture)

ROOT = Path(__file__).resolve().parents[2]


def _graph() -> KnowledgeGraph:
    return KnowledgeGraph.from_triplets(FRENCH, name="french")


@pytest.fixture
def store_dir(tmp_path, monkeypatch):
    folder = tmp_path / "descriptions"
    monkeypatch.setenv("KGQA_DESCRIPTION_CACHE", str(folder))
    return folder


def test_a_new_process_reads_back_the_descriptions_and_asks_nothing(embedder, backend_model, store_dir):
    g = _graph()
    plans = relation_paths(g, ["Faust (traduction)"])
    first = describe_relations(backend_model, g, plans, None, embedder)
    assert first.drafted_now and first.from_disk == [] and first.costs.tokens_written > 0
    assert len(list(store_dir.rglob("*.json"))) == len(first.drafted_now)
    forget_descriptions()  # what a new process knows: nothing in memory
    before = backend_model.counter.tokens_out
    again = describe_relations(backend_model, g, plans, None, embedder)
    assert backend_model.counter.tokens_out == before and again.costs.tokens_written == 0
    assert again.from_disk == again.drafted_now == first.drafted_now and again.used == first.used
    assert "read back rather than asked again" in again.sentence()
    assert again.to_dict()["from_disk"] == first.drafted_now


def test_a_broken_entry_or_another_model_is_asked_again(embedder, llama_model, store_dir):
    g = _graph()
    plans = relation_paths(g, ["Faust (traduction)"])
    first = describe_relations(llama_model, g, plans, None, embedder)
    for path in store_dir.rglob("*.json"):
        path.write_text("{not json")
    forget_descriptions()
    broken = describe_relations(llama_model, g, plans, None, embedder)
    assert broken.from_disk == [] and broken.costs.tokens_written > 0 and broken.used == first.used
    assert all(isinstance(json.loads(p.read_text())["aliases"], list) for p in store_dir.rglob("*.json"))  # rewritten
    forget_descriptions()
    assert describe_relations(llama_model, g, plans, None, embedder).from_disk == first.drafted_now


def test_another_model_file_or_prompt_finds_nothing(tmp_path):
    mine = DescriptionStore(tmp_path, "llama.cpp\x1fsmollm2-135m\x1fabc123\x1f")
    mine.put("Relation: traducteur ...", ["translator"])
    assert mine.get("Relation: traducteur ...") == ["translator"]
    assert DescriptionStore(tmp_path, "llama.cpp\x1fsmollm2-135m\x1fdef456\x1f").get("Relation: traducteur ...") is None
    assert mine.get("Relation: traducteur, other facts") is None


def test_a_model_without_a_fixed_identity_or_the_store_off_keeps_nothing(monkeypatch, tmp_path):
    class Unversioned:
        backend, name, revision = "server", "somewhere", ""

    class Folder:
        backend, name, revision = "transformers", "my-model", "local"

    class Packaged:
        backend, name, revision = "llama.cpp", "smollm2-135m", "abc123"

    monkeypatch.setenv("KGQA_DESCRIPTION_CACHE", str(tmp_path))
    assert DescriptionStore.for_model(Unversioned()) is None and DescriptionStore.for_model(Folder()) is None
    store = DescriptionStore.for_model(Packaged())
    assert store is not None and store.folder == tmp_path
    store.put("a prompt", ["translator"])
    assert store.get("a prompt") == ["translator"] and store.get("another prompt") is None
    monkeypatch.setenv("KGQA_DESCRIPTION_CACHE", "0")
    assert DescriptionStore.for_model(Packaged()) is None


def _ask(graph: Path, trace: Path, env: dict) -> dict:
    cmd = [sys.executable, "-m", "kgqa_core", "ask", "--graph", str(graph), "--question",
           "who is the translator of Faust (traduction)?", "--topic", "Faust (traduction)", "--method", "dog",
           "--model", "smollm2-135m", "--backend", "llama.cpp", "--max-steps", "2", "--trace-out", str(trace)]
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(trace.read_text())


def test_the_second_ask_on_the_command_line_reads_the_first_ones_descriptions(tmp_path, llama_model):
    """Two real processes, one after the other, as a user runs `ask` twice: the second asks the model nothing
    for the descriptions and says so, with the same words."""
    graph = tmp_path / "french.tsv"
    graph.write_text("".join(f"{h}\t{r}\t{t}\n" for h, r, t in FRENCH))
    env = {**os.environ, "KGQA_DESCRIPTION_CACHE": str(tmp_path / "descriptions"), "OMP_NUM_THREADS": "1"}
    first = _ask(graph, tmp_path / "first.json", env)["extra"]["described_relations"]
    second_trace = _ask(graph, tmp_path / "second.json", env)
    second = second_trace["extra"]["described_relations"]
    assert first["drafted_now"] and first["from_disk"] == [] and first["tokens_written"] > 0
    assert second["from_disk"] == second["drafted_now"] == first["drafted_now"]
    assert second["tokens_written"] == 0 and second["entries"] == first["entries"]
    assert "read back rather than asked again" in second_trace["steps"][0]["note"]


def test_the_store_keeps_the_most_recently_used_entries(tmp_path):
    from kgqa_core.reading import description_store

    store = DescriptionStore(tmp_path / "d", "identity")
    prompts = [f"prompt {i}" for i in range(5)]
    for i, p in enumerate(prompts):
        store.put(p, [f"alias {i}"])
        os.utime(store._path(p), (1_000_000 + i, 1_000_000 + i))  # written one after another, oldest first
    assert store.get(prompts[0]) == ["alias 0"], "a read makes the oldest entry the newest"
    assert description_store.prune(tmp_path / "d", keep=3) == 2
    assert [store.get(p) for p in prompts] == [["alias 0"], None, None, ["alias 3"], ["alias 4"]]
    assert description_store.prune(tmp_path / "d", keep=3) == 0 and description_store.prune(tmp_path / "none") == 0


def test_a_process_prunes_a_folder_once_when_it_opens_it(tmp_path, monkeypatch, llama_model):
    from kgqa_core.reading import description_store

    folder = tmp_path / "descriptions"
    monkeypatch.setenv("KGQA_DESCRIPTION_CACHE", str(folder))
    monkeypatch.setattr(description_store, "MAX_ENTRIES", 2)
    monkeypatch.setattr(description_store, "_PRUNED", set())
    seeded = DescriptionStore(folder, "someone else's model")
    for i in range(4):
        seeded.put(f"old {i}", ["x"])
    opened = DescriptionStore.for_model(llama_model)
    assert opened is not None and len(list(folder.glob("??/*.json"))) <= 2
    for i in range(3):
        opened.put(f"new {i}", ["y"])
    assert DescriptionStore.for_model(llama_model) is not None
    assert len(list(folder.glob("??/*.json"))) >= 4, "pruned once per process, not on every opening"


def test_a_drafted_name_and_the_readers_description_of_it_are_one_prompt(embedder, llama_model, store_dir):
    """The draft (``vocabulary draft``, the Ask page's button) and the readers' own descriptions
    (``describe_other_languages``) tell the model the same about a name, so the readers find the draft's answer on
    disk and ask nothing: the two never disagree about what a relation means."""
    from kgqa_core.reading import language
    from kgqa_core.reading.drafting import draft_vocabulary, relation_facts

    if not language.available():
        pytest.skip("wordfreq (requirements.txt) is not installed")
    g = _graph()
    plans = relation_paths(g, ["Faust (traduction)"])
    relations = sorted({h.relation for p in plans for h in p.hops})
    draft_vocabulary(llama_model, relation_facts(iter(g)), relations)
    forget_descriptions()
    before = llama_model.counter.tokens_out
    read = describe_relations(llama_model, g, plans, None, embedder, other_languages=True)
    assert read.unread and read.languages, "the graph has names judged French"
    assert read.from_disk == read.drafted_now == read.unread and llama_model.counter.tokens_out == before

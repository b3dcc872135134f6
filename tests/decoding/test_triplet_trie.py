"""The token trie over G_q: exact in-context tokenisation and adversarial names."""

from __future__ import annotations

import time

import pytest
import torch

from kgqa_core.decoding.constraint import ConstraintError, OpeningDetector, TripletGuide, TrieLogitsProcessor
from kgqa_core.decoding.triplet_trie import TripletTokenCache, TripletTrie, triplet_body, triplet_surface
from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_core.models.generation import GenerationConfig

ADVERSARIAL = [
    ("Grand Bahama", "location.location.containedby", "Bahamas"),
    ("Grand Bahama", "location.location.containedby", "Bahamas Islands"),  # prefix name
    ("Bahamas", "location.country.capital", "Nassau"),
    ("Bahamas Islands", "location.country.capital", "Nassau"),
    (" Bahamas ", "padded.relation", "Nassau"),  # leading/trailing spaces
    ("Zürich", "located_in", "Schweiz 🇨🇭"),  # unicode
    ("東京", "capital_of", "日本"),
    ("Cat Island, Bahamas", "contained_by", "Bahamas"),  # comma
    ("A -> B", "weird", "C"),  # arrow inside names
    ("A", "B -> weird", "C"),  # renders identically to the previous one
    ("Heat", "directed_by", "Michael Mann"),  # same pair, two relations
    ("Heat", "written_by", "Michael Mann"),
    ("X > Y", "has", "Z"),  # closing bracket inside a name
    ("X", "has", "Z"),
    ("X", "has", "Z > W"),
] + [(f"Film {i}", "release_year", "1999") for i in range(12)]  # a shared relation


@pytest.fixture(scope="module")
def graph():
    return KnowledgeGraph.from_triplets(ADVERSARIAL, name="adversarial")


@pytest.fixture(scope="module")
def tok(small_model):
    return small_model.tokenizer


def _decode(small_model, ids):
    return small_model.decode(list(ids))


@pytest.mark.parametrize("opener", ["<", " <"])
def test_every_triplet_spells_its_surface_form_after_the_opener(small_model, graph, opener):
    trie = TripletTrie.build(graph.triplets, small_model.tokenizer, opener=opener)
    assert len(trie) == len(graph)
    for t in graph:
        ids = trie.sequences[t.id]
        # walking the trie along the ids ends at a node that names the triplet
        node = trie.walk(ids)
        assert node is not None and t.id in trie.triplets_at(node)
        # the ids spell the triplet exactly as the model would read it after the opener
        assert _decode(small_model, small_model.encode(opener) + list(ids)) == opener + triplet_body(
            t.head, t.relation, t.tail
        )


def test_ids_equal_joint_tokenisation_of_the_committed_text(small_model, graph):
    """What the decoder commits ("1." then " <" then trie ids) is what the tokenizer gives for the whole text."""
    trie = TripletTrie.build(graph.triplets, small_model.tokenizer, opener=" <")
    for t in graph:
        joint = small_model.encode("1. <" + triplet_body(t.head, t.relation, t.tail))
        committed = small_model.encode("1.") + small_model.encode(" <") + list(trie.sequences[t.id])
        assert committed == joint, t


def test_prefix_names_diverge_and_both_stay_reachable(small_model, graph):
    trie = TripletTrie.build(graph.triplets, small_model.tokenizer, opener=" <")
    a = graph.find("Grand Bahama", "location.location.containedby", "Bahamas")
    b = graph.find("Grand Bahama", "location.location.containedby", "Bahamas Islands")
    sa, sb = trie.sequences[a.id], trie.sequences[b.id]
    common = 0
    while sa[common] == sb[common]:
        common += 1
    node = trie.walk(sa[:common])
    assert set(trie.allowed(node)) >= {sa[common], sb[common]}
    assert trie.triplets_under(node) == tuple(sorted({a.id, b.id}))


def test_padded_name_is_distinct_from_the_plain_one(small_model, graph):
    trie = TripletTrie.build(graph.triplets, small_model.tokenizer, opener="<")
    plain = graph.find("Bahamas", "location.country.capital", "Nassau")
    padded = graph.find(" Bahamas ", "padded.relation", "Nassau")
    assert trie.sequences[plain.id] != trie.sequences[padded.id]
    assert small_model.decode(small_model.encode("<") + list(trie.sequences[padded.id])) == "<  Bahamas  -> padded.relation -> Nassau >"


def test_shared_relation_and_same_pair_with_two_relations(small_model, graph):
    trie = TripletTrie.build(graph.triplets, small_model.tokenizer, opener=" <")
    d = graph.find("Heat", "directed_by", "Michael Mann")
    w = graph.find("Heat", "written_by", "Michael Mann")
    assert trie.sequences[d.id] != trie.sequences[w.id]
    # after " Heat ->" both relations are allowed
    prefix = small_model.encode(" Heat ->")
    node = trie.walk(prefix)
    assert node is not None and set(trie.triplets_under(node)) == {d.id, w.id}
    films = [t.id for t in graph if t.relation == "release_year"]
    assert len({trie.sequences[i] for i in films}) == len(films)


def test_identical_renderings_share_a_leaf_with_both_ids(small_model, graph):
    trie = TripletTrie.build(graph.triplets, small_model.tokenizer, opener=" <")
    one = graph.find("A -> B", "weird", "C")
    two = graph.find("A", "B -> weird", "C")
    assert trie.sequences[one.id] == trie.sequences[two.id]
    assert set(trie.triplets_at(trie.walk(trie.sequences[one.id]))) == {one.id, two.id}


def test_a_triplet_can_end_where_a_longer_one_continues(small_model, graph):
    trie = TripletTrie.build(graph.triplets, small_model.tokenizer, opener=" <")
    short = graph.find("X", "has", "Z")
    longer = graph.find("X", "has", "Z > W")
    node = trie.walk(trie.sequences[short.id])
    assert trie.is_end(node) and not trie.is_leaf(node)
    assert longer.id in trie.triplets_under(node)


def test_mask_and_guide_allow_exactly_the_trie_children(small_model, graph):
    trie = TripletTrie.build(graph.triplets, small_model.tokenizer, opener=" <")
    guide = TripletGuide(trie)
    vocab = small_model.model.config.vocab_size
    logits = torch.randn(vocab)
    masked = guide.constrain(guide.initial_state, logits)
    finite = torch.isfinite(masked).nonzero().flatten().tolist()
    assert sorted(finite) == sorted(trie.allowed(trie.ROOT))
    assert trie.mask(trie.ROOT, vocab) is trie.mask(trie.ROOT, vocab)  # cached per node


def test_empty_trie_fails_loudly(small_model):
    trie = TripletTrie.build([], small_model.tokenizer, opener=" <")
    with pytest.raises(ConstraintError, match="G_q is empty"):
        TripletGuide(trie).allowed(trie.ROOT)


def test_logits_processor_constrains_generate_to_one_triplet(small_model, graph):
    """The guide plugged into plain greedy generation can only write a graph triplet."""
    trie = TripletTrie.build(graph.triplets, small_model.tokenizer, opener=" <")
    proc = TrieLogitsProcessor(TripletGuide(trie), end_ids=sorted(small_model.eos_ids))
    gen = small_model.generate("The capital of the Bahamas: <", GenerationConfig(max_new_tokens=40, logits_processor=proc))
    node = trie.walk(gen.token_ids)
    assert node is not None and trie.is_end(node), gen.text
    found = {graph.triplet(i).linearized() for i in trie.triplets_at(node)}
    assert any(gen.text.strip().startswith(s.split(" -> ")[0].strip()) for s in found)


def test_token_cache_tokenises_each_triplet_once(small_model, graph):
    cache = TripletTokenCache(small_model.tokenizer)
    first = cache.body_ids(graph.triplets, " <")
    calls = []
    orig = cache.tokenizer
    class Spy:
        def __getattr__(self, name):
            calls.append(name)
            return getattr(orig, name)
    cache.tokenizer = Spy()
    assert cache.body_ids(graph.triplets, " <") == first
    assert calls == []


def test_build_of_120_triplets_is_fast(small_model):
    """Target < 20 ms.  Measured as CPU time: the test machine is shared, so wall time
    there mostly measures other processes; on an idle machine the two agree."""
    triplets = [(f"Movie number {i}", ["directed_by", "starred_actors", "release_year"][i % 3], f"Person {i * 7}")
                for i in range(120)]
    g = KnowledgeGraph.from_triplets(triplets)
    TripletTrie.build(g.triplets[:2], small_model.tokenizer)  # warm the tokenizer
    cpu = wall = float("inf")
    for _ in range(5):
        t0, c0 = time.perf_counter(), time.process_time()
        TripletTrie.build(g.triplets, small_model.tokenizer, opener=" <")
        cpu = min(cpu, time.process_time() - c0)
        wall = min(wall, time.perf_counter() - t0)
    assert cpu < 0.020, f"trie build took {cpu * 1000:.1f} ms of CPU"
    assert wall < 0.200, f"trie build took {wall * 1000:.1f} ms"


def test_opening_detector_finds_fused_openers(small_model):
    det = OpeningDetector.for_tokenizer(small_model.tokenizer)
    for text in ["<", " <", "<<"]:
        ids = small_model.encode(text)
        assert len(ids) == 1 and det.is_opening(ids[0]), text
    assert det.opener_text(small_model.encode("<<")[0]) == "<"
    assert det.is_pure(small_model.encode(" <")[0]) and not det.is_pure(small_model.encode("<<")[0])
    for special in small_model.eos_ids:
        assert not det.is_opening(special)
    assert not det.is_opening(small_model.encode(" Bahamas")[0])
    assert triplet_surface("a", "b", "c") == "< a -> b -> c >"

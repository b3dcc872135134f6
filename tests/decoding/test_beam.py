"""Token-level decoding of one triplet: greedy with jump-forward, beam search, Eq. 3 scores."""

from __future__ import annotations

import pytest
import torch

from kgqa_core.decoding.beam import TripletBeamSearch
from kgqa_core.decoding.chain_beam import BeamCandidate, select_chains
from kgqa_core.decoding.constraint import TripletGuide
from kgqa_core.decoding.triplet_trie import TripletTrie
from kgqa_core.graph.knowledge_graph import KnowledgeGraph

G = KnowledgeGraph.from_triplets(
    [
        ("Heat", "directed_by", "Michael Mann"),
        ("Heat", "written_by", "Michael Mann"),
        ("Heat", "starred_actors", "Al Pacino"),
        ("Heat", "starred_actors", "Robert De Niro"),
        ("Heat", "release_year", "1995"),
        ("Heat (1986 film)", "starred_actors", "Burt Reynolds"),
    ]
)
PROMPT = (
    "Facts: Heat -> directed_by -> Michael Mann | Heat -> starred_actors -> Al Pacino | "
    "Heat -> release_year -> 1995\nQuestion: who directed Heat?\nAnswer: 1. <"
)
TOL = 0.15  # bf16 logits of a batched forward differ slightly from token-by-token ones


@pytest.fixture(scope="module")
def setup(small_model):
    ids = small_model.encode(PROMPT)
    assert small_model.decode(ids[-1:]) == " <"
    trie = TripletTrie.build(G.triplets, small_model.tokenizer, opener=" <")
    base = small_model.prefill(ids)
    return small_model, trie, base


def _reference_greedy(model, state, trie):
    """Constrained greedy decoding one token and one forward pass at a time (Eq. 2 mask)."""
    guide = TripletGuide(trie)
    node, toks, score = trie.ROOT, [], 0.0
    while not trie.is_leaf(node):
        logits = guide.constrain(node, state.logits)
        tok = int(torch.argmax(logits))
        score += float(torch.log_softmax(state.logits, -1)[tok])
        toks.append(tok)
        node = trie.advance(node, tok)
        model.step(state, [tok])
    return toks, score, node


def _exact_score(model, state, ids):
    s = state.fork()
    rows = [torch.log_softmax(s.logits, -1)]
    logits, _ = model.forward(torch.tensor([list(ids)]), s.cache)
    rows += list(torch.log_softmax(logits[0], -1))
    return float(sum(rows[i][t] for i, t in enumerate(ids)))


def test_greedy_matches_token_by_token_decoding_with_fewer_forward_passes(setup):
    model, trie, base = setup
    ref_toks, ref_score, ref_node = _reference_greedy(model, base.fork(), trie)
    state = base.fork()
    before = model.counter.forward_passes
    result = TripletBeamSearch(model, 1).search(state, TripletGuide(trie))
    passes = model.counter.forward_passes - before
    hyp = result.hypotheses[0]
    assert hyp.token_ids == ref_toks
    assert hyp.triplet_ids == trie.triplets_at(ref_node)
    assert hyp.score == pytest.approx(ref_score, abs=TOL)
    assert passes == result.forward_passes
    assert passes < len(hyp.token_ids)  # forced tokens were fed together
    assert state.ids == base.ids + hyp.token_ids  # the state now ends after the triplet
    # the token view: each position lists allowed tokens with probabilities and the count
    assert [p.token for p in hyp.positions] == hyp.token_ids
    assert all(p.token in p.allowed_logprobs for p in hyp.positions)
    assert len(hyp.positions[0].allowed_logprobs) == len(trie.allowed(trie.ROOT))


def test_candidate_scores_are_exact_or_true_upper_bounds(setup):
    model, trie, base = setup
    result = TripletBeamSearch(model, 1).search(base.fork(), TripletGuide(trie))
    assert set(result.candidates) == set(trie.sequences)
    for tid, cs in result.candidates.items():
        exact = _exact_score(model, base, trie.sequences[tid])
        if cs.exact:
            assert cs.score == pytest.approx(exact, abs=TOL)
        else:
            assert cs.score >= exact - TOL, (G.triplet(tid), cs.score, exact)


def test_beam_returns_distinct_best_triplets_with_exact_scores(setup):
    model, trie, base = setup
    state = base.fork()
    result = TripletBeamSearch(model, 3).search(state, TripletGuide(trie))
    hyps = result.hypotheses
    assert len(hyps) == 3
    assert len({h.triplet_id for h in hyps}) == 3
    assert [h.score for h in hyps] == sorted((h.score for h in hyps), reverse=True)
    for h in hyps:
        assert h.score == pytest.approx(_exact_score(model, base, h.token_ids), abs=TOL)
        assert trie.walk(h.token_ids) is not None and trie.is_end(trie.walk(h.token_ids))
    assert state.ids == base.ids  # beam search leaves the parent state as it was
    greedy = TripletBeamSearch(model, 1).search(base.fork(), TripletGuide(trie)).hypotheses[0]
    assert hyps[0].score >= greedy.score - TOL


def test_select_chains_keeps_best_k_by_summed_triplet_scores():
    def chain(scores):
        return BeamCandidate(state=None, subgraph=None, triplet_scores=scores)  # type: ignore[arg-type]

    a, b, c = chain([-1.0, -0.5]), chain([-0.2]), chain([-0.1, -3.0])
    kept, dropped = select_chains([a, b, c], 2)
    assert kept == [b, a] and dropped == [c]
    assert a.score == pytest.approx(-1.5)

"""Graph-aware constrained decoding (DoG) and the pieces DoG, CoT and Direct share.

* `prompt`: the Tab. 6 prompt, its Direct variant, answer and triplet parsing;
* `context`: topic entities, the pruned prompt context, the built prompt;
* `query_subgraph`: G_q (Eq. 1);
* `triplet_trie`: the token trie over G_q, tokenised in decoding context;
* `constraint`: guides (which tokens may come next) and the opening detector;
* `free_text`: greedy free text between triplets and where it stops;
* `beam`: one triplet under the trie (greedy or token-level beam), chains of the
  triplet-level beam.
"""

from .beam import BeamCandidate, TripletBeamSearch, TripletHypothesis, select_chains
from .constraint import ConstraintError, OpeningDetector, TripletGuide, TrieLogitsProcessor
from .prompt import build_prompt, parse_answers, parse_written_triplets
from .query_subgraph import QueryCentricSubgraph
from .triplet_trie import TripletTokenCache, TripletTrie, triplet_surface

__all__ = [
    "BeamCandidate", "TripletBeamSearch", "TripletHypothesis", "select_chains",
    "ConstraintError", "OpeningDetector", "TripletGuide", "TrieLogitsProcessor",
    "build_prompt", "parse_answers", "parse_written_triplets",
    "QueryCentricSubgraph", "TripletTokenCache", "TripletTrie", "triplet_surface",
]

"""Graph-aware constrained decoding (DoG) and the pieces DoG, CoT and Direct share.

* `prompt`: the Tab. 6 prompt, its Direct variant, answer and triplet parsing;
* `context`: topic entities, the pruned prompt context, the built prompt;
* `query_subgraph`: G_q (Eq. 1);
* `triplet_trie`: the token trie over G_q, tokenised in decoding context;
* `constraint`: guides (which tokens may come next) and the opening detector;
* `free_text`: greedy free text between triplets and where it stops;
* `dog_guide`: `DogGuide`, one chain step's constraint as a state machine (free
  text, then a triplet at a trie node) in outlines' shape, and the tries it uses;
* `beam`: one triplet under the trie (greedy or token-level beam search);
* `chain_beam`: the triplet-level beam: every chain advances one triplet, the k best stay;
* `server_steps`: the free text and triplet steps over a model server;
* `decoders`: the steps a method calls, in process or over a model server.
"""

from .beam import TripletBeamSearch, TripletHypothesis
from .chain_beam import BeamCandidate, BeamRound, ChainBeam, select_chains
from .constraint import ConstraintError, OpeningDetector, TripletGuide, TrieLogitsProcessor
from .dog_guide import DogGuide, DogGuides
from .prompt import build_prompt, parse_answers, parse_written_triplets
from .query_subgraph import QueryCentricSubgraph
from .triplet_trie import TripletTokenCache, TripletTrie, triplet_surface

__all__ = [
    "TripletBeamSearch", "TripletHypothesis",
    "BeamCandidate", "BeamRound", "ChainBeam", "select_chains",
    "DogGuide", "DogGuides",
    "ConstraintError", "OpeningDetector", "TripletGuide", "TrieLogitsProcessor",
    "build_prompt", "parse_answers", "parse_written_triplets",
    "QueryCentricSubgraph", "TripletTokenCache", "TripletTrie", "triplet_surface",
]

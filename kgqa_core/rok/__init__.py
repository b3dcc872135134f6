"""RoK (Reasoning on Efficient Knowledge Paths) in parts.

``key_entities`` expands the question with one chain-of-thought call and
links what it mentions; ``paths`` enumerates bounded n-hop paths between key
entities; ``ranking`` keeps the top-k paths by PageRank bucket; ``branches``
builds and filters first-order neighbour branches with one model call;
``prompts`` holds the three prompts.  ``kgqa_core.methods.rok`` runs them.
"""

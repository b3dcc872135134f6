"""kgqa_core: the library behind the explainable KGQA workbench.

Graph loading and indexing, local model backends, the reasoning methods
(DoG, CoT, Direct, READS, RoK, LPKG) and evaluation metrics.  It never
imports Streamlit: the UI renders the `Trace` objects this library returns.
"""

__version__ = "0.1.0"

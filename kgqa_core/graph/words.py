"""The function words of English questions, which the graph's word matchers leave out.

One list, so that pruning (`pruning`), hub caps (`hub_caps`) and LPKG's
retrieval (`kgqa_core.lpkg.retrieval`) agree on what a content word is; each
adds the few words its own matching must also pass over.
"""

from __future__ import annotations

STOP_WORDS = frozenset(
    "a an the of in on at to for from by with and or is are was were be what which who whom whose when where "
    "how that this these those did do does has have had it its as".split()
)

"""Visible, reversible guidance on the Ask page (issue 30).

Two pieces: a result card's "Run again without guidance (paper preset)"
button (the same method, question, graph, topic entities, gold and
parameters, with ``preset=paper``), and a glossary of the guidance
parameters whose words are each parameter's declared ``help`` (read with
`kgqa_core.parameters.declared`), so it cannot drift from the code.
"""

from __future__ import annotations

from typing import Any, Iterable

import streamlit as st

from kgqa_core.parameters import declared

from .html_utils import md_text

PAPER = "paper"
# The guidance switches the glossary explains, in the order a run meets them.
GUIDANCE_TERMS = ("reader", "reading_quick_at", "reading_phrase_gain", "reading_joint", "reading_cover",
                  "reading_horizon", "reading_order", "reading_answer_kind", "reading_every_relation", "reading_one_arrow", "reading_stop_weight", "reading_read_back", "reading_look", "reading_kind_look", "reading_agree",
                  "reading_distinct", "reading_entity_free", "reading_listed", "reading_domain_words", "describe_relations", "describe_other_languages",
                  "reading_sure_at",
                  "sure_context_triplets", "guided_context_triplets",
                  "auto_steps", "walk_to_depth", "walk_out_first", "stay_at_depth", "past_horizon", "question_relations", "hop_order",
                  "conclude_at_depth", "answer_among_reached", "complete_answers", "chain_answers_first", "meet_topics",
                  "plan_leads_answers",
                  "preset")
GLOSSARY_TITLE = "What the guidance terms mean"
RERUN_LABEL = "Run again without guidance (paper preset)"


def paper_preset(method: str) -> dict[str, Any] | None:
    """What the paper preset sets for `method` (None when the method has no paper preset)."""
    from kgqa_core.methods.base import method_spec

    try:
        params_cls = method_spec(method).params
    except Exception:
        return None
    presets = getattr(params_cls, "PRESETS", None) or {}
    return dict(presets[PAPER]) if PAPER in presets else None


def offers_paper_rerun(trace: Any) -> bool:
    """A workbench run (or one saved before presets) of a method that has a paper preset."""
    params = getattr(trace, "parameters", None) or {}
    return params.get("preset", "workbench") in (None, "", "workbench") and paper_preset(trace.method) is not None


def paper_params(trace: Any, requested: dict[str, Any] | None = None) -> dict[str, Any]:
    """The run's parameters with ``preset=paper``; the switches the paper preset sets are left to it.

    `requested` are the parameters the run was started with (the page keeps them with its card): the
    trace's own record can hold values the guidance changed (DoG's ``auto_steps`` raises ``max_steps``),
    so it is used only when they are not known (a card restored from an older session).
    """
    preset = paper_preset(trace.method) or {}
    given = requested if requested is not None else (trace.parameters or {})
    out = {k: v for k, v in given.items() if k not in preset}
    out["preset"] = PAPER
    return out


def rerun_button(trace: Any, run_id: str, *, graph: Any, model: str, busy: bool, on_start,
                 requested: dict[str, Any] | None = None) -> None:
    """The card's button (key ``ask_paper_again_<run_id>``); `on_start(spec)` starts the run."""
    if not offers_paper_rerun(trace):
        return
    same_graph = graph is not None and getattr(graph, "fingerprint", None) == trace.graph_fingerprint
    why = ("A run is going: wait for it" if busy else
           "Load this run's graph again to rerun it" if not same_graph else
           "Pick a model first" if not model else "")
    clicked = st.button(RERUN_LABEL, key=f"ask_paper_again_{run_id}", icon=":material/undo:", disabled=bool(why),
                        help=why or "The same method, question, graph, topic entities, gold and parameters, with "
                        "the paper preset: the algorithm as published, every workbench guidance off.")
    if clicked:
        from . import state
        from .run_job import RunSpec

        on_start(RunSpec(trace.method, graph, trace.question, tuple(trace.topic_entities), paper_params(trace, requested),
                         model,
                         vocabulary=state.graph_vocabulary(), gold=tuple(trace.gold_answers)))


def glossary(methods: Iterable[str] = ()) -> list[tuple[str, str]]:
    """(term, help) for each guidance term some method declares; the chosen `methods`' declarations first."""
    from kgqa_core.methods.base import method_specs

    specs = method_specs()
    order = [m for m in methods if m in specs] + [m for m in specs if m not in set(methods)]
    helps: dict[str, str] = {}
    for m in order:
        for info in declared(specs[m].params):
            if info.name in GUIDANCE_TERMS:
                helps.setdefault(info.name, info.help)
    return [(t, helps[t]) for t in GUIDANCE_TERMS if t in helps]


def glossary_expander(methods: Iterable[str] = ()) -> None:
    with st.expander(GLOSSARY_TITLE):
        st.caption("Each switch in the method's own words; the paper preset turns every guidance off.")
        st.markdown("\n".join(f"- **{md_text(term)}**: {md_text(help_text)}" for term, help_text in glossary(methods)))

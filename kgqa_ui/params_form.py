"""The Ask page's parameter form, built from the chosen methods' declared parameters.

Why from the declarations: the form can then only offer parameters that
apply to the chosen methods, with the range, default and help text the
method itself states, and a parameter several methods declare alike
(``max_prompt_triplets`` for DoG, CoT and Direct) is one widget.  Where the
same name means something else per method (``max_new_tokens`` defaults to
256 for DoG but 64 for Direct), each declaration gets its own widget, named
with its methods.  Everyday parameters come first; the rest wait under
"More parameters".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import streamlit as st

from kgqa_core.methods.base import MethodSpec
from kgqa_core.parameters import ParameterError, ParamInfo, coerce, declared, parse_params

# Where the app starts differently from the methods: an answer in seconds with the small model
# (docs/benchmarks.md, "Ask defaults"); the methods' own defaults apply on the command line and in evaluations.
ASK_PARAM_DEFAULTS: dict[str, object] = {"beam_size": 1, "max_steps": 2}
# Fixed session keys of the Ask form's everyday widgets (pages and tests address them by name).
ASK_PARAM_KEYS = {"beam_size": "ask_beam", "max_steps": "ask_steps", "hops": "ask_hops",
                  "max_prompt_triplets": "ask_budget"}
ASK_KEY_PREFIX = "ask_param_"


@dataclass
class FormField:
    """One widget: a declaration shared by one or more methods."""

    info: ParamInfo
    methods: list[str] = field(default_factory=list)
    split: bool = False  # the name is declared differently by another chosen method


def form_fields(specs: Sequence[MethodSpec]) -> list[FormField]:
    """The chosen methods' parameters, alike declarations merged, in first-declared order."""
    by_decl: dict[tuple, FormField] = {}
    names: dict[str, set[tuple]] = {}
    for spec in specs:
        for info in declared(spec.params):
            key = (info.name, info.kind, repr(info.default), info.minimum, info.maximum, info.choices)
            by_decl.setdefault(key, FormField(info)).methods.append(spec.name)
            names.setdefault(info.name, set()).add(key)
    fields = list(by_decl.values())
    for f in fields:
        f.split = len(names[f.info.name]) > 1
    return fields


def parameter_form(
    specs: Sequence[MethodSpec],
    *,
    defaults: Mapping[str, Any] | None = None,
    key_prefix: str = ASK_KEY_PREFIX,
    keys: Mapping[str, str] | None = None,
    per_row: int = 4,
) -> dict[str, dict[str, Any]]:
    """Widgets for `specs`' parameters; returns ``{method: {parameter: value}}``.

    ``defaults`` overrides declared defaults by name for this page (a demo's
    fast settings); each is checked against every declaration it overrides.
    ``keys`` gives a parameter's widget a fixed session-state key (pages and
    tests that address it by name).
    """
    fields = form_fields(specs)
    overrides = dict(defaults or {})
    values: dict[str, dict[str, Any]] = {spec.name: {} for spec in specs}
    main = [f for f in fields if not f.info.advanced]
    more = [f for f in fields if f.info.advanced]
    for group, container in ((main, st.container()), (more, st.expander("More parameters") if more else None)):
        if not group or container is None:
            continue
        with container:
            for start in range(0, len(group), per_row):
                cols = st.columns(per_row)
                for col, f in zip(cols, group[start:start + per_row]):
                    key = _key(f, key_prefix, keys or {})
                    default = coerce(f.info, overrides[f.info.name]) if f.info.name in overrides else f.info.default
                    with col:
                        value = _widget(f, default, key, several=len(specs) > 1)
                    for method in f.methods:
                        values[method][f.info.name] = value
    for spec in specs:  # widgets keep values in range; this reads free text (a plan) the same way the CLI does
        values[spec.name] = parse_params(spec, values[spec.name]).as_dict()
    return values


def ask_params(spec: MethodSpec, session: Mapping[str, Any]) -> dict[str, Any]:
    """What the Ask form sets for `spec`, for runs started on other pages (Explore's re-ask, Compare).

    A value the user set on the Ask page (its widget keeps it in the session) wins, then the app's
    starting values, then the method's declared default; values a method refuses fall back to its
    defaults, so another page never starts a run that fails on a parameter.
    """
    values: dict[str, Any] = {}
    for info in declared(spec.params):
        key = ASK_PARAM_KEYS.get(info.name, f"{ASK_KEY_PREFIX}{info.name}")
        if key in session:
            values[info.name] = session[key]
        elif info.name in ASK_PARAM_DEFAULTS:
            values[info.name] = ASK_PARAM_DEFAULTS[info.name]
    try:
        return parse_params(spec, values).as_dict()
    except ParameterError:
        return parse_params(spec, {k: v for k, v in values.items() if k not in session}).as_dict()


def _key(f: FormField, prefix: str, keys: Mapping[str, str]) -> str:
    if f.split:
        return f"{prefix}{f.info.name}::{'+'.join(f.methods)}"
    return keys.get(f.info.name, f"{prefix}{f.info.name}")


def _label(f: FormField, several: bool) -> str:
    text = f.info.name.replace("_", " ").capitalize()
    return f"{text} ({', '.join(f.methods)})" if several or f.split else text


def _widget(f: FormField, default: Any, key: str, several: bool) -> Any:
    # persist_state: a value set here survives a visit to another page (Streamlit drops unrendered widgets' state)
    info = f.info
    label = _label(f, several)
    help_text = f"{info.help} Default {info.describe_default()}; {info.allowed()}. Used by {', '.join(f.methods)}."
    if info.kind == "bool":
        return st.checkbox(label, value=bool(default), key=key, help=help_text, persist_state="session")
    if info.kind == "int":
        return int(st.number_input(label, min_value=int(info.minimum), max_value=int(info.maximum),
                                   value=int(default), step=1, key=key, help=help_text, persist_state="session"))
    if info.kind == "float":
        step = 0.01 if (info.maximum or 0) <= 1 else 0.1
        return float(st.number_input(label, min_value=float(info.minimum), max_value=float(info.maximum),
                                     value=float(default), step=step, key=key, help=help_text, persist_state="session"))
    if info.kind == "choice":
        return st.selectbox(label, list(info.choices), index=list(info.choices).index(default), key=key,
                            help=help_text, persist_state="session")
    if info.kind == "multi":
        return st.multiselect(label, list(info.choices), default=list(default), key=key,
                              help=help_text + " None selected means all.", persist_state="session")
    if info.multiline:
        return st.text_area(label, value=str(default), key=key, help=help_text, persist_state="session")
    return st.text_input(label, value=str(default), key=key, help=help_text, persist_state="session")

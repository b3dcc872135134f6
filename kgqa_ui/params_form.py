"""The Ask page's parameter form, built from the chosen methods' declared parameters.

Why from the declarations: the form can then only offer parameters that
apply to the chosen methods, with the range, default and help text the
method itself states, and a parameter several methods declare alike
(``max_prompt_triplets`` for DoG, CoT and Direct) is one widget.  Where the
same name means something else per method (``max_new_tokens`` defaults to
256 for DoG but 64 for Direct), each declaration gets its own widget, named
with its methods.  Everyday parameters come first; the rest wait under
"More parameters".

The methods' ``preset`` is not a widget here: the page offers it beside the
method choice and passes it in.  A parameter the chosen preset sets
(``walk_to_depth`` off for the paper) starts at the preset's value, under a
widget key of its own (``ask_param_walk_to_depth@paper``), so each preset
keeps what the user changed under it and switching back shows the other's.
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
# The Ask page's preset choice (every chosen method runs with it); the methods' own `preset` parameter.
ASK_PRESET_KEY = "ask_preset"
PRESET_PARAM = "preset"
PRESET_LABELS = {"workbench": "Workbench (guided)", "paper": "Paper (as published)"}
DEFAULT_PRESET = "workbench"
_UNSET = object()


@dataclass
class FormField:
    """One widget: a declaration shared by one or more methods."""

    info: ParamInfo
    methods: list[str] = field(default_factory=list)
    split: bool = False  # the name is declared differently by another chosen method
    preset_value: Any = _UNSET  # the chosen preset's value for it, when the preset sets it

    @property
    def preset_sets(self) -> bool:
        """Whether the chosen preset gives this parameter a value other than its declared default."""
        return self.preset_value is not _UNSET and self.preset_value != self.info.default


def preset_values(spec: MethodSpec, preset: str | None) -> dict[str, Any]:
    """What `preset` sets for `spec`'s parameters (its ``PRESETS``; nothing for the workbench's)."""
    presets = getattr(spec.params, "PRESETS", None) or {}
    return dict(presets.get(preset or DEFAULT_PRESET, {}))


def declares_preset(spec: MethodSpec) -> bool:
    return PRESET_PARAM in spec.params.__dataclass_fields__


def form_fields(specs: Sequence[MethodSpec], preset: str | None = None) -> list[FormField]:
    """The chosen methods' parameters (``preset`` aside), alike declarations merged, in first-declared order.

    Declarations are alike when their type, default, range and the chosen
    preset's value for them are.
    """
    by_decl: dict[tuple, FormField] = {}
    names: dict[str, set[tuple]] = {}
    for spec in specs:
        overrides = preset_values(spec, preset)
        for info in declared(spec.params):
            if info.name == PRESET_PARAM:
                continue
            value = overrides.get(info.name, _UNSET)
            key = (info.name, info.kind, repr(info.default), info.minimum, info.maximum, info.choices,
                   "" if value is _UNSET else repr(value))
            by_decl.setdefault(key, FormField(info, preset_value=value)).methods.append(spec.name)
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
    preset: str = DEFAULT_PRESET,
) -> dict[str, dict[str, Any]]:
    """Widgets for `specs`' parameters; returns ``{method: {parameter: value}}``.

    ``defaults`` overrides declared defaults by name for this page (a demo's
    fast settings); each is checked against every declaration it overrides.
    ``keys`` gives a parameter's widget a fixed session-state key (pages and
    tests that address it by name).  ``preset`` is the methods' preset: every
    method that declares one gets it, and the parameters it sets start at its
    values (a value the preset sets wins over ``defaults``).
    """
    fields = form_fields(specs, preset)
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
                    key = _key(f, key_prefix, keys or {}, preset)
                    if f.preset_value is not _UNSET:
                        default = coerce(f.info, f.preset_value)
                    elif f.info.name in overrides:
                        default = coerce(f.info, overrides[f.info.name])
                    else:
                        default = f.info.default
                    with col:
                        value = _widget(f, default, key, several=len(specs) > 1)
                    for method in f.methods:
                        values[method][f.info.name] = value
    for spec in specs:  # widgets keep values in range; this reads free text (a plan) the same way the CLI does
        if declares_preset(spec):
            values[spec.name][PRESET_PARAM] = preset
        values[spec.name] = parse_params(spec, values[spec.name]).as_dict()
    return values


def ask_params(spec: MethodSpec, session: Mapping[str, Any]) -> dict[str, Any]:
    """What the Ask form sets for `spec`, for runs started on other pages (Explore's re-ask, Compare).

    A value the user set on the Ask page (its widget keeps it in the session) wins, then the app's
    starting values, then the method's declared default; values a method refuses fall back to its
    defaults, so another page never starts a run that fails on a parameter.  The Ask page's preset
    (``ask_preset``) goes with it: a parameter it sets is read from that preset's widget, else its value.
    """
    preset = session_preset(session)
    overrides = preset_values(spec, preset)
    values: dict[str, Any] = {}
    from_session: set[str] = set()
    for info in declared(spec.params):
        if info.name == PRESET_PARAM:
            values[PRESET_PARAM] = preset
            continue
        key = ASK_PARAM_KEYS.get(info.name, f"{ASK_KEY_PREFIX}{info.name}")
        if info.name in overrides and overrides[info.name] != info.default:
            key += f"@{preset}"
        if key in session:
            values[info.name] = session[key]
            from_session.add(info.name)
        elif info.name in overrides:
            values[info.name] = overrides[info.name]
        elif info.name in ASK_PARAM_DEFAULTS:
            values[info.name] = ASK_PARAM_DEFAULTS[info.name]
    try:
        return parse_params(spec, values).as_dict()
    except ParameterError:
        return parse_params(spec, {k: v for k, v in values.items() if k not in from_session}).as_dict()


def session_preset(session: Mapping[str, Any]) -> str:
    """The preset chosen on the Ask page (the workbench's when none, or an unknown one, is)."""
    value = session.get(ASK_PRESET_KEY)
    return value if value in PRESET_LABELS else DEFAULT_PRESET


def _key(f: FormField, prefix: str, keys: Mapping[str, str], preset: str = DEFAULT_PRESET) -> str:
    if f.split:
        base = f"{prefix}{f.info.name}::{'+'.join(f.methods)}"
    else:
        base = keys.get(f.info.name, f"{prefix}{f.info.name}")
    return f"{base}@{preset}" if f.preset_sets else base


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
    # a bound a parameter does not declare is left open (None), not a crash of the page
    lo, hi = info.minimum, info.maximum
    if info.kind == "int":
        return int(st.number_input(label, min_value=None if lo is None else int(lo),
                                   max_value=None if hi is None else int(hi),
                                   value=int(default), step=1, key=key, help=help_text, persist_state="session"))
    if info.kind == "float":
        step = 0.01 if hi is not None and hi <= 1 else 0.1
        return float(st.number_input(label, min_value=None if lo is None else float(lo),
                                     max_value=None if hi is None else float(hi),
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

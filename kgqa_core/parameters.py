"""Declared, typed method parameters, and the one function that reads them.

Why one place: a parameter reaches a method as text from the command line
(``--param fallback_plan=false``), a URL or a form, or as JSON from a saved
run.  Read ad hoc, ``bool("false")`` is True and ``int("Infinity")`` a crash
without the parameter's name.  Each method instead declares a frozen
dataclass whose fields are its parameters, made with `param` (default,
one-line help, range or choices); `parse_params` turns a raw mapping into
that dataclass, coercing by the declared type and refusing unknown names,
empty names and bad values with a `ParameterError` that names the parameter
and what it accepts.  The command line's ``methods`` listing and the app's
parameter form are built from the same declarations.

This module sits at the bottom of the package (it imports nothing of it), so
the decoding layer can declare the prompt parameters DoG, CoT and Direct share.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import math
import typing
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

_META = "kgqa_param"
_TRUE, _FALSE = {"true", "yes", "on", "1"}, {"false", "no", "off", "0"}


class ParameterError(ValueError):
    """A parameter value (or name) a method cannot take; ``name`` says which."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(message)
        self.name = name


@dataclass(frozen=True)
class ParamInfo:
    """What a method declares about one parameter (read by the parser, the CLI listing and the UI form)."""

    name: str
    kind: str  # "int" | "float" | "bool" | "str" | "choice" | "multi" (several of `choices`)
    default: Any
    help: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    advanced: bool = False  # shown under "More parameters" in the app
    multiline: bool = False  # a text that spans lines (an LPKG plan)

    def allowed(self) -> str:
        """The accepted values in words, for messages and listings."""
        if self.kind == "bool":
            return "true or false"
        if self.kind in ("choice", "multi"):
            return ("one of " if self.kind == "choice" else "some of ") + ", ".join(self.choices)
        if self.kind in ("int", "float"):
            lo, hi = _fmt(self.minimum), _fmt(self.maximum)
            what = "a whole number" if self.kind == "int" else "a number"
            if lo is not None and hi is not None:
                return f"{what} from {lo} to {hi}"
            if lo is not None:
                return f"{what} of at least {lo}"
            if hi is not None:
                return f"{what} of at most {hi}"
            return what
        return "text"

    def describe_default(self) -> str:
        if self.kind == "multi":
            return ",".join(self.default) or "(none)"
        if self.kind == "bool":
            return "true" if self.default else "false"
        if self.kind == "str" and self.default == "":
            return '""'
        return str(self.default)


def param(
    default: Any,
    help: str,
    *,
    min: float | None = None,  # noqa: A002 - the declaration reads like the range it states
    max: float | None = None,  # noqa: A002
    choices: Iterable[str] = (),
    advanced: bool = False,
    multiline: bool = False,
) -> Any:
    """A dataclass field declaring one method parameter (its type is the field's annotation)."""
    meta = {"help": help, "min": min, "max": max, "choices": tuple(choices), "advanced": advanced,
            "multiline": multiline}
    if isinstance(default, (list, tuple)):
        return dataclasses.field(default=tuple(default), metadata={_META: meta})
    return dataclasses.field(default=default, metadata={_META: meta})


@dataclass(frozen=True)
class MethodParams:
    """Base of every method's parameter dataclass.

    Fields are read as attributes; ``params["beam_size"]`` also works, because
    the decoders index their settings by name.
    """

    def __getitem__(self, name: str) -> Any:
        if name not in {f.name for f in dataclasses.fields(self)}:
            raise KeyError(name)
        return getattr(self, name)

    def get(self, name: str, default: Any = None) -> Any:
        return getattr(self, name, default)

    def as_dict(self) -> dict[str, Any]:
        """JSON-native values, as recorded in ``Trace.parameters``."""
        return {f.name: list(v) if isinstance(v := getattr(self, f.name), tuple) else v
                for f in dataclasses.fields(self)}


def declared(params_cls: type[MethodParams]) -> list[ParamInfo]:
    """The declared parameters of a parameter dataclass, in declaration order."""
    hints = typing.get_type_hints(params_cls)
    out = []
    for f in dataclasses.fields(params_cls):
        meta = f.metadata.get(_META)
        if meta is None:
            raise TypeError(f"{params_cls.__name__}.{f.name} is not declared with param()")
        out.append(ParamInfo(
            name=f.name, kind=_kind(hints[f.name], meta["choices"], f.name), default=f.default,
            help=meta["help"], minimum=meta["min"], maximum=meta["max"], choices=meta["choices"],
            advanced=meta["advanced"], multiline=meta["multiline"],
        ))
    return out


def parse_params(spec: Any, raw: Mapping[str, Any] | None) -> MethodParams:
    """``raw`` (strings from the CLI/URL/UI, or JSON values) as the method's typed parameters.

    ``spec`` is a `MethodSpec` (its ``params`` class is used, its ``name`` goes
    into messages) or a parameter dataclass itself.  A value of ``None``
    means the default.  Raises `ParameterError` naming the parameter.
    """
    params_cls = getattr(spec, "params", spec)
    owner = getattr(spec, "name", "") or params_cls.__name__
    infos = {info.name: info for info in declared(params_cls)}
    values: dict[str, Any] = {}
    for key, value in (raw or {}).items():
        name = normalise_name(key)
        if name not in infos:
            raise ParameterError(name, unknown_message(name, owner, list(infos)))
        if value is not None:
            values[name] = coerce(infos[name], value)
    return params_cls(**with_preset(params_cls, values))


PRESETS = ("workbench", "paper")


def preset_param() -> Any:
    """The ``preset`` parameter every method declares: the paper's algorithm one switch away."""
    return param("workbench", "paper: the algorithm as published, no workbench guidance (every switch that is "
                 "not in the paper off); workbench: the workbench's defaults. A parameter you set yourself wins "
                 "over the preset.", choices=PRESETS)


def with_preset(params_cls: type, values: Mapping[str, Any]) -> dict[str, Any]:
    """`values` on top of the chosen preset's (``preset``; a parameter set by hand wins over its preset).

    A method declares its presets as a class attribute ``PRESETS = {"paper":
    {"walk_to_depth": False, ...}}``; a preset not listed there changes nothing.
    """
    out = dict(values)
    presets = getattr(params_cls, "PRESETS", None) or {}
    if "preset" in infos_names(params_cls):
        chosen = out.get("preset", params_cls.__dataclass_fields__["preset"].default)
        for k, v in presets.get(chosen, {}).items():
            out.setdefault(k, v)
    return out


def preset_flag(params: Mapping[str, Any], preset: str | None, flag: str = "--preset") -> dict[str, Any]:
    """``params`` with the command line's first-class ``--preset`` added (None: not given).

    ``--preset paper`` is ``--param preset=paper``; the two given with different
    values are refused naming both, and an unknown preset names the choices.

    >>> preset_flag({"beam_size": 2}, "paper")
    {'beam_size': 2, 'preset': 'paper'}
    >>> preset_flag({"preset": "paper"}, "workbench")
    Traceback (most recent call last):
    ...
    kgqa_core.parameters.ParameterError: --preset workbench conflicts with --param preset=paper; give one of them
    """
    out = dict(params)
    if preset is None:
        return out
    chosen = str(preset).strip()
    if chosen not in PRESETS:
        raise ParameterError("preset", f"{flag} must be one of {', '.join(PRESETS)}, got {preset!r}")
    given = out.get("preset")
    if given is not None and (given.strip() if isinstance(given, str) else given) != chosen:
        raise ParameterError("preset", f"{flag} {chosen} conflicts with --param preset={given}; give one of them")
    out["preset"] = chosen
    return out


def infos_names(params_cls: type) -> set[str]:
    return set(getattr(params_cls, "__dataclass_fields__", {}))


def normalise_name(key: Any) -> str:
    """``" beam-size "`` -> ``"beam_size"``; an empty name is refused."""
    name = str(key).strip().replace("-", "_")
    if not name:
        raise ParameterError("", "a parameter name is empty (expected NAME=VALUE)")
    return name


def unknown_message(name: str, owner: str, known: list[str]) -> str:
    close = difflib.get_close_matches(name, known, n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return f"unknown parameter {name!r} for {owner}{hint}; its parameters are: {', '.join(known)}"


def coerce(info: ParamInfo, value: Any) -> Any:
    """One value read by its declared kind and checked against its range or choices."""
    reader = {"int": _read_int, "float": _read_float, "bool": _read_bool, "choice": _read_choice,
              "multi": _read_multi, "str": _read_text}[info.kind]
    out = reader(info, value)
    if info.kind in ("int", "float"):
        if (info.minimum is not None and out < info.minimum) or (info.maximum is not None and out > info.maximum):
            raise _bad(info, value)
    return out


def parse_pairs(pairs: Iterable[str] | None, flag: str = "--param") -> dict[str, Any]:
    """``KEY=VALUE`` strings (the command line's ``--param``) as a raw mapping.

    Values are JSON when they parse as JSON (``3``, ``true``, ``[1, 2]``), text
    otherwise; `parse_params` then reads them by the declared type.
    """
    out: dict[str, Any] = {}
    for pair in pairs or ():
        if "=" not in pair:
            raise ParameterError(pair.strip(), f"{flag} {pair!r}: expected NAME=VALUE")
        key, text = pair.split("=", 1)
        name = normalise_name(key)
        try:
            out[name] = json.loads(text)
        except (ValueError, RecursionError):  # deeply nested JSON is text, then refused by its type
            out[name] = text
    return out


# ---------------------------------------------------------------- readers
def _kind(hint: Any, choices: tuple[str, ...], name: str) -> str:
    if hint is bool:
        return "bool"
    if hint is int:
        return "int"
    if hint is float:
        return "float"
    if hint is str:
        return "choice" if choices else "str"
    if typing.get_origin(hint) is tuple and choices:
        return "multi"
    raise TypeError(f"parameter {name}: unsupported type {hint!r}")


def _bad(info: ParamInfo, value: Any) -> ParameterError:
    return ParameterError(info.name, f"parameter {info.name} must be {info.allowed()}, got {value!r}")


def _read_int(info: ParamInfo, value: Any) -> int:
    if isinstance(value, bool):
        raise _bad(info, value)
    if isinstance(value, int):
        return value
    number = _read_float(info, value)
    if not number.is_integer():
        raise _bad(info, value)
    return int(number)


def _read_float(info: ParamInfo, value: Any) -> float:
    if isinstance(value, bool):
        raise _bad(info, value)
    try:
        number = float(value.strip()) if isinstance(value, str) else float(value)
    except (TypeError, ValueError, OverflowError):
        raise _bad(info, value) from None
    if not math.isfinite(number):
        raise _bad(info, value)
    return number


def _read_bool(info: ParamInfo, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise _bad(info, value)


def _read_choice(info: ParamInfo, value: Any) -> str:
    text = value.strip() if isinstance(value, str) else value
    if text not in info.choices:
        raise _bad(info, value)
    return text


def _read_multi(info: ParamInfo, value: Any) -> tuple[str, ...]:
    """``"2p,2i"``, ``"all"`` or a list; every item must be a choice, order kept, repeats dropped."""
    if isinstance(value, str):
        items = [p.strip() for p in value.split(",")]
    elif isinstance(value, (list, tuple)):
        items = [p.strip() if isinstance(p, str) else p for p in value]
    else:
        raise _bad(info, value)
    items = [p for p in items if p != ""]
    if not items or items == ["all"]:
        return tuple(info.choices)
    unknown = [p for p in items if p not in info.choices]
    if unknown:
        raise ParameterError(info.name, f"parameter {info.name}: {unknown[0]!r} is not one of {', '.join(info.choices)}")
    return tuple(dict.fromkeys(items))


def _read_text(info: ParamInfo, value: Any) -> str:
    if not isinstance(value, str):
        raise _bad(info, value)
    return value


def _fmt(x: float | None) -> str | None:
    if x is None:
        return None
    return str(int(x)) if float(x).is_integer() else f"{x:g}"

"""Build a schema dataclass from JSON data, checking every field against its type hints.

Traces come from disk, uploads and other machines.  A trace with
``"seconds": "abc"``, ``"steps": [1]`` or ``"answers": "abc"`` used to load
(the loader trusted the types) and then break every page that drew it.
`dataclass_from_json` walks a dataclass (a `Trace` and everything in it)
with its type hints and checks every field; the first wrong one is reported
with its path, e.g. ``steps[2].candidates[0].score: expected a number, got
the string 'abc'``.  `Trace.from_dict` adds what a trace needs at the top
(``method``, ``question``, a schema version this workbench reads) and is the
one entry point: `Trace.from_json`, `load_trace` (the run store,
``kgqa_core show``, Replay) and the Runs page's import all go through it.
This module knows no trace class, so the schema imports it and not the other
way round.

Rules:

* unknown keys are ignored (a newer minor writer may add fields); missing
  keys take the field's default; a field without a default is required;
* ``int`` fields take integers only (not ``true``, not ``2.5``); ``float``
  fields take integers or finite numbers (never NaN or infinity);
* free-form values (``parameters``, ``extra``) must be JSON (objects with
  string keys, arrays, strings, finite numbers, booleans, null) nested at
  most `MAX_FREE_DEPTH` levels, so a renderer walking them cannot recurse
  without bound.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import types
import typing
from typing import Any, TypeVar

MAX_FREE_DEPTH = 64

D = TypeVar("D")


class TraceFormatError(ValueError):
    """A file that is not a trace this workbench can read."""


def dataclass_from_json(cls: type[D], data: Any) -> D:
    """`cls` built from JSON data with every field checked, or `TraceFormatError` naming the first bad field."""
    try:
        return _dataclass(cls, data, "")
    except _Bad as exc:
        raise TraceFormatError(f"field {exc.path or '(top level)'}: {exc.problem}") from None


class _Bad(Exception):
    def __init__(self, path: str, problem: str) -> None:
        self.path = path
        self.problem = problem


@functools.lru_cache(maxsize=None)
def _fields(cls: type) -> tuple[tuple[str, Any, bool], ...]:
    """(name, type hint, required) of a dataclass, resolved once."""
    hints = typing.get_type_hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        out.append((f.name, hints[f.name], required))
    return tuple(out)


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _dataclass(cls: type, raw: Any, path: str) -> Any:
    if not isinstance(raw, dict):
        raise _Bad(path, f"expected an object ({cls.__name__}), got {json_kind(raw)}")
    kwargs = {}
    for name, hint, required in _fields(cls):
        if name not in raw:
            if required:
                raise _Bad(_join(path, name), "missing (required)")
            continue
        kwargs[name] = _value(hint, raw[name], _join(path, name))
    return cls(**kwargs)


def _value(hint: Any, raw: Any, path: str) -> Any:
    if hint is Any:
        return _free(raw, path, 0)
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if raw is None and type(None) in args:
            return None
        options = [a for a in args if a is not type(None)]
        if len(options) == 1:
            return _value(options[0], raw, path)
        raise _Bad(path, "unsupported union in the schema")  # pragma: no cover - schema has none
    if dataclasses.is_dataclass(hint):
        return _dataclass(hint, raw, path)
    if origin is list:
        if not isinstance(raw, list):
            raise _Bad(path, f"expected a list, got {json_kind(raw)}")
        return [_value(args[0], item, f"{path}[{i}]") for i, item in enumerate(raw)]
    if origin is tuple:
        if not isinstance(raw, (list, tuple)):
            raise _Bad(path, f"expected a list of {len(args)} items, got {json_kind(raw)}")
        if len(raw) != len(args):
            raise _Bad(path, f"expected {len(args)} items, got {len(raw)}")
        return tuple(_value(a, item, f"{path}[{i}]") for i, (a, item) in enumerate(zip(args, raw)))
    if origin is dict:
        if not isinstance(raw, dict):
            raise _Bad(path, f"expected an object, got {json_kind(raw)}")
        return {k: _value(args[1] if args else Any, v, f"{path}.{k}") for k, v in raw.items()}
    if hint is str:
        if not isinstance(raw, str):
            raise _Bad(path, f"expected a string, got {json_kind(raw)}")
        return raw
    if hint is bool:
        if not isinstance(raw, bool):
            raise _Bad(path, f"expected true or false, got {json_kind(raw)}")
        return raw
    if hint is int:
        if not isinstance(raw, int) or isinstance(raw, bool):
            raise _Bad(path, f"expected an integer, got {json_kind(raw)}")
        return raw
    if hint is float:
        if not isinstance(raw, (int, float)) or isinstance(raw, bool):
            raise _Bad(path, f"expected a number, got {json_kind(raw)}")
        if not math.isfinite(raw):
            raise _Bad(path, f"expected a finite number, got {raw!r}")
        return float(raw)
    raise _Bad(path, f"unsupported type {hint!r} in the schema")  # pragma: no cover


def _free(raw: Any, path: str, depth: int) -> Any:
    """A free-form JSON value (parameters, extras): JSON types only, finite, bounded depth."""
    if depth > MAX_FREE_DEPTH:
        raise _Bad(path, f"nested more than {MAX_FREE_DEPTH} levels deep")
    if raw is None or isinstance(raw, (str, bool, int)):
        return raw
    if isinstance(raw, float):
        if not math.isfinite(raw):
            raise _Bad(path, f"expected a finite number, got {raw!r}")
        return raw
    if isinstance(raw, list):
        return [_free(v, f"{path}[{i}]", depth + 1) for i, v in enumerate(raw)]
    if isinstance(raw, dict):
        out = {}
        for k, v in raw.items():
            if not isinstance(k, str):
                raise _Bad(path, f"object keys must be strings, got {json_kind(k)}")
            out[k] = _free(v, f"{path}.{k}", depth + 1)
        return out
    raise _Bad(path, f"not a JSON value: {json_kind(raw)}")


def json_kind(raw: Any) -> str:
    """A JSON value in words, for messages: null, true, the string 'abc', a list of 3 items ..."""
    if raw is None:
        return "null"
    if isinstance(raw, bool):
        return "true" if raw else "false"
    if isinstance(raw, str):
        shown = raw if len(raw) <= 40 else raw[:37] + "..."
        return f"the string {shown!r}"
    if isinstance(raw, (int, float)):
        return f"the number {raw!r}"
    if isinstance(raw, list):
        return f"a list of {len(raw)} item{'s' if len(raw) != 1 else ''}"
    if isinstance(raw, dict):
        return "an object"
    return type(raw).__name__


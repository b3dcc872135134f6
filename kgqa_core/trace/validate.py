"""Check a trace read from JSON against the schema before anything uses it.

Traces come from disk, uploads and other machines.  A trace with
``"seconds": "abc"``, ``"steps": [1]`` or ``"answers": "abc"`` used to load
(the loader trusted the types) and then break every page that drew it.
`validate_trace` walks the dataclasses of `kgqa_core.trace.schema` with their
type hints and checks every field; the first wrong one is reported with its
path, e.g. ``steps[2].candidates[0].score: expected a number, got the string
'abc'``.  It is the one entry point: `Trace.from_dict`/`from_json`,
`load_trace` (the run store, ``kgqa_core show``, Replay) and the Runs page's
import all go through it.

Rules:

* unknown keys are ignored (a newer minor writer may add fields); missing
  keys take the field's default; ``method`` and ``question`` are required;
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
from typing import Any

MAX_FREE_DEPTH = 64
_REQUIRED = {"method", "question"}


def validate_trace(data: Any) -> "Trace":
    """A `Trace` built from JSON data, or `TraceFormatError` naming the first bad field."""
    from .schema import SCHEMA_VERSION, Trace, TraceFormatError

    if not isinstance(data, dict):
        raise TraceFormatError(f"not a trace: expected a JSON object, got {_kind(data)}")
    missing = [k for k in ("method", "question") if k not in data]
    if missing:
        raise TraceFormatError("not a trace: expected an object with 'method' and 'question'")
    version = data.get("schema_version", SCHEMA_VERSION)
    if not isinstance(version, int) or isinstance(version, bool):
        raise TraceFormatError(f"field schema_version: expected an integer, got {_kind(version)}")
    if version > SCHEMA_VERSION:
        raise TraceFormatError(
            f"trace schema version {version} is newer than this workbench supports ({SCHEMA_VERSION})"
        )
    try:
        return _dataclass(Trace, data, "")
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
        raise _Bad(path, f"expected an object ({cls.__name__}), got {_kind(raw)}")
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
            raise _Bad(path, f"expected a list, got {_kind(raw)}")
        return [_value(args[0], item, f"{path}[{i}]") for i, item in enumerate(raw)]
    if origin is tuple:
        if not isinstance(raw, (list, tuple)):
            raise _Bad(path, f"expected a list of {len(args)} items, got {_kind(raw)}")
        if len(raw) != len(args):
            raise _Bad(path, f"expected {len(args)} items, got {len(raw)}")
        return tuple(_value(a, item, f"{path}[{i}]") for i, (a, item) in enumerate(zip(args, raw)))
    if origin is dict:
        if not isinstance(raw, dict):
            raise _Bad(path, f"expected an object, got {_kind(raw)}")
        return {k: _value(args[1] if args else Any, v, f"{path}.{k}") for k, v in raw.items()}
    if hint is str:
        if not isinstance(raw, str):
            raise _Bad(path, f"expected a string, got {_kind(raw)}")
        return raw
    if hint is bool:
        if not isinstance(raw, bool):
            raise _Bad(path, f"expected true or false, got {_kind(raw)}")
        return raw
    if hint is int:
        if not isinstance(raw, int) or isinstance(raw, bool):
            raise _Bad(path, f"expected an integer, got {_kind(raw)}")
        return raw
    if hint is float:
        if not isinstance(raw, (int, float)) or isinstance(raw, bool):
            raise _Bad(path, f"expected a number, got {_kind(raw)}")
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
                raise _Bad(path, f"object keys must be strings, got {_kind(k)}")
            out[k] = _free(v, f"{path}.{k}", depth + 1)
        return out
    raise _Bad(path, f"not a JSON value: {_kind(raw)}")


def _kind(raw: Any) -> str:
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


if typing.TYPE_CHECKING:  # pragma: no cover
    from .schema import Trace

"""Numeric settings checked once, with the setting's name: finite, in range, before anything runs.

``float("nan")``, ``inf`` and ``1e308`` are valid floats, and a timeout of
``nan`` or ``1e308`` reaches ``socket`` or ``time`` as an error that names
neither the option nor the problem (``Invalid value NaN (not a number)``,
``timestamp too large to convert to C _PyTime_t``).  `bounded_number` refuses
them with the option's name; `argparse_type` makes it an argparse ``type=``
so the command line says ``argument --server-timeout: ...``.
"""

from __future__ import annotations

import argparse
import math
from typing import Any, Callable

MAX_TIMEOUT = 86_400.0  # one day: longer is a mistake, and larger values overflow the OS's timers


class BoundError(ValueError):
    """A numeric setting that is not a finite number in its range (the message names the setting)."""


def bounded_number(name: str, value: Any, low: float, high: float, *, integer: bool = False,
                   low_inclusive: bool = True) -> float | int:
    """`value` as a number in [low, high] (``(low, high]`` unless `low_inclusive`), else `BoundError`."""
    kind = "a whole number" if integer else "a number"
    if isinstance(value, bool):
        raise BoundError(f"{name} must be {kind}, got {value!r}")
    try:
        number = float(value) if not isinstance(value, (int, float)) else value
    except (TypeError, ValueError):
        raise BoundError(f"{name} must be {kind}, got {value!r}") from None
    if isinstance(number, float) and not math.isfinite(number):
        raise BoundError(f"{name} must be a finite number, got {value!r}")
    if integer:
        if isinstance(number, float) and not number.is_integer():
            raise BoundError(f"{name} must be a whole number, got {value!r}")
        number = int(number)
    above = number >= low if low_inclusive else number > low
    if not above or number > high:
        lower = f"at least {low:g}" if low_inclusive else f"more than {low:g}"
        raise BoundError(f"{name} must be {lower} and at most {high:g}, got {value!r}")
    return number


def timeout_seconds(name: str, value: Any, high: float = MAX_TIMEOUT) -> float:
    """A timeout: finite, more than 0 and at most `high` seconds."""
    return float(bounded_number(name, value, 0.0, high, low_inclusive=False))


def argparse_type(check: Callable[[str, Any], Any], name: str) -> Callable[[str], Any]:
    """An argparse ``type=`` that runs `check(name, text)`; argparse prefixes the option's name."""

    def convert(text: str) -> Any:
        try:
            return check(name, text)
        except BoundError as exc:
            # argparse already names the option ("argument --x: ..."); keep the rest of the sentence
            message = str(exc)
            raise argparse.ArgumentTypeError(message[len(name) + 1:] if message.startswith(name + " ") else message)

    convert.__name__ = name  # argparse names the type in its own messages
    return convert


def timeout_option(name: str, high: float = MAX_TIMEOUT) -> Callable[[str], float]:
    return argparse_type(lambda n, v: timeout_seconds(n, v, high), name)


def int_option(name: str, low: int, high: int) -> Callable[[str], int]:
    return argparse_type(lambda n, v: int(bounded_number(n, v, low, high, integer=True)), name)

"""Text from graphs, models, traces and servers, made safe to print on a terminal.

A terminal obeys control characters: ``ESC ] 0 ; title BEL`` retitles the
window, OSC 52 writes the clipboard, ``ESC [ 2 J`` clears the screen, a
carriage return overwrites the line before it, and bidi overrides reorder
what is shown ("Trojan source").  Answers, chains and error messages come
from files and models we do not control, so the command line prints them
through `one_line` (a field of a summary: line breaks escaped too) and every
stream it writes to through `SafeStream` (any other text: line breaks and
tabs kept).  Escapes are Python's own spelling (``\\x1b``, ``\\u202e``), so
what was there stays readable.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any, Iterator, TextIO

_BIDI = [*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C]
_LINE_BREAKS = [0x2028, 0x2029, 0x85]


def _escape(code: int) -> str:
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


# everything a terminal acts on: C0 (but tab, newline), DEL, C1, bidi controls, Unicode line breaks
_STREAM_TABLE = {c: _escape(c) for c in [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0), *_BIDI, *_LINE_BREAKS]
                 if c not in (0x09, 0x0A)}
# one field of a line: tabs and newlines escaped as well, so a field cannot fake another line
_LINE_TABLE = {**_STREAM_TABLE, 0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"}


def one_line(value: Any) -> str:
    """`value` as one printable line: every control character (newline too) written as an escape."""
    return ("" if value is None else str(value)).translate(_LINE_TABLE)


def printable(value: Any) -> str:
    """`value` with terminal controls escaped; newlines and tabs kept (for whole messages and tables)."""
    return ("" if value is None else str(value)).translate(_STREAM_TABLE)


class SafeStream:
    """A text stream that escapes terminal controls in everything written to it.

    Carriage returns pass through when ``allow_cr`` (tqdm redraws its bar
    with them); all else is as `printable`.
    """

    def __init__(self, stream: TextIO, allow_cr: bool = False) -> None:
        self._stream = stream
        self._table = {k: v for k, v in _STREAM_TABLE.items() if not (allow_cr and k == 0x0D)}

    def write(self, text: str) -> int:
        self._stream.write(text.translate(self._table))
        return len(text)

    def __getattr__(self, name: str) -> Any:  # flush, isatty, encoding, fileno ...
        return getattr(self._stream, name)


@contextlib.contextmanager
def safe_output() -> Iterator[None]:
    """While active, ``sys.stdout`` and ``sys.stderr`` escape terminal controls (see the module docstring)."""
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = SafeStream(out), SafeStream(err, allow_cr=True)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = out, err

"""Reading and writing the workbench's files so that no input can hang, crash or lose them.

Why one module: the same four mistakes were made in several places.

* **Temp-file races.**  Writing ``x.tmp`` then renaming it is atomic for one
  process, but two processes (an eval ``--shard``, two browser tabs) share the
  name ``x.tmp`` and one rename fails or publishes the other's half-written
  file.  `atomic_write_bytes` uses a unique temp name in the target folder
  and `os.replace`, so readers see the old file or the new one, never a mix,
  and concurrent writers never fail.
* **JSON Lines split wrongly.**  `str.splitlines` also splits on U+2028,
  U+2029, U+0085, form feed and more, all of which may stand raw inside a JSON
  string.  `split_lines` splits on ``\\n`` only (``\\r\\n`` tolerated), as
  JSON Lines says, and `jsonl_line` escapes those characters when writing,
  so any reader gets whole records.
* **Hostile JSON.**  ``json.loads`` raises `RecursionError` on deeply nested
  input and accepts ``NaN``/``Infinity``, which are not JSON.  `loads_json`
  turns both into a one-line `JsonProblem` with the line number.
* **Non-regular files.**  Reading ``/dev/zero`` never ends and a FIFO blocks
  forever.  `read_regular_file` opens without blocking and refuses anything
  that is not a regular file before reading a byte.
"""

from __future__ import annotations

import json
import os
import re
import stat
import tempfile
from pathlib import Path
from typing import Any

# Characters str.splitlines() treats as line ends that JSON allows raw inside strings.
_RAW_LINE_BREAKS = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"}
_RAW_LINE_BREAK_RE = re.compile("[\u2028\u2029\x85]")
_NONFINITE_RE = re.compile(r'(?<![\w"])(-?Infinity|NaN)(?![\w"])')


class JsonProblem(ValueError):
    """Text that is not JSON this workbench reads; ``line``/``column`` are 1-based (0 if unknown)."""

    def __init__(self, problem: str, line: int = 0, column: int = 0) -> None:
        self.problem = problem
        self.line = line
        self.column = column
        where = f"line {line}" + (f", column {column}" if column else "") + ": " if line else ""
        super().__init__(f"{where}{problem}")


class NotRegularFileError(ValueError):
    """A path that is a device, FIFO, socket or directory: refused before reading."""


class FileTooLargeError(ValueError):
    """A file larger than the caller's limit."""


# ------------------------------------------------------------------ writing
def cache_root() -> Path:
    """The workbench's cache folder (weights, tokenizers, saved prompt prefixes): $KGQA_CACHE_DIR, else ~/.cache/kgqa_workbench."""
    env = os.environ.get("KGQA_CACHE_DIR")
    root = Path(env) if env else Path.home() / ".cache" / "kgqa_workbench"
    root.mkdir(parents=True, exist_ok=True)
    return root


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` via a unique temp file in the same folder and `os.replace`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    return atomic_write_bytes(path, text.encode("utf-8"))


def file_lock(path: str | os.PathLike[str], timeout: float = 600.0):
    """An inter-process lock on ``path`` (a ``.lock`` file beside it), as a context manager."""
    from filelock import FileLock

    return FileLock(str(path) + ".lock", timeout=timeout)


# ------------------------------------------------------------- JSON Lines
def split_lines(text: str) -> list[tuple[int, str]]:
    """``(line number, line)`` of text split on ``\\n`` only (a trailing ``\\r`` is dropped).

    Line numbers are what an editor shows, even when a JSON string holds
    U+2028 or U+0085 (which `str.splitlines` would count as line ends).
    """
    out = []
    for number, line in enumerate(text.split("\n"), start=1):
        if line.endswith("\r"):
            line = line[:-1]
        out.append((number, line))
    if out and out[-1][1] == "":
        out.pop()  # the newline that ends the last line starts no new line
    return out


def jsonl_line(obj: Any) -> str:
    """One JSON Lines record (no trailing newline): readable UTF-8, raw line separators escaped."""
    text = json.dumps(obj, ensure_ascii=False, allow_nan=False)
    return _RAW_LINE_BREAK_RE.sub(lambda m: _RAW_LINE_BREAKS[m.group(0)], text)


# ------------------------------------------------------------------- JSON
def loads_json(text: str) -> Any:
    """``json.loads`` that refuses NaN/Infinity and never raises `RecursionError`."""

    def refuse(name: str) -> Any:
        raise _NonFinite(name)

    try:
        return json.loads(text, parse_constant=refuse)
    except json.JSONDecodeError as exc:
        raise JsonProblem(exc.msg, exc.lineno, exc.colno) from None
    except _NonFinite as exc:
        line, col = _locate_nonfinite(text, exc.name)
        raise JsonProblem(f"{exc.name} is not a JSON number (write a number, null or a string)", line, col) from None
    except RecursionError:
        raise JsonProblem("nested too deeply (arrays/objects inside each other more than ~1,000 levels)") from None
    except MemoryError:
        raise JsonProblem("too large to read into memory") from None


class _NonFinite(Exception):
    def __init__(self, name: str) -> None:
        self.name = name


def _locate_nonfinite(text: str, name: str) -> tuple[int, int]:
    for m in _NONFINITE_RE.finditer(text):
        if m.group(1) == name:
            line = text.count("\n", 0, m.start()) + 1
            return line, m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
    return 0, 0


# ------------------------------------------------------------------ reading
def read_regular_file(path: str | os.PathLike[str], max_bytes: int | None = None) -> bytes:
    """The bytes of a regular file; a device, FIFO, socket or directory is refused before reading.

    Raises `FileNotFoundError` (missing), `NotRegularFileError`, `FileTooLargeError`
    or another `OSError`.
    """
    fd = os.open(os.fspath(path), os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFileError(f"{path}: {describe_file_kind(st.st_mode)}, not a regular file")
        if max_bytes is not None and st.st_size > max_bytes:
            raise FileTooLargeError(f"{path}: {st.st_size:,} bytes is more than the limit of {max_bytes:,}")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read() if max_bytes is None else fh.read(max_bytes + 1)
    finally:
        os.close(fd)
    if max_bytes is not None and len(data) > max_bytes:  # grew while we read
        raise FileTooLargeError(f"{path}: more than the limit of {max_bytes:,} bytes")
    return data


def describe_file_kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


# ----------------------------------------------------------- machine paths
def scrub_machine_paths(value: Any) -> Any:
    """``value`` with this machine's install, home and temp folders replaced by ``<app>``, ``~``, ``<tmp>``.

    Runs are shared (downloaded, imported elsewhere, committed): they must not
    reveal user names or folder layouts.  Walks dicts/lists; only strings
    change, and only where a folder starts a path (``/root`` in ``/rooted``
    or in ``a/root`` is left alone).
    """
    pattern, repl = _scrub_pattern()

    def walk(v: Any) -> Any:
        if isinstance(v, str):
            return pattern.sub(lambda m: repl[m.group(1)], v) if pattern is not None else v
        if isinstance(v, list):
            return [walk(x) for x in v]
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        return v

    return walk(value)


def _scrub_pattern() -> tuple[re.Pattern[str] | None, dict[str, str]]:
    repl: dict[str, str] = {}
    app = str(Path(__file__).resolve().parent.parent)
    repl[app] = "<app>"
    for folder, name in ((os.path.expanduser("~"), "~"), (tempfile.gettempdir(), "<tmp>")):
        if folder and folder not in ("/", "~") and folder not in repl:
            repl[folder] = name
            real = os.path.realpath(folder)
            if real not in repl:
                repl[real] = name
    if not repl:
        return None, repl
    alternatives = "|".join(re.escape(r) for r in sorted(repl, key=len, reverse=True))
    return re.compile(rf"(?<![\w/.-])({alternatives})(?=/|$|[^\w.-])"), repl


def trace_without_machine_paths(trace: Any) -> Any:
    """A copy of ``trace`` whose error, notes, parameters, extras and model name hold no machine paths.

    Questions, graph names and model text are the user's content and stay as they are.
    """
    import copy

    out = copy.copy(trace)
    out.error = scrub_machine_paths(trace.error)
    out.notes = scrub_machine_paths(list(trace.notes))
    out.model = scrub_machine_paths(trace.model)
    out.parameters = scrub_machine_paths(dict(trace.parameters))
    out.extra = scrub_machine_paths(dict(trace.extra))
    out.steps = list(trace.steps)
    for i, step in enumerate(out.steps):
        note, extra = scrub_machine_paths(step.note), scrub_machine_paths(step.extra)
        if note != step.note or extra != step.extra:
            step = copy.copy(step)
            step.note, step.extra = note, extra
            out.steps[i] = step
    return out

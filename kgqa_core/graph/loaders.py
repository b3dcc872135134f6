"""Read a graph file (or uploaded bytes) into a `KnowledgeGraph`.

Formats, chosen by extension or, failing that, by sniffing the content:
TSV / CSV (``head,relation,tail`` with an optional header), JSON (a list of
``[h, r, t]`` or of ``{"head", "relation", "tail"}`` objects), JSONL,
N-Triples and Turtle (via rdflib), and DoG's linearised form
``h -> r -> t | h -> r -> t``.  Any of these may be gzip-compressed.

Why so strict: a graph with silently dropped lines gives wrong answers that
look right.  Every malformed line is counted and the error names the file,
the first bad line and the problem, so a user can fix the file.

Lines are split on ``\n`` only (``\r\n`` tolerated), so a name holding
U+2028 or a form feed stays one name and line numbers are the editor's.
``NaN``/``Infinity`` in JSON are refused (they are not JSON; write "NaN" as a
string to mean the text).  A path that is not a regular file (``/dev/zero``,
a FIFO) is refused before a byte is read.  RDF rules: see `_parse_rdf`.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import math
import os
import re
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator
from urllib.parse import unquote

from ..files import FileTooLargeError, JsonProblem, NotRegularFileError, loads_json, read_regular_file, split_lines
from .gc_pause import no_gc as _no_gc
from .knowledge_graph import KnowledgeGraph
from .linearize import split_linearized

DEFAULT_MAX_BYTES = 512 * 1024 * 1024  # of decompressed text

FORMATS = ("tsv", "csv", "json", "jsonl", "nt", "ttl", "linearized")

_EXTENSIONS = {
    ".tsv": "tsv",
    ".tab": "tsv",
    ".csv": "csv",
    ".json": "json",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".nt": "nt",
    ".ntriples": "nt",
    ".ttl": "ttl",
    ".turtle": "ttl",
    ".dog": "linearized",
    ".lin": "linearized",
}
_FORMAT_ALIASES = {
    "tsv": "tsv",
    "csv": "csv",
    "json": "json",
    "jsonl": "jsonl",
    "ndjson": "jsonl",
    "nt": "nt",
    "ntriples": "nt",
    "n-triples": "nt",
    "ttl": "ttl",
    "turtle": "ttl",
    "linearized": "linearized",
    "linearised": "linearized",
    "dog": "linearized",
}
_FORMAT_NAMES = {
    "tsv": "TSV",
    "csv": "CSV",
    "json": "JSON",
    "jsonl": "JSON Lines",
    "nt": "N-Triples",
    "ttl": "Turtle",
    "linearized": "linearised (h -> r -> t)",
}
_HEADER_WORDS = {
    ("head", "relation", "tail"),
    ("head", "rel", "tail"),
    ("h", "r", "t"),
    ("subject", "predicate", "object"),
    ("s", "p", "o"),
    ("source", "relation", "target"),
    ("head_entity", "relation", "tail_entity"),
    ("entity1", "relation", "entity2"),
}
_FIELDS = ("head", "relation", "tail")
_Parsed = tuple[list[tuple[str, str, str]], list[str]]  # (triplets, notes for the graph)


class GraphFormatError(ValueError):
    """A graph file that cannot be read as given; the message is meant for the user.

    ``line`` is the first bad line (1-based) or ``None`` when the problem is
    the file as a whole; ``record`` is the first bad record for JSON;
    ``bad_lines`` is how many lines/records were bad in total.
    """

    def __init__(
        self,
        file: str,
        problem: str,
        line: int | None = None,
        bad_lines: int = 0,
        record: int | None = None,
        examples: list[tuple[int, str]] | None = None,
    ) -> None:
        self.file = file
        self.problem = problem
        self.line = line
        self.record = record
        self.bad_lines = bad_lines
        self.examples = examples or []
        super().__init__(str(self))

    def __str__(self) -> str:
        where = self.file
        if self.line is not None:
            where += f", line {self.line}"
        elif self.record is not None:
            where += f", record {self.record}"
        text = f"{where}: {self.problem}"
        if self.bad_lines > 1:
            unit = "records" if self.line is None and self.record is not None else "lines"
            text += f" ({self.bad_lines} bad {unit} in total)"
        return text


@dataclass
class _Bad:
    """Collects malformed lines so the error can name the first (``examples[0]``) and count them all."""

    file: str
    unit: str = "line"  # or "record" (a JSON array's items)
    count: int = 0
    examples: list[tuple[int, str]] = field(default_factory=list)  # the first ten (where, problem)

    def add(self, where: int, problem: str) -> None:
        self.count += 1
        if len(self.examples) < 10:
            self.examples.append((where, problem))

    def raise_if_any(self) -> None:
        if not self.count:
            return
        where, problem = self.examples[0]
        raise GraphFormatError(self.file, problem, bad_lines=self.count, examples=self.examples, **{self.unit: where})


# ---------------------------------------------------------------- public API
def load_graph(
    path: str | os.PathLike[str],
    *,
    fmt: str | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    name: str | None = None,
) -> KnowledgeGraph:
    """Load a graph file; raises `GraphFormatError` (a ``ValueError``) on bad input."""
    p = Path(path)
    label = p.name
    if not p.exists():
        raise GraphFormatError(label, f"file not found: {p}")
    if p.is_dir():
        raise GraphFormatError(label, f"is a directory, not a graph file: {p}")
    is_gz = p.suffix.lower() == ".gz"
    try:
        # opened without blocking and checked before reading: /dev/zero or a FIFO never hangs the loader
        data = read_regular_file(p, max_bytes=None if is_gz else max_bytes)
    except NotRegularFileError as exc:
        raise GraphFormatError(label, f"{str(exc).rsplit(': ', 1)[-1]}; give a graph file") from None
    except FileTooLargeError:
        raise GraphFormatError(label, _too_large(p.stat().st_size, max_bytes)) from None
    except OSError as exc:
        raise GraphFormatError(label, f"cannot read file: {exc.strerror or exc}") from None
    graph = parse_graph_bytes(data, p.name, fmt=fmt, max_bytes=max_bytes)
    graph.source = str(p)
    if name:
        graph.name = name
    return graph


def parse_graph_bytes(
    data: bytes,
    filename: str,
    *,
    fmt: str | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> KnowledgeGraph:
    """Parse an uploaded graph file's bytes; `filename` picks the format and names errors."""
    label = Path(filename).name or "upload"
    inner_name = label
    if label.lower().endswith(".gz") or data[:2] == b"\x1f\x8b":
        data = _gunzip(data, label, max_bytes)
        if inner_name.lower().endswith(".gz"):
            inner_name = inner_name[:-3]
    elif len(data) > max_bytes:
        raise GraphFormatError(label, _too_large(len(data), max_bytes))

    text = _decode(data, label)
    if not text.strip():
        raise GraphFormatError(label, "the file is empty: no triplets to load")

    kind = _choose_format(fmt, inner_name, text, label)
    parser = _PARSERS[kind]
    triplets, parse_notes = parser(text, label)

    graph = KnowledgeGraph(name=_stem(inner_name))
    with _no_gc():
        for h, r, t in triplets:
            graph.add(h, r, t)
    if len(graph) == 0:
        raise GraphFormatError(label, f"no triplets found in this {_FORMAT_NAMES[kind]} file")
    graph.source = label
    graph.notes.append(f"loaded {_plural(len(graph), 'triplet')} from {label} ({_FORMAT_NAMES[kind]})")
    graph.notes.extend(parse_notes)
    if graph.duplicates_dropped:
        graph.notes.append(
            f"{graph.duplicates_dropped} duplicate triplet"
            f"{'s were' if graph.duplicates_dropped != 1 else ' was'} dropped"
        )
    return graph


def detect_format(filename: str, text: str | None = None) -> str | None:
    """The format for `filename` by extension, else by sniffing `text`; None if unknown."""
    name = filename.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    ext = os.path.splitext(name)[1]
    if ext in _EXTENSIONS:
        return _EXTENSIONS[ext]
    return _sniff(text) if text is not None else None


# ---------------------------------------------------------------- helpers
def _too_large(size: int, limit: int) -> str:
    return (
        f"file too large: {_mb(size)} exceeds the limit of {_mb(limit)}; "
        "raise the limit (max_bytes) or load a smaller neighbourhood"
    )


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n:,} {word if n == 1 else (plural or word + 's')}"


def _mb(n: int) -> str:
    return f"{n / 1_048_576:.1f} MB" if n >= 1_048_576 else f"{n:,} bytes"


def _stem(filename: str) -> str:
    stem = Path(filename).stem
    return stem or "graph"


def _gunzip(data: bytes, label: str, max_bytes: int) -> bytes:
    out = io.BytesIO()
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as fh:
            while True:
                chunk = fh.read(1 << 20)
                if not chunk:
                    break
                out.write(chunk)
                if out.tell() > max_bytes:
                    raise GraphFormatError(
                        label, f"file too large: decompresses to more than the limit of {_mb(max_bytes)}"
                    )
    except (OSError, EOFError, zlib.error) as exc:
        raise GraphFormatError(label, f"not a valid gzip file ({exc})") from None
    return out.getvalue()


def _decode(data: bytes, label: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        first_line = data.count(b"\n", 0, exc.start) + 1
        bad = 0
        for raw in data.split(b"\n"):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:
                bad += 1
        raise GraphFormatError(
            label,
            f"undecodable bytes (not UTF-8) at byte {exc.start}: {data[exc.start:exc.start + 4]!r}; "
            "save the file as UTF-8",
            line=first_line,
            bad_lines=bad,
        ) from None


def _choose_format(fmt: str | None, filename: str, text: str, label: str) -> str:
    if fmt:
        kind = _FORMAT_ALIASES.get(fmt.lower().lstrip("."))
        if kind is None:
            raise GraphFormatError(
                label, f"unknown format {fmt!r}; use one of: {', '.join(sorted(set(_FORMAT_ALIASES)))}"
            )
        return kind
    kind = detect_format(filename, text)
    if kind is None:
        raise GraphFormatError(
            label,
            "unknown format: could not tell from the extension or the content; use .tsv, .csv, "
            ".json, .jsonl, .nt, .ttl or the linearised 'h -> r -> t | h -> r -> t' form",
        )
    return kind


_NT_LINE = re.compile(r'^\s*(<[^>]*>|_:\S+)\s+<[^>]*>\s+.*\.\s*$')


def _sniff(text: str) -> str | None:
    head = text.lstrip()[:4096]
    lines = [ln for _, ln in split_lines(head) if ln.strip()][:20]
    if not lines:
        return None
    first = lines[0].lstrip()
    if first.startswith(("@prefix", "@base", "PREFIX", "BASE", "prefix ")):
        return "ttl"
    if first.startswith("{"):
        # one object per line is JSONL; a single (possibly multi-line) object is JSON
        try:
            loads_json(lines[0])
            return "jsonl"
        except JsonProblem:
            return "json"
    if first.startswith("["):
        if first.startswith("[ ") and "->" in head:
            return "linearized"
        try:
            loads_json(lines[0])
            return "jsonl" if len(lines) > 1 and lines[1].lstrip().startswith("[") else "json"
        except JsonProblem:
            return "json"
    body = [ln for ln in lines if not ln.lstrip().startswith("#")]
    if body and all(_NT_LINE.match(ln) for ln in body):
        return "nt"
    if any("->" in ln for ln in lines) and not any("\t" in ln for ln in lines):
        return "linearized"
    if any("\t" in ln for ln in lines):
        return "tsv"
    if any("," in ln for ln in lines):
        return "csv"
    return None


def _is_header(fields: list[str]) -> bool:
    return tuple(f.strip().strip('"').lower() for f in fields) in _HEADER_WORDS


def _check_fields(fields: list[str], bad: _Bad, where: int, sep_name: str) -> tuple[str, str, str] | None:
    if len(fields) != 3:
        bad.add(
            where,
            f"expected 3 columns (head, relation, tail) separated by {sep_name}, found {len(fields)}",
        )
        return None
    h, r, t = (f.strip() for f in fields)
    for value, field in zip((h, r, t), _FIELDS):
        if not value:
            bad.add(where, f"empty {field}")
            return None
    return h, r, t


def _unquote_tsv(field: str) -> str:
    if len(field) >= 2 and field[0] == '"' and field[-1] == '"':
        return field[1:-1].replace('""', '"')
    return field


_Row = tuple[str, str, str] | None  # a triplet, or None for a malformed one (recorded in a `_Bad`)


def _collect(bad: _Bad, rows: Iterable[_Row]) -> _Parsed:
    """The well-formed triplets of `rows`; raises `GraphFormatError` naming the malformed ones, if any."""
    out = [row for row in rows if row is not None]
    bad.raise_if_any()
    return out, []


def _parse_tsv(text: str, label: str) -> _Parsed:
    bad = _Bad(label)
    return _collect(bad, _tsv_rows(text, bad))


def _tsv_rows(text: str, bad: _Bad) -> Iterator[_Row]:
    # Plain tab splitting: MetaQA-style TSV has no quoting, and csv's quote
    # handling would mangle names that merely start with a quote.  Fully
    # quoted fields (as written by spreadsheet exports) are unquoted.
    first = True
    for line_no, line in split_lines(text):
        if not line.strip():
            continue
        fields = line.split("\t")
        if first:
            first = False
            if _is_header(fields):
                continue
        if '"' in line:
            fields = [_unquote_tsv(f.strip()) for f in fields]
        yield _check_fields(fields, bad, line_no, "tabs")


def _parse_csv(text: str, label: str) -> _Parsed:
    bad = _Bad(label)
    return _collect(bad, _csv_rows(text, bad))


def _csv_rows(text: str, bad: _Bad) -> Iterator[_Row]:
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    first = True
    start_line = 1
    try:
        for fields in reader:
            line_no = start_line
            start_line = reader.line_num + 1
            if not fields or all(not f.strip() for f in fields):
                continue
            if first:
                first = False
                if _is_header(fields):
                    continue
            yield _check_fields(fields, bad, line_no, "commas")
    except csv.Error as exc:
        bad.add(start_line, f"malformed CSV quoting ({exc})")


def _triplet_from_value(value: object, where: int, bad: _Bad) -> tuple[str, str, str] | None:
    if isinstance(value, dict):
        keys = None
        for names in (("head", "relation", "tail"), ("subject", "predicate", "object"), ("h", "r", "t")):
            if all(k in value for k in names):
                keys = names
                break
        if keys is None:
            bad.add(where, f'expected an object with "head", "relation", "tail", found keys {sorted(value)[:6]}')
            return None
        items = [value[k] for k in keys]
    elif isinstance(value, (list, tuple)):
        if len(value) != 3:
            bad.add(where, f"expected 3 items [head, relation, tail], found {len(value)}")
            return None
        items = list(value)
    else:
        bad.add(where, f"expected [head, relation, tail] or an object, found {type(value).__name__}")
        return None
    fields: list[str] = []
    for item, field in zip(items, _FIELDS):
        if isinstance(item, bool) or item is None or isinstance(item, (dict, list)):
            bad.add(where, f"{field} must be a string, found {json.dumps(item)[:40]}")
            return None
        if isinstance(item, float) and not math.isfinite(item):  # 1e999 reads as infinity
            bad.add(where, f"{field} is a number too large for JSON ({item}); write it as a string")
            return None
        s = str(item).strip()
        if not s:
            bad.add(where, f"empty {field}")
            return None
        fields.append(s)
    return fields[0], fields[1], fields[2]


def _parse_json(text: str, label: str) -> _Parsed:
    try:
        value = loads_json(text)
    except JsonProblem as exc:
        where = f" (column {exc.column})" if exc.column else ""
        raise GraphFormatError(label, f"invalid JSON: {exc.problem}{where}", line=exc.line or None, bad_lines=1) from None
    if isinstance(value, dict):
        for key in ("triplets", "triples", "edges", "facts"):
            if isinstance(value.get(key), list):
                value = value[key]
                break
        else:
            raise GraphFormatError(
                label, 'expected a JSON list of triplets (or an object with a "triplets" list)'
            )
    if not isinstance(value, list):
        raise GraphFormatError(label, f"expected a JSON list of triplets, found {type(value).__name__}")
    bad = _Bad(label, unit="record")
    return _collect(bad, (_triplet_from_value(item, index, bad) for index, item in enumerate(value, start=1)))


def _parse_jsonl(text: str, label: str) -> _Parsed:
    bad = _Bad(label)
    return _collect(bad, _jsonl_rows(text, bad))


def _jsonl_rows(text: str, bad: _Bad) -> Iterator[_Row]:
    for line_no, line in split_lines(text):
        if not line.strip():
            continue
        try:
            value = loads_json(line)
        except JsonProblem as exc:
            bad.add(line_no, f"invalid JSON: {exc.problem}" + (f" (column {exc.column})" if exc.column else ""))
            continue
        yield _triplet_from_value(value, line_no, bad)


def _parse_linearized(text: str, label: str) -> _Parsed:
    triplets, problems = split_linearized(text)
    if problems:
        p = problems[0]
        raise GraphFormatError(
            label, p.problem, line=p.line, bad_lines=len(problems),
            examples=[(q.line, q.problem) for q in problems[:10]],
        )
    return [t for _, t in triplets], []


# ---------------------------------------------------------------- RDF
def _parse_nt(text: str, label: str) -> _Parsed:
    return _parse_rdf(text, label, "nt")


def _parse_ttl(text: str, label: str) -> _Parsed:
    return _parse_rdf(text, label, "turtle")


def _nt_bad_lines(text: str, label: str) -> None:
    """Find and count the bad lines of an N-Triples file rdflib rejected."""
    import rdflib

    bad = _Bad(label)
    for line_no, line in split_lines(text):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            rdflib.Graph().parse(data=line + "\n", format="nt")
        except Exception as exc:  # rdflib raises several types here
            bad.add(line_no, f"N-Triples syntax error: {_rdf_message(exc)}")
    bad.raise_if_any()


def _rdf_message(exc: Exception) -> str:
    why = getattr(exc, "_why", None) or getattr(exc, "msg", None) or str(exc)
    return str(why).strip().splitlines()[0][:200] if str(why).strip() else type(exc).__name__


PREFERRED_LANGUAGE = "en"
_MAX_NOTED = 50


def _lang_rank(lang: str | None, preferred: str = PREFERRED_LANGUAGE) -> tuple[int, str]:
    """Order of preference: the preferred language (and its variants: en-GB), no language, then others A-Z."""
    if lang is None:
        return (1, "")
    low = lang.lower()
    if low == preferred or low.startswith(preferred + "-"):
        return (0, low)
    return (2, low)


def _parse_rdf(text: str, label: str, rdf_format: str) -> _Parsed:
    """RDF to triplets, by these rules (documented in docs/reliability.md):

    * an IRI is named by its ``rdfs:label`` if it has one, else by its local name;
      two IRIs with the same name stay apart (the second gets its local name appended);
    * a literal is named by its text; when that text is also the name of an IRI
      or blank node, the literal is written in quotes (``"Paris"``) so a value never
      merges with an entity;
    * language-tagged literals of one subject and predicate (labels included):
      those in the preferred language (English) are kept, else those without a
      language, else those of the first language A-Z; every other one is kept as
      a note on the graph (up to 50 listed, then counted);
    * blank nodes get names from rdflib's canonical labelling (``_:`` + a hash of
      their place in the graph), so loading the same file twice gives the same
      triplets and the same fingerprint.
    """
    import rdflib
    from rdflib.namespace import RDFS

    graph = rdflib.Graph()
    try:
        graph.parse(data=text, format=rdf_format)
    except Exception as exc:  # BadSyntax, ParserError, ValueError, ...
        if rdf_format == "nt":
            _nt_bad_lines(text, label)
        lines = getattr(exc, "lines", None)
        line = lines + 1 if isinstance(lines, int) else None
        kind = "Turtle" if rdf_format == "turtle" else "N-Triples"
        raise GraphFormatError(
            label, f"{kind} syntax error: {_rdf_message(exc)} (parsing stops at the first error)",
            line=line, bad_lines=1,
        ) from None

    if any(isinstance(n, rdflib.BNode) for spo in graph for n in (spo[0], spo[2])):
        from rdflib.compare import to_canonical_graph

        graph = to_canonical_graph(graph)  # blank node ids derived from the graph, not from a counter

    all_triples = sorted(graph, key=lambda spo: (str(spo[0]), str(spo[1]), str(spo[2])))
    dropped_lang: list[str] = []

    # Group literal objects by (subject, predicate) and keep one language per group.
    groups: dict[tuple, list] = {}
    for s, p, o in all_triples:
        if isinstance(o, rdflib.Literal) and o.language is not None:
            groups.setdefault((s, p), []).append(o)
    dropped: set[tuple] = set()
    for (s, p), lits in groups.items():
        untagged = [o for o in graph.objects(s, p) if isinstance(o, rdflib.Literal) and o.language is None]
        ranks = [_lang_rank(o.language) for o in lits]
        best = min(ranks)
        if untagged and best[0] == 2:
            best = None  # a literal without a language beats other languages
        for o, rank in zip(lits, ranks):
            if best is None or rank != best:
                dropped.add((s, p, o))
                dropped_lang.append((s, p, o))

    # One label names an entity: the best language, then the first A-Z; other labels become notes.
    candidates: dict[rdflib.term.Node, list] = {}
    for subj, lab in graph.subject_objects(RDFS.label):
        if isinstance(lab, rdflib.Literal) and str(lab).strip() and (subj, RDFS.label, lab) not in dropped:
            candidates.setdefault(subj, []).append(lab)
    labels: dict[rdflib.term.Node, str] = {}
    other_labels: list[tuple] = []
    for subj, labs in candidates.items():
        labs.sort(key=lambda lab: (_lang_rank(lab.language), str(lab).strip()))
        labels[subj] = str(labs[0]).strip()
        other_labels.extend((subj, RDFS.label, lab) for lab in labs[1:] if str(lab).strip() != labels[subj])

    def namer():
        names: dict[rdflib.term.Node, str] = {}
        used: Counter[str] = Counter()
        collisions = 0

        def name_of(node: rdflib.term.Node) -> str:
            nonlocal collisions
            cached = names.get(node)
            if cached is not None:
                return cached
            if isinstance(node, rdflib.BNode):
                base = labels.get(node) or "_:" + hashlib.sha256(str(node).encode()).hexdigest()[:12]
            else:
                base = labels.get(node) or _local_name(node)
            candidate = base
            if used[base]:
                # Two IRIs with the same label stay distinct entities.
                candidate = f"{base} ({_local_name(node)})"
                if used[candidate]:
                    candidate = f"{base} <{node}>"
                collisions += 1
            used[candidate] += 1
            names[node] = candidate
            return candidate

        return name_of, lambda: collisions

    entity_name, entity_collisions = namer()
    relation_name, relation_collisions = namer()
    kept = [(s, p, o) for s, p, o in all_triples if (s, p, o) not in dropped
            and not (p == RDFS.label and s in labels)]  # the label became the entity's name
    for s, p, o in kept:
        entity_name(s)
        if not isinstance(o, rdflib.Literal):
            entity_name(o)
    node_names = {entity_name(n) for s, _, o in kept for n in (s, o) if not isinstance(n, rdflib.Literal)}

    out: list[tuple[str, str, str]] = []
    empty_literals = 0
    quoted = 0
    for s, p, o in kept:
        h, r = entity_name(s), relation_name(p)
        if isinstance(o, rdflib.Literal):
            t = str(o).strip()
            if t in node_names:
                t = f'"{t}"'
                quoted += 1
        else:
            t = entity_name(o)
        if not t:
            empty_literals += 1
            continue
        out.append((h, r, t))
    if empty_literals:
        raise GraphFormatError(label, f"{empty_literals} triple(s) have an empty literal object", bad_lines=empty_literals)
    notes = []
    if labels:
        notes.append(f"{_plural(len(labels), 'entity', 'entities')} named by their rdfs:label")
    collisions = entity_collisions() + relation_collisions()
    if collisions:
        notes.append(
            f"{collisions} IRI(s) share a label with another IRI; kept apart by appending the IRI's local name"
        )
    if quoted:
        notes.append(f"{quoted} literal value(s) have the same text as an entity; written in quotes to keep them apart")
    noted = dropped_lang + other_labels
    if noted:
        notes.append(
            f"{len(noted)} literal(s) not used as triplets (other languages: {PREFERRED_LANGUAGE} is kept first, "
            "then no language, then the first A-Z; other labels of a named entity) are kept as these notes:"
        )
        for s, p, o in noted[:_MAX_NOTED]:
            lang = f"@{o.language}" if o.language else ""
            notes.append(f"  {entity_name(s)} -> {relation_name(p)} -> {str(o).strip()!r}{lang}")
        if len(noted) > _MAX_NOTED:
            notes.append(f"  ... and {len(noted) - _MAX_NOTED} more")
    return out, notes


def _local_name(node: object) -> str:
    text = str(node)
    for sep in ("#", "/", ":"):
        if sep in text.rstrip(sep):
            text = text.rstrip(sep).rsplit(sep, 1)[1]
            break
    return unquote(text)


_PARSERS = {
    "tsv": _parse_tsv,
    "csv": _parse_csv,
    "json": _parse_json,
    "jsonl": _parse_jsonl,
    "nt": _parse_nt,
    "ttl": _parse_ttl,
    "linearized": _parse_linearized,
}


def iter_formats() -> Iterator[tuple[str, str]]:
    """(format key, human name) pairs, for UI file pickers."""
    yield from _FORMAT_NAMES.items()


def supported_extensions() -> list[str]:
    """File extensions the loader recognises (each also accepted with ``.gz``)."""
    return sorted(_EXTENSIONS) + [".txt"]


__all__ = (
    "DEFAULT_MAX_BYTES",
    "GraphFormatError",
    "detect_format",
    "load_graph",
    "parse_graph_bytes",
    "supported_extensions",
)

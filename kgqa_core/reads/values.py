"""Reading numbers, dates and opaque ids out of entity names and question text.

READS labels semantic nodes with a type (App. A: entity / topic / num / date)
and compares constraint values from the question with graph literals, so both
sides need one parser.  Graph literals arrive in many spellings (``1997``,
``"240.15"^^xsd:float``, ``2015-08-10``, ``2015\\08\\10``, ``August 10, 2015``);
dates become tuples ``(year, month, day)`` truncated to the precision given,
so ``2011`` compares with ``2011-02-06`` at year precision.
"""

from __future__ import annotations

import re

MONTHS = {
    name: i
    for i, names in enumerate(
        [
            ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"),
            ("may",), ("june", "jun"), ("july", "jul"), ("august", "aug"),
            ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"), ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}

DateTuple = tuple[int, ...]

_TYPED_LITERAL = re.compile(r'^"(.*)"(?:\^\^\S+|@[a-zA-Z-]+)?$', re.S)
_NUMBER = re.compile(r"^[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][+-]?\d+)?$")
_ISO_DATE = re.compile(r"^(\d{4})[-/\\.](\d{1,2})(?:[-/\\.](\d{1,2}))?(?:[T ][\d:.]+Z?(?:[+-]\d\d:?\d\d)?)?$")
_MONTH_FIRST = re.compile(r"^([A-Za-z]+)\.?\s+(?:(\d{1,2})(?:st|nd|rd|th)?,?\s+)?(\d{4})$")
_DAY_FIRST = re.compile(r"^(\d{1,2})(?:st|nd|rd|th)?\s+([A-Za-z]+)\.?,?\s+(\d{4})$")
_YEAR = re.compile(r"^\d{4}$")
_DATE_RELATION = re.compile(
    r"year|date|time|born|birth|death|died|found|release|start|end|began|establish|dob|when|day|century",
    re.I,
)
_TOPIC_ID = re.compile(
    r"^(?:[mg]\.[0-9a-z_]{2,}|_:\S+|genid\S*|bnode\S*|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{16,})$",
    re.I,
)


def strip_literal(text: str) -> str:
    """``"240.15"^^xsd:float`` -> ``240.15``; other text is returned stripped."""
    text = text.strip()
    m = _TYPED_LITERAL.match(text)
    return m.group(1).strip() if m else text


def parse_number(text: str) -> float | None:
    """The number a literal spells, or None (``1,000`` and ``2.5e3`` are numbers)."""
    t = strip_literal(text)
    if not _NUMBER.match(t):
        return None
    try:
        return float(t.replace(",", ""))
    except ValueError:
        return None


def _valid(year: int, month: int | None = None, day: int | None = None) -> DateTuple | None:
    if not 1 <= year <= 9999:
        return None
    if month is None:
        return (year,)
    if not 1 <= month <= 12:
        return None
    if day is None:
        return (year, month)
    if not 1 <= day <= 31:
        return None
    return (year, month, day)


def parse_date(text: str, allow_bare_year: bool = False) -> DateTuple | None:
    """A date as ``(year[, month[, day]])``, or None.

    A bare four-digit number is only a date when the caller says so (a year
    under a ``release_year`` relation is a date; ``1500`` metres is not).
    """
    t = strip_literal(text)
    m = _ISO_DATE.match(t)
    if m:
        return _valid(int(m.group(1)), int(m.group(2)), int(m.group(3)) if m.group(3) else None)
    m = _MONTH_FIRST.match(t)
    if m and m.group(1).lower() in MONTHS:
        return _valid(int(m.group(3)), MONTHS[m.group(1).lower()], int(m.group(2)) if m.group(2) else None)
    m = _DAY_FIRST.match(t)
    if m and m.group(2).lower() in MONTHS:
        return _valid(int(m.group(3)), MONTHS[m.group(2).lower()], int(m.group(1)))
    if allow_bare_year and _YEAR.match(t):
        return _valid(int(t))
    return None


def is_date_relation(relation: str | None) -> bool:
    return bool(relation) and bool(_DATE_RELATION.search(relation or ""))


def is_topic_id(text: str) -> bool:
    """Ids without meaning: Freebase mids (``m.03lj4m5``), blank nodes, UUIDs, hashes."""
    return bool(_TOPIC_ID.match(text.strip()))


def looks_like_year(value: float) -> bool:
    return value.is_integer() and 1000 <= value <= 2100

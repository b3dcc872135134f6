"""The layering of kgqa_core (docs/architecture.md), read from the source: no package import cycles, no Streamlit.

Every ``import`` counts, at module level or inside a function (a lazy import
is still a dependency), and ``TYPE_CHECKING`` imports too.  A unit is a
subpackage of kgqa_core (``kgqa_core.graph``) or a top-level module
(``kgqa_core.cli``).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "kgqa_core"


def _unit(module: str) -> str:
    """``kgqa_core.graph.loaders`` -> ``graph``; ``kgqa_core.cli`` -> ``cli``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _imports(path: Path) -> list[tuple[str, int]]:
    """Absolute module names `path` imports, with their line numbers."""
    rel = path.relative_to(ROOT).with_suffix("")
    package = list(rel.parts[:-1]) if rel.name != "__init__" else list(rel.parts[:-1])
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
                if node.module is None:  # from . import x, y
                    out += [(f"{name}.{alias.name}", node.lineno) for alias in node.names]
                    continue
            else:
                name = node.module or ""
            out.append((name, node.lineno))
    return out


def _edges() -> dict[tuple[str, str], str]:
    """(unit, unit it imports) -> one place that does it (file:line)."""
    edges: dict[tuple[str, str], str] = {}
    for path in sorted(CORE.rglob("*.py")):
        src = _unit(".".join(path.relative_to(ROOT).with_suffix("").parts))
        for name, line in _imports(path):
            if name.startswith("kgqa_core.") and (dst := _unit(name)) != src:
                edges.setdefault((src, dst), f"{path.relative_to(ROOT)}:{line}")
    return edges


def _cycle(edges: dict[tuple[str, str], str]) -> list[str] | None:
    graph: dict[str, list[str]] = {}
    for a, b in edges:
        graph.setdefault(a, []).append(b)
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, [])):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_no_import_cycle_between_kgqa_core_packages():
    edges = _edges()
    cycle = _cycle(edges)
    where = [f"{a} -> {b} ({edges[(a, b)]})" for a, b in zip(cycle, cycle[1:])] if cycle else []
    assert cycle is None, "import cycle: " + "; ".join(where)


# docs/architecture.md: a unit imports only units on lower layers (so the method internals on layer 3
# do not import each other, and nothing imports upwards). The question's reading (`reading/`) uses READS'
# option scoring and is used by DoG's step offers (`decoding/`), so it sits between them.
LAYERS = {
    "files": -1, "questions": -1, "counts": -1, "bounds": -1, "deadline_http": -1, "redact": -1, "terminal": -1,
    "progress": -1,
    "graph": 0, "parameters": 0, "rates": 0,
    "trace": 1,
    "models": 2, "answers": 2,
    "reads": 3, "rok": 3, "lpkg": 3, "samples": 3,
    "reading": 4,
    "decoding": 5,
    "methods": 6,
    "eval": 7, "cli": 7,
    "datasets": 8,
    "__main__": 9,
}


def test_every_import_goes_down_the_layers():
    edges = _edges()
    units = {a for a, _ in edges} | {b for _, b in edges}
    unplaced = sorted(units - set(LAYERS))
    assert not unplaced, f"place {unplaced} in LAYERS here and in docs/architecture.md"
    wrong = [f"{a} -> {b} ({where})" for (a, b), where in sorted(edges.items()) if LAYERS[b] >= LAYERS[a]]
    assert not wrong, wrong


def test_kgqa_core_never_imports_streamlit():
    hits = [f"{path.relative_to(ROOT)}:{line}" for path in CORE.rglob("*.py")
            for name, line in _imports(path) if name.split(".")[0] == "streamlit"]
    assert not hits, hits


def test_the_checks_see_a_cycle_and_a_relative_import():
    """The checker itself: a planted loop is found, and ``from ..x import y`` resolves to its package."""
    assert _cycle({("a", "b"): "", ("b", "c"): "", ("c", "a"): ""}) == ["a", "b", "c", "a"]
    assert _cycle({("a", "b"): "", ("b", "c"): ""}) is None
    assert "kgqa_core.trace.schema" in {n for n, _ in _imports(CORE / "methods" / "base.py")}

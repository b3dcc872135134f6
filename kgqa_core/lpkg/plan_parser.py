"""Read an LPKG plan (App. C.2's code format) without executing any of it.

A plan is model-written Python-looking code.  Running it would let a model
(or a prompt injected into a question) execute arbitrary code, so we parse it
with `ast` and accept only a tiny language:

* assignments ``Name [: str] = value``, one target per line;
* values: a string, an f-string whose ``{...}`` parts are plain names of
  earlier variables (the paper's placeholders such as ``{Ans_1}``), a
  variable name, or a call to one of the plan tools below;
* tool arguments: strings, f-strings, names of earlier variables, and lists
  of those (``Compare(..., Subquestions=[Sub_Question_1, Sub_Question_2])``).

Everything else (imports, attribute access, subscripts, calls to anything
else, ``exec``/``eval``, comprehensions, lambdas, dunder names, names used
before they are assigned) is rejected with a `PlanParseError` naming the
plan line and the problem.  Comments (``### Question Type: ...``) are read
separately, since `ast` drops them.

Any input gives a `Plan` or a `PlanParseError`, never `RecursionError` or
`MemoryError`: a plan longer than `MAX_PLAN_CHARS`, with more than
`MAX_PLAN_LINES` lines or nested (brackets, unary operators, attribute
chains) deeper than `MAX_NESTING` is refused before `ast` sees it, and
`ast`'s own limits are caught as a last resort.  The LPKG method then falls
back to its one-step plan.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Union

# Tool name -> parameter names in positional order (App. C.2 signatures).
TOOLS: dict[str, tuple[str, ...]] = {
    "Search": ("query", "thought"),
    "Get_Answer": ("query", "info"),
    "Intersection": ("Answer1", "Answer2", "Answer3", "Answer4"),
    "Union": ("Answer1", "Answer2", "Answer3", "Answer4"),
    "Compare": ("Original_Query", "Subquestions", "Answers"),
    "Finish_The_Plan": ("Answer",),
}
REQUIRED: dict[str, tuple[str, ...]] = {
    "Search": ("query",),
    "Get_Answer": ("query",),
    "Intersection": ("Answer1", "Answer2"),
    "Union": ("Answer1", "Answer2"),
    "Compare": ("Answers",),
    "Finish_The_Plan": ("Answer",),
}
ALLOWED_ANNOTATIONS = {"str", "list", "set"}
MAX_PLAN_CHARS = 100_000  # the paper's plans are a few hundred characters
MAX_PLAN_LINES = 2_000
MAX_NESTING = 50  # a valid plan nests 3 deep: Compare(Answers=[f"{Ans_1}"])
_TOOL_LIST = ", ".join(TOOLS)
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_PLAN_VARIABLE = re.compile(r"^(Ans|Inter|Union|Info|Sub_Question|Thought|Final)(_\w*)?$")
_TYPE_COMMENT = re.compile(r"#+\s*Question\s*Type\s*:\s*(.+?)\s*$", re.I | re.M)


class PlanParseError(ValueError):
    """A plan that is not in the accepted language; ``line`` is 1-based in the plan text."""

    def __init__(self, line: int, problem: str) -> None:
        self.line = line
        self.problem = problem
        super().__init__(f"plan line {line}: {problem}" if line else f"plan: {problem}")


# ---------------------------------------------------------------- parsed values
@dataclass(frozen=True)
class Ref:
    """A reference to an earlier plan variable."""

    name: str


@dataclass(frozen=True)
class Text:
    """A string; ``parts`` mixes literal text and `Ref` placeholders."""

    parts: tuple[Union[str, Ref], ...]

    @property
    def refs(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.parts if isinstance(p, Ref))

    def render(self, values: dict[str, str] | None = None) -> str:
        values = values or {}
        return "".join(
            p if isinstance(p, str) else values.get(p.name, "{" + p.name + "}") for p in self.parts
        )


@dataclass(frozen=True)
class ListValue:
    items: tuple["Value", ...]


@dataclass(frozen=True)
class Call:
    """A call of a plan tool with its arguments by parameter name."""

    func: str
    args: dict[str, "Value"] = field(hash=False)


Value = Union[Text, Ref, ListValue, Call]


@dataclass(frozen=True)
class Assignment:
    line: int
    target: str
    value: Value
    source: str = ""


@dataclass
class Plan:
    """A parsed plan: its assignments in order and what its comments say."""

    assignments: list[Assignment]
    question_type: str = ""
    original_question: str = ""
    final: str = ""  # name of the variable holding the final answer
    source: str = ""

    def variable(self, name: str) -> Assignment | None:
        for a in self.assignments:
            if a.target == name:
                return a
        return None

    @property
    def sub_questions(self) -> list[Assignment]:
        return [a for a in self.assignments if isinstance(a.value, Text) and a.target.startswith("Sub_Question")]


# ---------------------------------------------------------------- parser
_NODE_WORDS: dict[type, str] = {
    ast.Import: "an import", ast.ImportFrom: "an import", ast.FunctionDef: "a function definition",
    ast.AsyncFunctionDef: "a function definition", ast.ClassDef: "a class definition",
    ast.For: "a for loop", ast.AsyncFor: "a for loop", ast.While: "a while loop", ast.If: "an if statement",
    ast.With: "a with statement", ast.AsyncWith: "a with statement", ast.Try: "a try statement",
    ast.Raise: "a raise statement", ast.Return: "a return statement", ast.Delete: "a del statement",
    ast.Global: "a global statement", ast.Nonlocal: "a nonlocal statement", ast.AugAssign: "an augmented assignment",
    ast.Assert: "an assert statement", ast.Pass: "a pass statement", ast.Break: "a break", ast.Continue: "a continue",
    ast.Attribute: "attribute access", ast.Subscript: "subscripting", ast.Lambda: "a lambda",
    ast.ListComp: "a list comprehension", ast.SetComp: "a set comprehension", ast.DictComp: "a dict comprehension",
    ast.GeneratorExp: "a generator expression", ast.BinOp: "an operator expression", ast.BoolOp: "a boolean expression",
    ast.UnaryOp: "an operator expression", ast.Compare: "a comparison", ast.IfExp: "a conditional expression",
    ast.Dict: "a dict", ast.Set: "a set", ast.Await: "await", ast.Yield: "yield", ast.YieldFrom: "yield",
    ast.NamedExpr: "an assignment expression (:=)", ast.Starred: "a starred expression",
}


def _describe(node: ast.AST) -> str:
    if isinstance(node, ast.Constant):
        return f"a {type(node.value).__name__} constant"
    if isinstance(node, ast.Call):
        return f"a call to {_callee(node)}"
    return _NODE_WORDS.get(type(node), f"a {type(node).__name__} expression")


def _callee(call: ast.Call) -> str:
    try:
        return ast.unparse(call.func)
    except Exception:  # pragma: no cover - unparse handles every parsed node
        return "an expression"


def _check_name(name: str, line: int) -> None:
    if name.startswith("__") or name.endswith("__"):
        raise PlanParseError(line, f"name {name!r} is not allowed (dunder names are never used in plans)")


def question_type_of(text: str) -> str:
    """The ``### Question Type: ...`` comment of a plan, if any."""
    m = _TYPE_COMMENT.search(text)
    return m.group(1).strip() if m else ""


def parse_plan(text: str, original_question: str | None = None) -> Plan:
    """Parse and validate a plan; raise `PlanParseError` naming the first bad line.

    With ``original_question``, a plan that does not assign
    ``Original_Question`` itself may still use it (line numbers then stay
    those of the text as given).
    """
    if not isinstance(text, str) or not text.strip():
        raise PlanParseError(0, "the plan is empty")
    _check_size(text)
    try:
        return _parse_checked(text, original_question)
    except (RecursionError, MemoryError):
        raise PlanParseError(0, f"the plan is nested too deeply to read (more than {MAX_NESTING} levels)") from None


def _check_size(text: str) -> None:
    """Refuse plans too long or too deeply nested for `ast` before parsing (no recursion, linear time)."""
    if len(text) > MAX_PLAN_CHARS:
        raise PlanParseError(0, f"the plan is {len(text):,} characters long; at most {MAX_PLAN_CHARS:,} are read")
    n_lines = text.count("\n") + 1
    if n_lines > MAX_PLAN_LINES:
        raise PlanParseError(0, f"the plan has {n_lines:,} lines; at most {MAX_PLAN_LINES:,} are read")
    code = _STRING.sub(lambda m: "_" * len(m.group(0)), text)  # a run of dashes inside a string is fine
    m = _DEEP_PREFIX.search(code)
    if m:
        line = text.count("\n", 0, m.start()) + 1
        raise PlanParseError(line, f"too many operators or attribute accesses in a row (more than {MAX_NESTING})")
    depth = 0
    line = 1
    for ch in _BRACKETS.findall(code):
        if ch == "\n":
            line += 1
        elif ch in "([{":
            depth += 1
            if depth > MAX_NESTING:
                raise PlanParseError(line, f"brackets nested more than {MAX_NESTING} levels deep")
        else:
            depth = max(0, depth - 1)


_STRING = re.compile(r"'(?:[^'\\\n]|\\.)*'" + r'|"(?:[^"\\\n]|\\.)*"')
# Brackets and newlines, in order outside one-line string literals.
_BRACKETS = re.compile(r"[()\[\]{}\n]")
# A long run of prefix operators ("- - - 1", "not not ...") or of attribute accesses (a.b.c...).
_DEEP_PREFIX = re.compile(
    r"(?:(?:[-+~]|\bnot\b|\bawait\b)\s*){%d,}|(?:\.\s*[A-Za-z_]\w*\s*){%d,}"
    % (MAX_NESTING + 1, MAX_NESTING + 1)
)


def _parse_checked(text: str, original_question: str | None) -> Plan:
    try:
        tree = ast.parse(text, mode="exec")
    except SyntaxError as exc:
        raise PlanParseError(exc.lineno or 0, f"not valid plan syntax ({exc.msg})") from None
    except ValueError as exc:  # NUL bytes
        raise PlanParseError(0, f"not valid plan syntax ({exc})") from None
    lines = re.split(r"\r\n|\r|\n", text)  # as ast counts lines (not str.splitlines, which splits on \f too)
    defined: set[str] = {"Original_Question"} if original_question is not None else set()
    assignments: list[Assignment] = []
    for stmt in tree.body:
        line = stmt.lineno
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
            continue  # a bare string (docstring-like note) does nothing
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            raise PlanParseError(line, "imports are not allowed in a plan (only assignments of plan tool calls)")
        if isinstance(stmt, ast.AnnAssign):
            if stmt.value is None:
                raise PlanParseError(line, "an annotation without a value assigns nothing")
            if not (isinstance(stmt.annotation, ast.Name) and stmt.annotation.id in ALLOWED_ANNOTATIONS):
                raise PlanParseError(
                    line, f"type annotation must be one of {', '.join(sorted(ALLOWED_ANNOTATIONS))}, "
                    f"found {_describe(stmt.annotation)}"
                )
            target_node, value_node = stmt.target, stmt.value
        elif isinstance(stmt, ast.Assign):
            if len(stmt.targets) != 1:
                raise PlanParseError(line, "chained assignment (a = b = ...) is not allowed")
            target_node, value_node = stmt.targets[0], stmt.value
        else:
            what = _describe(stmt.value) if isinstance(stmt, ast.Expr) else _NODE_WORDS.get(type(stmt), type(stmt).__name__)
            raise PlanParseError(line, f"only assignments are allowed in a plan; found {what}")
        if not isinstance(target_node, ast.Name):
            raise PlanParseError(line, f"assignment target must be a plain variable name, found {_describe(target_node)}")
        target = target_node.id
        _check_name(target, line)
        if target in TOOLS:
            raise PlanParseError(line, f"cannot assign to the tool name {target!r}")
        value = _value(value_node, defined, line, top=True)
        src = "\n".join(lines[line - 1 : (stmt.end_lineno or line)])
        assignments.append(Assignment(line=line, target=target, value=value, source=src))
        defined.add(target)
    if not assignments:
        raise PlanParseError(0, "the plan assigns nothing")
    if not any(isinstance(a.value, Call) and a.value.func in ("Get_Answer", "Compare") for a in assignments):
        raise PlanParseError(0, "the plan never calls Get_Answer or Compare, so it cannot produce an answer")
    plan = Plan(assignments=assignments, question_type=question_type_of(text), source=text)
    oq = plan.variable("Original_Question")
    if oq is not None and isinstance(oq.value, Text):
        plan.original_question = oq.value.render()
    elif original_question is not None:
        plan.original_question = original_question
    plan.final = _final_variable(assignments)
    return plan


def _final_variable(assignments: list[Assignment]) -> str:
    for a in reversed(assignments):
        if isinstance(a.value, Call) and a.value.func == "Finish_The_Plan":
            return a.target
    for a in reversed(assignments):
        if a.target == "Final_Answer":
            return a.target
    for a in reversed(assignments):
        if isinstance(a.value, Call) and a.value.func in ("Get_Answer", "Compare", "Intersection", "Union"):
            return a.target
    return assignments[-1].target


def _value(node: ast.AST, defined: set[str], line: int, top: bool = False) -> Value:
    line = getattr(node, "lineno", line)
    if isinstance(node, ast.Constant):
        if not isinstance(node.value, str):
            raise PlanParseError(line, f"values must be strings, names or tool calls; found {_describe(node)}")
        return _plain_string(node.value, defined, line)
    if isinstance(node, ast.JoinedStr):
        return _fstring(node, defined, line)
    if isinstance(node, ast.Name):
        _check_name(node.id, line)
        if node.id in TOOLS:
            raise PlanParseError(line, f"the tool {node.id} must be called, not used as a value")
        if node.id not in defined:
            raise PlanParseError(line, f"{node.id!r} is used before it is assigned")
        return Ref(node.id)
    if isinstance(node, (ast.List, ast.Tuple)):
        if top:
            raise PlanParseError(line, "a list can only be an argument of Compare")
        return ListValue(tuple(_value(item, defined, line) for item in node.elts))
    if isinstance(node, ast.Call):
        if not top:
            raise PlanParseError(line, f"nested calls are not allowed ({_describe(node)} inside an argument)")
        return _call(node, defined, line)
    raise PlanParseError(line, f"{_describe(node)} is not allowed in a plan")


def _call(node: ast.Call, defined: set[str], line: int) -> Call:
    if not isinstance(node.func, ast.Name):
        raise PlanParseError(
            line, f"{_describe(node.func)} ({_callee(node)}) is not allowed; a plan may only call {_TOOL_LIST}"
        )
    name = node.func.id
    _check_name(name, line)
    if name not in TOOLS:
        raise PlanParseError(line, f"call to {name!r} is not allowed; a plan may only call {_TOOL_LIST}")
    params = TOOLS[name]
    args: dict[str, Value] = {}
    if len(node.args) > len(params):
        raise PlanParseError(line, f"{name} takes at most {len(params)} arguments, got {len(node.args)}")
    for param, arg in zip(params, node.args):
        if isinstance(arg, ast.Starred):
            raise PlanParseError(line, f"{_describe(arg)} is not allowed in a plan")
        args[param] = _arg(name, param, arg, defined, line)
    for kw in node.keywords:
        if kw.arg is None:
            raise PlanParseError(line, f"**keyword unpacking is not allowed in a call to {name}")
        if kw.arg not in params:
            raise PlanParseError(line, f"{name} has no parameter {kw.arg!r} (parameters: {', '.join(params)})")
        if kw.arg in args:
            raise PlanParseError(line, f"{name} got parameter {kw.arg!r} twice")
        args[kw.arg] = _arg(name, kw.arg, kw.value, defined, line)
    missing = [p for p in REQUIRED[name] if p not in args]
    if missing:
        raise PlanParseError(line, f"{name} is missing its {missing[0]!r} argument")
    return Call(func=name, args=args)


def _arg(func: str, param: str, node: ast.AST, defined: set[str], line: int) -> Value:
    if isinstance(node, (ast.List, ast.Tuple)) and not (func == "Compare" and param in ("Subquestions", "Answers")):
        raise PlanParseError(line, f"argument {param!r} of {func} cannot be a list")
    try:
        return _value(node, defined, line)
    except PlanParseError as exc:
        if "is not allowed" in exc.problem and not exc.problem.startswith("argument"):
            raise PlanParseError(exc.line, f"argument {param!r} of {func}: {exc.problem}") from None
        raise


def _fstring(node: ast.JoinedStr, defined: set[str], line: int) -> Text:
    parts: list[Union[str, Ref]] = []
    for piece in node.values:
        if isinstance(piece, ast.Constant) and isinstance(piece.value, str):
            parts.append(piece.value)
            continue
        if not isinstance(piece, ast.FormattedValue):  # pragma: no cover - JoinedStr holds only these
            raise PlanParseError(line, f"{_describe(piece)} is not allowed inside an f-string")
        if piece.conversion != -1 or piece.format_spec is not None:
            raise PlanParseError(line, "f-string placeholders may not use conversions or format specs")
        inner = piece.value
        if not isinstance(inner, ast.Name):
            raise PlanParseError(
                line, f"f-string placeholders must be plain variable names like {{Ans_1}}; found {_describe(inner)}"
            )
        _check_name(inner.id, line)
        if inner.id not in defined:
            raise PlanParseError(line, f"placeholder {{{inner.id}}} is used before {inner.id} is assigned")
        parts.append(Ref(inner.id))
    return Text(tuple(parts))


def _plain_string(value: str, defined: set[str], line: int) -> Text:
    """A string; ``{Name}`` counts as a placeholder when it names a plan variable.

    Models often forget the ``f`` prefix; a ``{Ans_1}`` in a plain string
    means the same thing.  Braces around anything else are kept as text.
    """
    parts: list[Union[str, Ref]] = []
    pos = 0
    for m in _PLACEHOLDER.finditer(value):
        name = m.group(1)
        if name in defined:
            ref: Ref | None = Ref(name)
        elif _PLAN_VARIABLE.match(name):
            raise PlanParseError(line, f"placeholder {{{name}}} is used before {name} is assigned")
        else:
            ref = None
        if ref is not None:
            _check_name(name, line)
            if m.start() > pos:
                parts.append(value[pos : m.start()])
            parts.append(ref)
            pos = m.end()
    if pos < len(value):
        parts.append(value[pos:])
    return Text(tuple(parts))


# ---------------------------------------------------------------- extraction
_FENCE = re.compile(r"```(?:python|py)?\s*\n(.*?)(?:```|\Z)", re.S)


def extract_plan(raw: str, question: str | None = None) -> str:
    """The plan part of a model's completion.

    Cuts at a chat/special token (``<|fim_middle|>``), removes Markdown
    code fences, stops after the first ``Finish_The_Plan``
    line (models like to continue with another example), and when the
    completion does not restate ``Original_Question`` prepends it so the plan
    is complete on its own.
    """
    text = raw
    special = re.search(r"<\|[a-z_]+\|>", text)  # e.g. Qwen's <|fim_middle|>, <|endoftext|>
    if special:
        text = text[: special.start()]
    m = _FENCE.search(text)
    if m:
        text = m.group(1)
    out: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("# Example") or stripped.startswith("# Your turn"):
            if any("=" in x for x in out):
                break
            continue
        if stripped.startswith("Original_Question") and any(x.strip().startswith("Original_Question") for x in out):
            break
        out.append(line.rstrip())
        if "Finish_The_Plan(" in stripped and stripped.endswith(")"):
            break
    while out and (not out[-1].strip() or set(out[-1].strip()) <= {"#"}):
        out.pop()
    body = "\n".join(out).strip("\n")
    if question is not None and "Original_Question" not in body:
        body = f"Original_Question: str = {quote(question)}\n" + body
    return body


def quote(text: str, fstring: bool = False) -> str:
    """A Python string literal for ``text`` (an f-string keeps its placeholders)."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")
    if not fstring:
        return f'"{escaped}"'
    pieces = re.split(r"(\{[A-Za-z_][A-Za-z0-9_]*\})", escaped)
    body = "".join(p if _PLACEHOLDER.fullmatch(p) else p.replace("{", "{{").replace("}", "}}") for p in pieces)
    return f'f"{body}"'

"""GeoQuery (US geography) -> the ``geography`` domain of the multi-domain dev benchmark.

GeoQuery (Zelle & Mooney, AAAI 1996; Tang & Mooney, ECML 2001) asks
human-written questions about a small database of US geography (Geobase):
states, cities, rivers, lakes, mountains, borders, high and low points.  We
read the copy in text2sql-data (Finegan-Dollak et al., ACL 2018;
https://github.com/jkkummerfeld/text2sql-data), which ships three raw files
this builder needs, in one folder:

* ``geography.json``: each question with its ``question-split`` (train/dev/
  test), its entity variables and gold SQL;
* ``geography-polog.txt``: the questions with their Prolog logical forms
  (from the GeoQuery site);
* ``geography-db.added-in-2020.sqlite``: the database the SQL runs on.

Only questions of the **train and dev** question splits are used; a Prolog
question whose text is not in ``geography.json`` has no known split and is
skipped.

The graph is the whole database as triplets (about 2,000): ``(texas,
borders, oklahoma)``, ``(texas, capital, austin, texas)``, ``(texas, has
city, houston, texas)``, ``(mississippi river, flows through, iowa)``,
``(texas, highest point, guadalupe peak)``, ``(guadalupe peak, elevation,
2667)``, ``(texas, population, 14229000)``, ...  Node names are unique:
a state by its name, a city as ``<city>, <state>``, a river as ``<name>
river`` (so the low point "colorado river" is the river), a lake as
``<name> (lake)``, a mountain as ``<name> (mountain)``; numbers as written
in the database (a float with no fraction as an integer).

A question is kept when its logical form is a *path*: one constant (the
topic entity), no aggregation, comparison or negation (``largest``,
``count``, ``most``, ``\\+``, ...), no ``major`` filter, and binary atoms
forming a chain from the constant to the answer variable.  Each atom becomes
a graph relation (``next_to`` -> ``borders``, ``traverse`` -> ``flows
through``, ``loc`` of a city -> ``has city`` or, with ``capital``, ->
``capital``, ``high_point`` -> ``highest point``, ``population``, ``area``,
``len`` -> ``length``, ``elevation``, ``size`` -> area of a state or
population of a city); atoms on the same pair of variables are one hop, so
the hop count is the chain's length.  The answers are what the chain reaches
in the graph, and a question is kept only when they are exactly the
dataset's own answer, its gold SQL run on its database (compared by raw
name); the build reports every disagreement.  Questions with the same text
are one question, and so are paraphrases (the same topic entity and relation
chain: the first by line is kept).  From the kept questions, up to ``n`` per hop count are
sampled with `spread_sample` over relation chains and a fixed seed (there
are few 2- and 3-hop path questions: all of them are kept).
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from .multidomain import (
    DomainStats,
    Graph,
    MultiDomainError,
    chain_triplets,
    clean_name,
    follow_chain,
    read_json_list,
    spread_sample,
)

DOMAIN = "geography"
SPLITS = ("train", "dev")
JSON_FILE = "geography.json"
PROLOG_FILE = "geography-polog.txt"
DB_FILE = "geography-db.added-in-2020.sqlite"
COUNTRY = "usa"

# predicates that make a question something other than a path from one entity
_NOT_PATH = {"largest", "smallest", "highest", "lowest", "longest", "shortest", "most", "fewest", "count", "sum",
             "higher", "lower", "longer", "shorter", "larger", "smaller", "exclude", "major", "density"}
_TYPES = {"state", "city", "river", "lake", "mountain", "place"}
_CONST_TYPES = {"stateid": "state", "cityid": "city", "riverid": "river", "placeid": "place",
                "countryid": "country", "lakeid": "lake", "mountainid": "mountain"}


# ------------------------------------------------------------------ the database as a graph
def _number(value) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, str):
        try:
            return _number(float(value)) if "." in value or "e" in value.lower() else str(int(value))
        except ValueError:
            return clean_name(value)
    return str(value)


def city_node(city: str, state: str) -> str:
    return f"{clean_name(city)}, {clean_name(state)}"


def river_node(name: str) -> str:
    return f"{clean_name(name)} river"


@dataclass
class GeoGraph:
    graph: Graph
    raw: dict[str, str]  # node -> the raw database value it stands for (compared with SQL results)
    kinds: dict[str, str]  # node -> state / city / river / lake / mountain / place / country / number
    cities: dict[str, list[str]]  # raw city name -> its nodes (a name can be a city of several states)


def load_geograph(db_path: Path) -> GeoGraph:
    """Every fact of the GeoQuery database as a triplet (see the module docstring for the names)."""
    if not db_path.is_file():
        raise MultiDomainError(f"GeoQuery database not found: {db_path}")
    con = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    graph, raw, kinds, cities = Graph(), {}, {}, {}

    def node(name: str, kind: str, raw_value) -> str:
        raw.setdefault(name, clean_name(str(raw_value)))
        kinds.setdefault(name, kind)
        return name

    def num(value) -> str:
        n = _number(value)
        return node(n, "number", n)

    def rows(sql: str):
        return sorted(con.execute(sql).fetchall(), key=repr)

    try:
        for state, pop, area, country, capital in rows(
                "SELECT state_name, population, area, country_name, capital FROM state"):
            s = node(clean_name(state), "state", state)
            graph.add(s, "country", node(clean_name(country), "country", country))
            if pop is not None:
                graph.add(s, "population", num(pop))
            if area is not None:
                graph.add(s, "area", num(area))
            if capital:
                c = node(city_node(capital, state), "city", capital)
                graph.add(s, "capital", c)
                cities.setdefault(clean_name(capital), []).append(c)
        for city, pop, _country, state in rows("SELECT city_name, population, country_name, state_name FROM city"):
            c = node(city_node(city, state), "city", city)
            cities.setdefault(clean_name(city), []).append(c)
            graph.add(node(clean_name(state), "state", state), "has city", c)
            if pop is not None:
                graph.add(c, "population", num(pop))
        for state, border in rows("SELECT state_name, border FROM border_info"):
            graph.add(node(clean_name(state), "state", state), "borders", node(clean_name(border), "state", border))
        for river, length, _country, state in rows("SELECT river_name, length, country_name, traverse FROM river"):
            r = node(river_node(river), "river", river)
            graph.add(r, "flows through", node(clean_name(state), "state", state))
            if length is not None:
                graph.add(r, "length", num(length))
        for lake, area, _country, state in rows("SELECT lake_name, area, country_name, state_name FROM lake"):
            lk = node(f"{clean_name(lake)} (lake)", "lake", lake)
            graph.add(node(clean_name(state), "state", state), "has lake", lk)
            if area is not None:
                graph.add(lk, "area", num(area))
        for mountain, altitude, _country, state in rows(
                "SELECT mountain_name, mountain_altitude, country_name, state_name FROM mountain"):
            m = node(f"{clean_name(mountain)} (mountain)", "mountain", mountain)
            graph.add(node(clean_name(state), "state", state), "has mountain", m)
            if altitude is not None:
                graph.add(m, "elevation", num(altitude))
        for state, high_elev, low_point, high_point, low_elev in rows(
                "SELECT state_name, highest_elevation, lowest_point, highest_point, lowest_elevation FROM highlow"):
            s = node(clean_name(state), "state", state)
            for point, elev, rel in ((high_point, high_elev, "highest point"), (low_point, low_elev, "lowest point")):
                if not point:
                    continue
                p = node(clean_name(point), "place", point)
                graph.add(s, rel, p)
                if elev not in (None, ""):
                    graph.add(p, "elevation", num(elev))
    except sqlite3.Error as exc:
        raise MultiDomainError(f"{db_path}: not the GeoQuery database ({exc})") from None
    finally:
        con.close()
    for name, ns in cities.items():
        cities[name] = sorted(set(ns))
    return GeoGraph(graph=graph, raw=raw, kinds=kinds, cities=cities)


# ------------------------------------------------------------------ Prolog logical forms
_TOKEN = re.compile(r"\s*(?:('(?:[^']|'')*')|(\\\+|[A-Za-z_][A-Za-z0-9_]*)|(-?\d+(?:\.\d+)?(?:e[+-]?\d+)?)|(.))")


class _Var(str):
    """A Prolog variable (``A``, ``_``)."""


def _tokens(text: str) -> list[str]:
    out, pos = [], 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            break
        pos = m.end()
        tok = m.group(1) or m.group(2) or m.group(3) or m.group(4)
        if tok and tok.strip():
            out.append(tok)
    return out


def parse_term(text: str):
    """A Prolog term: an atom (str), a `_Var`, a compound ``(functor, [args])`` or a conjunction ``(",", [goals])``."""
    toks = _tokens(text)
    pos = 0

    def term():
        nonlocal pos
        tok = toks[pos]
        pos += 1
        if tok == "(":
            goals = [term()]
            while toks[pos] == ",":
                pos += 1
                goals.append(term())
            _expect(")")
            return (",", goals) if len(goals) > 1 else goals[0]
        if tok.startswith("'"):
            name = tok[1:-1].replace("''", "'")
        elif tok[0].isupper() or tok[0] == "_":
            return _Var(tok)
        else:
            name = tok
        if pos < len(toks) and toks[pos] == "(":
            pos += 1
            args = [term()]
            while toks[pos] == ",":
                pos += 1
                args.append(term())
            _expect(")")
            return (name, args)
        return name

    def _expect(tok):
        nonlocal pos
        if toks[pos] != tok:
            raise ValueError(f"expected {tok!r} at token {pos} of {text!r}")
        pos += 1

    result = term()
    if pos != len(toks):
        raise ValueError(f"trailing tokens in {text!r}")
    return result


_LINE = re.compile(r"^parse\(\[(?P<words>.*?)\],\s*(?P<lf>answer\(.*\))\)\.\s*$")


@dataclass(frozen=True)
class PrologQuestion:
    line: int
    words: str
    form: str


def read_prolog(path: Path) -> list[PrologQuestion]:
    if not path.is_file():
        raise MultiDomainError(f"GeoQuery Prolog file not found: {path}")
    out = []
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            m = _LINE.match(line.strip())
            if not m:
                raise MultiDomainError(f"{path.name}: line {lineno}: expected parse([words], answer(...)).")
            words = " ".join(w.strip().strip("'") for w in m.group("words").split(","))
            out.append(PrologQuestion(line=lineno, words=words, form=m.group("lf")))
    return out


def _key(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9 ]", " ", text.lower()).split())


@dataclass(frozen=True)
class JsonQuestion:
    text: str
    split: str
    sql: str


def read_json(path: Path) -> dict[str, JsonQuestion]:
    """Question key -> the first of its sentences in ``geography.json`` (text and SQL with the variables filled)."""
    data = read_json_list(path, "GeoQuery JSON", "question entries")
    out: dict[str, JsonQuestion] = {}
    for entry in data:
        sqls = entry.get("sql") or []
        for sent in entry.get("sentences", []):
            text, sql = sent["text"], (sqls[0] if sqls else "")
            for var, value in sorted(sent.get("variables", {}).items(), key=lambda kv: -len(kv[0])):
                text = text.replace(var, value)
                sql = sql.replace(f'"{var}"', "'" + value.replace("'", "''") + "'").replace(var, value)
            out.setdefault(_key(text), JsonQuestion(text=clean_name(text), split=sent.get("question-split", ""),
                                                   sql=sql))
    return out


class NotAPath(Exception):
    """Why a logical form is not a question we keep."""


def _flatten(goal) -> list:
    if isinstance(goal, tuple) and goal[0] == ",":
        return [a for g in goal[1] for a in _flatten(g)]
    return [goal]


def chain_of(form: str, geo: GeoGraph) -> tuple[list[str], tuple]:
    """(topic entity nodes, relation chain) of a path-shaped logical form; raises `NotAPath` otherwise."""
    if "\\+" in form:
        raise NotAPath("negation: not a path question")
    try:
        lf = parse_term(form)
    except (ValueError, IndexError) as exc:
        raise NotAPath(f"unparsed logical form ({exc})") from None
    if not (isinstance(lf, tuple) and lf[0] == "answer" and len(lf[1]) == 2 and isinstance(lf[1][0], _Var)):
        raise NotAPath("not answer(Var, Goal)")
    answer_var, goals = lf[1][0], _flatten(lf[1][1])
    for g in goals:
        name = g[0] if isinstance(g, tuple) else g
        if name in _NOT_PATH:
            raise NotAPath("aggregation, comparison or a 'major'/'density' filter: not a path question")
        if not isinstance(g, tuple) or not all(isinstance(a, _Var) or a[0] in _CONST_TYPES for a in g[1]):
            raise NotAPath("a goal with a nested term: not a path question")

    types: dict[str, set[str]] = {}
    capitals: set[str] = set()
    consts = []
    binary = []
    for name, args in goals:
        if name == "const":
            consts.append((args[0], args[1]))
            types.setdefault(args[0], set()).add(_CONST_TYPES[args[1][0]])
        elif len(args) == 1 and name in _TYPES:
            types.setdefault(args[0], set()).add(name)
        elif len(args) == 1 and name == "capital":
            capitals.add(args[0])
            types.setdefault(args[0], set()).add("city")
        elif len(args) == 2 and name in {"loc", "next_to", "traverse", "high_point", "low_point", "population",
                                         "area", "len", "elevation", "size", "capital"}:
            binary.append((name, args[0], args[1]))
        else:
            raise NotAPath(f"predicate {name}/{len(args)} has no graph relation")
    if len(consts) != 1:
        raise NotAPath(f"{len(consts)} constants: not a single-topic path question")
    topic_var, (ctype, cargs) = consts[0]
    for name, a, b in binary:  # types the relations imply
        implied = {"next_to": ("state", "state"), "traverse": ("river", "state"), "high_point": ("state", "place"),
                   "low_point": ("state", "place"), "capital": ("state", "city"), "len": ("river", "number"),
                   "elevation": (None, "number"), "population": (None, "number"), "area": (None, "number"),
                   "size": (None, "number")}.get(name)
        if implied:
            for var, kind in zip((a, b), implied):
                if kind:
                    types.setdefault(var, set()).add(kind)
    for var, kinds in types.items():
        if len(kinds) > 1:
            raise NotAPath(f"variable {var} has types {sorted(kinds)}")
    kind = {v: next(iter(k)) for v, k in types.items()}

    # one hop per pair of variables; the more specific atom names the relation
    pairs: dict[frozenset, list[tuple[str, str, str]]] = {}
    for atom in binary:
        if atom[1] == atom[2]:
            raise NotAPath("a goal relating a variable to itself")
        pairs.setdefault(frozenset(atom[1:]), []).append(atom)
    steps_by_pair = {}
    for pair, atoms in pairs.items():
        steps_by_pair[pair] = _pair_step(atoms, kind, capitals)
    # the pairs must form one chain from the topic variable to the answer variable
    order = [topic_var]
    remaining = dict(steps_by_pair)
    while order[-1] != answer_var:
        nxt = [p for p in remaining if order[-1] in p]
        if len(nxt) != 1:
            raise NotAPath("the goals do not form a single chain from the constant to the answer")
        pair = nxt[0]
        (other,) = pair - {order[-1]}
        order.append(other)
        del remaining[pair]
    if remaining:
        raise NotAPath("goals off the chain from the constant to the answer")
    for var in capitals:
        if not any(var in p and steps_by_pair[p][0] == "capital" for p in steps_by_pair):
            raise NotAPath("'capital' as a filter, not as the capital of a state")
    chain = []
    for a, b in zip(order, order[1:]):
        (rel, head, _tail) = steps_by_pair[frozenset((a, b))]
        chain.append((rel, head == a))
    topics = _topic_nodes(ctype, cargs, geo)
    return topics, tuple(chain)


def _pair_step(atoms: list[tuple[str, str, str]], kind: dict[str, str], capitals: set[str]) -> tuple[str, str, str]:
    """(relation, head variable, tail variable) of the graph triplet that the atoms on one pair of variables name."""
    specific = [a for a in atoms if a[0] != "loc"]
    if len({a[0] for a in specific}) > 1:
        raise NotAPath("two different relations between the same variables")
    if specific:
        name, x, y = specific[0]
        if name == "next_to":
            return ("borders", x, y)
        if name == "traverse":
            return ("flows through", x, y)
        if name in ("high_point", "low_point"):
            return ("highest point" if name == "high_point" else "lowest point", x, y)
        if name == "capital":
            return ("capital", x, y)
        if name == "len":
            return ("length", x, y)
        if name in ("population", "area", "elevation"):
            return (name, x, y)
        if name == "size":
            if kind.get(x) == "state":
                return ("area", x, y)
            if kind.get(x) == "city":
                return ("population", x, y)
            raise NotAPath("'size' of something other than a state or a city")
    _, x, y = atoms[0]  # loc(X, Y): X is in Y
    kx, ky = kind.get(x), kind.get(y)
    if kx == "city" and ky is None:  # "where is austin": a city is in a state (the gold SQL checks this reading)
        ky = "state"
    if ky == "state":
        if kx == "city":
            return ("capital", y, x) if x in capitals else ("has city", y, x)
        if kx == "river":
            return ("flows through", x, y)
        if kx in ("lake", "mountain"):
            return (f"has {kx}", y, x)
    if ky == "country" and kx == "state":
        return ("country", x, y)
    raise NotAPath(f"'loc' between a {kx or 'thing of unknown type'} and a {ky or 'thing of unknown type'}")


def _topic_nodes(ctype: str, cargs: list, geo: GeoGraph) -> list[str]:
    name = clean_name(str(cargs[0]))
    if ctype == "cityid":
        st = cargs[1] if len(cargs) > 1 else "_"
        nodes = geo.cities.get(name, [])
        if not isinstance(st, _Var):  # cityid(austin, tx): the database has no abbreviations, so match the node
            nodes = [n for n in nodes if _state_abbrev_matches(n, st)]
        if len(nodes) != 1:
            raise NotAPath(f"the city {name!r} is {len(nodes)} cities of the database")
        return nodes
    node = {"stateid": name, "riverid": river_node(name), "placeid": name, "countryid": name,
            "lakeid": f"{name} (lake)", "mountainid": f"{name} (mountain)"}[ctype]
    if not geo.graph.has_entity(node):
        raise NotAPath(f"the constant {name!r} is not in the database")
    return [node]


_ABBREV = {
    "al": "alabama", "ak": "alaska", "az": "arizona", "ar": "arkansas", "ca": "california", "co": "colorado",
    "ct": "connecticut", "de": "delaware", "dc": "district of columbia", "fl": "florida", "ga": "georgia",
    "hi": "hawaii", "id": "idaho", "il": "illinois", "in": "indiana", "ia": "iowa", "ks": "kansas",
    "ky": "kentucky", "la": "louisiana", "me": "maine", "md": "maryland", "ma": "massachusetts", "mi": "michigan",
    "mn": "minnesota", "ms": "mississippi", "mo": "missouri", "mt": "montana", "ne": "nebraska", "nv": "nevada",
    "nh": "new hampshire", "nj": "new jersey", "nm": "new mexico", "ny": "new york", "nc": "north carolina",
    "nd": "north dakota", "oh": "ohio", "ok": "oklahoma", "or": "oregon", "pa": "pennsylvania",
    "ri": "rhode island", "sc": "south carolina", "sd": "south dakota", "tn": "tennessee", "tx": "texas",
    "ut": "utah", "vt": "vermont", "va": "virginia", "wa": "washington", "wv": "west virginia",
    "wi": "wisconsin", "wy": "wyoming",
}


def _state_abbrev_matches(city: str, abbrev: str) -> bool:
    return city.endswith(", " + _ABBREV.get(abbrev, abbrev))


# ------------------------------------------------------------------ the build
def _sql_answers(con: sqlite3.Connection, sql: str) -> set[str] | None:
    try:
        rows = con.execute(sql.strip().rstrip(";")).fetchall()
    except sqlite3.Error:
        return None
    return {_number(v) if isinstance(v, (int, float)) else clean_name(str(v)) for row in rows for v in row
            if v is not None}


def build_geoquery(raw_dir: Path, n: int = 40, seed: int = 0) -> tuple[list[dict], Graph, DomainStats]:
    """The sampled questions (up to ``n`` per hop count), the domain graph and the build statistics."""
    if n < 1:
        raise MultiDomainError("--n must be at least 1")
    raw_dir = Path(raw_dir)
    geo = load_geograph(raw_dir / DB_FILE)
    sentences = read_json(raw_dir / JSON_FILE)
    prolog = read_prolog(raw_dir / PROLOG_FILE)
    graph = geo.graph
    stats = DomainStats(domain=DOMAIN, triplets=len(graph), entities=len(graph.entities),
                        relations=len(graph.relations))
    con = sqlite3.connect(f"file:{raw_dir / DB_FILE}?mode=ro", uri=True)
    candidates: dict[int, list[tuple[PrologQuestion, JsonQuestion, list[str], tuple, set[str]]]] = {}
    seen: set[str] = set()
    seen_chains: set[tuple] = set()
    try:
        for pq in prolog:
            js = sentences.get(_key(pq.words))
            if js is None:
                stats.drop("question not in geography.json (split unknown)")
                continue
            if js.split not in SPLITS:
                stats.drop(f"{js.split} split (only {'/'.join(SPLITS)} are used)")
                continue
            if _key(js.text) in seen:
                stats.drop("same question text as an earlier line")
                continue
            seen.add(_key(js.text))
            try:
                topics, chain = chain_of(pq.form, geo)
            except NotAPath as exc:
                stats.drop(str(exc))
                continue
            answers = set()
            for t in topics:
                answers |= follow_chain(graph, t, chain)
            if not answers:
                stats.drop("the relation chain reaches nothing in the database")
                continue
            expected = _sql_answers(con, js.sql)
            if expected is None:
                stats.drop("the gold SQL does not run on the database")
                continue
            got = {geo.raw[a] for a in answers}
            if got != expected:
                stats.drop("chain answers differ from the gold SQL's answers")
                stats.notes.append(f"line {pq.line} {js.text!r}: chain {sorted(got)[:4]} vs SQL {sorted(expected)[:4]}")
                continue
            if (tuple(topics), chain) in seen_chains:
                stats.drop("same topic entity and relation chain as an earlier question (a paraphrase)")
                continue
            seen_chains.add((tuple(topics), chain))
            candidates.setdefault(len(chain), []).append((pq, js, topics, chain, answers))
    finally:
        con.close()
    stats.candidates = {f"{h}hop": len(c) for h, c in sorted(candidates.items())}

    items = []
    for hops in sorted(candidates):
        picked = spread_sample(candidates[hops], lambda c: tuple(c[3]), n, seed, salt=f"geoquery-{hops}")
        picked.sort(key=lambda c: c[0].line)
        for pq, js, topics, chain, answers in picked:
            ordered = sorted(answers)
            triplets: list = []
            for t in topics:
                triplets += [x for x in chain_triplets(graph, t, chain, ordered) if x not in triplets]
            items.append({
                "id": f"geoquery-{js.split}-{hops}hop-{pq.line:03d}",
                "question": js.text,
                "topic_entities": list(topics),
                "answers": ordered,
                "type": f"{hops}hop",
                "graph_file": f"{DOMAIN}_kb.tsv.gz",
                "gold_chain": [list(t) for t in triplets],
                "relation_chain": [r if fwd else f"{r}^-1" for r, fwd in chain],
                "source": f"GeoQuery ({js.split} split) {PROLOG_FILE} line {pq.line}: {pq.form}",
            })
        stats.kept[f"{hops}hop"] = len(picked)
    return items, graph, stats

"""MLPQ (DBpedia path questions) -> the ``dbpedia`` domain of the multi-domain dev benchmark.

MLPQ (Tan et al., "MLPQ: A Dataset for Path Question Answering over
Multilingual Knowledge Graphs", Big Data Research 2023; GPL-3.0;
https://github.com/tan92hl/Dataset-for-QA-over-Multilingual-KG) asks 2- and
3-hop path questions over English, French and Chinese DBpedia.  Version 1.3
ships train/dev/test splits; we read only the **dev** split's English
questions of one language pair (``en_fr`` by default), files
``dev_<pair>_2h_en.txt`` and ``dev_<pair>_3h_en.txt``.

Each raw line is ``question@@@<path>``, the path being the space-separated
URIs ``h r1 t1 t1' r2 t2 [t2' r3 t3]``: a triplet per hop, with ``t1'`` the
same entity as ``t1`` in the next hop's language (the cross-lingual link).
The source's KG files are not needed (nor available in the repository's
snapshot): the domain graph is the **union of the paths of every question of
the dev split** (both hop files), about ten thousand triplets, so each
question is asked over a graph where the paths of thousands of other
questions are the distractors.

Naming, so that a name is readable and unique:

* the two URIs of a cross-lingual link are one node, and so are a French
  entity and the English one the source's inter-language link file
  (``fr_en_alignment_extracted``, optional) pairs it with;
* a node is named by its English DBpedia local name when it has one, else by
  its French one; underscores become spaces (``Terry_Davis`` -> ``Terry
  Davis``); a French-only name that equals an English node's name gets
  `` (fr)``;
* relations are the DBpedia property local names as MLPQ gives them
  (``birthPlace``, ``successeur``): the graph mixes English and French
  property names, as the source's paths do.

Questions: only those whose path starts at an English DBpedia entity whose
name the question spells (the question then names its topic entity as the
graph does); the question text is the source's, with the underscores of the
entity mention turned into spaces like the node name.  Questions with the
same topic entity and relation chain are paraphrases of one another, so only
the first (by line) is a candidate.  The answer set is every node the
question's relation chain reaches from the topic entity in the graph: it
always holds MLPQ's single answer and sometimes more (another question's
path may add a second successor, say); the build reports how often.  From the
candidates, ``n`` questions per hop count are sampled with `spread_sample`
over relation chains (templates) and a fixed seed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from .multidomain import (
    DomainStats,
    Graph,
    MultiDomainError,
    chain_question,
    clean_name,
    spread_sample,
)

DOMAIN = "dbpedia"
PAIRS = ("en_fr", "en_zh", "zh_fr")
_URI = re.compile(r"<([^<>\s]+)>")
_RESOURCE = re.compile(r"^https?://(?:(\w\w)\.)?dbpedia\.org/resource/(.+)$")
_PROPERTY = re.compile(r"^https?://(?:(\w\w)\.)?dbpedia\.org/(?:property|ontology)/(.+)$")
# inter-language link files of the source (both are "<name>&&&<name>"), and which language each column is
_ALIGNMENTS = {"fr_en_alignment_extracted": ("fr", "en"), "en_zh_alignment_extracted": ("en", "zh")}


@dataclass(frozen=True)
class RawQuestion:
    hops: int
    line: int
    text: str
    triples: tuple[tuple[str, str, str], ...]  # URIs, one triplet per hop
    links: tuple[tuple[str, str], ...]  # cross-lingual links between consecutive hops


def _resource(uri: str, where: str) -> tuple[str, str]:
    m = _RESOURCE.match(uri)
    if not m:
        raise MultiDomainError(f"{where}: not a DBpedia resource URI: {uri}")
    return (m.group(1) or "en"), m.group(2)


def _relation(uri: str, where: str) -> str:
    m = _PROPERTY.match(uri)
    if not m:
        raise MultiDomainError(f"{where}: not a DBpedia property URI: {uri}")
    return clean_name(unquote(m.group(2)))


def read_questions(path: Path, hops: int) -> list[RawQuestion]:
    """The questions of one MLPQ 1.3 file (``question@@@path`` lines)."""
    if not path.is_file():
        raise MultiDomainError(f"MLPQ file not found: {path}")
    out = []
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            line = line.rstrip("\n")
            if not line.strip():
                continue
            where = f"{path.name}: line {lineno}"
            if "@@@" not in line:
                raise MultiDomainError(f"{where}: expected question@@@path")
            text, _, path_text = line.partition("@@@")
            uris = _URI.findall(path_text)
            if len(uris) != 3 * hops:
                raise MultiDomainError(f"{where}: expected {3 * hops} URIs for a {hops}-hop path, found {len(uris)}")
            triples = tuple((uris[i], uris[i + 1], uris[i + 2]) for i in range(0, 3 * hops, 3))
            links = tuple((triples[k][2], triples[k + 1][0]) for k in range(hops - 1))
            for h, r, t in triples:
                _resource(h, where), _relation(r, where), _resource(t, where)
            out.append(RawQuestion(hops=hops, line=lineno, text=text.strip(), triples=triples, links=links))
    return out


class _UnionFind:
    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, x: str) -> str:
        self.parent.setdefault(x, x)
        root = x
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[x] != root:  # path compression
            self.parent[x], x = root, self.parent[x]
        return root

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)  # deterministic root


def _uri(lang: str, local: str) -> str:
    host = "dbpedia.org" if lang == "en" else f"{lang}.dbpedia.org"
    return f"http://{host}/resource/{local}"


def _display(local: str) -> str:
    return clean_name(unquote(local).replace("_", " "))


def entity_names(questions: list[RawQuestion], alignment_files: list[Path]) -> tuple[dict[str, str], list[str]]:
    """URI -> node name for every entity URI of the questions' paths, and notes on the naming."""
    uf = _UnionFind()
    used = set()
    for q in questions:
        for h, _, t in q.triples:
            used.update((h, t))
        for a, b in q.links:
            uf.union(a, b)
    notes = []
    for path in alignment_files:
        langs = _ALIGNMENTS.get(path.name)
        if langs is None:
            raise MultiDomainError(f"unknown alignment file {path.name}; expected one of {sorted(_ALIGNMENTS)}")
        merged = 0
        with open(path, encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, start=1):
                parts = line.rstrip("\n").split("&&&")
                if len(parts) != 2 or not all(p.strip() for p in parts):
                    if line.strip():
                        raise MultiDomainError(f"{path.name}: line {lineno}: expected name&&&name")
                    continue
                a, b = _uri(langs[0], parts[0].strip()), _uri(langs[1], parts[1].strip())
                if a in used or b in used:
                    if uf.find(a) != uf.find(b):
                        merged += 1
                    uf.union(a, b)
        notes.append(f"{path.name}: {merged} inter-language links joined entities of the paths")
    clusters: dict[str, list[str]] = {}
    for uri in sorted(used | {u for u in uf.parent}):
        clusters.setdefault(uf.find(uri), []).append(uri)
    by_name: dict[str, list[tuple[bool, str]]] = {}
    for root, uris in clusters.items():
        if not any(u in used for u in uris):
            continue
        english = sorted(_resource(u, "alignment")[1] for u in uris if _resource(u, "alignment")[0] == "en")
        others = sorted((_resource(u, "alignment")[0], _resource(u, "alignment")[1]) for u in uris)
        if len(english) > 1:
            notes.append(f"{len(english)} English names for one entity, kept {english[0]!r}: {english[1:]!r}")
        name = _display(english[0]) if english else _display(others[0][1])
        by_name.setdefault(name, []).append((bool(english), root))
    root_name: dict[str, str] = {}
    for name, owners in sorted(by_name.items()):
        for is_english, root in sorted(owners, key=lambda x: (not x[0], x[1])):
            final = name
            if len(owners) > 1 and not is_english:
                lang = _resource(clusters[root][0], "alignment")[0]
                final = f"{name} ({lang})"
                k = 2
                while final in by_name or final in root_name.values():
                    final, k = f"{name} ({lang} {k})", k + 1
            root_name[root] = final
    return {uri: root_name[uf.find(uri)] for uri in sorted(used)}, notes


def build_mlpq(raw_dir: Path, pair: str = "en_fr", n: int = 40, seed: int = 0) -> tuple[list[dict], Graph, DomainStats]:
    """The sampled questions (``n`` per hop count), the domain graph and the build statistics."""
    if pair not in PAIRS:
        raise MultiDomainError(f"--pair must be one of {', '.join(PAIRS)}")
    if n < 1:
        raise MultiDomainError("--n must be at least 1")
    raw_dir = Path(raw_dir)
    questions = [q for hops in (2, 3) for q in read_questions(raw_dir / f"dev_{pair}_{hops}h_en.txt", hops)]
    alignments = [raw_dir / name for name, langs in sorted(_ALIGNMENTS.items())
                  if set(langs) <= set(pair.split("_")) and (raw_dir / name).is_file()]
    names, notes = entity_names(questions, alignments)

    graph = Graph()
    for q in questions:
        for h, r, t in q.triples:
            graph.add(names[h], _relation(r, "path"), names[t])
    stats = DomainStats(domain=DOMAIN, triplets=len(graph), entities=len(graph.entities),
                        relations=len(graph.relations), notes=notes)

    candidates: dict[int, list[tuple[RawQuestion, tuple]]] = {2: [], 3: []}
    seen: set[tuple] = set()
    for q in questions:
        lang, local = _resource(q.triples[0][0], "path")
        topic = names[q.triples[0][0]]
        if lang != "en":
            stats.drop("topic entity is not an English DBpedia entity (the question names it in another language)")
            continue
        if local.replace("_", " ") not in q.text.replace("_", " "):
            stats.drop("the question does not spell its topic entity's name")
            continue
        chain = tuple((_relation(r, "path"), True) for _, r, _ in q.triples)
        if (topic, chain) in seen:
            stats.drop("same topic entity and relation chain as an earlier question (a paraphrase)")
            continue
        seen.add((topic, chain))
        candidates[q.hops].append((q, chain))  # its answers: `chain_question`, for the sampled ones only
    stats.candidates = {f"{h}hop": len(c) for h, c in candidates.items()}

    items = []
    for hops in (2, 3):
        picked = spread_sample(candidates[hops], lambda c: tuple(r for r, _ in c[1]), n, seed, salt=f"mlpq-{hops}")
        picked.sort(key=lambda c: c[0].line)
        for q, chain in picked:
            item, added = chain_question(
                f"mlpq-{pair}-dev-{hops}hop-{q.line:05d}", clean_name(q.text.replace("_", " ")), graph,
                names[q.triples[0][0]], chain, names[q.triples[-1][2]], f"{DOMAIN}_kb.tsv.gz",
                f"MLPQ 1.3 dev_{pair}_{hops}h_en.txt line {q.line}")
            stats.answers_added += added
            items.append(item)
        stats.kept[f"{hops}hop"] = len(picked)
    return items, graph, stats

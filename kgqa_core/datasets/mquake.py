"""MQuAKE (Wikidata fact chains) -> the ``wikidata`` domain of the multi-domain dev benchmark.

MQuAKE (Zhong et al., "MQuAKE: Assessing Knowledge Editing in Language
Models via Multi-Hop Questions", EMNLP 2023; MIT licence;
https://github.com/princeton-nlp/MQuAKE) pairs multi-hop questions with the
chain of Wikidata facts that answers them: each case has ``orig.triples``
(Wikidata ids) and ``orig.triples_labeled`` (their English labels, e.g.
``["Hey Jude", "performer", "The Beatles"]``), three paraphrases of the
multi-hop question, and a single-hop question per fact (``single_hops``).
MQuAKE is a knowledge-*editing* benchmark; we use only the true (``orig``)
facts and answers, never the counterfactual edits (``new_*``,
``requested_rewrite.target_new``).

The full MQuAKE files are larger than the repository snapshots we can read;
the file used is ``MQuAKE-hard.json`` (429 cases, every chain 4 hops, drawn
from MQuAKE-CF by Wang et al., "DeepEdit", https://github.com/wangywUST/DeepEdit),
which has the same format, so any MQuAKE file can be given with ``--file``.
MQuAKE has no train/dev/test split.

The domain graph is the union of the fact chains of every case of the file
(a few hundred to a few thousand triplets): nodes are Wikidata labels, with
`` (Q123)`` added to a label that names two different Wikidata items, and
relations are the Wikidata property labels the dataset gives (``country of
citizenship``, ``head of state``).  Questions:

* the multi-hop question of a case (the first of its paraphrases that spells
  the topic entity's label), type ``<k>hop`` for a chain of k facts;
* the single-hop questions of the cases (``1hop``), one per distinct
  (subject, relation) pair.

The answer set is every node the question's relation chain reaches from the
topic entity in the graph (MQuAKE's answer first), so another case's facts
can add answers; the build reports how often.  ``n`` questions per hop count
are sampled with `spread_sample` over relation chains and a fixed seed.
"""

from __future__ import annotations

from pathlib import Path

from .multidomain import (
    DomainStats,
    Graph,
    MultiDomainError,
    chain_question,
    clean_name,
    read_json_list,
    spread_sample,
)

DOMAIN = "wikidata"
DEFAULT_FILE = "MQuAKE-hard.json"


def read_cases(path: Path) -> list[dict]:
    cases = read_json_list(path, "MQuAKE", "cases")
    for i, case in enumerate(cases):
        try:
            ids, labels = case["orig"]["triples"], case["orig"]["triples_labeled"]
            ok = (len(ids) == len(labels) > 0 and all(len(t) == 3 for t in ids + labels)
                  and all(ids[k][2] == ids[k + 1][0] for k in range(len(ids) - 1))
                  and isinstance(case["questions"], list) and case["answer"]
                  and len(case.get("single_hops", [])) in (0, len(ids)))
        except (KeyError, TypeError):
            ok = False
        if not ok:
            raise MultiDomainError(f"{path.name}: case {i} is not an MQuAKE case with a chain of facts")
    return cases


def _mentions(question: str, label: str) -> bool:
    return label.casefold() in question.casefold()


def build_mquake(raw_dir: Path, file: str = DEFAULT_FILE, n: int = 40, seed: int = 0
                 ) -> tuple[list[dict], Graph, DomainStats]:
    """The sampled questions (``n`` per hop count), the domain graph and the build statistics."""
    if n < 1:
        raise MultiDomainError("--n must be at least 1")
    path = Path(raw_dir) / file
    cases = read_cases(path)
    tag = clean_name(Path(file).stem.lower().replace("mquake-", "").replace("mquake", "all")).replace(" ", "-")

    labels: dict[str, set[str]] = {}
    rel_labels: dict[str, set[str]] = {}
    for case in cases:
        for (s, p, o), (sl, pl, ol) in zip(case["orig"]["triples"], case["orig"]["triples_labeled"]):
            labels.setdefault(s, set()).add(clean_name(sl))
            labels.setdefault(o, set()).add(clean_name(ol))
            rel_labels.setdefault(p, set()).add(clean_name(pl))
    stats = DomainStats(domain=DOMAIN)
    label_of = {q: sorted(ls)[0] for q, ls in labels.items()}
    users: dict[str, list[str]] = {}
    for q, label in sorted(label_of.items()):
        users.setdefault(label, []).append(q)
    name = {q: (label if len(users[label]) == 1 else f"{label} ({q})") for q, label in label_of.items()}
    ambiguous = sorted(label for label, qs in users.items() if len(qs) > 1)
    if ambiguous:
        stats.notes.append(f"labels of several Wikidata items, named with their id: {ambiguous}")
    relation = {p: sorted(ls)[0] for p, ls in rel_labels.items()}

    graph = Graph()
    for case in cases:
        for s, p, o in case["orig"]["triples"]:
            graph.add(name[s], relation[p], name[o])
    stats.triplets, stats.entities, stats.relations = len(graph), len(graph.entities), len(graph.relations)

    candidates: dict[int, list[tuple]] = {}
    seen: set[tuple] = set()
    for case in sorted(cases, key=lambda c: c.get("case_id", 0)):
        facts = case["orig"]["triples"]
        topic_id = facts[0][0]
        topic = name[topic_id]
        chain = tuple((relation[p], True) for _, p, _ in facts)
        question = next((q for q in case["questions"] if _mentions(q, label_of[topic_id])), None)
        if question is None:
            stats.drop("no paraphrase of the multi-hop question spells its topic entity")
        elif (topic, chain) in seen:
            stats.drop("same topic entity and relation chain as an earlier case")
        else:
            seen.add((topic, chain))
            where = f"MQuAKE {file} case {case.get('case_id')}: questions[{case['questions'].index(question)}]"
            candidates.setdefault(len(chain), []).append(
                (f"mquake-{tag}-{case.get('case_id')}-{len(chain)}hop", question, topic, chain,
                 name[facts[-1][2]], where))
        for k, hop in enumerate(case.get("single_hops", [])):
            s, p, o = facts[k]
            one = ((relation[p], True),)
            if (name[s], one) in seen:
                continue  # the same fact asked again by another case
            if not _mentions(hop["question"], label_of[s]):
                stats.drop("a single-hop question that does not spell its subject")
                continue
            seen.add((name[s], one))
            candidates.setdefault(1, []).append(
                (f"mquake-{tag}-{case.get('case_id')}-1hop-{k}", hop["question"], name[s], one, name[o],
                 f"MQuAKE {file} case {case.get('case_id')}: single_hops[{k}]"))
    stats.candidates = {f"{h}hop": len(c) for h, c in sorted(candidates.items())}

    items = []
    for hops in sorted(candidates):
        picked = spread_sample(candidates[hops], lambda c: tuple(r for r, _ in c[3]), n, seed, salt=f"mquake-{hops}")
        picked.sort(key=lambda c: c[0])
        for qid, question, topic, chain, source_answer, source in picked:
            item, added = chain_question(qid, clean_name(question), graph, topic, chain, source_answer,
                                         f"{DOMAIN}_kb.tsv.gz", source)
            stats.answers_added += added
            items.append(item)
        stats.kept[f"{hops}hop"] = len(picked)
    return items, graph, stats

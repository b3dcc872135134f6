"""What telling the model a relation name's language changes in a vocabulary draft (`vocabulary draft --languages`).

    KGQA_DESCRIPTION_CACHE=0 OMP_NUM_THREADS=1 .venv/bin/python benchmarks/draft_languages.py --out runs/draft_languages.json

Drafts the relations of a graph whose names are judged not English (`drafting.relation_language`), once with the
language said after each name (the default, the prompt the readers' own descriptions use) and once bare (the
draft before), with the same model in one process; prints the draft's cost each way and every relation whose
words differ, for a person to judge (no gold words exist).  Run with ``KGQA_DESCRIPTION_CACHE=0`` so that no
description saved on disk by an earlier run answers for the model.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kgqa_core.graph.loaders import load_graph  # noqa: E402
from kgqa_core.models import load_model  # noqa: E402
from kgqa_core.reading import drafting  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graph", type=Path, default=ROOT / "datasets/multidomain/dbpedia_kb.tsv.gz")
    ap.add_argument("--model", default="qwen2.5-coder-1.5b")
    ap.add_argument("--backend", default="llama.cpp")
    ap.add_argument("--out", type=Path, default=None, help="write both drafts here (JSON)")
    args = ap.parse_args(argv)
    graph = load_graph(args.graph)
    facts = drafting.relation_facts(iter(graph))
    relations = sorted(r for r in facts if drafting.relation_language(r))
    print(f"{args.graph.name}: {len(facts)} relations, {len(relations)} named in another language (judged)")
    if not relations:
        return 0
    model = load_model(args.model, backend=args.backend)
    drafts: dict[str, dict[str, list[str]]] = {}
    for told in (True, False):
        costs = drafting.DraftCosts()
        vocab = drafting.draft_vocabulary(model, facts, relations, costs=costs, languages=told)
        name = "told" if told else "bare"
        drafts[name] = {r: vocab.entries.get(r, []) for r in relations}
        print(f"{name}: {costs.relations} asked ({costs.saved} read back), {len(vocab.entries)} described, "
              f"{costs.tokens_written} tokens written, {costs.prompt_tokens} prompt tokens, {costs.seconds:.0f} s")
    changed = [r for r in relations if drafts["told"][r] != drafts["bare"][r]]
    print(f"words differ for {len(changed)} of {len(relations)}:")
    for r in changed:
        print(f"  {r} ({drafting.relation_language(r)}): told {drafts['told'][r]}, bare {drafts['bare'][r]}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(drafts, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

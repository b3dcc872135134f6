"""The model's draft of a graph's relation vocabulary (`kgqa_core.reading.drafting`, ``vocabulary draft``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kgqa_core.graph import KnowledgeGraph
from kgqa_core.reading import language
from kgqa_core.reading.drafting import (DraftCosts, draft_vocabulary, gloss_prompt, languages_comment, parse_gloss,
                                        relation_facts, relation_language)
from kgqa_core.reading.vocabulary import RelationVocabulary

ROOT = Path(__file__).resolve().parents[2]
TRIPLETS = [("Faust (translation)", "traducteur", "Gérard de Nerval"), ("Le Horla", "auteur", "Guy de Maupassant"),
            ("Bel-Ami", "auteur", "Guy de Maupassant"), ("Rouen", "nw", "Le Havre"),
            ("Guy de Maupassant", "birthPlace", "Tourville-sur-Arques")]


def _graph() -> KnowledgeGraph:
    g = KnowledgeGraph("novels")
    for h, r, t in TRIPLETS:
        g.add(h, r, t)
    return g


def test_a_gloss_is_its_first_line_split_at_commas_without_the_relations_own_words():
    assert parse_gloss(" translator, translated by\nThis relation means ...") == ["translator", "translated by"]
    assert parse_gloss("Meaning: country of death.") == ["country of death"]
    assert parse_gloss("Place of birth", own_words="place of birth") == []
    assert parse_gloss("birth place, born in", own_words="birth place") == ["born in"]
    assert parse_gloss("the relation that links a book to the person who translated it") == []  # commentary
    assert parse_gloss("") == [] and parse_gloss("x, x, x, y") == ["x", "y"]


def test_the_prompt_shows_the_relation_and_its_facts_after_a_prefix_the_same_for_every_relation():
    facts = relation_facts(iter(_graph()))
    assert facts["auteur"] == [("Le Horla", "Guy de Maupassant"), ("Bel-Ami", "Guy de Maupassant")]
    one, two = gloss_prompt("auteur", facts["auteur"]), gloss_prompt("nw", facts["nw"])
    assert one.endswith("Relation: auteur\nFacts: (Le Horla, auteur, Guy de Maupassant); "
                        "(Bel-Ami, auteur, Guy de Maupassant)")
    prefix = one[: one.index("Relation: auteur")]
    assert two.startswith(prefix) and "traducteur" not in prefix and "nw" not in prefix


def test_the_model_drafts_a_vocabulary_the_readers_take(backend_model):
    costs = DraftCosts()
    seen = []
    vocab = draft_vocabulary(backend_model, relation_facts(iter(_graph())), ["traducteur", "auteur", "nw"],
                             on_relation=lambda i, n, r: seen.append((i, n, r)), costs=costs)
    assert seen == [(0, 3, "traducteur"), (1, 3, "auteur"), (2, 3, "nw")]
    assert costs.relations == 3 and costs.tokens_written > 0 and costs.prompt_tokens > 0
    assert set(vocab.entries) | set(costs.dropped) == {"traducteur", "auteur", "nw"}
    assert vocab.source == "drafted by smollm2-135m"
    for relation, aliases in vocab.entries.items():
        assert 1 <= len(aliases) <= 2 and all(a.strip() and a.lower() != relation.lower() for a in aliases)
    # the draft reads back as the user's own file would
    assert RelationVocabulary.parse(vocab.to_text()).entries == vocab.entries


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kgqa_core", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=600)


def test_vocabulary_draft_writes_a_file_that_ask_takes_and_keeps_the_users_lines(tmp_path, llama_model):
    graph = tmp_path / "novels.tsv"
    graph.write_text("".join(f"{h}\t{r}\t{t}\n" for h, r, t in TRIPLETS), encoding="utf-8")
    mine = tmp_path / "mine.txt"
    mine.write_text("auteur: author, writer\n", encoding="utf-8")
    out = tmp_path / "drafted.txt"
    done = _cli("vocabulary", "draft", "--graph", str(graph), "--model", "smollm2-135m", "--backend", "llama.cpp",
                "--keep", str(mine), "--out", str(out))
    assert done.returncode == 0, done.stderr
    text = out.read_text(encoding="utf-8")
    assert text.startswith("# drafted by smollm2-135m from novels.tsv:") and "kept as written in" in text
    if language.available():  # the expert reads which names the model was told are French
        assert "# named in another language (told to the model): traducteur (French)" in text
    drafted = RelationVocabulary.read(out)
    assert drafted.aliases("auteur") == ["author", "writer"], "the user's line is kept as written"
    assert "[1/3] birthPlace" in done.stderr and "auteur" not in done.stderr.split("relation(s) described")[0]
    ask = _cli("ask", "--graph", str(graph), "--question", "who wrote Le Horla", "--topic", "Le Horla",
               "--method", "dog", "--model", "smollm2-135m", "--param", "beam_size=1", "--param", "max_steps=1",
               "--vocabulary", str(out), "--json")
    assert ask.returncode == 0, ask.stderr
    import json

    trace = json.loads(ask.stdout)
    assert trace["extra"]["vocabulary"]["entries"]["auteur"] == ["author", "writer"]


@pytest.mark.parametrize("args, message", [
    (["--graph", "missing.tsv"], "--graph missing.tsv: file not found"),
    (["--relations", "auteur,nope"], "--relations: not relations of"),
    (["--keep", "missing.txt"], "--keep missing.txt: cannot be read"),
])
def test_bad_input_is_one_line_naming_the_parameter(tmp_path, args, message):
    graph = tmp_path / "novels.tsv"
    graph.write_text("".join(f"{h}\t{r}\t{t}\n" for h, r, t in TRIPLETS), encoding="utf-8")
    base = ["vocabulary", "draft", "--graph", str(graph), "--out", str(tmp_path / "v.txt"), "--model", "smollm2-135m"]
    if args[0] == "--graph":
        base[3] = args[1]
        args = []
    done = _cli(*base, *args)
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "v.txt").exists()


def test_pieces_that_copy_a_fact_or_repeat_the_relations_words_are_dropped():
    assert parse_gloss("number of people; (Abilene, Texas", own_words="population") == ["number of people"]
    assert parse_gloss("lowest point of", own_words="lowest point") == []
    assert parse_gloss("height; elevation, height", own_words="elevation") == ["height"]
    assert parse_gloss("the, of", own_words="x") == []


class _Prompts:
    """The 135M model, recording the text of every prompt it is given (what the model was told)."""

    def __init__(self, model) -> None:
        self._model, self.texts = model, []

    def __getattr__(self, name):
        return getattr(self._model, name)

    def generate(self, prompt, config):
        self.texts.append(getattr(prompt, "text", prompt))
        return self._model.generate(prompt, config)


@pytest.mark.skipif(not language.available(), reason="wordfreq (requirements.txt) is not installed")
def test_the_draft_tells_the_model_a_names_language_unless_asked_not_to(llama_model):
    facts = relation_facts(iter(_graph()))
    assert relation_language("traducteur") == "French" and relation_language("birthPlace") == ""
    assert relation_language("nw") == ""
    told, costs = _Prompts(llama_model), DraftCosts()
    draft_vocabulary(told, facts, ["traducteur", "nw"], costs=costs)
    assert costs.languages == {"traducteur": "French"}
    assert "Relation: traducteur (French)\nFacts:" in told.texts[0] and "Relation: nw\nFacts:" in told.texts[1]
    bare, costs = _Prompts(llama_model), DraftCosts()
    draft_vocabulary(bare, facts, ["traducteur", "nw"], costs=costs, languages=False)
    assert costs.languages == {} and "Relation: traducteur\nFacts:" in bare.texts[0]
    assert "(French)" not in "".join(bare.texts)


def test_the_languages_comment_names_each_language_once_and_stops_at_a_limit():
    assert languages_comment({}) == ""
    many = {f"r{i}": "French" for i in range(15)}
    line = languages_comment(many, limit=3)
    assert line == "# named in another language (told to the model): r0, r1, r2 (French); and 12 more\n"
    assert RelationVocabulary.parse(line + "r0: east\n").entries == {"r0": ["east"]}, "a comment the file format skips"


def test_vocabulary_draft_no_languages_gives_every_name_bare(tmp_path, llama_model):
    graph = tmp_path / "novels.tsv"
    graph.write_text("".join(f"{h}\t{r}\t{t}\n" for h, r, t in TRIPLETS), encoding="utf-8")
    out = tmp_path / "drafted.txt"
    done = _cli("vocabulary", "draft", "--graph", str(graph), "--model", "smollm2-135m", "--backend", "llama.cpp",
                "--relations", "traducteur", "--no-languages", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "named in another language" not in out.read_text(encoding="utf-8")


def test_a_name_of_several_words_run_together_is_told_with_its_words_apart():
    """The 1.5B read `sudEst` as "south of, located in"; told "sud est" it reads its words ("south east")."""
    assert "Relation: sudEst (French: sud est)\nFacts:" in gloss_prompt("sudEst", [("A", "B")], "French")
    assert "Relation: interacts_with (interacts with)\nFacts:" in gloss_prompt("interacts_with", [("A", "B")])
    assert "Relation: chefLieu (chef lieu)\nFacts:" in gloss_prompt("chefLieu", [("A", "B")])
    for one_word in ("auteur", "P31", "nw"):
        assert f"Relation: {one_word}\nFacts:" in gloss_prompt(one_word, [("A", "B")])
    assert "Relation: est (French)\nFacts:" in gloss_prompt("est", [("A", "B")], "French")
    # the made-up compound example is shown before every relation, so the shared prefix stays one
    prefix = gloss_prompt("sudEst", [("A", "B")], "French").split("Relation: sudEst")[0]
    assert "Relation: hauptStadt\n" in prefix and gloss_prompt("nord", [("A", "B")]).startswith(prefix)

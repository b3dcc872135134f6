"""Hop alignment: each hop of a walk matched to a different content word of the question (real MiniLM embedder)."""

from __future__ import annotations

import pytest

from kgqa_core.graph.embeddings import load_embedder
from kgqa_core.reading.alignment import COVER_AT, hop_alignment, hop_words, hop_words_text, question_words, weigh
from kgqa_core.reading.reading import PlanHop, RelationPlan


def _plan(*relations: str, topic: str = "texas") -> RelationPlan:
    return RelationPlan(topic=topic, hops=tuple(PlanHop(r) for r in relations))


@pytest.fixture(scope="module")
def embedder():
    emb = load_embedder()
    if emb is None:
        pytest.skip("the packaged sentence-embedding model is not installed")
    return emb


def test_question_words_leave_out_the_topic_and_keep_repeats():
    assert question_words("the states that border states that border Texas", ["texas"]) == \
        ["states", "border", "states", "border"]
    # the noun "what"/"which" asks with is the answer's kind (`answer_nouns`), not a content word
    assert question_words("what states border states that border Texas", ["texas"]) == \
        ["border", "states", "border"]
    assert question_words("which state has the capital Atlanta?", ["atlanta, georgia"]) == ["capital"]


def test_a_hop_the_question_does_not_name_costs_the_walk(embedder):
    q = "what are the capital cities of the states which border texas"
    plans = [_plan("borders", "capital"), _plan("borders", "borders", "borders"), _plan("borders"),
             _plan("borders", "has_city")]
    a = hop_alignment(q, ["texas"], plans, embedder=embedder)
    assert a[0] == max(a), a  # both named relations, each once
    # a second and third 'borders' find only words that name no relation ('states', 'cities') to match: the
    # walk the small model liked best here scores a good deal below the one the question asks for
    assert a[0] - a[1] > 0.3, a


def test_a_relation_the_question_names_twice_may_be_walked_twice(embedder):
    q = "what states border states that border texas"
    a = hop_alignment(q, ["texas"], [_plan("borders"), _plan("borders", "borders"),
                                     _plan("borders", "borders", "borders")], embedder=embedder)
    assert a[1] - a[0] > 0.4, a  # the second 'border' is named: the second hop matches it as well as the first


def test_the_users_alias_lets_a_hop_match_its_word(embedder):
    from kgqa_core.reading.vocabulary import RelationVocabulary

    q = "what is the ethnicity of Ann's wife"
    plans = [_plan("p26", "ethnicity", topic="Ann"), _plan("ethnicity", topic="Ann")]
    plain = hop_alignment(q, ["Ann"], plans, embedder=embedder)
    told = hop_alignment(q, ["Ann"], plans, RelationVocabulary.parse("p26: wife, husband, spouse"), embedder)
    assert told[0] > plain[0] and told[0] > told[1]


def test_a_name_the_embedder_cannot_read_is_matched_by_the_models_description_alone(embedder, monkeypatch):
    """`avant` (French) described as "before, earlier than": joined to its name the description is pulled towards
    the embedder's misreading of it and "before" names no hop; read alone it does (`vocabulary.embedded_text`)."""
    from kgqa_core.reading import vocabulary as vocabulary_module
    from kgqa_core.reading.vocabulary import RelationVocabulary

    q = "who is before the leader of Monarchy of the North?"
    topic = "Monarchy of the North"
    walk = _plan("leader", "avant", topic=topic)
    monkeypatch.setattr(vocabulary_module, "MEANING_ONLY", True)  # the switch on (off by default)
    described = RelationVocabulary({"avant": ["before", "earlier than"]}, meaning_only=frozenset({"avant"}))
    as_aliases = RelationVocabulary({"avant": ["before", "earlier than"]})  # the same words given by the user
    alone = {h: (w, c) for h, w, c in hop_words(q, [topic], walk, described, embedder=embedder)}
    joined = {h: (w, c) for h, w, c in hop_words(q, [topic], walk, as_aliases, embedder=embedder)}
    assert alone["leader"][0] == "leader" and alone["avant"][0] == "before"
    assert alone["avant"][1] >= COVER_AT > joined["avant"][1]  # only read alone is "before" the name of a hop
    shorter = _plan("leader", topic=topic)
    assert hop_alignment(q, [topic], [walk, shorter], described, embedder)[0] > hop_alignment(
        q, [topic], [walk, shorter], as_aliases, embedder)[0]
    monkeypatch.setattr(vocabulary_module, "MEANING_ONLY", False)  # the default: name and description together
    off = {h: c for h, _, c in hop_words(q, [topic], walk, described, embedder=embedder)}
    assert abs(off["avant"] - joined["avant"][1]) < 1e-6


def test_a_hop_no_word_is_left_for_says_so(embedder):
    matches = hop_words("who borders texas", ["texas"], _plan("borders", "capital"), embedder=embedder)
    assert [m[:2] for m in matches] == [("borders", "borders"), ("capital", "")]
    assert hop_words_text(matches).endswith("capital ~ no word of the question")


def test_two_words_that_name_one_relation_license_one_hop_not_two(embedder):
    """"high points" is `highest point`: it must not also pay for an `elevation` hop through "high"."""
    q = "what are the high points of states surrounding mississippi"
    plans = [_plan("borders", "highest point", topic="mississippi"),
             _plan("borders", "highest point", "elevation", topic="mississippi")]
    joined = hop_alignment(q, ["mississippi"], plans, embedder=embedder)
    apart = hop_alignment(q, ["mississippi"], plans, embedder=embedder, phrase_gain=0)
    assert apart[1] > apart[0], apart  # word by word, "high" pays for the elevation hop
    assert joined[0] > joined[1] + 0.1, joined  # x ALIGN_WEIGHT 8: over 2.2 times the odds
    matches = hop_words(q, ["mississippi"], plans[1], embedder=embedder)
    assert dict((r, w) for r, w, _ in matches)["highest point"] == "high points"
    assert dict((r, w) for r, w, _ in matches)["elevation"] != "high"


def test_words_that_each_name_their_own_hop_stay_apart(embedder):
    from kgqa_core.reading.alignment import join_phrases, question_words

    relations = ["borders", "capital", "has_city", "directed_by", "starred_actors"]
    vectors = embedder.encode(relations)
    for q, topic in [("what are the capital cities of the states which border texas", "texas"),
                     ("what states border states that border texas", "texas"),
                     ("who starred movies for the director of Heat", "Heat")]:
        words = question_words(q, [topic])
        assert join_phrases(q, [topic], words, vectors, embedder)[0] == words, q
    # a relation the graph names in two words ("deathPlace") is matched by them together, and only side by side
    from kgqa_core.reading.vocabulary import relation_text

    death_place = embedder.encode([relation_text("deathPlace", None)])
    q = "what is the death place of Ann"
    assert join_phrases(q, ["Ann"], question_words(q, ["Ann"]), death_place, embedder)[0] == ["death place"]
    # two words apart are one phrase only where together they are a near paraphrase of a relation (APART_AT)
    q = "what is the place of Ann's death"
    assert question_words(q, ["Ann"]) == ["place", "death"]  # the "s" of "Ann's" is no word
    assert join_phrases(q, ["Ann"], ["place", "death"], death_place, embedder)[0] == ["place death"]
    directed = embedder.encode(["directed by", "starred actors"])
    q = "who are the actors in the movies directed by the director of Heat"
    words = question_words(q, ["Heat"])
    assert join_phrases(q, ["Heat"], words, directed, embedder)[0] == ["actors", "movies", "directed", "director"]
    assert join_phrases("what is the death place of Ann", ["Ann"], ["death", "place"], death_place, embedder,
                        gain=0)[0] == ["death", "place"]  # 0 joins nothing


def test_no_embedder_or_no_words_means_no_alignment_and_weight_zero_is_the_model():
    assert hop_alignment("who is it", ["x"], [_plan("r")], embedder=None) is None
    assert weigh([0.7, 0.3], [0.0, 1.0], 0.0) == pytest.approx([0.7, 0.3])
    assert sum(weigh([0.2, 0.5, 0.3], [0.3, -0.1, 0.0], 8.0)) == pytest.approx(1.0)


def test_the_model_reader_weighs_its_choice_by_alignment_and_align_0_leaves_the_models_choice(backend_model):
    from kgqa_core.graph.knowledge_graph import KnowledgeGraph
    from kgqa_core.reading.readers import make_reader

    graph = KnowledgeGraph.from_triplets([
        ("texas", "borders", "oklahoma"), ("oklahoma", "borders", "kansas"), ("kansas", "borders", "nebraska"),
        ("oklahoma", "capital", "oklahoma city"), ("texas", "capital", "austin"),
    ], name="states")
    q = "what are the capital cities of the states which border texas"
    weighed = make_reader("paths", backend_model).read(q, graph, ["texas"])
    plain = make_reader("paths:align=0", backend_model).read(q, graph, ["texas"])
    assert "weighed by how its hops match words of the question" in weighed.explanation
    assert "weighed" not in plain.explanation
    # whatever the 135M model prefers, the walk whose hops the question names (borders, then capital) leads
    assert weighed.plans[0].relations == ["borders", "capital"], weighed.explanation
    # the trace says which of the question's words each hop was taken from
    assert "its hops and the question's words: borders ~ 'border' (0.9" in weighed.explanation
    assert "capital ~ 'capital' (1.00)" in weighed.explanation
    assert {p.text for p in weighed.plans} == {p.text for p in plain.plans}  # the same walks were offered


def test_a_word_that_names_a_relation_and_no_hop_costs_the_walk_that_leaves_it(embedder):
    """"the ethnicity of Ann's wife": the one-hop walk takes "ethnicity" and leaves "wife", which names `spouse`;
    with ``cover`` that costs it, so the two-hop walk the question asks for gains on it; a word that names no
    relation ("the") costs nothing either way."""
    from kgqa_core.reading.alignment import COVER_AT, unnamed_words

    q = "what is the ethnicity of Ann's wife"
    plans = [_plan("spouse", "ethnicity", topic="Ann"), _plan("ethnicity", topic="Ann")]
    free = hop_alignment(q, ["Ann"], plans, embedder=embedder)
    paid = hop_alignment(q, ["Ann"], plans, embedder=embedder, cover=1.0)
    assert paid[0] == pytest.approx(free[0])  # it leaves nothing unnamed
    assert paid[1] < free[1] - 0.05, (free, paid)  # "wife" ~ spouse, left to no hop
    left = unnamed_words(q, ["Ann"], plans[1], embedder=embedder, among=["spouse"])
    assert [(w, r) for w, r, _ in left] == [("wife", "spouse")] and left[0][2] >= COVER_AT
    assert unnamed_words(q, ["Ann"], plans[0], embedder=embedder) == []
    # a word is judged against every relation the question's walks hold (`among`), not only the scored walks'
    from kgqa_core.reading.alignment import joint_alignment

    alone = joint_alignment(q, ["Ann"], [[plans[1]]], embedder=embedder, cover=1.0)
    judged = joint_alignment(q, ["Ann"], [[plans[1]]], embedder=embedder, cover=1.0, among=["spouse"])
    assert judged[0] < alone[0]


def _rev(relation: str) -> PlanHop:
    return PlanHop(relation, False)


def test_two_words_apart_that_name_one_relation_take_one_hop(embedder):
    """"tell me the position Ann plays": "position" and "plays" together are `plays_position`; matched word by
    word, the walk that plays it there and back (to the players of her position) took both and led.  ("what
    position does Ann play" asks with "position": the answer's kind, `answer_nouns`; it reads the same walk.)"""
    from kgqa_core.reading import alignment

    q = "tell me the position Ann plays"
    plans = [_plan("plays_position", topic="Ann"),
             RelationPlan("Ann", (PlanHop("plays_position"), _rev("plays_position"))),
             _plan("plays_in_club", topic="Ann")]
    together = hop_alignment(q, ["Ann"], plans, embedder=embedder, cover=1.0)
    assert together[0] > together[1] + 0.15 and together[0] > together[2], together
    assert [w for _, w, _ in hop_words(q, ["Ann"], plans[0], embedder=embedder)] == ["position plays"]
    asked = hop_alignment("what position does Ann play", ["Ann"], plans, embedder=embedder, cover=1.0)
    assert asked[0] > asked[1] + 0.2 and asked[0] > asked[2], asked
    saved, alignment.APART_AT = alignment.APART_AT, 9.0  # words apart never joined: the old reading
    try:
        apart = hop_alignment(q, ["Ann"], plans, embedder=embedder, cover=1.0)
    finally:
        alignment.APART_AT = saved
    assert apart[1] > apart[0], apart


def test_where_lets_a_last_hop_to_a_place_go_unnamed_and_adds_nothing_more(embedder):
    """"where is the club that Ann plays for" names `plays_in_club` and asks where: the walk on to the club's
    country must not pay for a hop no content word names (it lost to the club itself); "where was Ann born" must
    not favour a walk past her birthplace either (the answer word only cancels the cost of an unnamed hop)."""
    from kgqa_core.reading.alignment import answer_words

    q = "where is the club that Ann plays for"
    assert answer_words(q, ["Ann"]) == ["where"]
    one, two, back = hop_alignment(q, ["Ann"], [
        _plan("plays_in_club", topic="Ann"), _plan("plays_in_club", "is_in_country", topic="Ann"),
        RelationPlan("Ann", (PlanHop("plays_in_club"), _rev("is_in_country")))], embedder=embedder, cover=1.0)
    assert two == pytest.approx(one, abs=0.02) and back < two - 0.2, (one, two, back)  # a reversed hop is unnamed
    q = "where is the football club that Ann plays for"
    matches = hop_words(q, ["Ann"], _plan("plays_in_club", "is_in_country", topic="Ann"), embedder=embedder)
    assert matches[1][:2] == ("is_in_country", "where") and "is_in_country ~ 'where' (0.4" in hop_words_text(matches)
    born, further = hop_alignment("where was Ann born", ["Ann"], [
        _plan("place_of_birth", topic="Ann"), _plan("place_of_birth", "located_in", topic="Ann")],
        embedder=embedder, cover=1.0)
    assert born >= further - 1e-6, (born, further)
    # "who" is no closer than 0.45 to a relation of people ("spouse"): it lets no hop go unnamed
    alone, wed = hop_alignment("who directed Heat", ["Heat"], [_plan("directed_by", topic="Heat"),
                                                              _plan("directed_by", "spouse", topic="Heat")],
                               embedder=embedder, cover=1.0)
    assert alone > wed + 0.3, (alone, wed)


def test_the_model_reader_reads_a_football_question_whose_relation_words_stand_apart(backend_model):
    """"what position does Ann play": the reading's walk is `plays_position`, once, and its explanation says it was
    taken from "position" and "play" together (a made-up graph: no reader was written from its wording)."""
    from kgqa_core.graph.knowledge_graph import KnowledgeGraph
    from kgqa_core.reading.readers import make_reader

    graph = KnowledgeGraph.from_triplets([
        ("Ann Berg", "plays_position", "goalkeeper"), ("Ola Dahl", "plays_position", "goalkeeper"),
        ("Ann Berg", "plays_in_club", "FC Vardal"), ("Ola Dahl", "plays_in_club", "IFK Holm"),
        ("FC Vardal", "is_in_country", "norway"), ("IFK Holm", "is_in_country", "sweden"),
        ("Ann Berg", "plays_for_country", "norway"),
    ], name="football")
    reader = make_reader("paths", backend_model)
    reading = reader.read("tell me the position Ann Berg plays", graph, ["Ann Berg"])
    assert [(h.relation, h.forward) for h in reading.plans[0].hops] == [("plays_position", True)], reading.explanation
    assert "plays_position ~ 'position plays' (0.9" in reading.explanation
    reading = reader.read("what position does Ann Berg play", graph, ["Ann Berg"])  # "position": the answer's kind
    assert [(h.relation, h.forward) for h in reading.plans[0].hops] == [("plays_position", True)], reading.explanation


FILM_RELATIONS = ["directed_by", "written_by", "starred_actors", "has_genre", "release_year", "in_language",
                  "has_tags"]


@pytest.fixture
def domain_words_on(monkeypatch):
    """`reading_domain_words` on (off by default) for the alignment's module-level calls."""
    from kgqa_core.reading import alignment

    monkeypatch.setattr(alignment, "SPREAD_WEIGHT", alignment.SPREAD_ON)


def test_a_word_of_the_whole_domain_names_no_hop_of_its_own(embedder, domain_words_on, monkeypatch):
    from kgqa_core.reading import alignment

    monkeypatch.setattr(alignment, "AGENT_NOUNS", False)  # the piece alone ("movies written by": `AGENT_NOUNS` too)

    q, topics = "when did the movies written by Willis Goldbeck release", ["Willis Goldbeck"]
    # "movies" is about as close to every relation of a film graph: it is the domain's word, not a relation's
    spread = dict(alignment.domain_words(q, topics, FILM_RELATIONS, embedder=embedder))
    assert "movies" in spread and "written" not in spread and "release" not in spread, spread
    asked = RelationPlan(topic=topics[0], hops=(PlanHop("written_by", False), PlanHop("release_year")))
    lent = RelationPlan(topic=topics[0], hops=(PlanHop("written_by", False), PlanHop("has_genre"),
                                               PlanHop("release_year")))
    score = lambda: alignment.joint_alignment(q, topics, [[asked], [lent]], embedder=embedder,  # noqa: E731
                                              among=FILM_RELATIONS, cover=1.0)
    with_piece = score()
    saved, alignment.SPREAD_WEIGHT = alignment.SPREAD_WEIGHT, 0.0  # off, as by default
    try:
        without = score()
        assert alignment.domain_words(q, topics, FILM_RELATIONS, embedder=embedder) == []  # off: nothing lowered
        lent_words = dict((r, w) for r, w, _ in hop_words(q, topics, lent, embedder=embedder, among=FILM_RELATIONS))
    finally:
        alignment.SPREAD_WEIGHT = saved
    # without the piece "movies" pays for a `has_genre` hop the question never asks for, and that walk wins
    assert lent_words["has_genre"] == "movies" and without[1] > without[0], (lent_words, without)
    assert with_piece[0] > with_piece[1], with_piece
    # what the trace shows: "movies" names `has_genre` less closely than a hop needs to count as named
    close = {r: x for r, _, x in hop_words(q, topics, lent, embedder=embedder, among=FILM_RELATIONS)}
    assert close["has_genre"] < alignment.BASELINE < close["written_by"], close


def test_a_word_close_to_two_relations_of_many_still_names_a_hop(embedder, domain_words_on):
    from kgqa_core.reading import alignment

    # "size" is near `area` and `population` and far from the rest of a geography graph: it names a hop
    relations = ["area", "population", "borders", "capital", "has city", "has lake", "flows through", "highest point",
                 "lowest point", "has river", "country"]
    assert alignment.domain_words("what is the size of the capital of texas", ["texas"], relations,
                                  embedder=embedder) == []
    combos = [[_plan("capital", "population")], [_plan("capital", "area")], [_plan("capital")]]
    q = "what is the size of the capital of texas"
    a = alignment.joint_alignment(q, ["texas"], combos, embedder=embedder, cover=1.0, among=relations)
    saved, alignment.SPREAD_WEIGHT = alignment.SPREAD_WEIGHT, 0.0
    try:
        b = alignment.joint_alignment(q, ["texas"], combos, embedder=embedder, cover=1.0, among=relations)
    finally:
        alignment.SPREAD_WEIGHT = saved
    assert a == pytest.approx(b), (a, b)  # the piece leaves it as it was


def test_with_few_relations_to_judge_by_no_word_is_the_domains(embedder, domain_words_on):
    from kgqa_core.reading import alignment

    # two relations say nothing of what a graph's whole domain is ("leader" is one of them)
    assert alignment.domain_words("who is the author of the leader of Gau Weser-Ems?", ["Gau Weser-Ems"],
                                  ["leader", "author"], embedder=embedder) == []


def test_a_word_that_stands_out_for_one_relation_keeps_it_in_a_graph_of_close_relations(embedder, domain_words_on):
    """A made-up people graph (no reader was written from its wording): its kinship relations are all near "born"
    and "husband", yet each names the one relation it stands out for, so the two-hop walk is still read."""
    from kgqa_core.graph.knowledge_graph import KnowledgeGraph
    from kgqa_core.reading import alignment
    from kgqa_core.reading.paths import relation_paths

    people = KnowledgeGraph.from_triplets([
        ("Ann", "spouse", "Bob"), ("Bob", "ethnicity", "germans"), ("Ann", "ethnicity", "dutch"),
        ("Ann", "parent", "Carl"), ("Carl", "child", "Dora"), ("Dora", "parent", "Eve"),
        ("Ann", "place_of_birth", "Oslo"),
        ("Bob", "place_of_birth", "Bonn"), ("Ann", "gender", "female"), ("Bob", "gender", "male"),
        ("Ann", "profession", "actor"), ("Carl", "parent", "Fred"), ("Ann", "nationality", "norway")], name="people")
    plans = relation_paths(people, ["Ann"], 3)
    for q, asked in [("where was Ann's husband born", "Ann -> spouse -> place_of_birth"),
                     ("what is the ethnicity of Ann's wife", "Ann -> spouse -> ethnicity"),
                     ("who is Ann's dad's child's parent", "Ann -> parent -> child -> parent")]:
        scores = alignment.joint_alignment(q, ["Ann"], [[p] for p in plans], embedder=embedder, cover=1.0)
        assert plans[max(range(len(plans)), key=lambda i: scores[i])].text == asked, q
    relations = sorted({h.relation for p in plans for h in p.hops})
    assert "born" not in dict(alignment.domain_words("where was Ann's husband born", ["Ann"], relations,
                                                     embedder=embedder))


def test_a_word_of_the_whole_domain_still_names_a_hop_walked_backwards(embedder, domain_words_on):
    """Walked backwards, `starred_actors` reaches films, which its name does not say: "the films that have the same
    actor of X" names that hop with "films", so the two-hop walk keeps what the word pays it."""
    from kgqa_core.reading import alignment

    q, topics = "what are the films that have the same actor of Hana and Alice", ["Hana and Alice"]
    assert "films" in dict(alignment.domain_words(q, topics, FILM_RELATIONS, embedder=embedder))
    back = RelationPlan(topic=topics[0], hops=(PlanHop("starred_actors"), PlanHop("starred_actors", False)))
    forward = RelationPlan(topic=topics[0], hops=(PlanHop("starred_actors"), PlanHop("directed_by")))
    words = {(r, f): (w, x) for (r, w, x), f in zip(
        hop_words(q, topics, back, embedder=embedder, among=FILM_RELATIONS), (True, False))}
    assert words[("starred_actors", False)][0] == "films" and words[("starred_actors", False)][1] > 0.5, words
    close = {r: x for r, w, x in hop_words(q, topics, forward, embedder=embedder, among=FILM_RELATIONS)}
    assert close["directed_by"] < alignment.BASELINE, close  # forward, "films" does not name `directed_by`


def test_words_of_the_whole_domain_are_off_by_default_and_a_reader_option(embedder, monkeypatch):
    from kgqa_core.reading import alignment
    from kgqa_core.reading.readers import make_reader

    monkeypatch.setattr(alignment, "AGENT_NOUNS", False)  # the piece alone ("movies written by": `AGENT_NOUNS` too)

    q, topics = "when did the movies written by Willis Goldbeck release", ["Willis Goldbeck"]
    assert alignment.domain_words(q, topics, FILM_RELATIONS, embedder=embedder) == []
    assert dict(alignment.domain_words(q, topics, FILM_RELATIONS, embedder=embedder, spread=alignment.SPREAD_ON))
    assert make_reader("paths:spread=3", model=object()).spread == 3.0
    assert make_reader("paths", model=object()).spread == 0.0


def test_the_model_reader_names_the_words_of_the_whole_domain_it_lowered(backend_model, monkeypatch):
    """With `reading_domain_words` on (reader option ``spread``), the reading's explanation says which words it took
    for the graph's whole domain; off (the default) it says nothing of them."""
    from kgqa_core.graph.knowledge_graph import KnowledgeGraph
    from kgqa_core.reading import alignment
    from kgqa_core.reading.readers import make_reader

    monkeypatch.setattr(alignment, "RELATIVE_NOUNS", False)  # the piece alone ("movies that X wrote": that one too)

    films = KnowledgeGraph.from_triplets([
        ("Ten Tall Men", "written_by", "Willis Goldbeck"), ("Ten Tall Men", "release_year", "1951"),
        ("Ten Tall Men", "directed_by", "Willis Goldbeck"), ("Ten Tall Men", "has_genre", "Adventure"),
        ("Ten Tall Men", "starred_actors", "Burt Lancaster"), ("Ten Tall Men", "in_language", "English"),
        ("Ten Tall Men", "has_tags", "foreign legion"), ("Vera Cruz", "starred_actors", "Burt Lancaster"),
        ("Vera Cruz", "release_year", "1954")], name="films")
    q, topics = "when did the movies that Willis Goldbeck wrote release", ["Willis Goldbeck"]  # no agent phrase
    on = make_reader("paths:spread=3", backend_model).read(q, films, topics)
    assert "(`reading_domain_words`): 'movies' (median 0." in on.explanation, on.explanation
    off = make_reader("paths", backend_model).read(q, films, topics)
    assert "reading_domain_words" not in off.explanation


def test_the_noun_a_which_or_what_asks_with_is_the_answers_kind_not_a_hop():
    from kgqa_core.reading.alignment import answer_nouns, answer_words

    assert answer_nouns("which company is Ford GT produced by", ["Ford GT"]) == ["company"]
    assert answer_nouns("Albert Rogell was the director of which movies", ["Albert Rogell"]) == ["movies"]
    assert answer_nouns("in which country is the club that Ann plays for", ["Ann"]) == ["country"]
    # a relative "which" follows a noun; "what is" asks with no noun; "whose" names a relation of the topic
    assert answer_nouns("what are the capitals of the states which border Texas", ["texas"]) == []
    assert answer_nouns("what is the population of Texas", ["texas"]) == []
    assert answer_nouns("whose wife is Ann", ["Ann"]) == []
    # asked in place, at the end (`IN_SITU_NOUNS`); a relative "which" before the end opens a clause
    assert answer_nouns("Karl Holm's wife practises which religion", ["Karl Holm"]) == ["religion"]
    assert answer_nouns("the films written by Thomas Fenton starred which actors", ["Thomas Fenton"]) == ["actors"]
    assert answer_nouns("the advisor of Nora Sund has what nationality", ["Nora Sund"]) == ["nationality"]
    assert answer_nouns("name the rivers which cross the states that border Texas", ["texas"]) == []
    assert answer_nouns("name the movies which Tom Hanks directed", ["Tom Hanks"]) == []  # the entity between
    assert question_words("the screenwriter of Pat and Mike also wrote which films", ["Pat and Mike"]) == [
        "screenwriter", "wrote"]
    q = "which company is Ford GT produced by"
    assert question_words(q, ["Ford GT"]) == ["produced"] and answer_words(q, ["Ford GT"]) == ["company"]


def test_an_answer_noun_confirms_a_last_hop_and_lends_no_hop_of_its_own(embedder):
    """"which company is X produced by": "company" says what the answer is.  As a content word it named a
    second hop (`manufacturer` there and back: the company's other cars); as the answer's kind it only confirms a
    last hop that reaches a company."""
    from kgqa_core.reading import alignment

    q, topics = "which company is Ford GT produced by", ["Ford GT"]
    plans = [_plan("manufacturer", topic="Ford GT"),
             RelationPlan("Ford GT", (PlanHop("manufacturer"), _rev("manufacturer"))),
             _plan("manufacturer", "founded_by", topic="Ford GT")]
    one, back, founder = hop_alignment(q, topics, plans, embedder=embedder, cover=1.0)
    assert one > back + 0.2 and one > founder + 0.1, (one, back, founder)
    saved, alignment.ANSWER_NOUNS = alignment.ANSWER_NOUNS, False
    try:
        one_before, back_before, _ = hop_alignment(q, topics, plans, embedder=embedder, cover=1.0)
    finally:
        alignment.ANSWER_NOUNS = saved
    assert back_before > one_before, (one_before, back_before)  # the walk one hop too far won before
    # "in which genres": the last hop that reaches genres is confirmed, the hop back from them is not
    q, topics = "the films written by Floyd Dell were in which genres", ["Floyd Dell"]
    asked = RelationPlan(topics[0], (_rev("written_by"), PlanHop("has_genre")))
    further = RelationPlan(topics[0], (_rev("written_by"), PlanHop("has_genre"), _rev("has_genre")))
    a, b = alignment.joint_alignment(q, topics, [[asked], [further]], embedder=embedder, among=FILM_RELATIONS,
                                     cover=1.0)
    assert a > b + 0.3, (a, b)


def test_a_walk_whose_last_hop_forward_answers_no_kind_asked_pays_for_it(embedder):
    """"which list does ... belong to": a walk ending in a forward hop far from "list" (`predecessor`) pays as
    for a relation-naming word it leaves unsaid; one ending backwards is not judged (its name says nothing of
    what it reaches)."""
    from kgqa_core.reading.alignment import _answer_noun_score

    import numpy as np

    rel = ["liste", "predecessor", "candidate"]
    nouns = embedder.encode([r for r in rel]) @ embedder.encode(["list"]).T
    row = {r: i for i, r in enumerate(rel)}
    ends_in_list = _answer_noun_score(nouns, [PlanHop("liste")], row, cover=1.0)
    ends_elsewhere = _answer_noun_score(nouns, [PlanHop("predecessor")], row, cover=1.0)
    backwards = _answer_noun_score(nouns, [_rev("predecessor")], row, cover=1.0)
    assert ends_in_list > 0.2 and ends_elsewhere < -0.2 and backwards == 0.0, (ends_in_list, ends_elsewhere)
    assert _answer_noun_score(np.zeros((3, 0)), [PlanHop("liste")], row, cover=1.0) == 0.0  # no noun asked


def test_a_relation_named_x_of_says_what_its_head_is_so_its_backward_hop_reaches_the_kind_asked(embedder):
    """"which member of The Quiet Foxes plays the drums" (the made-up music graph): "member" is the answer's
    kind.  `member_of` walked forward from a drummer reaches bands, though its name is close to "member"; walked
    backwards from the band it reaches the members.  So the band's backward hop, not the drummer's forward one,
    answers the kind asked (the reading took the drummers' bands before)."""
    from kgqa_core.reading.alignment import joint_alignment, names_its_head

    assert names_its_head("member_of") and names_its_head("subclassOf") and names_its_head("part of")
    assert not names_its_head("place_of_birth") and not names_its_head("directed_by") and not names_its_head("of")
    q, topics = "which member of The Quiet Foxes plays the drums", ["The Quiet Foxes", "drums"]
    members = [RelationPlan("The Quiet Foxes", (_rev("member_of"),)), RelationPlan("drums", (_rev("plays_instrument"),))]
    bands = [RelationPlan("The Quiet Foxes", (PlanHop("signed_to"),)),
             RelationPlan("drums", (_rev("plays_instrument"), PlanHop("member_of")))]
    among = ["member_of", "plays_instrument", "signed_to", "formed_in", "born_in"]
    right, wrong = joint_alignment(q, topics, [members, bands], embedder=embedder, among=among, cover=1.0)
    assert right > wrong, (right, wrong)


def test_the_trace_names_an_answer_noun_a_walk_leaves_unanswered(embedder):
    from kgqa_core.reading.alignment import plan_words

    q, topics = "which list does the predecessor of Ann belong to", ["Ann"]
    among = ["liste", "predecessor", "candidate"]
    _, left = plan_words(q, topics, _plan("predecessor", topic="Ann"), embedder=embedder, among=among)
    assert [w for w, _, _ in left] == ["list"] and left[0][1] == "liste", left
    matches, left = plan_words(q, topics, _plan("predecessor", "liste", topic="Ann"), embedder=embedder, among=among)
    assert left == [] and matches[0][:2] == ("predecessor", "predecessor"), (matches, left)


def test_the_model_reader_reads_the_answers_kind_and_says_so(backend_model):
    """A made-up car graph: "which company is the Vela produced by" is the maker, one hop (the noun once named a
    hop back from the maker, to its other cars), and the reading tells the expert what "company" did."""
    from kgqa_core.graph.knowledge_graph import KnowledgeGraph
    from kgqa_core.reading import alignment
    from kgqa_core.reading.readers import make_reader

    graph = KnowledgeGraph.from_triplets([
        ("Vela", "manufacturer", "Norda Motors"), ("Brisa", "manufacturer", "Norda Motors"),
        ("Norda Motors", "founded_by", "Ida Lund"), ("Vela", "model_year", "1998"),
        ("Ida Lund", "place_of_birth", "Oslo"),
    ], name="cars")
    reading = make_reader("paths", backend_model).read("which company is the Vela produced by", graph, ["Vela"])
    assert [(h.relation, h.forward) for h in reading.plans[0].hops] == [("manufacturer", True)], reading.explanation
    assert "'company' (the noun which/what asks with) says what kind of thing the answer is" in reading.explanation
    saved, alignment.ANSWER_NOUNS = alignment.ANSWER_NOUNS, False
    try:
        before = make_reader("paths", backend_model).read("which company is the Vela produced by", graph, ["Vela"])
    finally:
        alignment.ANSWER_NOUNS = saved
    # without the piece the small model took "company" for a hop of its own: the maker's other cars
    assert "kind of thing" not in before.explanation and len(before.plans[0].hops) == 2, before.explanation


def test_an_answer_noun_of_the_whole_domain_confirms_no_last_hop(embedder):
    """"what films did Eartha Kitt star in": "films" is 0.54 close to `starred_actors` and about as close to
    every relation of a film graph, so it does not confirm the walk on to her films' co-stars."""
    from kgqa_core.reading import alignment

    q, topics = "what films did Eartha Kitt star in", ["Eartha Kitt"]
    films = RelationPlan(topics[0], (_rev("starred_actors"),))
    costars = RelationPlan(topics[0], (_rev("starred_actors"), PlanHop("starred_actors")))
    # judged among the relations of a film graph's walks, as the reader judges it
    score = lambda: alignment.joint_alignment(q, topics, [[films], [costars]], embedder=embedder,  # noqa: E731
                                              among=FILM_RELATIONS, cover=1.0)
    one, two = score()
    saved, alignment.NOUN_STANDS_OUT = alignment.NOUN_STANDS_OUT, 0.0
    try:
        one_every, two_every = score()
    finally:
        alignment.NOUN_STANDS_OUT = saved
    assert two_every - one_every > two - one + 0.05, (one, two, one_every, two_every)
    # "genres" stands out for `has_genre`: `test_an_answer_noun_confirms_a_last_hop_and_lends_no_hop_of_its_own`


# A made-up family graph (not from any dataset): possessive chains name their hops in reading order
FAMILY = [("Anna Berg", "spouse", "Karl Holm"), ("Karl Holm", "spouse", "Anna Berg"),
          ("Anna Berg", "children", "Vera Sand"), ("Karl Holm", "children", "Vera Sand"),
          ("Vera Sand", "parents", "Anna Berg"), ("Vera Sand", "parents", "Karl Holm"),
          ("Karl Holm", "ethnicity", "norwegians"), ("Anna Berg", "ethnicity", "swedes"),
          ("Karl Holm", "religion", "lutheranism"), ("Anna Berg", "religion", "atheism"),
          ("Karl Holm", "place_of_birth", "Bergen"), ("Anna Berg", "place_of_birth", "Lund"),
          ("Bergen", "located_in", "norway"), ("Lund", "located_in", "sweden"),
          ("Vera Sand", "profession", "painter"), ("Karl Holm", "profession", "sailor"),
          ("Vera Sand", "nationality", "norway"), ("Karl Holm", "gender", "male")]


@pytest.mark.parametrize("question,topic,walk", [
    ("what is the ethnicity of Anna Berg's husband", "Anna Berg", ["spouse", "ethnicity"]),
    ("Karl Holm's wife practises which religion", "Karl Holm", ["spouse", "religion"]),
    ("what does the father of Vera Sand do for a living", "Vera Sand", ["parents", "profession"]),
    ("what nationality are Anna Berg's kids", "Anna Berg", ["children", "nationality"]),
    ("what is the gender of Anna Berg's partner", "Anna Berg", ["spouse", "gender"]),
    ("where is the birthplace of Anna Berg's spouse located", "Anna Berg", ["spouse", "place_of_birth",
                                                                             "located_in"]),
])
def test_possessive_chains_on_a_graph_no_reader_was_written_from(embedder, question, topic, walk):
    """"X's husband's ethnicity", "the father of X": kinship words the graph names otherwise (`spouse`,
    `parents`, `children`) and "'s" chains, read by the alignment alone from the graph's relation names."""
    from kgqa_core.graph.knowledge_graph import KnowledgeGraph
    from kgqa_core.reading.alignment import joint_alignment
    from kgqa_core.reading.paths import relation_paths

    plans = relation_paths(KnowledgeGraph.from_triplets(FAMILY), [topic])
    scores = joint_alignment(question, [topic], [[p] for p in plans], embedder=embedder, cover=1.0)
    best = plans[max(range(len(plans)), key=lambda i: scores[i])]
    assert best.relations == walk and all(h.forward for h in best.hops), best.text


def _walk(topic: str, *hops: tuple[str, bool]) -> RelationPlan:
    return RelationPlan(topic=topic, hops=tuple(PlanHop(r, forward=f) for r, f in hops))


def test_a_walk_whose_hops_the_question_names_the_other_way_round_pays_for_it(embedder):
    """"the directors of the movies written by X": the hop nearest X's name (written) is walked first."""
    from kgqa_core.reading.alignment import joint_alignment

    q, topic = "who are the directors of the movies written by Jack Nicholson", "Jack Nicholson"
    asked = _walk(topic, ("written_by", False), ("directed_by", True))
    reversed_ = _walk(topic, ("directed_by", False), ("written_by", True))
    plain = joint_alignment(q, [topic], [[asked], [reversed_]], embedder=embedder, order=0.0)
    ordered = joint_alignment(q, [topic], [[asked], [reversed_]], embedder=embedder, order=0.1)
    assert plain[0] == pytest.approx(plain[1])  # the same words matched: nothing told them apart
    assert ordered[0] == pytest.approx(plain[0]) and ordered[1] == pytest.approx(plain[1] - 0.1)


@pytest.mark.parametrize("question,topic,walk", [
    # a clause after the name is not compared with the words before it
    ("the films directed by the director of World's Greatest Dad starred who", "World's Greatest Dad",
     [("directed_by", True), ("directed_by", False), ("starred_actors", True)]),
    # one relation walked twice: its two words may go to either hop
    ("what states border states that border texas", "texas", [("borders", True), ("borders", True)]),
])
def test_hops_named_in_order_or_on_both_sides_of_the_name_cost_nothing(embedder, question, topic, walk):
    from kgqa_core.reading.alignment import joint_alignment

    plan = _walk(topic, *walk)
    plain, ordered = (joint_alignment(question, [topic], [[plan]], embedder=embedder, order=o)[0] for o in (0.0, 1.0))
    assert ordered == pytest.approx(plain)


def test_word_distances_count_from_each_entitys_own_name():
    from kgqa_core.reading.alignment import word_distances

    topics = ["Lyn Oslo", "Norway"]
    assert word_distances("who plays in Lyn Oslo and comes from Norway", topics, ["plays", "comes"]) == [
        {"Lyn Oslo": -2, "Norway": -6}, {"Lyn Oslo": 2, "Norway": -2}]
    assert word_distances("who plays for the club", topics, ["plays"]) == [{}]  # no entity named: nothing to order
    assert word_distances("who plays here", ["Ann"], ["sings"]) is None  # a word the question does not hold


def test_the_model_reader_takes_the_order_of_the_hops_as_an_option_and_says_so(backend_model):
    """`paths:order=` reaches the alignment (the reading's explanation names `reading_order` where its walk has two
    hops named by words); off by default, where the explanation says nothing of it."""
    from kgqa_core.graph.knowledge_graph import KnowledgeGraph
    from kgqa_core.reading.readers import make_reader

    graph = KnowledgeGraph.from_triplets(FAMILY, name="family")
    q = "what is the ethnicity of Anna Berg's husband"
    on = make_reader("paths:order=0.2", backend_model).read(q, graph, ["Anna Berg"])
    off = make_reader("paths", backend_model).read(q, graph, ["Anna Berg"])
    assert on.plans[0].relations == ["spouse", "ethnicity"], on.explanation
    assert "`reading_order`" in on.explanation and "`reading_order`" not in off.explanation


def test_a_noun_between_an_article_and_an_entitys_name_says_what_the_entity_is(embedder, monkeypatch):
    """`alignment.APPOSITIVES`: "who directed the movie Heat" asks for one hop; "movie" says what Heat is."""
    from kgqa_core.reading import alignment

    q, topics = "who directed the movie Heat?", ["Heat"]
    asked = RelationPlan(topic="Heat", hops=(PlanHop("directed_by"),))
    longer = RelationPlan(topic="Heat", hops=(PlanHop("directed_by"), PlanHop("directed_by", False)))
    score = lambda: alignment.joint_alignment(q, topics, [[asked], [longer]], embedder=embedder,  # noqa: E731
                                              among=["directed_by", "starred_actors", "release_year"], cover=1.0)
    on = score()
    words_on = [w for _, w, _ in hop_words(q, topics, longer, embedder=embedder)]
    monkeypatch.setattr(alignment, "APPOSITIVES", False)
    off = score()
    words_off = [w for _, w, _ in hop_words(q, topics, longer, embedder=embedder)]
    # without the rule "movie" names the second hop (back from the director to his other films) and pays that walk
    assert "movie" in words_off and "movie" not in words_on, (words_off, words_on)
    assert on[0] - on[1] > off[0] - off[1], (on, off)
    assert on[0] > on[1], on


def test_a_noun_before_a_name_that_is_a_relations_own_name_still_names_its_hop(embedder):
    from kgqa_core.reading import alignment

    q, topics = "what state has the capital Salem", ["salem"]
    assert alignment._appositive_nouns(q, topics) == {"capital"}
    backwards = RelationPlan(topic="salem", hops=(PlanHop("capital", False),))
    assert [w for _, w, _ in hop_words(q, topics, backwards, embedder=embedder)] == ["capital"]
    # a word the question also uses elsewhere, and a pronoun after the noun, are not the rule's
    assert alignment._appositive_nouns("the movie Heat and the movie star of Heat", ["Heat"]) == set()
    assert alignment._appositive_nouns("who wrote the book it was based on", []) == set()


def test_a_noun_a_participle_and_its_agent_describe_names_no_hop_of_its_own(embedder, monkeypatch):
    """`alignment.AGENT_NOUNS`: in "the editors of the books written by Ann Lee" the books are what `written_by`
    reaches back from Ann Lee; "books" names no hop back from the editors to their other books."""
    from kgqa_core.reading import alignment

    q, topics = "who are the editors of the books written by Ann Lee", ["Ann Lee"]
    among = ["written_by", "edited_by", "published_in", "has_topic", "printed_by"]
    asked = RelationPlan(topic="Ann Lee", hops=(PlanHop("written_by", False), PlanHop("edited_by")))
    longer = RelationPlan(topic="Ann Lee", hops=(PlanHop("written_by", False), PlanHop("edited_by"),
                                                 PlanHop("edited_by", False)))
    score = lambda: alignment.joint_alignment(q, topics, [[asked], [longer]], embedder=embedder,  # noqa: E731
                                              among=among, cover=1.0)
    assert alignment._agent_nouns(q, topics) == {"books"}
    on = score()
    words_on = [w for _, w, _ in hop_words(q, topics, longer, embedder=embedder, among=among)]
    monkeypatch.setattr(alignment, "AGENT_NOUNS", False)
    off = score()
    words_off = [w for _, w, _ in hop_words(q, topics, longer, embedder=embedder, among=among)]
    assert "books" in words_off and "books" not in words_on, (words_off, words_on)
    assert on[0] - on[1] > off[0] - off[1], (on, off)
    assert on[0] > on[1], on


def test_the_model_reader_says_which_nouns_name_no_hop_and_why(backend_model):
    """What the trace tells a domain expert: "books" (before "written by Ann Lee") says what that hop reaches."""
    from kgqa_core.graph.knowledge_graph import KnowledgeGraph
    from kgqa_core.reading.readers import make_reader

    books = KnowledgeGraph.from_triplets([
        ("Salt Roads", "written_by", "Ann Lee"), ("Salt Roads", "edited_by", "Ed Moe"),
        ("Tide Songs", "edited_by", "Ed Moe"), ("Salt Roads", "published_in", "1999"),
        ("Tide Songs", "written_by", "Bo Dahl")], name="books")
    reading = make_reader("paths", backend_model).read("who are the editors of the books written by Ann Lee", books,
                                                       ["Ann Lee"])
    assert ("'books' says what a hop from the entity after it reaches, so it names no hop of its own"
            in reading.explanation), reading.explanation


def test_a_noun_before_a_relative_clause_or_participle_names_no_hop(embedder, monkeypatch):
    """`alignment.RELATIVE_NOUNS`: "states bordering texas" are what `borders` reaches from Texas, so "states" names
    no second hop of `borders`; a preposition before "which" is no noun, and off changes nothing."""
    from kgqa_core.reading import alignment

    q, topics = "what are the lakes in states bordering texas", ["texas"]
    asked = RelationPlan(topic="texas", hops=(PlanHop("borders"), PlanHop("has lake")))
    longer = RelationPlan(topic="texas", hops=(PlanHop("borders"), PlanHop("borders"), PlanHop("has lake")))
    score = _geography_scores(q, topics, asked, longer, embedder)
    monkeypatch.setattr(alignment, "RELATIVE_NOUNS", False)
    assert alignment._relative_nouns(q, topics) == set()
    off = score()
    monkeypatch.setattr(alignment, "RELATIVE_NOUNS", True)
    assert alignment._relative_nouns(q, topics) == {"states"}
    assert ("states", "what a hop from the entity after it reaches") in alignment.described_nouns(q, topics)
    on = score()
    assert on[0] - on[1] > off[0] - off[1], (on, off)
    assert on[0] > on[1], on
    assert alignment._relative_nouns("what are the populations of states through which the mississippi river runs",
                                      ["mississippi river"]) == set()


def test_the_model_reader_says_when_the_answers_kind_is_said_again(backend_model):
    """What the trace tells a domain expert: the second "states" says the neighbours are states, and names no hop."""
    from kgqa_core.graph.knowledge_graph import KnowledgeGraph
    from kgqa_core.reading.readers import make_reader

    states = KnowledgeGraph.from_triplets([
        ("colorado", "borders", "utah"), ("utah", "borders", "nevada"), ("colorado", "borders", "kansas"),
        ("kansas", "borders", "missouri"), ("utah", "country", "usa"), ("kansas", "country", "usa"),
        ("colorado", "capital", "denver"), ("utah", "capital", "salt lake city")], name="states")
    reading = make_reader("paths", backend_model).read("what states border states that border colorado", states,
                                                       ["colorado"])
    assert ("'states' says again the kind of thing the answer is, of other entities the question names, so it names "
            "no hop of its own" in reading.explanation), reading.explanation


def test_a_noun_before_a_participle_keeps_naming_what_it_paraphrases_and_needs_an_entity_as_agent(embedder):
    from kgqa_core.reading import alignment

    q, topics = "what continent does the sport played by Ann Lee come from", ["Ann Lee"]
    assert alignment._agent_nouns(q, topics) == {"sport"}
    walk = RelationPlan(topic="Ann Lee", hops=(PlanHop("sport"), PlanHop("continent")))
    assert "sport" in [w for _, w, _ in hop_words(q, topics, walk, embedder=embedder)]  # the relation's own name
    # an agent that is no entity's name ("by actors in X"), and a word the question also uses elsewhere
    assert alignment._agent_nouns("the dates of films starred by actors in Heat", ["Heat"]) == set()
    assert alignment._agent_nouns("which films are films written by Ann Lee", ["Ann Lee"]) == set()


GEOGRAPHY_RELATIONS = ["population", "has city", "borders", "flows through", "elevation", "area", "lowest point",
                       "highest point", "country", "capital", "has mountain", "length", "has lake"]  # GeoQuery's


def _geography_scores(question, topics, asked, other, embedder):
    """A function giving the two walks' joint alignments now (against GeoQuery's relations), for before/after."""
    from kgqa_core.reading import alignment

    return lambda: alignment.joint_alignment(question, topics, [[asked], [other]], embedder=embedder,
                                             among=GEOGRAPHY_RELATIONS, cover=1.0)


def test_the_answers_noun_said_again_names_no_hop_past_the_answer(embedder, monkeypatch):
    """`alignment.KIND_REPEATS`: in "what states border states that border colorado" the second "states" says the
    neighbours are states, as the first says the answer is: it names no third hop to a relation close to it
    (`country`, 0.61 in MiniLM) and, the same word in another number, neither does "state"."""
    from kgqa_core.reading import alignment

    q, topics = "what states border states that border colorado", ["colorado"]
    asked = RelationPlan(topic="colorado", hops=(PlanHop("borders"), PlanHop("borders")))
    past = RelationPlan(topic="colorado", hops=(PlanHop("borders"), PlanHop("borders"), PlanHop("country")))
    score = _geography_scores(q, topics, asked, past, embedder)
    assert alignment._kind_repeats(q, topics) == {"states"}
    assert ("states", "again the kind of thing the answer is, of other entities the question names") in \
        alignment.described_nouns(q, topics)
    on = score()
    monkeypatch.setattr(alignment, "KIND_REPEATS", False)
    off = score()
    # the walk past the answer keeps only what the answer's kind says of its last hop: the model decides the rest
    assert on[1] - on[0] < off[1] - off[0], (on, off)
    monkeypatch.setattr(alignment, "KIND_REPEATS", True)
    assert alignment._kind_repeats("which state borders the states that border utah", ["utah"]) == {"states"}
    # a word that is not the answer's kind is left as it was, and so is a question without one
    assert alignment._kind_repeats("which rivers run through states bordering new mexico", ["new mexico"]) == set()
    assert alignment._kind_repeats("who are the actors of films with actors of Heat", ["Heat"]) == set()


def test_a_copular_questions_noun_asks_for_the_answers_kind(monkeypatch):
    """`alignment.COPULAR_NOUNS`: "what are the genres of ..." asks for genres as "which genres ..." does."""
    from kgqa_core.reading import alignment

    monkeypatch.setattr(alignment, "COPULAR_NOUNS", True)
    q, topics = "what are the genres of the movies directed by Shawn Sourgose", ["Shawn Sourgose"]
    assert alignment.answer_nouns(q, topics) == ["genres"]
    assert question_words(q, topics) == ["movies", "directed"]
    assert alignment.answer_nouns("what is the capital of Japan?", ["Japan"]) == []  # its only word names the hop
    assert question_words("what is the capital of Japan?", ["Japan"]) == ["capital"]
    assert alignment.answer_nouns("the films that are the remakes of Heat", ["Heat"]) == []  # no wh-word opens it
    # a phrase's head is its last word; the words before it may still name hops
    q2 = "what is the official language of the country of Ann"
    assert alignment.answer_nouns(q2, ["Ann"]) == ["language"] and question_words(q2, ["Ann"]) == ["official", "country"]
    monkeypatch.setattr(alignment, "COPULAR_NOUNS", False)
    assert alignment.answer_nouns(q, topics) == []


def test_a_copular_noun_no_longer_names_a_hop_past_the_answer(embedder, monkeypatch):
    from kgqa_core.reading import alignment

    q, topics = "what are the genres of the movies directed by Shawn Sourgose", ["Shawn Sourgose"]
    asked = RelationPlan(topic=topics[0], hops=(PlanHop("directed_by", False), PlanHop("has_genre")))
    past = RelationPlan(topic=topics[0], hops=(PlanHop("directed_by", False), PlanHop("has_genre"),
                                               PlanHop("has_genre", False)))
    score = lambda: alignment.joint_alignment(q, topics, [[asked], [past]], embedder=embedder,  # noqa: E731
                                              among=FILM_RELATIONS, cover=1.0)
    monkeypatch.setattr(alignment, "AGENT_NOUNS", False)  # the piece alone ("movies directed by": `AGENT_NOUNS` too)
    monkeypatch.setattr(alignment, "COPULAR_NOUNS", False)
    off = score()
    monkeypatch.setattr(alignment, "COPULAR_NOUNS", True)
    on = score()
    # "genres" and "movies" each named a has_genre hop: the walk back from the genres to other films won
    assert off[1] > off[0], off
    assert on[0] > on[1], on


BAND = [("Ola Vik", "member_of", "The Quiet Foxes"), ("The Quiet Foxes", "formed_in", "Bergen"),
        ("Bergen", "located_in", "Norway"), ("Eva Lund", "member_of", "The Quiet Foxes"),
        ("Eva Lund", "born_in", "Bergen"), ("Ola Vik", "born_in", "Tromsø"), ("Tromsø", "located_in", "Norway")]


def test_the_answers_kind_read_off_the_entity_a_walk_reaches(embedder):
    """`reading_answer_kind` (`alignment.ENTITY_KIND_WEIGHT`, off by default): "in which country was X's band formed"
    names no relation called "country"; with it, the walk on to Norway gains over the one that stops at Bergen, by
    the weight x (the noun's closeness to "Norway" above the bar), and a question without an answer noun gains
    nothing."""
    from kgqa_core.graph.knowledge_graph import KnowledgeGraph
    from kgqa_core.reading.alignment import ENTITY_KIND_AT, _entity_kinds, entity_kinds_text
    from kgqa_core.reading.paths import relation_paths

    graph = KnowledgeGraph.from_triplets(BAND, name="band")
    plans = {p.text: p for p in relation_paths(graph, ["Ola Vik"], 3)}
    short, on = plans["Ola Vik -> member_of -> formed_in"], plans["Ola Vik -> member_of -> formed_in -> located_in"]
    q = "in which country was Ola Vik's band formed"
    off_s = hop_alignment(q, ["Ola Vik"], [short, on], embedder=embedder, kind=0.0)
    on_s = hop_alignment(q, ["Ola Vik"], [short, on], embedder=embedder, kind=2.0)
    assert hop_alignment(q, ["Ola Vik"], [short, on], embedder=embedder) == off_s  # off by default
    kinds = _entity_kinds(q, ["Ola Vik"], ["Bergen", "Norway"], embedder)
    assert kinds["Bergen"] == 0.0 < kinds["Norway"]
    assert on_s[0] == pytest.approx(off_s[0]) and on_s[1] == pytest.approx(off_s[1] + 2.0 * kinds["Norway"])
    text = entity_kinds_text(q, ["Ola Vik"], on, embedder)
    assert "Norway" in text and "country" in text and f"{ENTITY_KIND_AT:.2f}" in text
    assert entity_kinds_text(q, ["Ola Vik"], short, embedder) == ""
    plain = "where was Ola Vik's band formed"
    assert hop_alignment(plain, ["Ola Vik"], [short, on], embedder=embedder, kind=2.0) == \
        hop_alignment(plain, ["Ola Vik"], [short, on], embedder=embedder, kind=0.0)


def test_the_model_reader_takes_the_answers_kind_as_an_option_and_says_so(backend_model):
    """`paths:kind=` reaches the reader; its explanation names `reading_answer_kind` where the walk it chose gained."""
    from kgqa_core.graph.knowledge_graph import KnowledgeGraph
    from kgqa_core.reading.readers import make_reader

    graph = KnowledgeGraph.from_triplets(BAND, name="band")
    q = "in which country was Ola Vik's band formed"
    on = make_reader("paths:kind=5", backend_model).read(q, graph, ["Ola Vik"])
    off = make_reader("paths", backend_model).read(q, graph, ["Ola Vik"])
    assert "`reading_answer_kind`" not in off.explanation
    assert on.plans[0].example == "Norway" or on.plans[0].walk[-1:] == ("Norway",), on.explanation
    assert "`reading_answer_kind`" in on.explanation


def test_a_which_asked_in_place_lends_its_noun_no_hop(embedder):
    """"the screenwriter of Pat and Mike also wrote which films": "films" asks for the answer's kind as "which
    films did ..." would.  As a content word it named a hop of its own (`starred_actors` is the relation closest
    to it), and the walk one hop longer through the film's actors read the question better than the walk it asks
    for: the writer's other films."""
    from kgqa_core.reading import alignment

    q, topics = "the screenwriter of Pat and Mike also wrote which films", ["Pat and Mike"]
    asked = RelationPlan(topics[0], (PlanHop("written_by"), _rev("written_by")))
    longer = RelationPlan(topics[0], (PlanHop("starred_actors"), _rev("starred_actors"), PlanHop("written_by")))

    def scores():
        return alignment.joint_alignment(q, topics, [[asked], [longer]], embedder=embedder, among=FILM_RELATIONS,
                                         cover=1.0)

    a, b = scores()
    assert a > b + 0.1, (a, b)
    saved, alignment.IN_SITU_NOUNS = alignment.IN_SITU_NOUNS, False
    try:
        a_before, b_before = scores()
    finally:
        alignment.IN_SITU_NOUNS = saved
    assert b_before > a_before, (a_before, b_before)  # the longer walk won before

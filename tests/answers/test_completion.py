"""Complete answers: every entity the chain's last relation holds, after the model's own."""

from __future__ import annotations

from kgqa_core.answers.completion import (
    reach,
    MAX_PATH_FRONTIER,
    chain_path,
    chain_paths,
    complete_along_path,
    complete_from_chain,
    complete_from_last_triplet,
)
from kgqa_core.decoding.context import resolve_answers
from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_core.trace.schema import Answer, Trace

G = KnowledgeGraph.from_triplets(
    [
        ("Disclosure", "starred_actors", "Michael Douglas"),
        ("Disclosure", "starred_actors", "Demi Moore"),
        ("Disclosure", "starred_actors", "Donald Sutherland"),
        ("Disclosure", "directed_by", "Barry Levinson"),
        ("Ghost", "starred_actors", "Demi Moore"),
        ("G.I. Jane", "starred_actors", "Demi Moore"),
        ("Rain Man", "directed_by", "Barry Levinson"),
    ]
)


def _ans(*names):
    return [Answer(text=n, entity=n if G.has_entity(n) else None, in_graph=G.has_entity(n)) for n in names]


def test_forward_triplet_adds_every_tail_after_the_models_answer():
    last = G.find("Disclosure", "starred_actors", "Demi Moore")
    got = complete_from_last_triplet(_ans("Demi Moore"), last, G, topics=["Disclosure"])
    assert [a.text for a in got.answers] == ["Demi Moore", "Michael Douglas", "Donald Sutherland"]
    assert [a.completed_from_graph for a in got.answers] == [False, True, True]
    assert got.direction == "tails" and got.anchor == "Disclosure" and got.cut == 0
    assert "every tail of (Disclosure, starred_actors, ?)" in got.note and "2 answer(s) added" in got.note


def test_backward_reading_adds_every_head_and_never_the_topic_entity():
    # "which films did Demi Moore act in": the chain read (Ghost, starred_actors, Demi Moore) backwards
    last = G.find("Ghost", "starred_actors", "Demi Moore")
    got = complete_from_last_triplet(_ans("Ghost"), last, G, topics=["Demi Moore"])
    assert [a.text for a in got.answers] == ["Ghost", "Disclosure", "G.I. Jane"]
    assert got.direction == "heads" and got.anchor == "Demi Moore"
    # a topic entity among the films is not added
    got = complete_from_last_triplet(_ans("Ghost"), last, G, topics=["Demi Moore", "Disclosure"])
    assert [a.text for a in got.answers] == ["Ghost", "G.I. Jane"]


def test_no_completion_when_the_answer_is_not_on_the_triplets_relation_or_nothing_is_missing():
    last = G.find("Disclosure", "starred_actors", "Demi Moore")
    assert complete_from_last_triplet(_ans("Barry Levinson"), last, G, ["Disclosure"]) is None
    assert complete_from_last_triplet(_ans("Atlantis"), last, G, ["Disclosure"]) is None
    # the model already gave the whole list
    full = _ans("Michael Douglas", "Demi Moore", "Donald Sutherland")
    assert complete_from_last_triplet(full, last, G, ["Disclosure"]) is None
    # the answer is the question's own entity: no completion from it
    assert complete_from_last_triplet(_ans("Disclosure"), last, G, ["Disclosure"]) is None


def test_a_hub_relation_is_cut_and_the_cut_is_noted():
    hub = KnowledgeGraph.from_triplets([(f"Film {i}", "has_genre", "Drama") for i in range(250)])
    last = hub.find("Film 3", "has_genre", "Drama")
    got = complete_from_last_triplet([Answer("Film 3", "Film 3", True)], last, hub, topics=["Drama"], max_added=100)
    assert len(got.answers) == 101 and got.held == 250 and got.cut == 149
    assert "cut at 100 of 250; 149 left out" in got.note


def test_resolve_answers_completes_only_when_asked_and_notes_it():
    last = G.find("Disclosure", "starred_actors", "Demi Moore")
    notes: list[str] = []
    plain = resolve_answers(["Demi Moore"], G, ["Disclosure"], notes)
    assert [a.text for a in plain] == ["Demi Moore"] and notes == []
    done = resolve_answers(["Demi Moore"], G, ["Disclosure"], notes, complete_from=[last])
    assert [a.text for a in done] == ["Demi Moore", "Michael Douglas", "Donald Sutherland"]
    assert len(notes) == 1 and notes[0].startswith("answers completed from the graph")
    # the flag survives a JSON round trip of the trace
    trace = Trace(method="dog", question="q", answers=done)
    back = Trace.from_json(trace.to_json())
    assert [a.completed_from_graph for a in back.answers] == [False, True, True]


# "films with the same actor as Disclosure": Disclosure -> actors -> their films
def _chain(*spo):
    return [G.find(*t) for t in spo]


def test_a_two_hop_chain_completes_along_its_relation_path_from_the_topic():
    chain = _chain(("Disclosure", "starred_actors", "Demi Moore"), ("Ghost", "starred_actors", "Demi Moore"))
    assert chain_path(chain, ["Disclosure"]) == ("Disclosure", [("starred_actors", True), ("starred_actors", False)])
    got = complete_along_path(_ans("Ghost"), chain, G, ["Disclosure"])
    # every film of every actor of Disclosure (only Demi Moore has others here), never Disclosure itself
    assert [a.text for a in got.answers] == ["Ghost", "G.I. Jane"]
    assert got.direction == "path" and got.anchor == "Disclosure"
    assert "along Disclosure -starred_actors-> ? -starred_actors (reverse)-> ?" in got.note


def test_the_path_follows_every_entity_of_a_hop_not_only_the_one_the_chain_took():
    g = KnowledgeGraph.from_triplets([
        ("Heat", "starred_actors", "Al Pacino"), ("Heat", "starred_actors", "Robert De Niro"),
        ("Serpico", "starred_actors", "Al Pacino"), ("Casino", "starred_actors", "Robert De Niro"),
        ("Serpico", "directed_by", "Sidney Lumet"), ("Casino", "directed_by", "Martin Scorsese"),
        ("Heat", "directed_by", "Michael Mann"),
    ])
    # "who directed the films of the actors of Heat": the chain went through Al Pacino only
    chain = [g.find("Heat", "starred_actors", "Al Pacino"), g.find("Serpico", "starred_actors", "Al Pacino"),
             g.find("Serpico", "directed_by", "Sidney Lumet")]
    answers = [Answer("Sidney Lumet", "Sidney Lumet", True)]
    got = complete_from_chain(answers, chain, g, ["Heat"])
    assert got.answers[0].text == "Sidney Lumet" and not got.answers[0].completed_from_graph
    # never back through Heat itself: its own director is not a director of the actors' *other* films
    assert got.added == ["Martin Scorsese"]
    assert all(a.completed_from_graph for a in got.answers[1:])
    # the last-triplet rule alone would have added nothing (Serpico has one director)
    assert complete_from_last_triplet(answers, chain[-1], g, ["Heat"]) is None


def test_listed_siblings_keep_the_path_and_the_chain_may_go_on_from_any_of_them():
    g = KnowledgeGraph.from_triplets([
        ("Heat", "starred_actors", "Al Pacino"), ("Heat", "starred_actors", "Robert De Niro"),
        ("Casino", "starred_actors", "Robert De Niro"), ("Casino", "directed_by", "Martin Scorsese"),
    ])
    chain = [g.find("Heat", "starred_actors", "Al Pacino"), g.find("Heat", "starred_actors", "Robert De Niro"),
             g.find("Casino", "starred_actors", "Robert De Niro"), g.find("Casino", "directed_by", "Martin Scorsese")]
    assert chain_path(chain, ["Heat"]) == ("Heat", [("starred_actors", True), ("starred_actors", False),
                                                    ("directed_by", True)])


def test_a_chain_that_leaves_its_path_completes_along_the_hops_that_reach_the_answer():
    # "who acted in Disclosure": two actors listed, then a triplet off the path (its director)
    chain = _chain(("Disclosure", "starred_actors", "Michael Douglas"), ("Disclosure", "starred_actors", "Demi Moore"),
                   ("Disclosure", "directed_by", "Barry Levinson"))
    # the director starts another path from the topic; the actors' path is the one that holds the answers
    assert chain_paths(chain, ["Disclosure"]) == [("Disclosure", [("directed_by", True)]),
                                                  ("Disclosure", [("starred_actors", True)])]
    got = complete_from_chain(_ans("Michael Douglas", "Demi Moore"), chain, G, ["Disclosure"])
    assert got.direction == "path" and got.added == ["Donald Sutherland"]
    # the last-triplet rule alone could not: the answers are not directors
    assert complete_from_last_triplet(_ans("Michael Douglas", "Demi Moore"), chain[-1], G, ["Disclosure"]) is None


def test_when_no_hop_reaches_the_answer_the_last_triplet_rule_applies():
    chain = _chain(("Disclosure", "directed_by", "Barry Levinson"), ("Ghost", "starred_actors", "Demi Moore"))
    assert chain_path(chain, ["Disclosure"]) == ("Disclosure", [("directed_by", True)])
    assert complete_along_path(_ans("Ghost"), chain, G, ["Disclosure"]) is None
    got = complete_from_chain(_ans("Ghost"), chain, G, ["Disclosure"])
    assert got.direction == "heads" and [a.text for a in got.answers] == ["Ghost", "G.I. Jane"]
    # a chain that does not start at a topic entity has no path
    assert chain_path(_chain(("Ghost", "starred_actors", "Demi Moore")), ["Disclosure"]) is None


def test_no_path_completion_when_the_models_answer_is_not_reached():
    chain = _chain(("Disclosure", "starred_actors", "Demi Moore"), ("Ghost", "starred_actors", "Demi Moore"))
    assert complete_along_path(_ans("Barry Levinson"), chain, G, ["Disclosure"]) is None


def test_a_hub_on_the_path_is_cut_per_hop_and_noted():
    n = MAX_PATH_FRONTIER + 20
    g = KnowledgeGraph.from_triplets(
        [("Seed", "has_genre", "Drama")]
        + [(f"Film {i}", "has_genre", "Drama") for i in range(n)]
        + [(f"Film {i}", "release_year", str(1900 + i)) for i in range(n)]
    )
    chain = [g.find("Seed", "has_genre", "Drama"), g.find("Film 0", "has_genre", "Drama"),
             g.find("Film 0", "release_year", "1900")]
    got = complete_along_path([Answer("1900", "1900", True)], chain, g, ["Seed"])
    assert got.frontier_cut > 0 and "not followed" in got.note
    assert len(got.added) <= 100 and got.cut > 0


def test_an_answer_in_another_case_is_the_entity_the_path_reaches():
    """MetaQA holds "comedy" as a tag and "Comedy" as a genre; the model wrote the tag's spelling."""
    g = KnowledgeGraph.from_triplets([("Banquet", "written_by", "Shakespeare"), ("Tempest", "written_by", "Shakespeare"),
                                      ("Banquet", "has_genre", "Drama"), ("Tempest", "has_genre", "Comedy"),
                                      ("Tempest", "has_tags", "comedy"), ("Hamlet", "written_by", "Shakespeare"),
                                      ("Hamlet", "has_genre", "Drama"), ("Banquet", "has_genre", "Musical")])
    chain = [g.find("Banquet", "written_by", "Shakespeare"), g.find("Tempest", "written_by", "Shakespeare"),
             g.find("Tempest", "has_genre", "Comedy")]
    answers = [Answer(text="comedy", entity="comedy", in_graph=True)]
    got = complete_along_path(answers, chain, g, topics=["Banquet"])
    # "Comedy" not added again; Banquet's own genre is not reached (not back through the question's film)
    assert got is not None and [a.text for a in got.answers] == ["comedy", "Drama"]


def test_a_path_longer_than_the_question_completes_at_the_questions_hop():
    """'who starred in Cemetery Man' from a chain that went on to a co-star's film and its cast."""
    g = KnowledgeGraph.from_triplets([("Cemetery Man", "starred_actors", "Rupert Everett"),
                                      ("Cemetery Man", "starred_actors", "Anna Falchi"),
                                      ("Next Best Thing", "starred_actors", "Rupert Everett"),
                                      ("Next Best Thing", "starred_actors", "Benjamin Bratt")])
    chain = [g.find("Cemetery Man", "starred_actors", "Rupert Everett"),
             g.find("Next Best Thing", "starred_actors", "Rupert Everett"),
             g.find("Next Best Thing", "starred_actors", "Benjamin Bratt")]
    answers = [Answer(text="Rupert Everett", entity="Rupert Everett", in_graph=True)]
    at_one = complete_along_path(answers, chain, g, topics=["Cemetery Man"], hops=1)
    assert [a.text for a in at_one.answers] == ["Rupert Everett", "Anna Falchi"]
    assert "the chain walks 3 hop(s) from the question's entity, the question names 1" in at_one.note
    # without the question's hops: the path's end (the papers' chain read to its end), as before
    at_end = complete_along_path(answers, chain, g, topics=["Cemetery Man"])
    # (Anna Falchi only through Cemetery Man itself, which a path does not come back through)
    assert [a.text for a in at_end.answers] == ["Rupert Everett", "Benjamin Bratt"]
    # the answer is not at the question's hop: the path's end decides, as without hops
    other = [Answer(text="Benjamin Bratt", entity="Benjamin Bratt", in_graph=True)]
    assert [a.text for a in complete_along_path(other, chain, g, ["Cemetery Man"], hops=1).answers][:1] == [
        "Benjamin Bratt"]


def test_a_chain_that_surveys_the_topic_first_completes_along_the_path_it_took_after():
    # "the release years of the films starred by actors in Quality Street" (MetaQA dev 3-hop): the chain listed
    # the film's own year and genre, then walked actor -> film -> year; the model answered 1937, 1940
    g = KnowledgeGraph.from_triplets([
        ("Quality Street", "release_year", "1937"), ("Quality Street", "has_genre", "Romance"),
        ("Quality Street", "starred_actors", "Katharine Hepburn"), ("Quality Street", "starred_actors", "Franchot Tone"),
        ("The Philadelphia Story", "starred_actors", "Katharine Hepburn"), ("The Philadelphia Story", "release_year", "1940"),
        ("Adam's Rib", "starred_actors", "Katharine Hepburn"), ("Adam's Rib", "release_year", "1949"),
        ("Mutiny on the Bounty", "starred_actors", "Franchot Tone"), ("Mutiny on the Bounty", "release_year", "1935"),
        ("Romance Film", "has_genre", "Romance"),
    ])
    chain = [g.find("Quality Street", "release_year", "1937"), g.find("Quality Street", "has_genre", "Romance"),
             g.find("Quality Street", "starred_actors", "Katharine Hepburn"),
             g.find("The Philadelphia Story", "starred_actors", "Katharine Hepburn"),
             g.find("The Philadelphia Story", "release_year", "1940")]
    answers = [Answer("1940", "1940", True), Answer("1937", "1937", True)]
    got = complete_from_chain(answers, chain, g, ["Quality Street"], hops=3)
    assert got.direction == "path"
    assert got.path == [("starred_actors", True), ("starred_actors", False), ("release_year", True)]
    assert [a.text for a in got.answers[:2]] == ["1940", "1937"]
    assert sorted(got.added) == ["1935", "1949"]
    # read as one walk that stopped at the second triplet, only the film's own year was reachable
    assert complete_from_chain(answers, chain[:2], g, ["Quality Street"], hops=3) is None
    # the model's first answer, 1937, is the film's own year, which the path (not back through Quality Street)
    # does not reach: with chain_answers_first the years it reaches lead and 1937 goes after
    first_own = [Answer("1937", "1937", True), Answer("1940", "1940", True)]
    ranked = complete_from_chain(first_own, chain, g, ["Quality Street"], hops=3, rank_by_chain=True,
                                 question_uses={"starred_actors": 2, "release_year": 1})
    assert [a.text for a in ranked.answers] == ["1940", "1937", "1949", "1935"] and ranked.ranked_after == ["1937"]


def test_a_path_that_holds_the_answer_and_nothing_more_is_not_completed_from_a_later_fact():
    # "the films that have the same actor of Hana and Alice" (MetaQA dev 2-hop): the path reaches Returner, all
    # there is; the chain's last triplet was the film's language, and the model's second answer a Japanese film
    g = KnowledgeGraph.from_triplets([
        ("Hana and Alice", "starred_actors", "Anne Suzuki"), ("Returner", "starred_actors", "Anne Suzuki"),
        ("Hana and Alice", "in_language", "Japanese"), ("April Story", "in_language", "Japanese"),
        ("Tokyo Story", "in_language", "Japanese"),
    ])
    chain = [g.find("Hana and Alice", "starred_actors", "Anne Suzuki"), g.find("Returner", "starred_actors", "Anne Suzuki"),
             g.find("Hana and Alice", "in_language", "Japanese")]
    answers = [Answer("Returner", "Returner", True), Answer("April Story", "April Story", True)]
    assert complete_from_chain(answers, chain, g, ["Hana and Alice"], hops=2) is None
    # the last-triplet rule alone would have added every Japanese film
    assert complete_from_last_triplet(answers, chain[-1], g, ["Hana and Alice"]).added == ["Tokyo Story"]


# "the primary languages of the films directed by the director of Raw Deal" (whole-KB dev, 3 hops)
RAW_DEAL = KnowledgeGraph.from_triplets([
    ("Raw Deal", "directed_by", "John Irvin"), ("Widows' Peak", "directed_by", "John Irvin"),
    ("Shiner", "directed_by", "John Irvin"), ("Widows' Peak", "in_language", "Irish"),
    ("Shiner", "in_language", "Norwegian"), ("Raw Deal", "in_language", "English"),
    ("Ran", "in_language", "Japanese"), ("Widows' Peak", "written_by", "Hugh Leonard"),
])
RAW_DEAL_CHAIN = [RAW_DEAL.find("Raw Deal", "directed_by", "John Irvin"),
                  RAW_DEAL.find("Widows' Peak", "directed_by", "John Irvin"),
                  RAW_DEAL.find("Widows' Peak", "in_language", "Irish")]
RAW_DEAL_USES = {"directed_by": 2, "in_language": 1}


def _raw(*names):
    return [Answer(text=n, entity=n if RAW_DEAL.has_entity(n) else None, in_graph=RAW_DEAL.has_entity(n))
            for n in names]


def test_a_path_never_comes_back_through_the_question_entity():
    levels, _ = reach(RAW_DEAL, "Raw Deal", [("directed_by", True), ("directed_by", False), ("in_language", True)])
    # John Irvin's *other* films: Raw Deal's own English is no answer (MetaQA's gold agrees on every template)
    assert levels[1] == ["Widows' Peak", "Shiner"] and levels[2] == ["Irish", "Norwegian"]


def test_an_answer_line_the_chain_does_not_reach_is_ranked_after_the_chains_end():
    """The model wrote "Widows' Peak is in Japanese ... the answer is * Japanese" after the chain reached Irish."""
    notes: list[str] = []
    got = resolve_answers(["Japanese"], RAW_DEAL, ["Raw Deal"], notes, complete_from=RAW_DEAL_CHAIN, hops=3,
                          rank_by_chain=True, question_uses=RAW_DEAL_USES)
    # the entity the chain wrote first, then the rest of that hop, then the model's own answer
    assert [a.text for a in got] == ["Irish", "Norwegian", "Japanese"]
    assert [a.completed_from_graph for a in got] == [True, True, False]
    assert "no answer the model wrote is where the chain's path ends" in notes[-1]
    # off (the paper's answer, and the switch's default in the library call): the model's answer alone
    plain = resolve_answers(["Japanese"], RAW_DEAL, ["Raw Deal"], [], complete_from=RAW_DEAL_CHAIN, hops=3,
                            question_uses=RAW_DEAL_USES)
    assert [a.text for a in plain] == ["Japanese"]


def test_the_chains_end_leads_only_when_its_path_walks_the_relations_the_question_names():
    # "the writers" where the question asks for the languages: the path says nothing about the answer
    wandered = [RAW_DEAL.find("Raw Deal", "directed_by", "John Irvin"),
                RAW_DEAL.find("Widows' Peak", "directed_by", "John Irvin"),
                RAW_DEAL.find("Widows' Peak", "written_by", "Hugh Leonard")]
    for chain, uses in ((wandered, RAW_DEAL_USES), (RAW_DEAL_CHAIN, {}), (RAW_DEAL_CHAIN, {"in_language": 1})):
        got = complete_from_chain(_raw("Japanese"), chain, RAW_DEAL, ["Raw Deal"], hops=3, rank_by_chain=True,
                                  question_uses=uses)
        assert got is None, (uses, got)
    # nor when the chain stops short of the question's hops
    short = complete_from_chain(_raw("Japanese"), RAW_DEAL_CHAIN[:2], RAW_DEAL, ["Raw Deal"], hops=3,
                                rank_by_chain=True, question_uses=RAW_DEAL_USES)
    assert short is None


def test_a_later_answer_at_the_paths_end_leads_and_one_from_a_shorter_path_goes_after():
    """Suspect Zero: the model listed the film's own director first, then directors of its actors' other films."""
    g = KnowledgeGraph.from_triplets([
        ("Suspect Zero", "directed_by", "E. Elias Merhige"), ("Suspect Zero", "starred_actors", "Aaron Eckhart"),
        ("The Dark Knight", "starred_actors", "Aaron Eckhart"), ("The Dark Knight", "directed_by", "Christopher Nolan"),
        ("The Black Dahlia", "starred_actors", "Aaron Eckhart"), ("The Black Dahlia", "directed_by", "Brian De Palma"),
        ("Thank You for Smoking", "starred_actors", "Aaron Eckhart"),
        ("Thank You for Smoking", "directed_by", "Jason Reitman"),
    ])
    chain = [g.find(*t) for t in (
        ("Suspect Zero", "directed_by", "E. Elias Merhige"), ("Suspect Zero", "starred_actors", "Aaron Eckhart"),
        ("The Dark Knight", "starred_actors", "Aaron Eckhart"), ("The Dark Knight", "directed_by", "Christopher Nolan"),
        ("The Black Dahlia", "starred_actors", "Aaron Eckhart"), ("The Black Dahlia", "directed_by", "Brian De Palma"))]
    answers = [Answer(n, n, True) for n in ("E. Elias Merhige", "Christopher Nolan", "Brian De Palma")]
    got = complete_from_chain(answers, chain, g, ["Suspect Zero"], hops=3, rank_by_chain=True,
                              question_uses={"starred_actors": 2, "directed_by": 1})
    assert [a.text for a in got.answers] == ["Christopher Nolan", "Brian De Palma", "E. Elias Merhige", "Jason Reitman"]
    assert got.ranked_after == ["E. Elias Merhige"] and got.added == ["Jason Reitman"]
    assert "E. Elias Merhige are not where the chain's path ends" in got.note
    # without the switch the 1-hop path "Suspect Zero -directed_by->" holds the first answer, and nothing is added
    assert complete_from_chain(answers, chain, g, ["Suspect Zero"], hops=3) is None


def test_an_answer_the_graph_does_not_hold_goes_behind_the_ones_the_chain_reaches():
    """Guys and Dolls: the answer line began with "Broadway musical" after the chain wrote the tag "broadway"."""
    g = KnowledgeGraph.from_triplets([
        ("Guys and Dolls", "has_tags", "broadway"), ("Guys and Dolls", "has_tags", "frank sinatra"),
        ("Guys and Dolls", "has_tags", "marlon brando"), ("Guys and Dolls", "has_tags", "bd-r"),
        ("Guys and Dolls", "directed_by", "Joseph L. Mankiewicz"),
    ])
    chain = [g.find("Guys and Dolls", "has_tags", t) for t in ("broadway", "frank sinatra", "marlon brando")]
    notes: list[str] = []
    got = resolve_answers(["Broadway musical", "Frank Sinatra", "Marlon Brando"], g, ["Guys and Dolls"], notes,
                          complete_from=chain, hops=1, rank_by_chain=True, question_uses={"has_tags": 1})
    # "Broadway musical" names no graph entity: it goes behind every answer that does, the completed ones
    # included (issue 29: a non-entity is never preferred over an entity)
    assert [a.text for a in got][:2] == ["Frank Sinatra", "Marlon Brando"]
    assert {a.text for a in got[2:4]} == {"broadway", "bd-r"}
    assert got[-1].text == "Broadway musical" and not got[-1].in_graph
    assert "Broadway musical are not where the chain's path ends" in notes[-1]
    # without the switch the model's entities keep their order, completed after them; the non-entity still last
    plain = resolve_answers(["Broadway musical", "Frank Sinatra", "Marlon Brando"], g, ["Guys and Dolls"], [],
                            complete_from=chain, hops=1, question_uses={"has_tags": 1})
    assert [a.text for a in plain][:2] == ["Frank Sinatra", "Marlon Brando"]
    assert plain[-1].text == "Broadway musical"


def test_the_chains_end_leads_only_when_its_path_walks_the_relations_in_the_questions_order():
    """"Which person directed the movies written by Jeffrey Kramer": a chain through the films he *directed*."""
    g = KnowledgeGraph.from_triplets([
        ("Smile", "directed_by", "Jeffrey Kramer"), ("Smile", "written_by", "Jeffrey Kramer"),
        ("Smile", "directed_by", "Michael Ritchie"), ("Smile", "written_by", "Jerry Belson"),
    ])
    wrong = [g.find("Smile", "directed_by", "Jeffrey Kramer"), g.find("Smile", "written_by", "Jerry Belson")]
    right = [g.find("Smile", "written_by", "Jeffrey Kramer"), g.find("Smile", "directed_by", "Michael Ritchie")]
    uses, order = {"directed_by": 1, "written_by": 1}, ["written_by", "directed_by"]
    answers = [Answer("Jeffrey Kramer", "Jeffrey Kramer", True)]  # the topic: no answer of the model's
    # the relation counts fit either way round; without the order the wrong path's end leads
    got = complete_from_chain(answers, wrong, g, ["Jeffrey Kramer"], hops=2, rank_by_chain=True, question_uses=uses)
    assert got.from_chain and got.answers[0].text == "Jerry Belson"
    assert complete_from_chain(answers, wrong, g, ["Jeffrey Kramer"], hops=2, rank_by_chain=True,
                               question_uses=uses, question_order=order) is None
    got = complete_from_chain(answers, right, g, ["Jeffrey Kramer"], hops=2, rank_by_chain=True,
                              question_uses=uses, question_order=order)
    assert got.from_chain and [a.text for a in got.answers] == ["Michael Ritchie", "Jeffrey Kramer"]


def test_a_list_led_by_an_entity_the_chain_reached_is_split_and_the_models_own_names_follow_it():
    """'Colorado River, Neva River, Arizona River': one list, its first name the chain's; the rest the model's words."""
    g = KnowledgeGraph.from_triplets([
        ("colorado river", "flows through", "colorado"), ("colorado river", "flows through", "nevada"),
        ("north platte river", "flows through", "colorado"),
    ], name="rivers")
    notes: list[str] = []
    got = resolve_answers(["Colorado River, Neva River, Arizona River"], g, ["colorado"], notes,
                          chain_entities=["colorado river", "colorado", "nevada"],
                          question="name all the rivers in colorado")
    assert [(a.entity, a.in_graph) for a in got] == [("colorado river", True), (None, False), (None, False)]
    assert [a.text for a in got[1:]] == ["Neva River", "Arizona River"]
    assert any("names no graph entity" in n for n in notes)
    # without the chain's word for it, one named piece is no evidence of a list: the text stays whole
    whole = resolve_answers(["Colorado River, Neva River, Arizona River"], g, ["colorado"], [])
    assert len(whole) == 1


def test_an_answer_the_chain_wrote_at_another_hop_than_the_readings_keeps_its_place():
    """"which film did Luke Wilson write the story for", read as two hops (the films' directors, 54% sure): the
    chain wrote the film and then its director, and the model answered with the film.  Its answer is grounded
    (an entity of its own chain), so the reading's hop does not put the director before it; an answer the chain
    never wrote ("Japanese" above) still goes behind the chain's end."""
    g = KnowledgeGraph.from_triplets([
        ("The Wendell Baker Story", "written_by", "Luke Wilson"),
        ("The Wendell Baker Story", "directed_by", "Andrew Wilson"),
        ("Bottle Rocket", "written_by", "Owen Wilson"),
    ])
    chain = [g.find("The Wendell Baker Story", "written_by", "Luke Wilson"),
             g.find("The Wendell Baker Story", "directed_by", "Andrew Wilson")]
    notes: list[str] = []
    got = resolve_answers(["The Wendell Baker Story"], g, ["Luke Wilson"], notes, complete_from=chain, hops=2,
                          rank_by_chain=True, question_uses={"written_by": 1, "directed_by": 1},
                          question_order=["written_by", "directed_by"])
    assert got[0].text == "The Wendell Baker Story", got
    assert not any("no answer the model wrote is where the chain's path ends" in n for n in notes), notes


def test_an_answer_that_is_the_questions_own_entity_gives_way_to_the_chains_path_end():
    """"Sara Nord's daughter's father is who": the chain walked back to Sara Nord and the model answered with her.
    A question about her does not ask for her: the path the chain walked (children, then parents) reaches
    Jonas Ek beside her, and he leads (noted), whether the reading was sure (its hops) or not; without the
    switch, with an answer that is another entity of the graph, or after a chain that went elsewhere, nothing
    moves."""
    g = KnowledgeGraph.from_triplets([
        ("Sara Nord", "children", "Alma Lind"), ("Jonas Ek", "children", "Alma Lind"),
        ("Alma Lind", "parents", "Sara Nord"), ("Alma Lind", "parents", "Jonas Ek"),
        ("Sara Nord", "spouse", "Jonas Ek"), ("Jonas Ek", "profession", "lawyer"),
    ])
    chain = [g.find("Sara Nord", "children", "Alma Lind"), g.find("Alma Lind", "parents", "Sara Nord")]
    for hops, uses in ((2, {"spouse": 1, "parents": 1}), (None, None)):
        notes: list[str] = []
        got = resolve_answers(["Sara Nord"], g, ["Sara Nord"], notes, complete_from=chain, hops=hops,
                              rank_by_chain=hops is not None, question_uses=uses, not_the_topic=True)
        assert [a.text for a in got] == ["Jonas Ek", "Sara Nord"], (hops, got)
        assert got[0].completed_from_graph
        assert any("answered with the question's own entity (Sara Nord)" in n for n in notes), notes
    # the paper's answers: the switch off
    assert resolve_answers(["Sara Nord"], g, ["Sara Nord"], [], complete_from=chain, hops=2,
                           rank_by_chain=True, question_uses={"spouse": 1, "parents": 1})[0].text == "Sara Nord"
    # an answer that is another entity stands
    other = resolve_answers(["lawyer"], g, ["Sara Nord"], [], complete_from=chain, not_the_topic=True)
    assert other[0].text == "lawyer"
    # a chain that went elsewhere: its end says nothing about the answer
    away = [g.find("Sara Nord", "children", "Alma Lind"), g.find("Alma Lind", "parents", "Jonas Ek"),
            g.find("Jonas Ek", "profession", "lawyer")]
    assert resolve_answers(["Sara Nord"], g, ["Sara Nord"], [], complete_from=away,
                           not_the_topic=True)[0].text == "Sara Nord"
    # a path that reaches nothing but the question's entity gives nothing instead
    alone = KnowledgeGraph.from_triplets([("Sara Nord", "children", "Alma Lind"),
                                          ("Alma Lind", "parents", "Sara Nord")])
    back = [alone.find("Sara Nord", "children", "Alma Lind"), alone.find("Alma Lind", "parents", "Sara Nord")]
    assert resolve_answers(["Sara Nord"], alone, ["Sara Nord"], [], complete_from=back,
                           not_the_topic=True)[0].text == "Sara Nord"

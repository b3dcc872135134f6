"""Realistic hand-made traces for UI tests, built from the trace schema.

The graph is a real MetaQA neighbourhood (CC BY 3.0, Zhang et al. 2018): the
films of Sharon Tate and their facts, plus a few neighbours for context.  The
traces follow docs/trace-format.md for DoG, READS, RoK and LPKG on the MetaQA
2-hop question "the films acted by [Sharon Tate] were released in which
years" (gold: 1967, 1968), so the UI can be built and tested before the
methods themselves exist.  `weird_trace` has malformed extras and ids missing
from the graph, to prove the UI renders defensively.
"""

from __future__ import annotations

from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_core.trace.faithfulness import check_chains, ground_chain
from kgqa_core.trace.schema import (
    Answer,
    Candidate,
    ModelCall,
    Step,
    TokenOption,
    TokenPosition,
    Trace,
)

QUESTION = "the films acted by [Sharon Tate] were released in which years"
GOLD = ["1967", "1968"]
TOPIC = "Sharon Tate"

TRIPLETS = [
    ("The Wrecking Crew", "starred_actors", "Sharon Tate"),
    ("Valley of the Dolls", "starred_actors", "Sharon Tate"),
    ("Valley of the Dolls", "directed_by", "Mark Robson"),
    ("Valley of the Dolls", "has_genre", "Drama"),
    ("Valley of the Dolls", "release_year", "1967"),
    ("Valley of the Dolls", "starred_actors", "Barbara Parkins"),
    ("Valley of the Dolls", "starred_actors", "Patty Duke"),
    ("Valley of the Dolls", "starred_actors", "Paul Burke"),
    ("Valley of the Dolls", "written_by", "Jacqueline Susann"),
    ("The Wrecking Crew", "has_genre", "Comedy"),
    ("The Wrecking Crew", "release_year", "1968"),
    ("The Wrecking Crew", "starred_actors", "Dean Martin"),
    ("The Wrecking Crew", "starred_actors", "Elke Sommer"),
    ("The Wrecking Crew", "starred_actors", "Nancy Kwan"),
    ("The Wrecking Crew", "written_by", "Donald Hamilton"),
    ("The Fearless Vampire Killers", "release_year", "1967"),
    ("The Fearless Vampire Killers", "has_genre", "Comedy"),
    ("The Fearless Vampire Killers", "directed_by", "Roman Polanski"),
    ("Don't Make Waves", "release_year", "1967"),
    ("Don't Make Waves", "starred_actors", "Tony Curtis"),
    ("Eye of the Devil", "has_genre", "Horror"),
    ("Eye of the Devil", "release_year", "1966"),
    ("My Big Fat Greek Wedding", "directed_by", "Joel Zwick"),
    ("My Big Fat Greek Wedding", "in_language", "Greek"),
    ("My Big Fat Greek Wedding", "release_year", "2002"),
]


def sample_graph(name: str = "sharon-tate (MetaQA)") -> KnowledgeGraph:
    return KnowledgeGraph.from_triplets(TRIPLETS, name=name)


def _tid(g: KnowledgeGraph, h: str, r: str, t: str) -> int:
    trip = g.find(h, r, t)
    assert trip is not None, (h, r, t)
    return trip.id


def _cand(g: KnowledgeGraph, h: str, r: str, t: str, score: float, kept: bool = False, beam: int | None = None) -> Candidate:
    import math

    return Candidate(label=f"{h} -> {r} -> {t}", score=score, prob=math.exp(score), triplet_id=_tid(g, h, r, t),
                     triplet=(h, r, t), kept=kept, beam=beam)


def _ids_of(g: KnowledgeGraph, entities: list[str]) -> list[int]:
    out: list[int] = []
    for e in entities:
        for t in g.neighbours(e):
            if t.id not in out:
                out.append(t.id)
    return out


def _tokens(words: list[tuple[str, float, list[tuple[str, float]]]]) -> list[TokenPosition]:
    out = []
    for i, (chosen, p, alts) in enumerate(words):
        allowed = [TokenOption(chosen, 100 + i, p)] + [TokenOption(a, 200 + 10 * i + j, q) for j, (a, q) in enumerate(alts)]
        out.append(TokenPosition(chosen=chosen, chosen_id=100 + i, chosen_prob=p, allowed=allowed, n_allowed=len(allowed)))
    return out


def _call(purpose: str, pt: int, ot: int, secs: float) -> ModelCall:
    return ModelCall(purpose=purpose, prompt_tokens=pt, output_tokens=ot, forward_passes=ot + 1, seconds=secs)


def _finish(trace: Trace, g: KnowledgeGraph, chains: list[list[tuple[str, str, str]]], answers: list[str]) -> Trace:
    trace.chains = [ground_chain(g, c, trace.topic_entities) for c in chains]
    trace.answers = [Answer(text=a, entity=a if g.has_entity(a) else None, in_graph=g.has_entity(a)) for a in answers]
    trace.faithfulness = check_chains(g, chains, trace.topic_entities, trace.answers)
    trace.graph_fingerprint = g.fingerprint
    trace.graph_name = g.name
    trace.model_calls = sum(len(s.model_calls) for s in trace.steps)
    trace.tokens_in = sum(s.tokens_in for s in trace.steps)
    trace.tokens_out = sum(s.tokens_out for s in trace.steps)
    trace.forward_passes = sum(c.forward_passes for s in trace.steps for c in s.model_calls)
    trace.seconds = round(sum(s.seconds for s in trace.steps), 3)
    trace.created_at = "2025-01-01T12:00:00+00:00"
    return trace


def dog_trace(g: KnowledgeGraph | None = None) -> Trace:
    """DoG with beam size 2 over two hops, ending in both release years."""
    g = g or sample_graph()
    tr = Trace(method="dog", question=QUESTION, model="smollm2-135m", model_revision="b179c9523d0e",
               parameters={"beam_size": 2, "max_steps": 3}, seed=0, topic_entities=[TOPIC])
    g0 = _ids_of(g, [TOPIC])
    vd, wc = "Valley of the Dolls", "The Wrecking Crew"
    c_vd = _cand(g, vd, "starred_actors", TOPIC, -0.41, kept=True, beam=0)
    c_wc = _cand(g, wc, "starred_actors", TOPIC, -1.27, kept=True, beam=1)
    g1_vd = sorted(set(g0) | set(_ids_of(g, [vd])))
    g1_wc = sorted(set(g0) | set(_ids_of(g, [wc])))
    tr.add_step(Step(
        index=0, kind="dog.triplet", title="beam 0: first triplet", beam=0, subgraph_before=g0, subgraph_after=g1_vd,
        added_entities=[vd, wc], candidates=[c_vd, c_wc], chosen_triplet_id=c_vd.triplet_id,
        model_text="To answer, find the films Sharon Tate acted in.\nValley of the Dolls -> starred_actors -> Sharon Tate",
        token_view=_tokens([("Valley", 0.71, [(" The", 0.27)]), (" of", 0.98, []), (" the", 0.99, []),
                            (" Dolls", 0.97, []), (" ->", 0.99, [])]),
        model_calls=[_call("dog.triplet", 312, 24, 0.8)], tokens_in=312, tokens_out=24, seconds=0.8,
        extra={"chain": [c_vd.triplet_id], "chain_score": -0.41},
    ))
    tr.add_step(Step(
        index=0, kind="dog.triplet", title="beam 1: first triplet", beam=1, subgraph_before=g0, subgraph_after=g1_wc,
        added_entities=[wc], candidates=[c_vd, c_wc], chosen_triplet_id=c_wc.triplet_id,
        model_text="The Wrecking Crew -> starred_actors -> Sharon Tate",
        token_view=_tokens([("The", 0.27, [("Valley", 0.71)]), (" Wre", 0.95, [(" Fear", 0.02)]), ("cking", 1.0, [])]),
        model_calls=[_call("dog.triplet", 312, 20, 0.7)], tokens_in=312, tokens_out=20, seconds=0.7,
        extra={"chain": [c_wc.triplet_id], "chain_score": -1.27},
    ))
    tr.add_step(Step(
        index=0, kind="dog.beam", title="beam selection after hop 1", subgraph_before=g0,
        subgraph_after=sorted(set(g1_vd) | set(g1_wc)),
        candidates=[Candidate(label=f"{vd} -> starred_actors -> {TOPIC}", score=-0.41, kept=True),
                    Candidate(label=f"{wc} -> starred_actors -> {TOPIC}", score=-1.27, kept=True)],
        extra={"chains": [[c_vd.triplet_id], [c_wc.triplet_id]]}, seconds=0.01,
    ))
    y67 = _cand(g, vd, "release_year", "1967", -0.22, kept=True, beam=0)
    genre = _cand(g, vd, "has_genre", "Drama", -2.9, beam=0)
    direc = _cand(g, vd, "directed_by", "Mark Robson", -3.4, beam=0)
    tr.add_step(Step(
        index=0, kind="dog.triplet", title="beam 0: second triplet", beam=0, subgraph_before=g1_vd,
        subgraph_after=g1_vd, candidates=[y67, genre, direc], chosen_triplet_id=y67.triplet_id,
        model_text="Valley of the Dolls -> release_year -> 1967",
        token_view=_tokens([("Valley", 0.93, [("Sharon", 0.05)]), (" of", 1.0, []), (" ->", 1.0, []),
                            (" release", 0.88, [(" has", 0.07), (" directed", 0.04)]), ("_year", 1.0, [])]),
        model_calls=[_call("dog.triplet", 340, 18, 0.9)], tokens_in=340, tokens_out=18, seconds=0.9,
        extra={"chain": [c_vd.triplet_id, y67.triplet_id], "chain_score": -0.63},
    ))
    y68 = _cand(g, wc, "release_year", "1968", -0.35, kept=True, beam=1)
    tr.add_step(Step(
        index=0, kind="dog.triplet", title="beam 1: second triplet", beam=1, subgraph_before=g1_wc,
        subgraph_after=g1_wc, candidates=[y68, _cand(g, wc, "has_genre", "Comedy", -2.2, beam=1)],
        chosen_triplet_id=y68.triplet_id, model_text="The Wrecking Crew -> release_year -> 1968",
        model_calls=[_call("dog.triplet", 338, 17, 0.85)], tokens_in=338, tokens_out=17, seconds=0.85,
        extra={"chain": [c_wc.triplet_id, y68.triplet_id], "chain_score": -1.62},
    ))
    tr.add_step(Step(
        index=0, kind="dog.beam", title="beam selection after hop 2",
        subgraph_after=sorted(set(g1_vd) | set(g1_wc)),
        candidates=[Candidate(label="chain A", score=-0.63, kept=True), Candidate(label="chain B", score=-1.62, kept=True),
                    Candidate(label="chain C", score=-3.31, kept=False)],
        extra={"chains": [[c_vd.triplet_id, y67.triplet_id], [c_wc.triplet_id, y68.triplet_id],
                          [c_vd.triplet_id, genre.triplet_id]]}, seconds=0.01,
    ))
    tr.add_step(Step(
        index=0, kind="dog.answer", title="answer", subgraph_after=sorted(set(g1_vd) | set(g1_wc)),
        model_text="Valley of the Dolls -> release_year -> 1967 | The Wrecking Crew -> release_year -> 1968\n* answers: 1967, 1968",
        choice="1967, 1968", model_calls=[_call("dog.answer", 360, 12, 0.5)], tokens_in=360, tokens_out=12, seconds=0.5,
    ))
    return _finish(tr, g, [
        [(vd, "starred_actors", TOPIC), (vd, "release_year", "1967")],
        [(wc, "starred_actors", TOPIC), (wc, "release_year", "1968")],
    ], ["1967", "1968"])


def reads_trace(g: KnowledgeGraph | None = None) -> Trace:
    g = g or sample_graph()
    tr = Trace(method="reads", question=QUESTION, model="smollm2-135m", parameters={"beam_size": 1},
               topic_entities=[TOPIC])
    films = ["Valley of the Dolls", "The Wrecking Crew"]
    s0 = {"nodes": [{"id": 0, "type": "topic", "parent": None, "relation": "", "entities": [TOPIC]}]}
    s1 = {"nodes": s0["nodes"] + [{"id": 1, "type": "entity", "parent": 0, "relation": "starred_actors", "entities": films}]}
    s2 = {"nodes": s1["nodes"] + [{"id": 2, "type": "answer", "parent": 1, "relation": "release_year", "entities": ["1967", "1968"]}]}
    g1 = [_tid(g, f, "starred_actors", TOPIC) for f in films]
    g2 = g1 + [_tid(g, films[0], "release_year", "1967"), _tid(g, films[1], "release_year", "1968")]
    tr.add_step(Step(
        index=0, kind="reads.search", title="search: relation from Sharon Tate", subgraph_after=g1, added_entities=films,
        candidates=[Candidate("starred_actors (incoming)", -0.2, prob=0.82, kept=True),
                    Candidate("directed_by (incoming)", -2.1, prob=0.12), Candidate("written_by (incoming)", -2.9, prob=0.06)],
        choice="starred_actors (incoming)", model_calls=[_call("reads.search", 220, 0, 0.4)], tokens_in=220, seconds=0.4,
        extra={"abstract_structure": s1},
    ))
    tr.add_step(Step(
        index=0, kind="reads.search", title="search: relation from the films", subgraph_before=g1, subgraph_after=g2,
        added_entities=["1967", "1968"],
        candidates=[Candidate("release_year", -0.1, prob=0.9, kept=True), Candidate("has_genre", -2.6, prob=0.07),
                    Candidate("written_by", -3.5, prob=0.03)],
        choice="release_year", model_calls=[_call("reads.search", 260, 0, 0.45)], tokens_in=260, seconds=0.45,
        extra={"abstract_structure": s2},
    ))
    tr.add_step(Step(
        index=0, kind="reads.answer", title="answer", subgraph_before=g2, subgraph_after=g2,
        candidates=[Candidate("1967", -0.3, prob=0.55, kept=True), Candidate("1968", -0.5, prob=0.45, kept=True)],
        choice="1967, 1968", model_calls=[_call("reads.answer", 180, 0, 0.3)], tokens_in=180, seconds=0.3,
        extra={"abstract_structure": s2},
    ))
    return _finish(tr, g, [[(films[0], "starred_actors", TOPIC), (films[0], "release_year", "1967")]], ["1967", "1968"])


def rok_trace(g: KnowledgeGraph | None = None) -> Trace:
    g = g or sample_graph()
    tr = Trace(method="rok", question=QUESTION, model="smollm2-135m", parameters={"hops": 2}, topic_entities=[TOPIC])
    vd, wc = "Valley of the Dolls", "The Wrecking Crew"
    p1 = [_tid(g, vd, "starred_actors", TOPIC), _tid(g, vd, "release_year", "1967")]
    p2 = [_tid(g, wc, "starred_actors", TOPIC), _tid(g, wc, "release_year", "1968")]
    p3 = [_tid(g, vd, "starred_actors", TOPIC), _tid(g, vd, "has_genre", "Drama")]
    tr.add_step(Step(index=0, kind="rok.cot", title="chain of thought: key entities",
                     model_text="Sharon Tate starred in Valley of the Dolls (1967).",
                     extra={"key_entities": [TOPIC, vd, "1967"]}, model_calls=[_call("rok.cot", 90, 40, 1.1)],
                     tokens_in=90, tokens_out=40, seconds=1.1))
    tr.add_step(Step(index=0, kind="rok.paths", title="2-hop paths", subgraph_after=p1 + p2 + p3,
                     added_entities=[vd, wc, "1967", "1968", "Drama"], extra={"paths": [p1, p2, p3]}, seconds=0.02))
    tr.add_step(Step(index=0, kind="rok.pagerank", title="PageRank over the paths", subgraph_after=p1 + p2 + p3,
                     extra={"pagerank": {TOPIC: 0.31, vd: 0.22, wc: 0.14, "1967": 0.16, "1968": 0.1, "Drama": 0.07}},
                     candidates=[Candidate(f"path {i + 1}", s, kept=i < 2) for i, s in enumerate([0.38, 0.24, 0.15])],
                     seconds=0.01))
    tr.add_step(Step(index=0, kind="rok.answer", title="answer", subgraph_after=p1 + p2,
                     model_text="Valley of the Dolls -> release_year -> 1967 | The Wrecking Crew -> release_year -> 1968",
                     choice="1967, 1968", model_calls=[_call("rok.answer", 300, 15, 0.9)], tokens_in=300, tokens_out=15,
                     seconds=0.9))
    return _finish(tr, g, [[(vd, "starred_actors", TOPIC), (vd, "release_year", "1967")],
                           [(wc, "starred_actors", TOPIC), (wc, "release_year", "1968")]], ["1967", "1968"])


def lpkg_trace(g: KnowledgeGraph | None = None) -> Trace:
    g = g or sample_graph()
    tr = Trace(method="lpkg", question=QUESTION, model="smollm2-135m", topic_entities=[TOPIC])
    films = ["Valley of the Dolls", "The Wrecking Crew"]
    subs = ["Which films did Sharon Tate act in?", "When was each of those films released?"]
    tr.add_step(Step(index=0, kind="lpkg.plan", title="plan", model_text="1. " + subs[0] + "\n2. " + subs[1],
                     extra={"sub_questions": subs}, model_calls=[_call("lpkg.plan", 400, 60, 2.0)],
                     tokens_in=400, tokens_out=60, seconds=2.0))
    tr.add_step(Step(index=0, kind="lpkg.search", title="sub-question 1",
                     subgraph_after=[_tid(g, f, "starred_actors", TOPIC) for f in films], added_entities=films,
                     extra={"subquestion": 0, "sub_question": subs[0], "answers": films}, seconds=0.01))
    tr.add_step(Step(index=0, kind="lpkg.search", title="sub-question 2",
                     subgraph_after=[_tid(g, films[0], "release_year", "1967"), _tid(g, films[1], "release_year", "1968")],
                     added_entities=["1967", "1968"], extra={"subquestion": 1, "sub_question": subs[1], "answers": ["1967", "1968"]},
                     seconds=0.01))
    tr.add_step(Step(index=0, kind="lpkg.answer", title="answer", choice="1967, 1968", seconds=0.01))
    return _finish(tr, g, [[(films[0], "starred_actors", TOPIC), (films[0], "release_year", "1967")]], ["1967", "1968"])


def cot_trace_with_ill(g: KnowledgeGraph | None = None) -> Trace:
    """A CoT run that cites a triplet the graph does not have (an ill triplet)."""
    g = g or sample_graph()
    tr = Trace(method="cot", question=QUESTION, model="smollm2-135m", topic_entities=[TOPIC])
    tr.add_step(Step(index=0, kind="dog.answer", title="free chain of thought",
                     model_text="Sharon Tate -> starred_in -> Rosemary's Baby | Valley of the Dolls -> release_year -> 1967\n* answers: 1967, 1968",
                     model_calls=[_call("cot", 300, 50, 1.5)], tokens_in=300, tokens_out=50, seconds=1.5))
    return _finish(tr, g, [[(TOPIC, "starred_in", "Rosemary's Baby"), ("Valley of the Dolls", "release_year", "1967")]],
                   ["1967"])


def weird_trace(g: KnowledgeGraph | None = None) -> Trace:
    """Malformed extras, a triplet id the graph lacks, an unknown step kind: must render, not crash."""
    g = g or sample_graph()
    tr = Trace(method="future-method", question=QUESTION, topic_entities=[TOPIC, "Nobody"])
    tr.add_step(Step(index=0, kind="future.thing", title="odd", subgraph_after=[0, 99999],
                     candidates=[Candidate("ghost", 1.0, triplet_id=88888), Candidate("nan-ish", -1e308)],
                     extra={"paths": "not a list", "abstract_structure": 5, "pagerank": {"x": "high"},
                            "key_entities": [1, None], "chains": [[None]], "subquestion": "first", "mystery": {"a": [1, 2]}}))
    tr.add_step(Step(index=0, kind="reads.search", extra={"abstract_structure": {"nodes": ["bad", {"id": 1, "parent": 7}]}}))
    return tr


def xss_graph() -> KnowledgeGraph:
    return KnowledgeGraph.from_triplets([
        ("<script>alert('x')</script>", "<img src=x onerror=alert(1)>", "Tom & \"Jerry\""),
        ("Tom & \"Jerry\"", "knows", "</script><b>bold</b>"),
    ], name="<b>evil</b>")


def xss_trace(g: KnowledgeGraph) -> Trace:
    ent = "<script>alert('x')</script>"
    tr = Trace(method="dog", question=f"who does [{ent}] know?", topic_entities=[ent])
    t0 = g.triplets[0]
    tr.add_step(Step(index=0, kind="dog.triplet", title="<i>step</i>", subgraph_after=[t0.id],
                     candidates=[Candidate(t0.linearized(), -0.5, triplet_id=t0.id, triplet=t0.as_tuple, kept=True)],
                     chosen_triplet_id=t0.id, model_text=t0.linearized() + " <script>alert(2)</script>",
                     token_view=_tokens([("<script>", 0.9, [("</b>", 0.1)])]), extra={"chain": [t0.id]}))
    return _finish(tr, g, [[t0.as_tuple]], ["Tom & \"Jerry\""])


def all_traces(g: KnowledgeGraph | None = None) -> dict[str, Trace]:
    g = g or sample_graph()
    return {"dog": dog_trace(g), "reads": reads_trace(g), "rok": rok_trace(g), "lpkg": lpkg_trace(g),
            "cot": cot_trace_with_ill(g)}


# ---------------------------------------------------------------- markup in trace text
EVIL_HOST = "evil.example"
MARKUP = [
    f"![x](http://{EVIL_HOST}/t.png)",
    f"[click me](http://{EVIL_HOST}/link)",
    f"<img src=http://{EVIL_HOST}/i.png>",
    f"<a href='http://{EVIL_HOST}/a'>a</a>",
    "`code` and a stray ` backtick",
    "$x^2$ and $$y$$",
    ":red[coloured] :material/home: <b>bold</b>",
    f"www.{EVIL_HOST}/auto http://{EVIL_HOST}/bare",
]
MARKUP_TEXT = " ".join(MARKUP)


def markup_graph() -> KnowledgeGraph:
    """Entity and relation names that are Markdown/HTML; they must be shown as text everywhere."""
    return KnowledgeGraph.from_triplets([
        (f"![e](http://{EVIL_HOST}/e.png)", f"<img src=http://{EVIL_HOST}/r.png>", "`tick` $m$"),
        ("`tick` $m$", "next", f"[ans](http://{EVIL_HOST}/ans)"),
        (f"![e](http://{EVIL_HOST}/e.png)", "other", "plain"),
    ], name=f"graph ![g](http://{EVIL_HOST}/g.png)")


def markup_trace(g: KnowledgeGraph, method: str = "dog") -> Trace:
    """A DoG trace whose every text field holds Markdown, HTML, backticks and math."""
    topic = f"![e](http://{EVIL_HOST}/e.png)"
    t0, t1, t2 = g.triplets[0], g.triplets[1], g.triplets[2]
    tr = Trace(method=method, question="Who? " + MARKUP_TEXT, model=f"model `x` [m](http://{EVIL_HOST}/m)",
               parameters={f"p ![p](http://{EVIL_HOST}/p.png)": "`v`"}, topic_entities=[topic],
               error="failed: " + MARKUP_TEXT, notes=["note: " + MARKUP_TEXT])
    tr.add_step(Step(
        index=0, kind="dog.triplet", title="title " + MARKUP_TEXT, beam=0, subgraph_after=[t0.id, t2.id],
        added_entities=[t0.tail],
        candidates=[Candidate(t0.linearized(), -0.5, triplet_id=t0.id, triplet=t0.as_tuple, kept=True, beam=0,
                              extra={"exact": True}),
                    Candidate("cand " + MARKUP_TEXT, -0.9, triplet_id=t2.id, triplet=t2.as_tuple, beam=0,
                              extra={"exact": False})],
        choice=t0.linearized(), chosen_triplet_id=t0.id, model_text="text " + MARKUP_TEXT, note="note " + MARKUP_TEXT,
        token_view=_tokens([(f"![t](http://{EVIL_HOST}/tok.png)", 0.9, [("<img src=x>", 0.1)])]),
        model_calls=[ModelCall(purpose="purpose " + MARKUP_TEXT, prompt_tokens=1, output_tokens=1, forward_passes=1,
                               seconds=0.1, prompt="prompt " + MARKUP_TEXT)],
        extra={"chain": [t0.id], "mystery " + MARKUP[0]: MARKUP_TEXT},
    ))
    tr.add_step(Step(index=0, kind="dog.beam", title=MARKUP_TEXT,
                     candidates=[Candidate(MARKUP_TEXT, -0.5, kept=True, extra={"chain": [t0.id]})]))
    tr.add_step(Step(index=0, kind=f"dog.answer ![k](http://{EVIL_HOST}/k.png)", title=MARKUP_TEXT, beam=0,
                     choice=MARKUP_TEXT, model_text="* answers: " + MARKUP_TEXT, subgraph_after=[t0.id, t1.id]))
    tr.add_step(Step(index=0, kind=f"future.`kind` ![k](http://{EVIL_HOST}/k2.png)", title=MARKUP_TEXT,
                     extra={MARKUP[1]: MARKUP_TEXT}))
    _finish(tr, g, [[t0.as_tuple, t1.as_tuple]], [t1.tail])
    tr.answers.append(Answer(text="raw " + MARKUP_TEXT))
    return tr

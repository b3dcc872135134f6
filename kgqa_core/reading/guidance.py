"""A method's question reading, read once, recorded as a step, and the parameters every guided method shares.

`read_question` is the one place a method asks what the question needs: it
runs the method's reader (``reader``), or takes the reading the caller
already made for this question (an evaluation reads a question once for
all its methods), records it as a ``reading.plan`` step with the plans and
their probabilities, and says in plain words what the reading will change.
`reader_param`, `sure_param`, `quick_param`, `phrase_param`, `cover_param`, `domain_words_param` and
`joint_param` (and `kgqa_core.parameters.preset_param`) declare the parameters each guided method shares, so a
new method declares them the same way.
"""

from __future__ import annotations

import dataclasses
import math
import threading
from collections import OrderedDict
from typing import Any, Sequence

from .. import progress
from ..models.interface import BackendCapabilityError, loaded_model_key
from ..parameters import param
from .reading import MAX_HOPS, QuestionReading
from .alignment import COVER_WEIGHT, PHRASE_GAIN
from .readers import QUICK_SURE_AT, READERS, make_reader

SURE_AT = 0.5


def reader_param(default: str = "paths") -> Any:
    return param(default, "How the question is read: paths (the model chooses among the relation paths the "
                 "graph holds from the question's entity, ranked by their names' similarity to the question), "
                 "lexicon (that ranking alone, no model call), wording (word rules fitted to MetaQA), none.",
                 choices=READERS, advanced=True)


def sure_param(default: float = SURE_AT) -> Any:
    return param(default, "How sure the question's reading must be (its probability) before it narrows what a "
                 "step offers; below it the reading sets step budgets (and DoG keeps each step to the relations of its "
                 "likeliest plans, unsure_relations).", min=0.0, max=1.0, advanced=True)


def quick_param() -> Any:
    return param(QUICK_SURE_AT, "paths reader: how sure the model's first, short look must be (each walk scored as "
                 "its reply to the question, no walks listed) to stand; below it the walks are listed and the model "
                 "chooses among them (a prompt three to four times as long). 0 lists them always.",
                 min=0.0, max=1.0, advanced=True)


def phrase_param() -> Any:
    return param(PHRASE_GAIN, "paths reader: two side-by-side words of the question that name one relation this "
                 "much better together than alone (cosine similarity; \"high points\" and highest point) count as one "
                 "word when the walks' hops are matched to the question's words, so they license one hop, not two. "
                 "0 matches every word alone.", min=0.0, max=1.0, advanced=True)


def cover_param() -> Any:
    return param(COVER_WEIGHT, "paths reader: a word of the question that names a relation of the graph's walks "
                 "(cosine similarity at least 0.45) and that a walk leaves to none of its hops costs that walk this "
                 "much per unit of similarity above 0.45, so a one-hop walk cannot take \"written\" and leave "
                 "\"types\" and \"screenwriter\" of a longer question unnamed for free. 0: words no hop takes "
                 "cost nothing.", min=0.0, max=10.0, advanced=True)


def joint_param() -> Any:
    return param(True, "paths reader: when the question names two or more graph entities, one walk from each is "
                 "chosen together, each word of the question naming a hop of one walk only (\"the borders of A and "
                 "the borders of B\" is one hop from each, not two from A); false: each entity's walk chosen alone.",
                 advanced=True)


def meet_param() -> Any:
    from .readers import MEET_PENALTY

    return param(MEET_PENALTY, "paths reader: when the question names two or more graph entities and their walks are "
                 "chosen together (reading_joint), a combination of walks that reach no entity in common (other "
                 "than the question's own) is ranked as if it paid this much in log-odds: the question asks for what "
                 "its entities share (\"which of X's students is from Norway\": X's students and Norway's people, "
                 "not X's nationality); when no combination meets, all pay alike; the reading is no surer for it. "
                 "0: meeting is not asked.", min=0.0,
                 max=20.0, advanced=True)


def horizon_param() -> Any:
    return param(True, "paths reader: when its best walk is as long as it plans (3 hops) and a word of the question "
                 "that no hop took names a relation the graph has from where the walk ends (as plainly as the walk's "
                 "own hops are named), the walk takes that hop too (\"the capital of the country whose citizen "
                 "founded the developer of X\": four hops); false: the reading stops at 3 hops, open-ended.",
                 advanced=True)


def order_param() -> Any:
    from .alignment import ORDER_COST

    return param(ORDER_COST, "paths reader: English names a walk's relations outwards from the entity they start at "
                 "(\"the directors of the movies written by X\": written first, then directed; \"X's wife's "
                 "ethnicity\"), so a walk whose hops the question names the other way round (of the words on one side "
                 "of the entity's name) pays this much for each pair out of order, in the same units as the match of "
                 "a hop to a word (cosine similarity). 0 (the default: on the dev questions it changed no "
                 "reading): the order of the question's words does not count.", min=0.0, max=5.0, advanced=True)


def answer_kind_param() -> Any:
    from .alignment import ENTITY_KIND_AT, ENTITY_KIND_WEIGHT

    return param(ENTITY_KIND_WEIGHT, "paths reader: the noun a question asks with (\"in which country ...\", "
                 "\"which league ...\") says what kind of thing its answer is; a walk gains this much for each unit "
                 f"of closeness above {ENTITY_KIND_AT:.2f} between that noun and the name of the entity the walk "
                 "reaches (the sentence embedder's cosine: \"Norway\" is 0.64 close to \"country\", \"Bergen\" "
                 "0.34), so a walk that stops one hop short of a country, at its city, loses to the one that goes on "
                 "where no relation's name says \"country\". 0 (the default: with the model, 2 moved no answer of 144 dev "
                 "questions of four domains and, on made-up graphs, gained one and lost three, where a wrong walk "
                 "also ends at something named like the answer's kind): only the last relation's name says it.",
                 min=0.0, max=5.0, advanced=True)


def every_relation_param() -> Any:
    from .readers import EVERY_RELATION

    return param(EVERY_RELATION, "paths reader: when the model is told what some of the walks' relations mean (your "
                 "vocabulary, or its own descriptions of names the sentence embedder cannot read), its first look is "
                 "told the names of all the walks' relations, the described ones with their meaning; told of one "
                 "relation alone, the model is drawn to copy that one (\"interacts_with: collaborates with\" made "
                 "\"what illness is X prescribed for\" read as interacts_with, 99.7% sure, instead of treats). "
                 "false: only the described relations are named.", advanced=True)


def one_arrow_param() -> Any:
    from .readers import ONE_ARROW

    return param(ONE_ARROW, "paths reader: its first look writes a hop walked backwards as 'A -relation (reverse)-> "
                 "B' instead of 'A <-relation- B', so every walk starts with the same arrow and the model's choice "
                 "falls on the relation's name, not on the arrow (with two arrows the model's first token, '-' or "
                 "'<', already parts the walks: a forward walk can take almost all the probability before any "
                 "relation is read; on 124 dev questions of six graphs one arrow gained two answers and lost none). "
                 "false: the two arrows.", advanced=True)


def stop_param() -> Any:
    from .readers import STOP_WEIGHT

    return param(STOP_WEIGHT, "paths reader: in its first look each walk is scored as the model's reply to the "
                 "question, and where one walk is another cut short (walks from one entity of the question), the "
                 "model's choice between ending the walk there and going on counts this much of its log-odds (a "
                 "reply that ends sooner is likelier for being shorter: \"which party does the legislature of the "
                 "southwest of Michigan belong to\" stood 92% sure at the legislature); a look made less sure "
                 "this way may list the walks for the model to choose among. 1: the model's odds as they are.",
                 min=0.0, max=1.0, advanced=True)


def read_back_param() -> Any:
    from .readers import READ_BACK

    return param(READ_BACK, "paths reader: when its reading of a one-entity question is under 90% sure, its three "
                 "likeliest walks are weighed also by how likely the model finds the question's own words written "
                 "after each walk (log P(question | walk), times this weight): a walk that leaves part of the "
                 "question unsaid makes those words unlikely. 0: off (one model call less).",
                 min=0.0, max=4.0, advanced=True)


def look_param() -> Any:
    from .readers import LOOK_PLACES

    return param(LOOK_PLACES, "paths reader: the walks the model scores are first chosen by a sentence embedder's "
                 "closeness between the question's words and the relations' names, which misses paraphrases the "
                 "model knows (\"screenwriter\" for written_by, \"licences\" for distributed_under). With N > 0 the "
                 "model is asked, in one short batch, how much the question raises each relation's likelihood "
                 "(its log-probability after the question against with no question), and the N walks whose "
                 "relations it raises most (two per length first) are scored too. 0 (the default: on the dev "
                 "questions whose offer it changed it gained five readings and lost three, and DoG answered 13 of "
                 "the software graph's 18 either way): the embedder's offer alone.",
                 min=0, max=12, advanced=True)


def kind_look_param() -> Any:
    from .readers import KIND_LOOK

    return param(KIND_LOOK, "paths reader: when its reading of a one-entity question is under 90% sure and the "
                 "question asks for its answer with a noun (\"which country ...\"), the model is shown a few facts "
                 "of the graph about the entity each of the three likeliest walks reaches and asked what kind of "
                 "thing it is; how likely it finds the question's noun there, times this weight, weighs the walk (a "
                 "walk one hop short reaches a city where a country is asked for). The noun is the question's own "
                 "and the facts the graph's: no word list. 0 (the default: on the 41 dev questions it acted on, weight "
                 "1 read 23 right against 18, but DoG answered 29 against 28, gaining four and losing three where "
                 "the right walk was not among the three looked at): off, no model call.",
                 min=0.0, max=4.0, advanced=True)


def agree_param() -> Any:
    from .readers import AGREE

    return param(AGREE, "paths reader: when its first look is unsure and the walks are listed (a question naming one "
                 "entity), the list is read in a second order (against a liking for a place in the list) only when "
                 "the model's choice in the first order is not the walk its first look liked best or is less sure than "
                 "reading_quick_at: two looks that agree settle the reading, at half the list's tokens. false: both "
                 "orders always.", advanced=True)


def entity_free_param() -> Any:
    from .readers import ENTITY_FREE

    return param(ENTITY_FREE, "paths reader: its first look scores each walk written out entity by entity, and the "
                 "walks are compared only where they part at a relation or end, not where they pass different "
                 "entities (each walk is written through the first entities the graph gave along it, so two walks "
                 "over the same first relation can pass different films, and the model's liking for one title over "
                 "another would decide between relations). false: every place the written walks part counts.",
                 advanced=True)


def describe_param() -> Any:
    return param(True, "Before the question is read, the model describes in English the relations of its walks whose "
                 "names the sentence embedder cannot read (words it knows only in pieces: another language, an "
                 "abbreviation, a code such as traducteur or P26), from each relation's name and two of its facts; "
                 "the descriptions join the relation vocabulary (yours wins) and the reading step says them. Once "
                 "per relation for a graph and model; a graph named in plain English gets none. false: names as "
                 "they are (the paper; not in it).", advanced=True)


def describe_languages_param() -> Any:
    return param(True, "With describe_relations: also describe the relations named with words of another language "
                 "that the sentence embedder holds whole as English look-alikes (nord, est, ville, père: a word "
                 "far commoner in French, German, Spanish, Italian, Portuguese or Dutch than in English, and rare "
                 "in English, by the wordfreq word lists), which it would otherwise read as English tokens. A "
                 "graph named in English gets none. false: only the names it knows in pieces.", advanced=True)


def distinct_param() -> Any:
    from .readers import DISTINCT

    return param(DISTINCT, "paths reader: a walk over the same relations as another that reaches the same "
                 "entities, walked the other way round over a relation the graph holds both ways (\"A borders B\" "
                 "and \"B borders A\"), is the same walk in other words: when the walks are listed for the model to "
                 "choose among, the list holds it once (a walk written twice is likelier to be copied), and no other "
                 "walk takes its place, so the model reads fewer tokens for the same choice (on GeoQuery's graph "
                 "36% fewer a question, but two of 24 answers lost: a list without its repeats is sharper, and two "
                 "unsure readings moved across reading_sure_at). false (the default): both ways listed.",
                 advanced=True)


def listed_param() -> Any:
    from .readers import MAX_OPTIONS

    return param(MAX_OPTIONS, "paths reader: how many walks are listed for the model to choose among when its reply "
                 "to the question alone is unsure. The reply scores the same walks whatever this is; fewer than "
                 f"{MAX_OPTIONS} lists its likeliest ones only, so an unsure question reads fewer prompt tokens "
                 "(a shorter list) but the model's choice is spread over fewer walks, so readings come out surer. "
                 f"{MAX_OPTIONS} (the default): every walk scored is listed.", min=2, max=MAX_OPTIONS, advanced=True)


def domain_words_param() -> Any:
    return param(False, "paths reader: a word of the question about as close to most of the relations its walks offer "
                 "as to any one of them (\"movies\" in a film graph) is a word of the graph's whole domain, not the "
                 "name of a relation: it names a hop only where the hop is walked backwards (to films, along "
                 "starred_actors), so it cannot pay for a hop the question never asks for (\"when did the movies "
                 "written by X release\" is two hops, not three through has_genre); false: every word may name the "
                 "relation it is closest to (the default: on MetaQA it gained as many answers as it lost).",
                 advanced=True)


def reader_spec(params: Any) -> str:
    """The reader `params` ask for, with its options (``paths:quick=0.9,...,agree=1,distinct=0,entity_free=1,spread=0``): what
    `make_reader` builds and a reading is cached under."""
    name = getattr(params, "reader", "none")
    if name != "paths":
        return name
    options = [f"{key}={value:g}" for key, value in (("quick", getattr(params, "reading_quick_at", None)),
                                                     ("phrase_gain", getattr(params, "reading_phrase_gain", None)),
                                                     ("joint", getattr(params, "reading_joint", None)),
                                                     ("cover", getattr(params, "reading_cover", None)),
                                                     ("meet", getattr(params, "reading_meet", None)),
                                                     ("horizon", getattr(params, "reading_horizon", None)),
                                                     ("order", getattr(params, "reading_order", None)),
                                                     ("kind", getattr(params, "reading_answer_kind", None)),
                                                     ("every", getattr(params, "reading_every_relation", None)),
                                                     ("one_arrow", getattr(params, "reading_one_arrow", None)),
                                                     ("stop", getattr(params, "reading_stop_weight", None)),
                                                     ("read_back", getattr(params, "reading_read_back", None)),
                                                     ("look", getattr(params, "reading_look", None)),
                                                     ("kind_look", getattr(params, "reading_kind_look", None)),
                                                     ("agree", getattr(params, "reading_agree", None)),
                                                     ("distinct", getattr(params, "reading_distinct", None)),
                                                     ("entity_free", getattr(params, "reading_entity_free", None)),
                                                     ("spread", _spread(getattr(params, "reading_domain_words", None))))
               if value is not None]
    options += _listed(getattr(params, "reading_listed", None))
    return f"{name}:{','.join(options)}" if options else name


def _listed(listed: int | None) -> list[str]:
    """The reader's options for `reading_listed`: none at the default (every walk scored is listed), else the quick
    look scoring the default number of walks and the list showing its best `listed`."""
    from .readers import MAX_OPTIONS

    if listed is None or int(listed) >= MAX_OPTIONS:
        return []
    return [f"quick_options={MAX_OPTIONS}", f"max_options={int(listed)}"]


def _spread(on: bool | None) -> float | None:
    """The reader's ``spread`` weight for `reading_domain_words` (None: the reader's default)."""
    from .alignment import SPREAD_ON

    return None if on is None else SPREAD_ON if on else 0.0


@progress.in_phase(progress.QUESTION_READING)
def read_question(request: Any, params: Any, rec: Any, topics: Sequence[str]) -> QuestionReading:
    """The question's reading for this run (`params.reader`), recorded as a step; the empty reading for ``none``."""
    name = getattr(params, "reader", "none")
    vocabulary = getattr(request, "vocabulary", None)
    if vocabulary:
        rec.trace.extra["vocabulary"] = vocabulary.to_dict()
    if name == "none":
        return QuestionReading.unread()
    given = getattr(request, "reading", None)
    topics = [t for t in topics if t]
    described = None
    if getattr(params, "describe_relations", False) and getattr(request, "model", None) is not None \
            and not isinstance(given, QuestionReading):
        described = _describe(request, params, topics, vocabulary)
        vocabulary = described.vocabulary
        if described.unread:
            rec.trace.extra["described_relations"] = described.to_dict()
    spec = reader_spec(params)
    key = _cache_key(request, spec, topics, vocabulary)
    if isinstance(given, QuestionReading) and given.reader == name:
        reading = given
    elif key is not None and key in _READ:
        _READ.move_to_end(key)
        reading = dataclasses.replace(_READ[key], calls=[], seconds=0.0, forward_passes=0)  # read once: its calls were counted then
        reading.explanation += " (read once for this question and graph, by an earlier run of this session)"
    else:
        progress.stage("reading the question: which relations and how many hops it asks for")
        reader = make_reader(spec, getattr(request, "model", None), vocabulary)
        try:
            reading = reader.read(request.question, request.graph, topics)
        except BackendCapabilityError as exc:  # a server without log-probabilities: the relations' names alone
            reading = make_reader("lexicon", None, vocabulary).read(request.question, request.graph, topics)
            reading.explanation += f" (the model could not score the paths here: {exc})"
            key = None
        if key is not None:
            _READ[key] = reading
            while len(_READ) > _READ_LIMIT:
                _READ.popitem(last=False)
    if described is not None and described.sentence():
        reading = dataclasses.replace(reading, explanation=f"{reading.explanation}. {described.sentence()}")
    record_reading(rec, reading, getattr(params, "reading_sure_at", SURE_AT), getattr(params, "unsure_relations", 0.0))
    return reading


def _describe(request: Any, params: Any, topics: Sequence[str], vocabulary: Any) -> Any:
    """The model's English for the relations of the question's walks the embedder cannot read (`describe_relations`)."""
    from ..graph.embeddings import load_embedder
    from .drafting import describe_relations
    from .paths import relation_paths

    progress.stage("describing the relation names the sentence embedder cannot read")
    plans = relation_paths(request.graph, topics, MAX_HOPS)
    return describe_relations(request.model, request.graph, plans, vocabulary, load_embedder(),
                              other_languages=bool(getattr(params, "describe_other_languages", False)))


# readings already made, so the methods of one question (an evaluation, Compare) read it once; greedy
# option scoring gives the same reading every time for the same model, graph, question and words
_READ: "OrderedDict[tuple, QuestionReading]" = OrderedDict()
_READ_LIMIT = 32
_READ_LOCK = threading.Lock()  # the app runs jobs in threads


def _recall(key: tuple) -> QuestionReading | None:
    with _READ_LOCK:
        if key not in _READ:
            return None
        _READ.move_to_end(key)
        return _READ[key]


def clear_readings() -> None:
    """Forget the readings made so far (a test that compares two cold runs, a model swapped in place)."""
    with _READ_LOCK:
        _READ.clear()


def _cache_key(request: Any, name: str, topics: Sequence[str], vocabulary: Any) -> tuple | None:
    graph, model = request.graph, getattr(request, "model", None)
    fingerprint = getattr(graph, "fingerprint", "")
    if not fingerprint:
        return None
    model_key = loaded_model_key(model) if name.partition(":")[0] == "paths" else ()
    words = vocabulary.to_text() if vocabulary else ""
    return (name, model_key, fingerprint, request.question, tuple(topics), words)


def guidance_words(reading: QuestionReading, sure_at: float, unsure_relations: float = 0.0) -> str:
    """What the reading will change, in plain words (`unsure_relations`: DoG's share of an unsure reading's
    probability whose plans' relations a step keeps to; 0 for a method without it)."""
    if not reading.read:
        return "Nothing is guided by it: the method runs as the paper describes."
    if reading.guides(sure_at):
        return (f"It is sure enough ({reading.confidence:.0%}, at least {sure_at:.0%}) to guide the steps: they are "
                "offered the planned relations first and only, where any is left.")
    if unsure_relations and reading.plans:
        return (f"It is not sure enough ({reading.confidence:.0%}, under {sure_at:.0%}) to hold the steps to its "
                f"plan: it sets how many steps the chain may take, and each step is offered the relations of its "
                f"likeliest plans (those holding {unsure_relations:.0%} of its probability), everything where none "
                "of them is offered.")
    return (f"It is not sure enough ({reading.confidence:.0%}, under {sure_at:.0%}) to narrow any step: it only "
            "sets how many steps the chain may take.")


def record_reading(rec: Any, reading: QuestionReading, sure_at: float, unsure_relations: float = 0.0) -> None:
    from ..trace.schema import Candidate, Step

    rec.trace.extra["reading"] = reading.to_dict()
    cands = [Candidate(label=p.text, score=math.log(max(p.confidence, 1e-12)),
                       prob=p.confidence, kept=i == 0,
                       extra={"hops": len(p.hops), "example": p.example, "reaches": p.reaches})
             for i, p in enumerate(reading.plans[:12])]
    title = (f"Reading the question: {reading.plans[0].text} ({reading.hops} hop(s), {reading.confidence:.0%} sure)"
             if reading.plans else f"Reading the question: {reading.explanation}")
    rec.step(Step(
        index=0, kind="reading.plan", title=title, candidates=cands,
        choice=reading.plans[0].text if reading.plans else None,
        model_calls=list(reading.calls), tokens_in=sum(getattr(c, "prompt_tokens", 0) for c in reading.calls),
        seconds=round(reading.seconds, 4),
        note=f"{reading.explanation}. {guidance_words(reading, sure_at, unsure_relations)}",
        extra={"reading": reading.to_dict(), "sure_at": sure_at, "forward_passes": reading.forward_passes},
    ))


def step_budget(reading: QuestionReading, floor: int) -> int:
    """DoG's triplet budget: two per hop the reading says (one hop more when it is open-ended), never below `floor`
    (the chosen ``max_steps``)."""
    return max(floor, 2 * (reading.hops + int(reading.open_ended)))

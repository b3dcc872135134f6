"""The workbench as a person uses it, in a real browser against a real server (issue 13's journey).

One server process, one browser session, in order: ask a sample question
with DoG, then with READS; replay the DoG run; upload a graph, type a
question and its gold answer (the first question's card keeps its own
verdict), visit Explore and Replay and come back to Ask (the upload and the
question are still there); run it, reload the page (the same graph, question,
gold and result come back); remove a triplet of that run's chain on Explore
and re-ask on both graphs (the report names the change); open the DoG and
READS runs, then the two re-ask runs, in Compare; stop a run half-way; start
an evaluation in the background and stop it.  After every step: no error
element, and (the ``app_page`` fixture) no request ever left the loopback.
A screenshot of each page is kept under test-artifacts/browser/, and the time
from Run to the first phase shown in ``first-phase-seconds.txt`` there.
"""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import expect

from .conftest import ARTIFACTS, assert_no_error, save_screenshot, wait_for_app_idle

RUN_TIMEOUT = 900_000  # ms: one run of the 135M model on a loaded 2-core machine
TATE = [
    ("The Wrecking Crew", "starred_actors", "Sharon Tate"),
    ("Valley of the Dolls", "starred_actors", "Sharon Tate"),
    ("Valley of the Dolls", "release_year", "1967"),
    ("The Wrecking Crew", "release_year", "1968"),
    ("Valley of the Dolls", "directed_by", "Mark Robson"),
    ("The Wrecking Crew", "directed_by", "Phil Karlson"),
    ("The Fearless Vampire Killers", "starred_actors", "Sharon Tate"),
    ("The Fearless Vampire Killers", "release_year", "1967"),
]
TATE_QUESTION = "the films acted by [Sharon Tate] were released in which years"


def _small_model_or_skip() -> None:
    from kgqa_core.methods.base import available_methods
    from kgqa_core.models.registry import PACKAGED_MODELS, is_installed

    if not is_installed(PACKAGED_MODELS["smollm2-135m"]):
        pytest.skip("the smollm2-135m model package is not installed")
    missing = {"dog", "reads"} - set(available_methods())
    if missing:
        pytest.skip(f"methods not importable: {sorted(missing)}")


# ------------------------------------------------------------------ page actions
def go_to(page, title: str, heading: str) -> None:
    page.get_by_test_id("stSidebarNav").get_by_role("link", name=re.compile(rf"{title}$")).click()
    page.get_by_role("heading", name=heading).first.wait_for()
    wait_for_app_idle(page)


def choose(page, label: str, option: str | re.Pattern) -> None:
    """Pick an option of a selectbox by its label."""
    page.get_by_role("combobox", name=label).click()
    page.get_by_role("option", name=option).first.click()
    wait_for_app_idle(page)


def set_methods(page, method: str) -> None:
    """Make `method` the only method chosen on the Ask page."""
    box = page.locator(".st-key-ask_methods")
    for remove in box.get_by_role("button", name=re.compile(r"^Remove ")).all():
        remove.click()
        wait_for_app_idle(page)
    box.get_by_role("combobox", name="Method(s)").click()
    page.get_by_role("option", name=re.compile(rf"^{method} — ")).click()
    page.keyboard.press("Escape")
    wait_for_app_idle(page)
    # the rerun has drawn this method's form (and removed the other's): a stale box is never typed into
    from kgqa_core.methods.base import method_spec

    steps = page.locator(".st-key-ask_steps input")
    if "max_steps" in method_spec(method).params.__dataclass_fields__:
        expect(steps).to_be_visible()
    else:
        expect(steps).to_have_count(0)
    wait_for_app_idle(page)


def type_text(page, label: str, text: str, area: bool = False) -> None:
    box = page.get_by_role("textbox", name=label)
    box.fill(text)
    box.press("Control+Enter" if area else "Enter")
    wait_for_app_idle(page)


def set_number(page, key: str, value: int) -> None:
    """Type a value into the number box with session key `key`, if the chosen methods have it."""
    box = page.locator(f".st-key-{key} input")
    if box.count():
        box.fill(str(value))
        box.press("Enter")
        wait_for_app_idle(page)


def lean(page) -> None:
    """The shortest search (CI time): one triplet step, a 30-triplet prompt."""
    set_number(page, "ask_steps", 1)
    set_number(page, "ask_budget", 30)


FIRST_PHASE_SECONDS: list[float] = []
PHASE = re.compile(r"(loading the model|running · )")  # what a job's panel says first (never a stale "Finished")


def run_and_watch(page, shot: str | None = None) -> None:
    """Press Run, see the progress panel and Run disabled while it goes, wait for the results.

    The time from the click to the first phase the panel shows ("loading the model", "running · ...")
    is kept (the issue's check: under 2 s).
    """
    run = page.locator(".st-key-ask_run").get_by_role("button", name="Run")
    before = page.get_by_test_id("stExpander").all_inner_texts()  # an earlier job's finished panel
    started = time.monotonic()
    run.click()
    # this job's panel: a phase, or (a run faster than the page's rerun) its own finished headline
    page.wait_for_function("""old => [...document.querySelectorAll('[data-testid="stExpander"]')].some(e => {
        const t = e.innerText; return /loading the model|running · /.test(t)
                                      || (/(Finished|Stopped)[^\\n]* after /.test(t) && !old.includes(t)); })""",
                           arg=before, timeout=60_000)
    FIRST_PHASE_SECONDS.append(time.monotonic() - started)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "first-phase-seconds.txt").write_text(
        "\n".join(f"{x:.2f}" for x in FIRST_PHASE_SECONDS) + "\n", encoding="utf-8")
    stop = page.locator(".st-key-ask_job_stop").get_by_role("button", name="Stop")
    replay = page.get_by_role("link", name=re.compile("Replay step by step")).first
    # a short run (DoG concludes once nothing the question names is left) may end before a rerun shows Stop
    stop.or_(replay).first.wait_for(timeout=60_000)
    if stop.is_visible():
        expect(run).to_be_disabled()  # while a run is going
        page.get_by_test_id("stExpander").filter(has_text=re.compile(r"running|loading|finished")).first.wait_for()
    if shot:
        page.get_by_text(re.compile(r"^1\. ", re.M)).first.wait_for(timeout=RUN_TIMEOUT)  # the first step in the log
        page.locator(".st-key-ask_run").scroll_into_view_if_needed()  # Run (disabled) and the panel under it
        page.evaluate("""() => { const m = document.querySelector('[data-testid="stMain"]');
                                 if (m) m.scrollBy(0, 250); }""")
        save_screenshot(page, shot, docs_name="screenshot-ask.png")
    page.wait_for_function("""old => [...document.querySelectorAll('[data-testid="stExpander"]')].some(e => {
        const t = e.innerText; return /(Finished|Stopped)[^\\n]* after /.test(t) && !old.includes(t); })""",
                           arg=before, timeout=RUN_TIMEOUT)
    page.get_by_role("link", name=re.compile("Replay step by step")).first.wait_for(timeout=RUN_TIMEOUT)
    wait_for_app_idle(page)
    expect(run).to_be_enabled()  # again, after the run


def card_verdicts(page) -> list[str]:
    """The gold verdicts of the Ask page's result cards, in order ("... : 1/1 gold found").

    Waits for the cards (a rerun redraws them) and reads each once (a rerun may still show a stale copy).
    """
    found = page.get_by_test_id("stMain").get_by_text(re.compile(r"gold found$"))
    found.first.wait_for(timeout=60_000)
    wait_for_app_idle(page)
    texts = found.all_inner_texts()
    return list(dict.fromkeys(re.sub(r"^(check_circle|error|cancel)\s+", "", t.strip()) for t in texts))


# ------------------------------------------------------------------ the journey
def test_the_app_loads_offline_with_no_error(app_server, app_page, request_log):
    app_page.goto(app_server.url)
    app_page.get_by_role("heading", name="Ask a question").wait_for()
    wait_for_app_idle(app_page)
    app_page.wait_for_timeout(1500)  # late requests: favicon, fonts, icons
    assert_no_error(app_page, "Ask")
    assert any(u.startswith(app_server.url) for u in request_log.urls)
    icons = [u for u in request_log.urls if "favicon" in u or u.endswith(".png")]
    assert icons, "the favicon is served by the app itself"


def test_a_whole_session(app_server, app_page, tmp_path):
    _small_model_or_skip()
    page = app_page
    page.goto(app_server.url)
    page.get_by_role("heading", name="Ask a question").wait_for()
    wait_for_app_idle(page)

    # 1. a sample question with DoG (the page's fast defaults), then with READS: same server process
    choose(page, "Example questions for this graph", re.compile(r"\[Otto Preminger\]"))
    expect(page.get_by_role("textbox", name="Question")).to_have_value(re.compile(r"^what films did \[Otto Preminger\]"))
    expect(page.get_by_role("textbox", name="Gold answer (optional)")).to_have_value("Stalag 17")
    expect(page.get_by_text("marked with [ ] in the question").first).to_be_visible()
    lean(page)
    run_and_watch(page, shot="01-ask-running")
    assert_no_error(page, "Ask after DoG")
    expect(page.locator("h4").last).to_have_text("dog")
    save_screenshot(page, "02-ask-dog-result")
    set_methods(page, "reads")
    lean(page)
    run_and_watch(page)
    assert_no_error(page, "Ask after READS")
    expect(page.locator("h4").last).to_have_text("reads")
    expect(page.get_by_text("gold found").first).to_be_visible()  # the gold answer marks the run
    save_screenshot(page, "03-ask-reads-result")

    # 2. Replay: the READS run from its link on Ask, then the DoG run, two steps in
    page.get_by_role("link", name=re.compile("Replay step by step")).first.click()
    page.get_by_role("heading", name=re.compile("Replay")).first.wait_for()
    wait_for_app_idle(page)
    page.locator("iframe").first.wait_for()
    assert_no_error(page, "Replay (READS)")
    choose(page, "Run", re.compile(r"dog · what films did \[Otto Preminger\]"))
    for _ in range(2):
        page.locator(".st-key-replay_next").get_by_role("button").click()
        wait_for_app_idle(page)
    page.locator("iframe").first.wait_for()
    assert_no_error(page, "Replay")
    save_screenshot(page, "04-replay", docs_name="screenshot.png")

    # 3. upload a graph and type a question and its gold; the READS card keeps the first question's verdict;
    #    visit Explore and Replay; the upload and question stay
    go_to(page, "Ask", "Ask a question")
    verdict = card_verdicts(page)
    assert verdict, "the READS card shows its verdict against the first question's gold"
    page.get_by_text("Upload a file", exact=True).first.click()
    wait_for_app_idle(page)
    tsv = tmp_path / "tate.tsv"
    tsv.write_text("\n".join("\t".join(t) for t in TATE) + "\n", encoding="utf-8")
    page.locator(".st-key-ask_upload input[type=file]").set_input_files(str(tsv))
    page.get_by_text(re.compile(r"Loaded tate \(upload: tate\.tsv\)")).wait_for()
    wait_for_app_idle(page)
    expect(page.get_by_test_id("stSidebar")).to_contain_text("Graph: tate")  # at once, not after the next click
    type_text(page, "Question", TATE_QUESTION, area=True)
    type_text(page, "Gold answer (optional)", "1967 | 1968")
    page.get_by_text("Sharon Tate  · marked with [ ] in the question").first.wait_for()
    assert_no_error(page, "Ask after upload")
    assert card_verdicts(page) == verdict, "the first question's card is graded against its own gold only"
    expect(page.get_by_text(re.compile(r"^Q: what films did \[Otto Preminger\]")).first).to_be_visible()
    go_to(page, "Explore", "Explore the graph")
    assert_no_error(page, "Explore")
    save_screenshot(page, "05-explore")
    go_to(page, "Replay", "Replay")
    assert_no_error(page, "Replay (second visit)")
    go_to(page, "Ask", "Ask a question")
    page.get_by_text(re.compile(r"Loaded tate \(upload: tate\.tsv\)")).wait_for()
    expect(page.get_by_role("textbox", name="Question")).to_have_value(TATE_QUESTION)
    expect(page.get_by_role("textbox", name="Gold answer (optional)")).to_have_value("1967 | 1968")
    expect(page.get_by_test_id("stSidebar")).to_contain_text("Graph: tate")
    assert_no_error(page, "Ask after the visits")

    # 3b. run DoG on the uploaded graph, then reload: the graph, question, gold, topics and result come back
    set_methods(page, "dog")
    lean(page)
    run_and_watch(page)
    expect(page.get_by_text(re.compile(r"^Q: the films acted by \[Sharon Tate\]")).first).to_be_visible()
    tate_verdict = card_verdicts(page)
    assert tate_verdict and tate_verdict[0].endswith("/2 gold found"), tate_verdict
    assert "s=" in page.url, "the session id is in the URL"
    page.reload()
    page.get_by_role("heading", name="Ask a question").wait_for()
    wait_for_app_idle(page)
    page.get_by_text(re.compile(r"Loaded tate \(upload: tate\.tsv\)")).wait_for()
    expect(page.get_by_role("textbox", name="Question")).to_have_value(TATE_QUESTION)
    expect(page.get_by_role("textbox", name="Gold answer (optional)")).to_have_value("1967 | 1968")
    expect(page.get_by_test_id("stSidebar")).to_contain_text("Graph: tate")
    expect(page.get_by_test_id("stSidebar")).to_contain_text("Restored after the reload")
    expect(page.locator(".st-key-ask_topics")).to_contain_text("Sharon Tate")
    assert card_verdicts(page) == tate_verdict, "the result card is back, with its own verdict"
    assert_no_error(page, "Ask after reload")
    save_screenshot(page, "05b-ask-after-reload")

    # 4. Explore: remove a triplet of the DoG run's chain and add one, re-ask on both graphs (a job like Ask's:
    #    progress, Run disabled, results); the report names what changed, never a blanket success
    from kgqa_core.trace.schema import load_trace

    tate_runs = [t for t in (load_trace(p) for p in app_server.runs_dir.glob("*.json")) if t.graph_name == "tate"]
    chain = [ct for ct in tate_runs[0].best_chain if ct.triplet_id is not None] if tate_runs else []
    go_to(page, "Explore", "Explore the graph")
    page.get_by_role("tab", name=re.compile("Edit")).click()
    wait_for_app_idle(page)
    removed = None
    if chain:
        removed = next((ct for ct in chain if "Sharon Tate" in (ct.head, ct.tail)), None)
    if removed is not None:
        choose(page, "Triplet", re.compile(rf"^#{removed.triplet_id}\s"))
        page.get_by_role("button", name=re.compile(r"^(remove_circle)?\s*Remove$")).click()
        wait_for_app_idle(page)
        page.get_by_text(re.compile(rf"removed #{removed.triplet_id}: ")).filter(visible=True).first.wait_for()
    type_text(page, "Head", "Sharon Tate")
    type_text(page, "Relation", "starred_in")
    type_text(page, "Tail", "Eye of the Devil")
    page.get_by_role("button", name=re.compile(r"^(add_circle)?\s*Add$")).click()
    wait_for_app_idle(page)
    page.get_by_text(re.compile(r"added #\d+: .*Eye of the Devil")).filter(visible=True).first.wait_for()
    expect(page.get_by_role("textbox", name="Head")).to_have_value("")  # the fields are cleared
    reask = page.locator(".st-key-edit_run").get_by_role("button")
    reask.click()
    page.locator(".st-key-edit_job_stop").get_by_role("button", name="Stop").wait_for(timeout=60_000)
    expect(reask).to_be_disabled()
    page.get_by_text(re.compile(r"on the original graph \(1 of 2\)")).first.wait_for()
    page.get_by_text(re.compile(r"The answer (did not change|changed)")).wait_for(timeout=RUN_TIMEOUT)
    wait_for_app_idle(page)
    expect(reask).to_be_enabled()
    for label in ("original graph", "edited graph"):
        expect(page.get_by_text(label, exact=True).filter(visible=True).first).to_be_visible()
    report = page.get_by_test_id("stMain").inner_text()
    assert "follows the graph's evidence" not in report  # the old blanket verdict is gone
    if removed is not None:  # where the removed chain triplet was, said in the report
        assert re.search(rf"Removed #{removed.triplet_id} \(.*\): (it was on the original run's chain|cited by "
                         rf"another chain|not on the original run's chains)", report), report[-2000:]
    assert_no_error(page, "Explore re-ask")
    save_screenshot(page, "06-explore-reask")

    # 5. both sample runs in Compare (DoG and READS), then the two re-ask runs
    go_to(page, "Compare", "Compare")
    choose(page, "Question", re.compile(r"^what films did \[Otto Preminger\]"))
    page.get_by_text("Chains overlaid").first.wait_for()  # a rerun may show the stale copy beside the new one
    main = page.get_by_test_id("stMain")
    for method in ("dog", "reads"):
        # the run is shown in Compare (a picked run's chip and its column; hidden copies are templates)
        expect(main.get_by_text(method, exact=True).filter(visible=True).first).to_be_visible()
    assert_no_error(page, "Compare")
    save_screenshot(page, "07-compare", docs_name="screenshot-compare.png")
    choose(page, "Question", TATE_QUESTION)
    page.get_by_text("These runs used different graphs").first.wait_for()
    assert_no_error(page, "Compare (re-ask runs)")

    # 6. a run stopped half-way is saved, marked stopped, and Run comes back
    go_to(page, "Ask", "Ask a question")
    set_methods(page, "dog")
    set_number(page, "ask_steps", 6)
    run = page.locator(".st-key-ask_run").get_by_role("button", name="Run")
    run.click()
    page.locator(".st-key-ask_job_stop").get_by_role("button", name="Stop").click()  # stops after its first step
    page.get_by_text("Stopped by you").wait_for(timeout=RUN_TIMEOUT)
    wait_for_app_idle(page)
    expect(run).to_be_enabled()
    assert_no_error(page, "Ask after Stop")
    save_screenshot(page, "08-ask-stopped")

    # 7. Runs lists each run with its own gold and verdict
    go_to(page, "Runs", re.compile("Runs"))
    assert_no_error(page, "Runs")
    save_screenshot(page, "09-runs")

    # 8. Evaluate runs in the background with a phase line and Stop, through the same job panel as Ask
    go_to(page, "Evaluate", re.compile("Evaluate"))
    evaluate = page.locator(".st-key-eval_run").get_by_role("button", name="Run evaluation")
    evaluate.click()
    page.locator(".st-key-eval_job_stop").get_by_role("button", name="Stop").wait_for(timeout=60_000)
    page.get_by_test_id("stExpander").filter(has_text=PHASE).first.wait_for(timeout=60_000)
    expect(evaluate).to_be_disabled()
    save_screenshot(page, "10-evaluate-running")
    page.locator(".st-key-eval_job_stop").get_by_role("button", name="Stop").click()
    page.locator('[data-testid="stAlertContentWarning"]', has_text="Stopped by you").first.wait_for(timeout=RUN_TIMEOUT)
    wait_for_app_idle(page)
    expect(evaluate).to_be_enabled()
    assert_no_error(page, "Evaluate after Stop")
    save_screenshot(page, "10-evaluate-stopped")

    traces = [load_trace(p) for p in app_server.runs_dir.glob("*.json")]
    methods = sorted(t.method for t in traces)
    assert methods == ["dog", "dog", "dog", "dog", "dog", "reads"], methods
    assert sum(t.stopped for t in traces) == 1
    assert {t.graph_name for t in traces} >= {"tate", "tate (edited)"}
    golds = {t.graph_name: t.gold_answers for t in traces if not t.stopped}
    assert golds["tate"] == ["1967", "1968"] and golds["metaqa_movies"] == ["Stalag 17"]
    assert max(FIRST_PHASE_SECONDS) < 2.0, FIRST_PHASE_SECONDS  # a phase is shown within 2 s of Run

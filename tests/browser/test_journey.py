"""The workbench as a person uses it, in a real browser against a real server (issue 13's journey).

One server process, one browser session, in order: ask a sample question
with DoG, then with READS; replay the DoG run; upload a graph, type a
question, visit Explore and Replay and come back to Ask (the upload and the
question are still there); edit the graph on Explore and re-ask on both
graphs; open the DoG and READS runs, then the two re-ask runs, in Compare;
stop a run half-way.  After every step: no error element, and (the
``app_page`` fixture) no request ever left the loopback.  A screenshot of
each page is kept under test-artifacts/browser/.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from .conftest import assert_no_error, save_screenshot, wait_for_app_idle

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


def run_and_watch(page, shot: str | None = None) -> None:
    """Press Run, see the progress panel and Run disabled while it goes, wait for the results."""
    run = page.locator(".st-key-ask_run").get_by_role("button", name="Run")
    run.click()
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
    page.get_by_role("link", name=re.compile("Replay step by step")).first.wait_for(timeout=RUN_TIMEOUT)
    wait_for_app_idle(page)
    expect(run).to_be_enabled()  # again, after the run


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

    # 3. upload a graph and type a question; visit Explore and Replay; the upload and question stay
    go_to(page, "Ask", "Ask a question")
    page.get_by_text("Upload a file", exact=True).first.click()
    wait_for_app_idle(page)
    tsv = tmp_path / "tate.tsv"
    tsv.write_text("\n".join("\t".join(t) for t in TATE) + "\n", encoding="utf-8")
    page.locator(".st-key-ask_upload input[type=file]").set_input_files(str(tsv))
    page.get_by_text(re.compile(r"Loaded tate \(upload: tate\.tsv\)")).wait_for()
    wait_for_app_idle(page)
    type_text(page, "Question", TATE_QUESTION, area=True)
    type_text(page, "Gold answer (optional)", "1967 | 1968")
    page.get_by_text("Sharon Tate  · marked with [ ] in the question").first.wait_for()
    assert_no_error(page, "Ask after upload")
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

    # 4. Explore: edit the graph, re-ask on both graphs (a job like Ask's: progress, Run disabled, results)
    go_to(page, "Explore", "Explore the graph")
    page.get_by_role("tab", name=re.compile("Edit")).click()
    wait_for_app_idle(page)
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

    # 7. every page once more, for the record
    for title, heading, shot in (("Runs", "Runs", "09-runs"), ("Evaluate", "Evaluate", "10-evaluate")):
        go_to(page, title, re.compile(heading))
        assert_no_error(page, title)
        save_screenshot(page, shot)
    from kgqa_core.trace.schema import load_trace

    traces = [load_trace(p) for p in app_server.runs_dir.glob("*.json")]
    methods = sorted(t.method for t in traces)
    assert methods == ["dog", "dog", "dog", "dog", "reads"], methods
    assert sum(t.stopped for t in traces) == 1
    assert {t.graph_name for t in traces} >= {"tate", "tate (edited)"}

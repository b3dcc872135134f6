"""Text from traces, graphs and URLs is shown as text: never rendered as Markdown, HTML, math or links.

A trace (and graph) whose every text field holds ``![x](http://evil.example/t.png)``,
links, HTML tags, backticks and ``$math$`` is opened on Replay (every step),
Compare and Runs; every Markdown element the pages send must carry those
strings escaped, every HTML block must carry them entity-escaped, and every
Plotly figure must carry them with ``<`` escaped.
"""

from __future__ import annotations

import json
import re

import pytest
from streamlit.testing.v1 import AppTest

import ui_fixtures as F
from conftest import APP
from kgqa_ui.html_utils import md_text, plotly_text
from kgqa_ui.run_store import RunStore

TIMEOUT = 120
RAW = [f"http://{F.EVIL_HOST}", f"www.{F.EVIL_HOST}", "](http", "<img", "<a ", "<b>", "$x^2$", "`code`", ":red["]
MD_KINDS = ("markdown", "caption", "info", "warning", "error", "success", "title", "subheader", "header")


def _markdown_bodies(at: AppTest) -> list[str]:
    out = []
    for kind in MD_KINDS:
        for el in at.get(kind):
            body = getattr(el, "value", None)
            if body is None:
                body = getattr(el.proto, "body", "")
            out.append(str(body))
    return out


def _html_bodies(at: AppTest) -> list[str]:
    return [el.proto.body for el in at.get("html")]


def _plotly_specs(at: AppTest) -> list[str]:
    return [el.proto.spec for el in at.get("plotly_chart")]


def _iframe_bodies(at: AppTest) -> list[str]:
    """The graph pages minus the inlined scripts (the vis bundle and the escaped scene JSON)."""
    docs = []
    for el in at.get("iframe"):
        doc = el.proto.srcdoc
        docs.append(re.sub(r"<script>.*?</script>", "", doc, flags=re.S))
    return docs


def _assert_no_markup(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    bodies = _markdown_bodies(at)
    assert bodies
    for body in bodies:
        live = re.sub(r"\\.", "", body)  # what Markdown still reads as syntax once escapes are consumed
        for raw in RAW:
            assert raw not in live, (raw, body[:300])
        # every backtick and dollar sign is escaped (a stray one would open a code span or math)
        assert not re.search(r"(?<!\\)[`$]", body), body[:300]
    for body in _html_bodies(at):
        text = re.sub(r"<style>.*?</style>", "", body, flags=re.S)
        assert "<img" not in text and "<a " not in text and "<b>bold" not in text, text[:300]
    for spec in _plotly_specs(at):
        assert "<img" not in spec and "<a " not in spec and "<b>bold" not in spec, spec[:300]
    for doc in _iframe_bodies(at):
        assert "<img" not in doc and "<a " not in doc and "<b>bold" not in doc


def _shown_escaped(at: AppTest, text: str) -> bool:
    return any(md_text(text) in body for body in _markdown_bodies(at))


@pytest.fixture
def markup_runs(runs_dir):
    g = F.markup_graph()
    store = RunStore(runs_dir)
    first = store.save(F.markup_trace(g), g).run_id
    second = store.save(F.markup_trace(g, method="cot"), g).run_id
    return first, second


def test_md_text_turns_off_every_construct():
    for raw in F.MARKUP:
        out = md_text(raw)
        assert not re.search(r"(?<!\\)[`$\[\]<>!:]", out), out
    assert md_text("a\nb") == "a  \nb"
    assert plotly_text("<a href='x'>y</a> & z") == "&lt;a href='x'&gt;y&lt;/a&gt; &amp; z"


def test_replay_shows_markup_in_a_trace_as_text_at_every_step(markup_runs):
    run_id = markup_runs[0]
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.switch_page("pages/replay.py")
    at.query_params["run"] = run_id
    at.run()
    n = len(at.select_slider[0].options)
    assert n == 5
    for i in range(n):
        at.select_slider[0].set_value(i).run()
        _assert_no_markup(at)
        if i == 0:
            assert _shown_escaped(at, "title " + F.MARKUP_TEXT)  # the step's own title, as text
            assert any(md_text("note " + F.MARKUP_TEXT) in b for b in _markdown_bodies(at))
            assert any("&lt;img src=http://" in h for h in _html_bodies(at))  # model text, entity-escaped
            spec = "".join(_plotly_specs(at))
            assert "&lt;img" in spec  # candidate labels in the score chart
    # the slider names steps in words, never by their internal kinds
    assert not any("dog." in str(o) or "future." in str(o) for o in at.select_slider[0].options)
    assert _shown_escaped(at, "raw " + F.MARKUP_TEXT) or any(md_text("raw " + F.MARKUP_TEXT) in b
                                                             for b in _markdown_bodies(at))


def test_compare_and_runs_show_markup_as_text(markup_runs):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.switch_page("pages/compare.py")
    at.run()
    at.multiselect(key="cmp_pick").set_value(list(markup_runs)).run()
    _assert_no_markup(at)
    table = next(h for h in _html_bodies(at) if "kg-cmp" in h)
    assert "&lt;img src=http://" in table  # answers and labels escaped in the wrapping table
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.switch_page("pages/runs.py")
    at.run()
    assert not at.exception


@pytest.mark.parametrize("run", ["x`y", f"![i](http://{F.EVIL_HOST}/u.png)", f"<img src=http://{F.EVIL_HOST}/u>"])
def test_run_parameter_from_the_url_is_shown_as_text(markup_runs, run):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.switch_page("pages/replay.py")
    at.query_params["run"] = run
    at.run()
    _assert_no_markup(at)


def test_scene_json_and_legend_escape_markup():
    from kgqa_ui.trace_scene import step_scene
    from kgqa_ui.vis_html import render_html

    g = F.markup_graph()
    tr = F.markup_trace(g)
    for i in range(len(tr.steps) + 1):
        html = render_html(step_scene(tr, i, g))
        outside = re.sub(r"<script>.*?</script>", "", html, flags=re.S)
        assert "<img" not in outside and "<a " not in outside
        data = re.search(r"const SCENE = (\{.*?\});\n", html).group(1)
        assert "<" not in data  # \u003c inside the script
        assert json.loads(data)["nodes"]


# ------------------------------------------------------------------ uploads (issue 31)
UPLOAD_NAME = f"g ![t](http:{F.EVIL_HOST}.png) [x](www.{F.EVIL_HOST}) `c` $m$.nt"


def markup_ntriples() -> bytes:
    """An N-Triples file whose literals (kept and dropped) and IRIs' local names hold Markdown and HTML."""
    lines = ['<http://ex.org/Heat> <http://ex.org/directed_by> <http://ex.org/Mann> .',
             '<http://ex.org/Heat> <http://ex.org/tagline> "A crime saga"@en .']
    for i, raw in enumerate(F.MARKUP):
        text = raw.replace("\\", "\\\\").replace('"', '\\"')
        lines.append(f'<http://ex.org/Heat> <http://ex.org/tagline> "{text}"@fr{"-x" * i} .')  # dropped: noted
        lines.append(f'<http://ex.org/e{i}> <http://ex.org/motto> "{text}" .')
    return ("\n".join(lines) + "\n").encode()


def test_an_uploaded_graph_with_markup_in_its_name_and_text_is_shown_as_text(runs_dir):
    """The file name goes into the success line, the dropped literals into the notes: both as text."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.segmented_control(key="ask_source").set_value("Upload a file").run()
    at.file_uploader(key="ask_upload").upload(UPLOAD_NAME, markup_ntriples(), "application/n-triples").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    _assert_no_markup(at)
    assert any("triplets" in s.value and md_text(UPLOAD_NAME) in s.value for s in at.success)
    notes = " ".join(c.value for c in at.caption)
    assert md_text(f"![x](http://{F.EVIL_HOST}/t.png)") in notes  # a dropped literal, quoted in the notes


def test_an_upload_error_names_the_file_as_text(runs_dir):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.segmented_control(key="ask_source").set_value("Upload a file").run()
    bad = f"<http://ex.org/a> <http://ex.org/b> ![t](http://{F.EVIL_HOST}/line.png) .\n".encode()
    at.file_uploader(key="ask_upload").upload(UPLOAD_NAME, bad, "application/n-triples").run()
    assert not at.exception and at.error
    _assert_no_markup(at)


def test_a_model_servers_credentials_never_reach_the_page():
    """The model list's label, the Ask page's caption and the progress log show the URL with ***."""
    from kgqa_core.redact import mask_url_credentials
    from kgqa_ui import server_panel

    key = server_panel.model_key("http://lab:pa55w0rd@gpu-box:8000", "m")
    assert "pa55w0rd" not in server_panel.label(key) and "http://***@gpu-box:8000" in server_panel.label(key)
    assert "pa55w0rd" not in server_panel.describe(key)
    assert mask_url_credentials(f"loading model {key}") == f"loading model {key}".replace("lab:pa55w0rd@", "***@")

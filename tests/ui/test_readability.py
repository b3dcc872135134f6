"""Readable charts on a light and a dark page: score labels never cut, 12 px token labels, hatches that show."""

from __future__ import annotations

import ui_fixtures as F
from kgqa_ui import colors as C
from kgqa_ui.charts import TOKEN_FONT, step_scores_figure, token_figure
from kgqa_ui.trace_tables import correctness


def test_partial_bars_and_outlines_keep_their_contrast_in_both_themes():
    for bg in (C.LIGHT_BG, C.DARK_BG):
        assert C.contrast(C.BAR_OUTLINE, bg) >= 3.0, bg  # every bar's outline shows
        assert C.contrast(C.CHAIN, bg) >= 3.0, bg  # the kept bar's orange outline too
    for i in range(11):
        bar = C.score_color(i / 10)
        assert C.contrast(C.hatch_color(bar), bar) >= 3.0, bar  # the hatch stands out from its bar


def test_partial_bars_are_filled_and_hatched_with_a_contrasting_colour(graph):
    step = F.dog_trace(graph).steps[3]
    step.candidates[1].extra = {"exact": False}
    bar = step_scores_figure(step).data[0]
    assert bar.marker.pattern.fillmode == "overlay"  # the bar keeps its colour under the hatch
    assert all(C.contrast(fg, col) >= 3.0 for fg, col in zip(bar.marker.pattern.fgcolor, bar.marker.color))
    assert bar.text is None and all("<br><i>" in y for y in bar.y)  # values in the axis: never cut


def test_token_heatmap_text_is_12_px(graph):
    fig = token_figure(F.dog_trace(graph).steps[0].token_view)
    assert fig.data[0].textfont.size == TOKEN_FONT >= 12
    assert fig.layout.xaxis.tickfont.size >= 12 and fig.layout.yaxis.tickfont.size >= 12


def test_verdicts_need_no_emoji_font(graph):
    corr = correctness(F.dog_trace(graph), F.GOLD)
    assert corr.icon.startswith(":material/") and all(ord(ch) < 0x2190 for ch in corr.label)

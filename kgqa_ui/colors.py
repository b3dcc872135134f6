"""The colour language shared by every graph, chart and legend of the workbench.

One place so that "orange bold = the chosen chain" means the same thing on the
Replay, Compare and Explore pages and in downloaded graph HTML.
"""

from __future__ import annotations

from plotly.colors import sample_colorscale

# node roles
TOPIC = "#f59f00"          # topic entity (gold diamond)
ANSWER = "#2f9e44"         # final answer (green star)
CHAIN = "#e8590c"          # the chosen chain (orange, bold)
NEW_BORDER = "#d6336c"     # entity added at this step (magenta ring)
SUBGRAPH = "#4dabf7"       # in the query-centric subgraph
REACHED = "#1971c2"        # reached at an earlier step (the subgraph that grew)
CANDIDATE_NODE = "#a5d8ff"  # reached only by a candidate triplet
CONTEXT = "#dee2e6"        # context shown around the subgraph
KEY_ENTITY = "#7048e8"     # RoK key entity
ILL = "#e03131"            # cited but not in the graph / ill-formed
MISSING_NODE = "#ffc9c9"

# edge roles
SUBGRAPH_EDGE = "#868e96"
CONTEXT_EDGE = "#dee2e6"
DROPPED_EDGE = "#ced4da"

# score colour scale: low (pale) -> high (dark); kept away from the chain's orange
SCORE_SCALE = "YlGnBu"
_SCORE_LO, _SCORE_HI = 0.35, 1.0

# categorical colours for sub-questions, paths and methods (Okabe-Ito, colour-blind safe;
# orange is left out so the chosen chain stays unique)
CATEGORICAL = ["#0072B2", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#6a4c93", "#999933", "#882255"]


def categorical(i: int) -> str:
    return CATEGORICAL[i % len(CATEGORICAL)]


def normalise(values: list[float]) -> list[float]:
    """Min-max scale to [0, 1]; a single value or all-equal values map to 1."""
    if not values:
        return []
    lo, hi = min(values), max(values)
    if hi - lo < 1e-12:
        return [1.0 for _ in values]
    return [(v - lo) / (hi - lo) for v in values]


def score_color(t: float) -> str:
    """Colour for a normalised score in [0, 1] (clamped)."""
    t = min(1.0, max(0.0, float(t)))
    rgb = sample_colorscale(SCORE_SCALE, [_SCORE_LO + t * (_SCORE_HI - _SCORE_LO)])[0]
    return _rgb_to_hex(rgb)


def _rgb_to_hex(rgb: str) -> str:
    if rgb.startswith("#"):
        return rgb
    parts = rgb[rgb.index("(") + 1 : rgb.index(")")].split(",")
    r, g, b = (int(round(float(p))) for p in parts[:3])
    return f"#{r:02x}{g:02x}{b:02x}"


def score_gradient_css() -> str:
    """A CSS linear-gradient of the score scale, for legends."""
    stops = [score_color(i / 4) for i in range(5)]
    return f"linear-gradient(to right, {', '.join(stops)})"


# bar outlines that show on the app's light (#ffffff) and dark (#0e1117) backgrounds alike (contrast >= 3:1)
BAR_OUTLINE = "#868e96"
LIGHT_BG, DARK_BG = "#ffffff", "#0e1117"


def luminance(colour: str) -> float:
    """WCAG relative luminance of a ``#rrggbb`` colour."""
    c = colour.lstrip("#")
    channels = [int(c[i:i + 2], 16) / 255 for i in (0, 2, 4)]
    lin = [x / 12.92 if x <= 0.03928 else ((x + 0.055) / 1.055) ** 2.4 for x in channels]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a: str, b: str) -> float:
    """WCAG contrast ratio of two colours (1 to 21)."""
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def hatch_color(bar: str) -> str:
    """The hatch of a partial bar: near-black on a light bar, near-white on a dark one (it stands out in both themes)."""
    return "#212529" if contrast(bar, "#212529") >= contrast(bar, "#f8f9fa") else "#f8f9fa"

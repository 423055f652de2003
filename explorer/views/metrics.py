"""Metric cards: latency, energy, power, bounding term, cores used and the change against
the starting mapping, for what the mesh shows (``state.shown_evaluation``); on the page,
also the simulated step, which arrives from the background (``explorer.step_runner``)
a moment after the analytic numbers and is greyed while a newer one runs.

Each card's markup carries ``data-testid`` attributes (``metric-latency`` …, value
``metric-latency-value``) so a browser test can read the rendered text inside the shadow
DOM. A card whose number depends on a constant the hardware preset marks illustrative (or
gives no source for) carries a small "illustrative" badge, whose tooltip names those
constants (``engine.hardware.provenance``); a calibrated preset's fitted constants lose it. The
cards are a ``LiveHTML``: text that changes on every drag goes to the browser alone and
is written in place, without a new layout of the page.
"""

from __future__ import annotations

import math
from html import escape

import panel as pn
import param

from engine.evaluation.cost import TERM_LABELS, Evaluation
from engine.hardware import Hardware
from engine.hardware.provenance import ENERGY_CONSTANTS, LATENCY_CONSTANTS, illustrative_inputs
from explorer.admission import place_text
from explorer.state import ExplorerState
from explorer.views._page import LiveHTML

__all__ = [
    "CARD_CSS",
    "METRICS", "MetricsView", "format_change", "format_quantity", "illustrative_badges",
    "metric_values", "simulated_card",
]  # fmt: skip

METRICS = ("latency", "change", "energy", "power", "bottleneck", "cores")


CARD_CSS = """
.metric-row { display: flex; gap: 12px; flex-wrap: wrap; }
.metric-card {
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  background: #ffffff; border: 1px solid #e3e6ea; border-left: 4px solid #4e79a7;
  border-radius: 8px; padding: 8px 12px 10px; box-sizing: border-box;
  /* equal widths set by the row, not by what a card says (a new value never moves the
     page): 160 px, down to 132 px so that seven cards stay on one row beside the
     sidebar on a 1366-px screen */
  flex: 1 1 0; min-width: 132px; max-width: 160px;
}
.metric-card.bound { border-left-color: #e6550d; }
.metric-card.better { border-left-color: #2f9e44; }
.metric-card.better .metric-value { color: #2b8a3e; }
.metric-card.worse { border-left-color: #c92a2a; }
.metric-card.worse .metric-value { color: #c92a2a; }
.metric-card.search { background: #fff7ed; }
.metric-label { font-size: 11px; color: #6b7280; text-transform: uppercase; letter-spacing: .02em; }
.metric-value { font-size: 26px; font-weight: 600; color: #1f2933; line-height: 31px; }
/* words, not a number: two lines always held for them ("SynMem reads" needs 149 px at
   18 px and was cut to "SynMem reac" in a 132-px card), so a change of term never moves
   the page */
.metric-card.bound .metric-value { font-size: 17px; line-height: 19px; min-height: 38px;
  white-space: normal; overflow-wrap: anywhere; }
.metric-unit { font-size: 12px; color: #6b7280; }
/* one fixed size per card, whatever it says (a new value never moves the page), and nothing
   cut: a label or the line below the value wraps onto a second line it always has room for;
   a long value takes a smaller font */
.metric-card:not(.bound) .metric-value { white-space: nowrap; }
.metric-label, .metric-unit { white-space: normal; overflow-wrap: anywhere; line-height: 1.25; }
.metric-label { min-height: 2.5em; }
.metric-unit { min-height: 2.5em; }
.metric-card.sim { border-left-color: #7c3aed; }
.metric-card.pending .metric-value { color: #9ca3af; }
.metric-badge { float: right; font-size: 9px; text-transform: none; letter-spacing: 0;
  color: #8a5a00; background: #fff4d6; border: 1px solid #f0d58c; border-radius: 6px;
  padding: 0 4px; cursor: help; }
"""

# the cards whose numbers each set of constants makes
_DEPENDS = {
    "latency": LATENCY_CONSTANTS,
    "bottleneck": LATENCY_CONSTANTS,
    "energy": ENERGY_CONSTANTS,
    "power": ENERGY_CONSTANTS,
    "simulated": LATENCY_CONSTANTS + ("noc.cycle_ns", "noc.flit_bits"),
}


def illustrative_badges(hardware: Hardware) -> dict[str, str]:
    """Per card key: the tooltip of its "illustrative" badge (cards without one are absent)."""
    out = {}
    for key, depends in _DEPENDS.items():
        names = illustrative_inputs(hardware, depends)
        if names:
            out[key] = (
                f"depends on constants of {hardware.name} that are illustrative, not measured: "
                f"{', '.join(n.split('.')[1] for n in names)} (meshscope list --hardware "
                f"{hardware.name} --constants; meshscope calibrate fits them)"
            )
    return out


def format_quantity(x: float, digits: int = 4) -> str:
    """``x`` with about ``digits`` significant digits, never in exponent notation.

    >>> format_quantity(34.9531), format_quantity(1.01618), format_quantity(20753.06)
    ('34.95', '1.016', '20,753')
    """
    if not math.isfinite(x):
        return str(x)
    if x == 0:
        return "0"
    if abs(x) >= 10 ** (digits - 1):
        return f"{x:,.0f}"
    x = float(f"{x:.{digits}g}")  # round first: 999.96 becomes 1000, not 1,000.0
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(x))))
    return f"{x:,.{decimals}f}"


def format_change(pct: float) -> str:
    """A signed percentage with a true minus sign: ``−3.2 %``, ``+0.5 %``, ``0 %``.

    >>> format_change(-3.21), format_change(0.0), format_change(12.0)
    ('−3.2 %', '0 %', '+12.0 %')
    """
    if abs(pct) < 0.05:
        return "0 %"
    return f"{'−' if pct < 0 else '+'}{abs(pct):,.1f} %"


def metric_values(
    evaluation: Evaluation, hardware: Hardware, start: Evaluation | None = None
) -> dict[str, tuple[str, str, str]]:
    """Per card: (label, value text, unit text). ``start``: the starting mapping's
    evaluation, for the change card (none given: no change)."""
    e = evaluation
    start_us = start.latency_us if start is not None else e.latency_us
    pct = 100.0 * (e.latency_us - start_us) / start_us
    from engine.predict import predictors

    by = predictors[e.predictor].label if e.predictor in predictors else e.predictor
    return {
        "latency": ("Latency", format_quantity(e.latency_us), f"µs / step · {by}"),
        "change": (
            "Change vs start",
            format_change(pct),
            f"latency; start {format_quantity(start_us)} µs",
        ),
        "energy": ("Energy", format_quantity(e.energy_uj), "µJ / step"),
        "power": ("Power", format_quantity(e.power_w), "W"),
        "bottleneck": (
            "Bound by",
            TERM_LABELS.get(e.bottleneck, e.bottleneck),
            f"{format_quantity(e.terms_us[e.bottleneck])} µs term",
        ),
        "cores": (
            "Cores used",
            f"{e.cores_used:,}",
            f"of {hardware.n_cores:,} on {e.chips_used} of {hardware.n_chips} chip"
            + ("s" if hardware.n_chips > 1 else ""),
        ),
    }


VALUE_PX = 26  # a value's font size when it fits
VALUE_ROOM = 100  # px a value has in the narrowest card (132 px less padding and borders)
# advance widths (em) of the widest common sans-serif at weight 600 (DejaVu Sans Bold); a
# browser with a narrower font shows the value a little smaller than it could, never cut
_EM = {**dict.fromkeys("0123456789", 0.70), ".": 0.38, ",": 0.38, " ": 0.35, "%": 1.0,
       "\u2212": 0.84, "+": 0.84, "-": 0.42, "\u00d7": 0.84}  # fmt: skip


def value_px(value: str) -> int:
    """The font size (px) at which ``value`` fits its card whatever the browser's font:
    full size when it fits, smaller (down to 14 px) when it would not."""
    width = sum(_EM.get(c, 0.80 if c.isupper() else 0.72) for c in value)
    return max(14, min(VALUE_PX, int(VALUE_ROOM / max(width, 1e-9))))


def card_html(
    key: str, label: str, value: str, unit: str, extra_class: str = "", badge: str = ""
) -> str:
    classes = "metric-card" + (" bound" if key == "bottleneck" else "")
    classes += f" {extra_class}" if extra_class else ""
    mark = (
        f'<span class="metric-badge" data-testid="metric-{key}-illustrative" '
        f'title="{escape(badge)}">illustrative</span>'
        if badge
        else ""
    )
    # a word (the bottleneck card) keeps its CSS size; a number shrinks to fit
    px = value_px(value)
    size = f' style="font-size: {px}px"' if key != "bottleneck" and px < VALUE_PX else ""
    return (
        f'<div class="{classes}" data-testid="metric-{key}">'
        f'<div class="metric-label">{escape(label)}{mark}</div>'
        f'<div class="metric-value"{size} '
        f'data-testid="metric-{key}-value" title="{escape(value)}">{escape(value)}</div>'
        f'<div class="metric-unit" title="{escape(unit)}">{escape(unit)}</div></div>'
    )


def _so_far(s: ExplorerState) -> str:
    """How far a long simulation has got against the model's step, '12 % of the model's
    step' ("" before its first report)."""
    if not (s.simulation.running and s.simulation.cycles and s.shown_evaluation is not None):
        return ""
    model_cycles = s.shown_evaluation.latency_us * 1000.0 / s.hardware.noc.cycle_ns
    done = s.simulation.cycles / model_cycles if model_cycles > 0 else 0.0
    return f"{100 * done:.0f} % of the model's step"


def simulated_card(state: ExplorerState, badge: str = "") -> str:
    """The card of the shown mapping's simulated step: its value once the background
    simulation (``explorer.step_runner``) has it, greyed while a newer one runs."""
    s = state
    current = s.simulation.of is s.shown_evaluation
    result = s.simulation.step
    extra = "sim" + (" pending" if s.simulation.running or not current else "")
    so_far = _so_far(s)
    if s.simulation.running and s.simulation.place:  # its turn at the server has not come yet
        so_far = f"waiting for the server, {place_text(s.simulation.place)}"
    if current and s.simulation.error:
        reason = s.simulation.error.split(";")[0]
        return card_html("simulated", "Simulated step", "—", f"not simulated: {reason}", extra)
    if result is None:
        return card_html(
            "simulated", "Simulated step", "…",
            f"simulating: {so_far}" if so_far else "simulating, flit by flit", extra,
            badge,
        )  # fmt: skip
    unit = f"µs, bound by {result.bound}"
    if s.simulation.running or not current:
        unit = f"simulating the change: {so_far}" if so_far else "simulating the change…"
    elif s.simulation.start_us:
        pct = 100.0 * (result.step_us - s.simulation.start_us) / s.simulation.start_us
        unit = f"µs, {format_change(pct)} vs start"
    return card_html(
        "simulated", "Simulated step", format_quantity(result.step_us), unit, extra, badge
    )


class MetricsView(pn.viewable.Viewer):
    """A row of metric cards, updated in place when the state's evaluation changes."""

    state = param.ClassSelector(class_=ExplorerState)
    simulated = param.Boolean(
        default=False, doc="show the simulated step's card (a StepRunner feeds the state)"
    )

    def __init__(self, **params):
        super().__init__(**params)
        self._cards = LiveHTML(css=CARD_CSS, margin=(6, 10))
        self._badges: tuple[Hardware | None, dict] = (None, {})
        self._refresh()
        self.state.watch(
            self._refresh, shown=["evaluation", "start_evaluation"],
            search=["best_evaluation", "running", "follow_best", "best_on_mesh",
                    "picked_evaluation"],
            simulation=["step", "running", "error", "cycles", "place", "start_us"],
        )  # fmt: skip

    @property
    def html(self) -> str:
        """The cards' current markup."""
        return self._cards.object

    def _refresh(self, *events) -> None:
        s = self.state
        shown = s.shown_evaluation
        if shown is None:
            return
        searching = shown is not s.evaluation
        pct = s.change_pct(shown)
        trend = "better" if pct <= -0.05 else "worse" if pct >= 0.05 else ""
        values = metric_values(shown, s.hardware, s.shown.start_evaluation)
        if self._badges[0] is not s.hardware:  # the sources change only with the hardware
            self._badges = (s.hardware, illustrative_badges(s.hardware))
        badges = self._badges[1]
        cards = []
        for key, (label, value, unit) in values.items():
            extra = " ".join(filter(None, [trend if key == "change" else "",
                                           "search" if searching else ""]))  # fmt: skip
            if searching and key == "latency":
                label = "Latency (search best)"
            cards.append(card_html(key, label, value, unit, extra, badges.get(key, "")))
            if key == "change" and self.simulated:
                cards.append(simulated_card(s, badges.get("simulated", "")))
        self._cards.object = f'<div class="metric-row">{"".join(cards)}</div>'

    def __panel__(self):
        return self._cards

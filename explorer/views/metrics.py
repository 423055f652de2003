"""Metric cards: latency, energy, power, bounding term, cores used and the change against
the starting mapping, for what the mesh shows (``state.shown_evaluation``); on the page,
also the simulated step, which arrives from the background (``explorer.step_runner``)
a moment after the analytic numbers and is greyed while a newer one runs.

Each card's markup carries ``data-testid`` attributes (``metric-latency`` …, value
``metric-latency-value``) so a browser test can read the rendered text inside the shadow
DOM. The cards are a ``LiveHTML``: text that changes on every drag is a Bokeh ``Div``
whose ``text`` alone goes to the browser (a ``pn.pane.HTML`` re-sends its stylesheets
on each change, and Bokeh then walks the whole document: ~10–60 ms a pane).
"""

from __future__ import annotations

import math
from html import escape

import panel as pn
import param

from engine.cost import TERM_LABELS, Evaluation
from engine.hardware import Hardware
from explorer.state import ExplorerState
from explorer.views._page import LiveHTML

__all__ = [
    "CARD_CSS",
    "METRICS", "MetricsView", "format_change", "format_quantity", "metric_values",
    "simulated_card",
]  # fmt: skip

METRICS = ("latency", "change", "energy", "power", "bottleneck", "cores")


CARD_CSS = """
.metric-row { display: flex; gap: 12px; flex-wrap: wrap; }
.metric-card {
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  background: #ffffff; border: 1px solid #e3e6ea; border-left: 4px solid #4e79a7;
  border-radius: 8px; padding: 8px 14px 10px; width: 160px; box-sizing: border-box;
}
.metric-card.bound { border-left-color: #e6550d; }
.metric-card.better { border-left-color: #2f9e44; }
.metric-card.better .metric-value { color: #2b8a3e; }
.metric-card.worse { border-left-color: #c92a2a; }
.metric-card.worse .metric-value { color: #c92a2a; }
.metric-card.search { background: #fff7ed; }
.metric-label { font-size: 12px; color: #6b7280; text-transform: uppercase; letter-spacing: .04em; }
.metric-value { font-size: 26px; font-weight: 600; color: #1f2933; line-height: 1.2; }
.metric-unit { font-size: 12px; color: #6b7280; }
/* one fixed size per card, whatever it says: a new value never moves the page */
.metric-label, .metric-value, .metric-unit { white-space: nowrap; overflow: hidden;
  text-overflow: ellipsis; }
.metric-card.sim { border-left-color: #7c3aed; }
.metric-card.pending .metric-value { color: #9ca3af; }
"""


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
    return {
        "latency": ("Latency", format_quantity(e.latency_us), "µs / step"),
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


def card_html(key: str, label: str, value: str, unit: str, extra_class: str = "") -> str:
    classes = "metric-card" + (" bound" if key == "bottleneck" else "")
    classes += f" {extra_class}" if extra_class else ""
    return (
        f'<div class="{classes}" data-testid="metric-{key}">'
        f'<div class="metric-label">{escape(label)}</div>'
        f'<div class="metric-value" data-testid="metric-{key}-value">{escape(value)}</div>'
        f'<div class="metric-unit" title="{escape(unit)}">{escape(unit)}</div></div>'
    )


def simulated_card(state: ExplorerState) -> str:
    """The card of the shown mapping's simulated step: its value once the background
    simulation (``explorer.step_runner``) has it, greyed while a newer one runs."""
    s = state
    current = s.simulated_of is s.shown_evaluation
    result = s.simulated
    extra = "sim" + (" pending" if s.simulating or not current else "")
    if current and s.simulated_error:
        reason = s.simulated_error.split(";")[0]
        return card_html("simulated", "Simulated step", "—", f"not simulated: {reason}", extra)
    if result is None:
        return card_html("simulated", "Simulated step", "…", "simulating, flit by flit", extra)
    unit = f"µs, bound by {result.bound}"
    if s.simulating or not current:
        unit = "simulating the change…"
    elif s.start_simulated_us:
        pct = 100.0 * (result.step_us - s.start_simulated_us) / s.start_simulated_us
        unit = f"µs, {format_change(pct)} vs start"
    return card_html("simulated", "Simulated step", format_quantity(result.step_us), unit, extra)


class MetricsView(pn.viewable.Viewer):
    """A row of metric cards, updated in place when the state's evaluation changes."""

    state = param.ClassSelector(class_=ExplorerState)
    simulated = param.Boolean(
        default=False, doc="show the simulated step's card (a StepRunner feeds the state)"
    )

    def __init__(self, **params):
        super().__init__(**params)
        self._cards = LiveHTML(css=CARD_CSS, margin=(6, 10))
        self._refresh()
        self.state.param.watch(
            self._refresh,
            ["evaluation", "start_evaluation", "search_best_evaluation", "search_running",
             "follow_best", "best_on_mesh", "picked_evaluation", "simulated", "simulating",
             "simulated_error",
             "start_simulated_us"],
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
        values = metric_values(shown, s.hardware, s.start_evaluation)
        cards = []
        for key, (label, value, unit) in values.items():
            extra = [trend if key == "change" else "", "search" if searching else ""]
            if searching and key == "latency":
                label = "Latency (search best)"
            cards.append(card_html(key, label, value, unit, " ".join(filter(None, extra))))
            if key == "change" and self.simulated:
                cards.append(simulated_card(s))
        self._cards.object = f'<div class="metric-row">{"".join(cards)}</div>'

    def __panel__(self):
        return self._cards

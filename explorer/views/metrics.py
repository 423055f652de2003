"""Metric cards: latency, energy, power, bounding term and cores used of the current mapping.

Each card is a ``pn.pane.HTML`` whose inner markup carries ``data-testid`` attributes
(``metric-latency`` …, value ``metric-latency-value``) so a browser test can read the
rendered text inside Panel's shadow DOM.
"""

from __future__ import annotations

import math
from html import escape

import panel as pn
import param

from engine.cost import Evaluation
from engine.hardware import Hardware
from explorer.state import ExplorerState

__all__ = ["CARD_CSS", "METRICS", "MetricsView", "format_quantity", "metric_values"]

METRICS = ("latency", "energy", "power", "bottleneck", "cores")

TERM_LABELS = {
    "dendops": "DendOps",
    "synops": "SynOps",
    "synmem": "SynMem reads",
    "link": "link load",
    "barrier": "barrier sync",
}

CARD_CSS = """
.metric-card {
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  background: #ffffff; border: 1px solid #e3e6ea; border-left: 4px solid #4e79a7;
  border-radius: 8px; padding: 8px 14px 10px; min-width: 128px; box-sizing: border-box;
}
.metric-card.bound { border-left-color: #e6550d; }
.metric-label { font-size: 12px; color: #6b7280; text-transform: uppercase; letter-spacing: .04em; }
.metric-value { font-size: 26px; font-weight: 600; color: #1f2933; line-height: 1.2; }
.metric-unit { font-size: 12px; color: #6b7280; }
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


def metric_values(evaluation: Evaluation, hardware: Hardware) -> dict[str, tuple[str, str, str]]:
    """Per card: (label, value text, unit text)."""
    e = evaluation
    return {
        "latency": ("Latency", format_quantity(e.latency_us), "µs / step"),
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


def card_html(key: str, label: str, value: str, unit: str) -> str:
    bound = " bound" if key == "bottleneck" else ""
    return (
        f'<div class="metric-card{bound}" data-testid="metric-{key}">'
        f'<div class="metric-label">{escape(label)}</div>'
        f'<div class="metric-value" data-testid="metric-{key}-value">{escape(value)}</div>'
        f'<div class="metric-unit">{escape(unit)}</div></div>'
    )


class MetricsView(pn.viewable.Viewer):
    """A row of metric cards, updated in place when the state's evaluation changes."""

    state = param.ClassSelector(class_=ExplorerState)

    def __init__(self, **params):
        super().__init__(**params)
        self._cards = {
            key: pn.pane.HTML(
                "",
                css_classes=["metric", f"metric-{key}"],
                stylesheets=[CARD_CSS],
                margin=(0, 12, 0, 0),
            )  # fmt: skip
            for key in METRICS
        }
        self._row = pn.Row(*self._cards.values(), margin=(6, 10))
        self._refresh()
        self.state.param.watch(self._refresh, ["evaluation"])

    def _refresh(self, *events) -> None:
        s = self.state
        if s.evaluation is None:
            return
        for key, (label, value, unit) in metric_values(s.evaluation, s.hardware).items():
            self._cards[key].object = card_html(key, label, value, unit)

    def __panel__(self):
        return self._row

"""What the search tabs (Evolution, Pareto, Bottlenecks' search points) draw alike: the
colours of the best and the current mapping, the palette of a colour scale, the empty
figure a search plot starts as (``search_figure``), and ``RowStreamer``, which keeps a
Bokeh source equal to a growing list of rows (a search's records) by streaming the new
ones."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from bokeh.models import ColumnDataSource, Range1d
from bokeh.palettes import Viridis256
from bokeh.plotting import figure

from explorer.views._page import Extent, fit_range, style_figure

__all__ = [
    "BEST_COLOR",
    "CURRENT_COLOR",
    "SCALE_PALETTE",
    "FittedRanges",
    "RowStreamer",
    "search_figure",
]

BEST_COLOR = "#ff1f8e"  # the search's best, on every plot
CURRENT_COLOR = "#1f2933"  # the current mapping, on every plot
SCALE_PALETTE = tuple(Viridis256[:232])  # without the palest yellows, which vanish on white


def search_figure(
    title: str, across: str, up: str, *, width: int, height: int, tools: str, x_end: float = 1
):
    """An empty plot of a search tab: its toolbar below (above, the title left its tools too
    little room: they folded into its "⋮" menu, the title running under it), ranges from 0
    to 1 (``x_end`` across) that the view fits to its data (``_page.fit_range``: Bokeh
    cannot fit ranges to no data), ``across`` and ``up`` its axis labels."""
    p = figure(
        title=title, width=width, height=height, tools=tools, toolbar_location="below",
        border_fill_color="white", x_range=Range1d(0, x_end), y_range=Range1d(0, 1),
    )  # fmt: skip
    style_figure(p, across, up)
    return p


class FittedRanges:
    """The extent of what a search plot holds, across and up, and its ranges fitted to it
    and to a few marks besides (the current mapping, the best): ``add`` what is drawn,
    ``reset`` for a new run, ``fit`` after either."""

    def __init__(self, fig, padding: float = 0.08, across: bool = True):
        self.figure, self.padding, self.across = fig, padding, across
        self.x, self.y = Extent(), Extent()

    def reset(self) -> None:
        self.x.reset()
        self.y.reset()

    def add(self, xs=(), ys=()) -> None:
        self.x.add(xs)
        self.y.add(ys)

    def fit(self, xs=(), ys=()) -> None:
        """Fit the ranges to what was added and to the marks at ``xs``, ``ys`` (across only
        when ``across``: a plot whose x range the view sets itself)."""
        if self.across:
            fit_range(self.figure.x_range, self.x | xs, self.padding)
        fit_range(self.figure.y_range, self.y | ys, self.padding)


class RowStreamer:
    """Keeps a ``ColumnDataSource`` equal to a growing list of rows.

    ``update(rows)`` streams only the rows after the ones already sent; when the list
    is a new one (shorter, or its first row is another object: a new run) it replaces
    the data instead. Lists that grow by concatenation keep their first row, which is
    how ``SearchRunner`` publishes.
    """

    def __init__(self, source: ColumnDataSource, columns: Callable[[Sequence], dict]):
        self.source, self.columns = source, columns
        self.count = 0
        self.replaced = False
        self._first = None
        self.source.data = columns([])

    def replace(self, rows: Sequence) -> None:
        """Send all of ``rows`` again (their columns changed, not their number)."""
        self.source.data = self.columns(rows)
        self.count, self._first, self.replaced = len(rows), rows[0] if rows else None, True

    def update(self, rows: Sequence) -> Sequence:
        """Bring the source up to ``rows``; return the rows that were sent.

        ``replaced`` tells whether the data was replaced (the rows sent are all rows)
        rather than extended.
        """
        n = len(rows)
        first = rows[0] if n else None
        self.replaced = n < self.count or first is not self._first
        if self.replaced:
            self.source.data = self.columns(rows)
            sent = rows
        elif n > self.count:
            sent = rows[self.count :]
            self.source.stream(self.columns(sent))
        else:
            sent = rows[:0]
        self.count, self._first = n, first
        return sent

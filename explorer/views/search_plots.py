"""What the search tabs (Evolution, Pareto, Bottlenecks' search points) draw alike: the
colours of the best and the current mapping, and ``RowStreamer``, which keeps a Bokeh
source equal to a growing list of rows (a search's records) by streaming the new ones."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from bokeh.models import ColumnDataSource

__all__ = ["BEST_COLOR", "CURRENT_COLOR", "RowStreamer"]

BEST_COLOR = "#ff1f8e"  # the search's best, on every plot
CURRENT_COLOR = "#1f2933"  # the current mapping, on every plot


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

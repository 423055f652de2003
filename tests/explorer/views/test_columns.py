"""Every glyph of the tabs reads only columns its source has, from the moment it is built
(issue 40: Bokeh logged "attempted to retrieve property array for nonexistent field" for
sources made empty, with no columns, on the Compare, Bottlenecks and Evolution tabs)."""

from __future__ import annotations

import panel as pn
import pytest
from bokeh.core.serialization import Serializer
from bokeh.models import ColumnDataSource, GlyphRenderer

from explorer.views.bottlenecks import BottleneckView
from explorer.views.compare import CompareView
from explorer.views.evolution import EvolutionView
from explorer.views.pareto import ParetoView
from explorer.views.traffic import TrafficView


def missing_columns(root) -> list[str]:
    """``"glyph.property → column"`` for each column a glyph of ``root`` reads that its
    source lacks."""
    missing = []
    for r in root.select({"type": GlyphRenderer}):
        if not isinstance(r.data_source, ColumnDataSource):
            continue
        have = set(r.data_source.column_names)
        attributes = Serializer(deferred=False).encode(r.glyph)["attributes"]
        for name, spec in attributes.items():
            if isinstance(spec, dict) and spec.get("type") == "field" and spec["field"] not in have:
                missing.append(f"{r.glyph.__class__.__name__}.{name} → {spec['field']}")
    return missing


class _Later:
    """A session's document whose next ticks never come: what the page draws first."""

    def __init__(self):
        self.waiting = []

    def add_next_tick_callback(self, fn):
        self.waiting.append(fn)


@pytest.mark.parametrize("view", [CompareView, BottleneckView, EvolutionView, ParetoView,
                                  TrafficView])  # fmt: skip
def test_a_new_tab_names_every_column_its_glyphs_read(demo_state, view, monkeypatch):
    later = _Later()  # on a page, the views' reactions (``on_page``) run after it is sent
    monkeypatch.setattr("explorer.views._page._session_document", lambda: later)
    root = pn.panel(view(state=demo_state)).get_root()
    assert root.select({"type": GlyphRenderer}), "no glyph found: the test would check nothing"
    assert missing_columns(root) == []

"""The explorer's tabs: one registry that the page (``explorer.app``), the README's
screenshots (``explorer.screenshots``) and the tests read.

A tab is a title and a builder, ``build(state, page)``: ``state`` the session's
``ExplorerState``, ``page`` what the page hands its tabs besides (``TabPage``: a scene for
the Traffic tab to load, and a call for each view once built). The first tab is built with
the page; the others when first shown (``explorer.app.lazy_tabs``), so a builder imports
its view's module itself (Pareto's brings pymoo: not with every page). Adding a tab is one
entry here, its view's module and its tests.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["TABS", "Tab", "TabPage", "titles"]


@dataclass(frozen=True)
class TabPage:
    """What the page hands its tabs' builders besides the state: ``scene``, one for the
    Traffic tab to load when it is built; ``on_built(title, view)``, called with each tab's
    view once it is built (the page follows the Traffic tab's source)."""

    scene: object = None  # an explorer.scenes.Scene
    on_built: Callable[[str, object], None] | None = field(default=None)


@dataclass(frozen=True)
class Tab:
    """One tab of the page: its ``title`` and ``build(state, page) -> viewable``."""

    title: str
    build: Callable[[object, TabPage], object]
    doc: str = ""

    def view(self, state, page: TabPage):
        """The tab's view, built now (``page.on_built`` hears of it)."""
        view = self.build(state, page)
        if page.on_built is not None:
            page.on_built(self.title, view)
        return view


def _mesh(state, page):
    import panel as pn

    from explorer.views.mesh import MeshView
    from explorer.views.metrics import MetricsView

    return pn.Column(
        MetricsView(state=state, simulated=True),
        MeshView(state=state),
        margin=0,
        sizing_mode="stretch_width",
    )


def _evolution(state, page):
    from explorer.views.evolution import EvolutionView

    return EvolutionView(state=state)


def _bottlenecks(state, page):
    from explorer.views.bottlenecks import BottleneckView

    return BottleneckView(state=state)


def _compare(state, page):
    from explorer.views.compare import CompareView

    return CompareView(state=state)


def _traffic(state, page):
    from explorer.views.traffic_scenes import TrafficTab

    tab = TrafficTab(state)
    if page.scene is not None:
        tab.load_scene(page.scene)
    return tab


def _pareto(state, page):
    from explorer.views.pareto import ParetoView

    return ParetoView(state=state)


def _mosaic(state, page):
    from explorer.views.mosaic import MosaicView

    return MosaicView(state=state)


TABS: tuple[Tab, ...] = (
    Tab("Mesh", _mesh, "metric cards, the mesh and its bottleneck caption (built with the page)"),
    Tab("Evolution", _evolution, "the nested ES, run and watched live"),
    Tab("Bottlenecks", _bottlenecks, "where the step's time goes"),
    Tab("Compare", _compare, "the mapping beside a reference"),
    Tab("Traffic", _traffic, "the step or a synthetic pattern, simulated and replayed"),
    Tab("Pareto", _pareto, "a multi-objective search and its front"),
    Tab("Mosaic", _mosaic, "the Mosaic's tiles"),
)


def titles() -> list[str]:
    """The tabs' titles, in the page's order."""
    return [tab.title for tab in TABS]

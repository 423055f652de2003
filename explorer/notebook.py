"""The explorer in a Jupyter notebook, bound to the session's Python objects.

``show(mapped)`` returns an ``Explorer``: displayed as a cell's output it is the page that
``meshscope serve`` serves (``explorer.app.page``: mesh, drag, cards, tabs), on a state of
its own (``explorer.state.ExplorerState``) loaded from the ``engine.pipeline.Mapped`` of the
notebook. A drag in the output changes that state, and the next cell reads it back
(``explorer.mapped``, ``explorer.evaluation``); a mapping built in a cell goes to the view
with ``explorer.push(mapped)``. ``show_mesh`` is the mesh alone (cards and heatmap) and
``show_sweep`` a latency–load curve, for reports. Everything is a Panel object, so it also
works in a script served by ``panel serve`` or saved with ``.save("page.html")``.

The notebook is the user's own session: any network, hardware or file the user names is
allowed (``ClientAccess.local()``), unlike a served page's clients.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import panel as pn
import param

from engine.errors import SpecError
from engine.pipeline import Mapped
from explorer.access import ClientAccess
from explorer.state import ExplorerState, Prepared

if TYPE_CHECKING:
    from engine.evaluation.cost import Evaluation
    from engine.mapping.assignment import Mapping
    from engine.simulate import SweepResult

__all__ = ["Explorer", "show", "show_mesh", "show_sweep"]

_EXTENSIONS = ("tabulator",)


def _extension() -> None:
    """Panel's notebook extension with what the page needs (once per kernel; in a served
    script Panel's own call wins)."""
    pn.extension(*_EXTENSIONS, notifications=True, inline=True)


def _state(mapped: Mapped) -> ExplorerState:
    """A state of the user's own session, loaded with ``mapped`` as its starting point."""
    if not isinstance(mapped, Mapped):
        raise SpecError(
            "show() takes an engine Mapped (what engine.build_mapping returns), not "
            + type(mapped).__name__
        )
    state = ExplorerState(access=ClientAccess.local())
    state.adopt(_prepared(state, mapped, edit=False))
    return state


def _prepared(state: ExplorerState, mapped: Mapped, *, edit: bool) -> Prepared:
    evaluator = state._make_evaluator(  # noqa: SLF001 - the state's own evaluator recipe
        mapped.network, mapped.hardware, mapped.mapping, mapped.graph
    )
    recipe = mapped.recipe  # how the notebook built it: what the page's subtitle says
    partition = recipe.get("partition")
    specs = {
        "network_spec": mapped.network.name,
        "hardware_spec": mapped.hardware.name,
        "mapping_path": recipe.get("mapping_file"),
        "partition_spec": partition if partition != "given" else None,
        "placer": recipe.get("placement", state.inputs.placer),
    }
    return Prepared(mapped, evaluator, specs, edit=edit, evaluation=evaluator.evaluation())


class Explorer(pn.viewable.Viewer):
    """The full explorer page on one ``Mapped``, bound both ways to the notebook.

    Read ``mapped``, ``mapping`` and ``evaluation`` for what the page shows now (a drag
    changes them); ``push(mapped)`` shows another mapping (of the same network and
    hardware: an undoable edit; of another: a new start). ``state`` is the page's
    ``ExplorerState`` (undo, swaps, searches …, as in ``meshscope serve``)."""

    state = param.ClassSelector(class_=ExplorerState, constant=True)

    def __init__(self, mapped: Mapped, **params):
        _extension()
        super().__init__(state=_state(mapped), **params)
        self._page = None

    @property
    def mapped(self) -> Mapped:
        """The mapping the page shows now, as an ``engine.pipeline.Mapped``."""
        return self.state.mapped()

    @property
    def mapping(self) -> Mapping:
        """The ``engine.mapping.assignment.Mapping`` the page shows now."""
        return self.state.mapping

    @property
    def evaluation(self) -> Evaluation:
        """The model's ``Evaluation`` of the mapping shown now (the latency card's figure)."""
        return self.state.evaluation

    def push(self, mapped: Mapped) -> None:
        """Show ``mapped`` on the page (an edit the page can undo when it maps the network
        and hardware shown, else a new starting point), and send the change to the
        notebook's output."""
        s = self.state
        same = mapped.network is s.network and mapped.hardware is s.hardware
        s.adopt(_prepared(s, mapped, edit=same))
        if self._page is not None:
            pn.io.push_notebook(self._page)

    def __panel__(self):
        if self._page is None:
            from explorer.app import page

            self._page = page(self.state)
            self._steps = _notebook_steps(self.state, self._page)
        return self._page


def _notebook_steps(state: ExplorerState, page):
    """The simulated-step card's background runner, as ``meshscope serve`` starts one per
    page: its results are published on the kernel's event loop, to the output that shows
    the page (``_page.notebook_scheduler``); before the page is shown, on the loop alone."""
    from tornado.ioloop import IOLoop

    from explorer.app import STEP_DELAY_S
    from explorer.step_runner import StepRunner
    from explorer.views._page import notebook_comms, notebook_scheduler

    loop = IOLoop.current()

    def schedule(fn) -> None:
        views = pn.state._views  # noqa: SLF001 - the outputs that show the page
        docs = [views[ref][2] for ref in page._models if ref in views]  # noqa: SLF001
        if not docs:
            loop.add_callback(fn)
            return
        notebook_scheduler(docs[0], notebook_comms(docs[0]), loop)(fn)

    steps = StepRunner(state, schedule, delay=STEP_DELAY_S)
    schedule(steps.request)
    return steps


def show(mapped: Mapped) -> Explorer:
    """The explorer on ``mapped`` (``engine.build_mapping``'s result), for a notebook cell's
    output: every tab of ``meshscope serve``, dragging included, bound to the returned
    ``Explorer`` (``.mapped`` after a drag, ``.push(other)`` to show another)."""
    return Explorer(mapped)


def show_mesh(mapped: Mapped) -> pn.viewable.Viewable:
    """The mesh of ``mapped`` alone — cards, routers, cores, links coloured by load — a
    small view for reports (the explorer's Mesh tab, dragging included)."""
    from explorer.tabs import TABS, TabPage

    _extension()
    mesh = next(tab for tab in TABS if tab.title == "Mesh")
    return mesh.view(_state(mapped), TabPage())


def show_sweep(result: SweepResult) -> pn.viewable.Viewable:
    """A latency–load curve (``engine.sweep_pattern``'s result) drawn as the Traffic tab
    draws its sweep — average latency against offered load, unstable points in red, the
    zero-load latency and the saturation rate marked — with the tab's two sentences."""
    from bokeh.models import ColumnDataSource, Span
    from bokeh.plotting import figure

    from explorer.views._page import style_figure
    from explorer.views.load_curve import curve_sentences
    from explorer.views.traffic_frames import FULL_COLOR

    _extension()
    pts = sorted(result.points, key=lambda p: p["rate"])
    source = ColumnDataSource(
        {
            "rate": [p["offered_flit_rate"] for p in pts],
            "latency": [p["latency_avg"] for p in pts],
            "color": ["#2171b5" if p["stable"] else FULL_COLOR for p in pts],
        }
    )
    b = result.base
    p = figure(
        title=f"{b.pattern} on a {b.width}×{b.height} mesh", width=460, height=280,
        tools="hover,save", toolbar_location=None, y_axis_type="log",
    )  # fmt: skip
    style_figure(p, "offered load (flits/node/cycle)", "packet latency (cycles)")
    p.line("rate", "latency", source=source, line_color="#6b7280")
    p.scatter("rate", "latency", source=source, size=7, fill_color="color", line_color="white")
    p.hover.tooltips = [("offered", "@rate{0.00}"), ("latency", "@latency{0,0.0} cycles")]
    if result.zero_load_latency == result.zero_load_latency:  # (NaN: no stable point)
        p.add_layout(
            Span(location=result.zero_load_latency, dimension="width", line_dash="dashed",
                 line_color="#2171b5")
        )  # fmt: skip
    if result.saturation_rate is not None:
        p.add_layout(
            Span(location=result.saturation_rate, dimension="height", line_dash="dashed",
                 line_color=FULL_COLOR)
        )  # fmt: skip
    first, second = curve_sentences(pts, result.channel_bound)
    return pn.Row(pn.pane.Bokeh(p), pn.pane.HTML(f"{first}<br><br>{second}", width=330))

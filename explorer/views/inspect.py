"""Below the mesh: what the clicked link or core carries, flow by flow.

``InspectView`` shows a ``MeshView``'s ``inspection`` (``state.inspection.link`` /
``core``): the facts (a link's load and busy share; a core's partition, max-affine
terms and memory against every limit) and a table per group of flows — source and
destination layer, partition and core, messages per step, share, hops — heaviest first.
Ticking rows narrows the mesh's highlight to those flows' routes; the table downloads
as CSV. Nothing is shown until something is clicked.
"""

from __future__ import annotations

import io
from html import escape

import pandas as pd
import panel as pn
import param
from bokeh.models import CustomJS
from bokeh.models.widgets.tables import NumberFormatter

from engine.evaluation.flows import core_label
from engine.hardware.routing import ORDER_LABELS, routing_of
from explorer.views._page import LiveHTML, fill_when_shown

__all__ = ["InspectView", "flow_frame"]

MAX_ROWS = 500  # rows a table shows (the heaviest); the CSV has them all
MIN_WIDTH = 380  # px of the flows beside the mesh (a table wider than that scrolls across)

_CSS = """
.ins { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1f2933;
       border-left: 4px solid #1d4ed8; padding: 2px 10px; max-width: 900px; }
.ins .title { font-size: 14px; font-weight: 600; }
.ins .facts { font-size: 12px; color: #4b5563; display: flex; flex-wrap: wrap;
              gap: 2px 18px; margin-top: 3px; }
.ins .facts b { color: #1f2933; font-weight: 600; }
.ins .note { font-size: 12px; color: #6b7280; margin-top: 3px; }
"""


def flow_frame(hardware, layer_names, table) -> pd.DataFrame:
    """A ``FlowTable`` as the columns the page shows (``layer_names``: the network's
    population names; a spike source's flows come from the input port's core), with each
    row's route ("X then Y") where the hardware's routing has more than one."""

    def where(cores):  # (x,y):s, as every caption and tooltip names a core
        return [core_label(hardware, int(c)) for c in cores.tolist()]

    columns = {
        "from layer": [layer_names[k] for k in table.src_pop.tolist()],
        "from core": where(table.src_core),
        "to layer": [layer_names[k] for k in table.dst_pop.tolist()],
        "to core": where(table.dst_core),
        "messages / step": table.messages,
        "share": table.share,
        "hops": table.hops,
    }
    if len(routing_of(hardware).orders) > 1:
        columns["route"] = [ORDER_LABELS[o] for o in table.route.tolist()]
    return pd.DataFrame(columns)


_INTO_VIEW = """
let frames = 0;  // the header's view may be built a few frames later (its first showing)
const into_view = () => {
  const view = [...Bokeh.index.all_views()].find((v) => v.model === cb_obj);
  if (view && view.el.isConnected && view.el.getBoundingClientRect().height > 0)
    view.el.scrollIntoView({block: "nearest", behavior: "smooth"});
  else if (frames++ < 120)
    requestAnimationFrame(into_view);
};
requestAnimationFrame(into_view);
"""


class InspectView(pn.viewable.Viewer):
    """The inspection of a ``MeshView`` (its ``inspection`` parameter), as facts and tables."""

    mesh = param.Parameter(doc="the MeshView whose clicks this explains")

    def __init__(self, **params):
        super().__init__(**params)
        self._header = LiveHTML(css=_CSS, margin=(8, 10, 2, 10))
        self._tables = pn.Column(margin=0)
        self._frames: list[pd.DataFrame] = []
        self._clear = pn.widgets.Button(label="Clear", width=80, margin=(4, 10), description=None)
        self._download = pn.widgets.FileDownload(
            callback=self._csv, filename="flows.csv", label="Flows as CSV", embed=False,
            width=140, margin=(4, 10), variant="outline",
        )  # fmt: skip
        self._clear.on_click(lambda _: self.mesh.clear_inspection())
        # filled at the first inspection; beside the mesh, and kept in view while a tall
        # mesh scrolls (sticky), so a click never needs to scroll the page (issue 57)
        self._layout = pn.Column(
            visible=False, margin=0, min_width=MIN_WIDTH, sizing_mode="stretch_width",
            styles={"position": "sticky", "top": "0", "align-self": "flex-start"},
        )  # fmt: skip
        fill_when_shown(self._layout, [self._header, pn.Row(self._clear, self._download),
                                       self._tables])  # fmt: skip
        self.mesh.param.watch(self._render, "inspection")
        # a click's flows open beside the mesh: bring them into view only if they are not
        # (a window narrower than the mesh and the flows together wraps them below it)
        self._header.model.js_on_change("tags", CustomJS(code=_INTO_VIEW))
        self.mesh.param.watch(self._clicked, "clicks")
        self._render()

    def _clicked(self, event) -> None:
        """Scroll to the flows: a change of the header's ``tags`` runs ``_INTO_VIEW`` in the
        browser — on the session's next tick, since the first click's header is sent with
        this one's changes (a model arriving with its tags set fires nothing)."""

        def tag() -> None:
            self._header.model.tags = [event.new]

        doc = pn.state.curdoc
        if doc is not None and doc.session_context is not None:
            doc.add_next_tick_callback(tag)
        else:
            tag()

    @property
    def tables(self) -> list[pn.widgets.Tabulator]:
        return list(self._tables.objects[1::2])

    def _render(self, *events) -> None:
        ins = self.mesh.inspection
        self._layout.visible = ins is not None
        if ins is None:
            self._tables.objects = []
            self._frames = []
            return
        state = self.mesh.state
        facts = "".join(
            f"<span>{escape(k)} <b>{escape(v)}</b></span>" for k, v in ins.facts.items()
        )
        note = (
            "Tick rows to highlight only their routes."
            if any(len(t) for _, t in ins.tables)
            else "No flow here."
        )
        self._header.object = (
            f'<div class="ins" data-testid="inspect-header"><div class="title">'
            f'{escape(ins.title)}</div><div class="facts">{facts}</div>'
            f'<div class="note">{note}</div></div>'
        )
        objects, frames = [], []
        for t, (caption, table) in enumerate(ins.tables):
            frame = flow_frame(state.hardware, ins.layer_names, table)
            frames.append(frame)
            shown = f"{caption}: {len(frame):,}" + (
                f" (the heaviest {MAX_ROWS} shown)" if len(frame) > MAX_ROWS else ""
            )
            objects.append(pn.pane.HTML(f'<div class="ins note">{escape(shown)}</div>',
                                        stylesheets=[_CSS], margin=(6, 10, 0, 10)))  # fmt: skip
            widget = pn.widgets.Tabulator(
                frame.head(MAX_ROWS), selectable="checkbox", disabled=True, show_index=False,
                height=min(300, 36 + 30 * min(len(frame), MAX_ROWS)),
                min_width=MIN_WIDTH - 20, sizing_mode="stretch_width",
                layout="fit_data_table", margin=(2, 10),
                formatters={
                    "messages / step": NumberFormatter(format="0,0.0"),
                    "share": NumberFormatter(format="0.0%"),
                },
                text_align={"messages / step": "right", "hops": "right"},
            )  # fmt: skip
            widget.param.watch(lambda e, t=t: self._selected(t, e.new), "selection")
            objects.append(widget)
        self._frames = frames
        self._tables.objects = objects

    def _selected(self, table: int, rows: list[int]) -> None:
        ins = self.mesh.inspection
        if ins is None:
            return
        self.mesh.highlight(ins.route_ids(table, rows) if rows else ins.route_ids())

    def select(self, table: int, rows: list[int]) -> None:
        """Tick ``rows`` of table ``table`` (what a click on their boxes does)."""
        self.tables[table].selection = list(rows)

    def _csv(self) -> io.StringIO:
        ins = self.mesh.inspection
        out = io.StringIO()
        for (caption, _), frame in zip(ins.tables if ins else [], self._frames, strict=False):
            frame.assign(flows=caption).to_csv(out, index=False, header=out.tell() == 0)
        out.seek(0)
        return out

    def __panel__(self):
        return self._layout

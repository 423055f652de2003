"""Walk one packet of the Traffic tab's run: its X-then-Y route hop by hop, each router's
pipeline stages, and why it waited where it waited (``engine.simulate.walk``).

A person names a source and a destination — a router as ``x,y`` (any of its cores) or a
core as ``(x,y):s``, in the mesh's coordinates — and which of the packets between them to
follow (the slowest by default; after a run the fields hold the run's slowest packet). The
walk is simulated again in the background (the same seeded run, the packet tracked); the
tab then draws the route on its mesh, a dot per router sized by the wait there, moves the
player to the window of the longest wait, and lists the hops with their stage cycles.

``hop_table`` is a plain function, tested without a browser.
"""

from __future__ import annotations

import threading
from html import escape

import numpy as np
import panel as pn

from engine.errors import SpecError, failure_text
from engine.simulate.walk import CHOICES, PacketWalk, endpoint_text, terminals_at
from explorer.views._page import FONT, LiveHTML, notify_error, session_scheduler

__all__ = ["WalkView", "hop_table"]

_CSS = f"""
.walk {{ font-family: {FONT}; font-size: 13px; color: #374151; line-height: 1.45; }}
.walk .muted {{ color: #6b7280; }}
table.hops {{ border-collapse: collapse; font-variant-numeric: tabular-nums; margin-top: 4px; }}
table.hops td, table.hops th {{ padding: 2px 8px; text-align: right;
  border-bottom: 1px solid #e5e7eb; vertical-align: top; }}
table.hops th {{ color: #4b5563; font-weight: 600; }}
table.hops td.why, table.hops th.why {{ text-align: left; max-width: 420px; }}
table.hops td.wait {{ color: #b45309; font-weight: 600; }}
"""


def hop_table(walk: PacketWalk) -> str:
    """The hops as an HTML table: where it came from and went, the cycle of each stage, and
    the cycles it waited there with why."""
    head = (
        "<tr><th>router</th><th>from</th><th>to</th><th>arrived</th><th>route ready</th>"
        "<th>VC won</th><th>head left</th><th>tail left</th><th>waited</th>"
        "<th class='why'>why</th></tr>"
    )
    rows = []
    for h in walk.hops:
        wait_class = " class='wait'" if h.waited else ""
        rows.append(
            f"<tr><td>({h.router[0]},{h.router[1]})</td><td>{h.came_from}</td><td>{h.out}</td>"
            f"<td>{h.arrive:,}</td><td>{h.ready:,}</td><td>{h.vc_won:,}</td>"
            f"<td>{h.head_out:,}</td><td>{h.tail_out:,}</td><td{wait_class}>{h.waited:,}</td>"
            f"<td class='why'>{escape('; '.join(h.reasons()) or '—')}</td></tr>"
        )
    caption = (
        f"cycles of the run; alone, a head leaves a router {walk.pipeline} cycle"
        f"{'s' if walk.pipeline != 1 else ''} after it arrives (routing, VC and switch "
        "allocation), then crosses the switch and the link"
    )
    return (
        f"<table class='hops' data-testid='walk-hops'><caption class='muted' "
        f"style='text-align:left'>{caption}</caption>{head}{''.join(rows)}</table>"
    )


class WalkView(pn.viewable.Viewer):
    """The "walk one packet" controls and report of a ``TrafficView``."""

    def __init__(self, traffic, **params):
        super().__init__(**params)
        self.traffic = traffic
        self._doc = pn.state.curdoc if pn.state.curdoc and pn.state.curdoc.session_context else None
        self._schedule = session_scheduler(self._doc)
        self.source = pn.widgets.TextInput(label="from", placeholder="(x,y) or (x,y):s", width=110)
        self.destination = pn.widgets.TextInput(label="to", placeholder="(x,y) or (x,y):s",
                                                width=110)  # fmt: skip
        self.which = pn.widgets.Select(label="which packet", options=list(CHOICES), width=100)
        self.button = pn.widgets.Button(label="Walk", width=80, disabled=True, margin=(22, 5))
        self.button.on_click(self._on_walk)
        self.report = LiveHTML(
            "<span class='muted'>Simulate, then walk one packet: its route router by router, "
            "the cycle of each pipeline stage, and why it waited where it waited.</span>",
            css=_CSS, div_params={"css_classes": ["walk"], "width": 820}, width=820,
        )  # fmt: skip
        self.walk: PacketWalk | None = None
        self._busy = False

    def reset(self, run) -> None:
        """A new run: its slowest packet's ends in the fields, the report cleared."""
        self.walk = None
        self.button.disabled = run.walker is None
        packets = run.trace.packets
        if packets["src"].size:
            j = int(np.argmax(packets["atime"] - packets["ctime"]))
            self.source.value = endpoint_text(run.hardware, int(packets["src"][j]))
            self.destination.value = endpoint_text(run.hardware, int(packets["dst"][j]))
            self.which.value = "slowest"
        self.report.object = (
            "<span class='muted'>The fields hold the run's slowest packet; Walk follows it "
            "(or name another source and destination).</span>"
        )

    def _on_walk(self, event=None) -> None:
        run = self.traffic.run
        if run is None or run.walker is None or self._busy:
            return
        try:
            src = terminals_at(run.hardware, self.source.value)
            dst = terminals_at(run.hardware, self.destination.value)
        except SpecError as e:
            notify_error(str(e))
            return
        self._busy = True
        self.button.disabled = True
        self.report.object = "<span class='muted'>walking…</span>"
        if self._doc is None:  # no page (tests): at once
            self._walk(run, src, dst, self.which.value)
            return
        threading.Thread(
            target=self._walk, args=(run, src, dst, self.which.value),
            name="meshscope-walk", daemon=True,
        ).start()  # fmt: skip

    def _walk(self, run, src, dst, which) -> None:
        try:
            walk = run.walker(src, dst, which)
        except Exception as e:  # noqa: BLE001 - a page must hear of any failure
            message = failure_text(e, "the walk")
            self._schedule(lambda: self._failed(message))
            return
        self._schedule(lambda: self.show(walk, run))

    def _failed(self, message: str) -> None:
        self._busy = False
        self.button.disabled = False
        self.report.object = ""
        notify_error(message)

    def show(self, walk: PacketWalk, run) -> None:
        """Report ``walk`` and draw it on the tab's mesh (when ``run`` is still shown)."""
        self._busy = False
        self.button.disabled = False
        if run is not self.traffic.run:  # a newer run came meanwhile: this walk is not its
            return
        self.walk = walk
        hw = run.hardware
        title = (
            f"The {walk.choice} of {walk.candidates:,} packet{'s' if walk.candidates != 1 else ''}"
            f" from ({endpoint_text(hw, walk.src)}) to ({endpoint_text(hw, walk.dst)})"
        )
        at = ""
        cycle = self.traffic.show_walk(walk)
        if cycle is not None:
            at = (
                f" <span class='muted'>The mesh shows the window of its longest wait "
                f"(cycle {cycle:,}); its route is drawn in green, a dot per router sized by "
                "the wait there.</span>"
            )
        sentences = " ".join(escape(s) for s in walk.sentences())
        self.report.object = (
            f"<div data-testid='walk-report'><b>{escape(title)}</b>. {sentences}{at}"
            f"{hop_table(walk)}</div>"
        )

    def __panel__(self):
        return pn.Column(
            pn.pane.Markdown("**Walk one packet**", margin=(10, 5, 0, 5)),
            pn.Row(self.source, self.destination, self.which, self.button, margin=0),
            self.report,
            margin=0,
        )

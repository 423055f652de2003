"""What every view of the page shares: fonts and plot style, live HTML, notifications,
and the two ways a reaction reaches the browser safely.

* ``run_action`` calls a state action and turns a ``MeshScopeError`` into an error
  notification; the state leaves itself unchanged, so nothing else is needed.
* ``on_page`` runs a view's reaction on the session document's next tick, where Bokeh
  holds the document lock: Panel may call a widget's handler without it (a number typed,
  then a button clicked at once), and Bokeh refuses changes to raw models then.
  ``session_scheduler`` does the same for a worker thread (search, simulated step,
  Traffic run and sweep), through the server's event loop so its calls keep their order.
  Without a session (tests), both just call.
* ``off_page`` runs long work a page asked for (partitioning and placing a network) in a
  worker thread, then its result on the page: the server's event loop answers every page
  and every request, so nothing a client asks may hold it.
"""

from __future__ import annotations

import contextlib
import functools
import html as html_text
import logging
import threading
from collections.abc import Callable

import numpy as np
import panel as pn
from bokeh.models import InlineStyleSheet
from panel.io.state import set_curdoc
from panel.models import markup as panel_markup
from tornado.ioloop import IOLoop

from engine.errors import MeshScopeError, failure_text

__all__ = [
    "ERROR_DURATION_MS",
    "Extent",
    "FONT",
    "ICONS",
    "LiveHTML",
    "fill_when_shown",
    "in_document",
    "keep_tools",
    "notify_error",
    "notify_when_up",
    "off_page",
    "on_page",
    "run_action",
    "fit_range",
    "session_scheduler",
    "style_figure",
]

FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif'
ERROR_DURATION_MS = 10_000  # long enough to read a two-line message

log = logging.getLogger(__name__)

# Button icons as inline SVG: a named (Tabler) icon makes the browser fetch a web font from a
# CDN, which an air-gapped lab cannot reach; these travel with the page.
_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24" '
    'fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" '
    'stroke-linejoin="round">{}</svg>'
)
ICONS = {
    "play": _SVG.format('<path d="M7 4v16l13 -8z" fill="currentColor"/>'),
    "stop": _SVG.format('<rect x="5" y="5" width="14" height="14" rx="2"/>'),
    "check": _SVG.format('<path d="M5 12l5 5l10 -10"/>'),
}


# ------------------------------------------------------------------ look
def legend_and_colour_bar(p, location: str, mapper, title: str):
    """The page's quiet legend at ``location`` and a colour bar of ``mapper`` on the right;
    returns the bar (its title follows what it shows)."""
    from bokeh.models import ColorBar

    p.legend.location = location
    p.legend.label_text_font_size = "12px"
    p.legend.background_fill_alpha = 0.85
    p.legend.border_line_color = None
    bar = ColorBar(
        color_mapper=mapper, title=title, title_text_font_size="12px",
        title_text_font_style="normal", width=12, major_label_text_font_size="11px",
        bar_line_color=None, padding=8,
    )  # fmt: skip
    p.add_layout(bar, "right")
    return bar


class Extent:
    """The smallest and largest finite value seen so far (of a streamed column)."""

    def __init__(self):
        self.reset()

    def reset(self) -> None:
        self.lo, self.hi = np.inf, -np.inf

    def add(self, values) -> Extent:
        v = np.asarray(values, dtype=float).ravel()
        v = v[np.isfinite(v)]
        if v.size:
            self.lo, self.hi = min(self.lo, float(v.min())), max(self.hi, float(v.max()))
        return self

    def __or__(self, values) -> Extent:
        """A new extent over this one and ``values``."""
        out = Extent()
        out.lo, out.hi = self.lo, self.hi
        return out.add(values)


def fit_range(rng, extent: Extent, padding: float = 0.08) -> None:
    """Set a ``Range1d`` (and what Reset returns to) to ``extent``, padded by ``padding`` of
    its span (a single value: ±5 % of it); left as it is while ``extent`` is empty.

    For plots whose data may be empty (before a search): Bokeh's ``DataRange1d`` cannot
    fit no data, and logs "could not set initial ranges" on every layout."""
    lo, hi = extent.lo, extent.hi
    if not lo <= hi:
        return
    pad = padding * (hi - lo) if hi > lo else (0.05 * abs(lo) or 1.0)
    start, end = lo - pad, hi + pad
    rng.update(start=start, end=end, reset_start=start, reset_end=end)


def keep_tools(p) -> None:
    """Leave ``p``'s active tools as its toolbar shows them: by default (``"auto"``) Bokeh
    turns its wheel zoom on when the plot is clicked, so the wheel that scrolled the page
    zoomed the plot instead once a link or a point had been clicked (issue 57). The wheel
    zooms only when its tool is chosen on the toolbar."""
    p.toolbar.active_scroll = None


def style_figure(p, x_label: str, y_label: str) -> None:
    """Quiet axes, labels and grid in the page's font; a click changes no tool
    (``keep_tools``)."""
    keep_tools(p)
    p.toolbar.logo = None
    p.title.text_font_size = "14px"
    p.title.text_color = "#374151"
    p.title.text_font = FONT
    p.xaxis.axis_label, p.yaxis.axis_label = x_label, y_label
    for axis in (p.xaxis, p.yaxis):
        axis.axis_label_text_font_style = "normal"
        axis.axis_label_text_color = "#4b5563"
        axis.axis_label_text_font = FONT
        axis.major_label_text_color = "#6b7280"
        axis.axis_line_color = "#9ca3af"
    p.grid.grid_line_color = "#eceff3"
    p.outline_line_color = None


class LiveHTML(pn.viewable.Viewer):
    """HTML that changes often: Panel's ``HTML`` model in a ``pn.pane.Bokeh``, updated in
    place.

    Set ``.object`` to new markup; only a changed text is sent. A ``pn.pane.HTML`` re-sends
    its stylesheets on each change, and Bokeh then walks the whole document (~10–60 ms a
    pane, on the server); a Bokeh ``Div`` sends only its text but re-renders itself and
    lays out the whole page again in the browser (~40 ms on an eight-chip board, per
    change); Panel's model writes the new markup into its element and nothing else (no
    scripts run, no TeX looked for). The markup travels escaped (the model decodes it).
    Change it on the session's document thread (a widget or Bokeh callback, or a
    scheduled callback).
    """

    def __init__(self, html: str = "", *, css: str = "", div_params=None, **pane_params):
        super().__init__()
        self._html = html
        self.model = panel_markup.HTML(
            text=html_text.escape(html), run_scripts=False, disable_math=True,
            stylesheets=[InlineStyleSheet(css=css)] if css else [], **(div_params or {}),
        )  # fmt: skip
        self._pane = pn.pane.Bokeh(self.model, **pane_params)

    @property
    def object(self) -> str:
        return self._html

    @object.setter
    def object(self, html: str) -> None:
        if html != self._html:
            self._html = html
            self.model.text = html_text.escape(html)

    def __panel__(self):
        return self._pane


def fill_when_shown(layout, objects) -> None:
    """Put ``objects`` into ``layout`` once it is visible, the first time it is: a part of
    the page that starts hidden costs no Bokeh models until it is needed (a widget is two
    or three of them, built and sent with every page). Until then the layout holds an empty
    ``pn.Spacer`` (Bokeh warns of a layout without children on every page)."""
    if layout.visible:
        layout.objects = list(objects)
        return
    layout.objects = [pn.Spacer(width=0, height=0, margin=0)]

    def shown(event) -> None:
        if event.new:
            layout.param.unwatch(watcher)
            layout.objects = list(objects)

    watcher = layout.param.watch(shown, "visible")


# ------------------------------------------------------------------ errors
def notify_error(message: str, notify: Callable[[str], None] | None = None) -> None:
    """Show ``message`` as an error notification (or hand it to ``notify``).

    A notification is text, never markup: messages quote what a client sent (a name typed
    in a box, a field of a scene, a file's name), and the browser would parse it as HTML —
    so it is escaped here, the one way text reaches a notification."""
    message = " ".join(str(message).split())
    if notify is not None:
        notify(message)
        return
    area = pn.state.notifications
    if area is None:  # no page (a test without a server): the log is all there is
        log.warning("%s", message)
        return
    area.error(html_text.escape(message), duration=ERROR_DURATION_MS)


def notify_info(message: str, notify: Callable[[str], None] | None = None) -> None:
    """Tell the user ``message`` — something changed beside what they asked, not an error —
    as an information notification (or hand it to ``notify``)."""
    message = " ".join(str(message).split())
    if notify is not None:
        notify(message)
        return
    area = pn.state.notifications
    if area is None:
        log.info("%s", message)
        return
    area.info(html_text.escape(message), duration=ERROR_DURATION_MS)  # text (notify_error)


def notify_when_up(message: str) -> None:
    """``notify_error(message)`` once the page is up: a notification made while a page is
    being built, or before its browser has connected, would be lost."""
    if _session_document() is not None and not pn.state.loaded:
        pn.state.onload(lambda: notify_error(message))
    else:
        notify_error(message)


def run_action(action: Callable, *args, notify: Callable[[str], None] | None = None, **kwargs):
    """Call ``action``; a ``MeshScopeError`` becomes a notification. Returns success.

    On a page, the changes the action causes are held and sent as one message
    (``pn.io.hold``), which also makes them safe where Panel runs a handler without the
    document lock: held, Panel writes them itself.
    """
    with pn.io.hold():
        try:
            action(*args, **kwargs)
        except MeshScopeError as e:
            notify_error(str(e), notify)
            return False
    return True


# ------------------------------------------------------------------ the document thread
def session_scheduler(doc) -> Callable[[Callable[[], None]], None]:
    """A ``schedule``: run on ``doc``'s next tick, or at once without a document.

    It hands each call to the event loop of the server that holds the document's session
    (tornado's ``add_callback``, safe from any thread and first in, first out), which
    then adds it as the document's next-tick callback. Adding it from a worker thread
    directly raced with Panel's holds of the document, which collect the callback's
    registration as an event: a sweep's publications were seen to run out of order and
    one to vanish. A document whose session has gone drops the call.
    """
    if doc is None:
        return lambda fn: fn()

    def add(fn: Callable[[], None]) -> None:
        with contextlib.suppress(Exception):  # the session closed under a running search
            doc.add_next_tick_callback(fn)

    loop = _document_loop(doc)
    if loop is None:
        comms = notebook_comms(doc)
        if comms:  # a notebook's output: the kernel's loop, then the output's comm
            return notebook_scheduler(doc, comms)
        return add  # not a server's session: the document's own method
    return lambda fn: loop.add_callback(add, fn)


def notebook_comms(doc) -> list:
    """The comms of the notebook outputs that show ``doc`` (Panel's table of them)."""
    views = pn.state._views  # noqa: SLF001 - what pn.io.push_notebook reads too
    return [comm for _, _, d, comm in list(views.values()) if d is doc and comm is not None]


def notebook_scheduler(
    doc, comms, loop: IOLoop | None = None
) -> Callable[[Callable[[], None]], None]:
    """A ``schedule`` for a notebook's output: the call runs on the kernel's event loop (the
    one that runs the cells and the output's messages; tornado's ``add_callback``, safe
    from any thread) with ``doc`` current and held, and what it changed goes to the output
    (``panel.io.notebook.push``). A notebook's document has no next tick: added there, the
    call never ran; run without the hold, its changes stayed held and the next drag's reply
    never reached the browser. ``loop``: the kernel's (default: this thread's)."""
    from panel.io.notebook import push

    loop = loop or IOLoop.current()

    def run(fn: Callable[[], None]) -> None:
        with set_curdoc(doc), pn.io.hold(doc):
            fn()
        for comm in comms:
            push(doc, comm)

    return lambda fn: loop.add_callback(run, fn)


def off_page(
    doc,
    work: Callable[[], object],
    done: Callable[[object], None],
    failed: Callable[[str], None],
    *,
    what: str,
    name: str = "meshscope-work",
    turn: Callable[[], contextlib.AbstractContextManager] | None = None,
) -> None:
    """``work()`` in a daemon thread, then ``done(its value)`` — or ``failed(message)`` if
    it raised (a ``MeshScopeError``'s text, else ``failure_text`` of ``what``) — on
    ``doc``'s thread (``session_scheduler``). The server's event loop answers every page
    and every request (a plain GET too), so a page's long work never runs on it. Without
    a document (tests, the Python API) all of it happens at once, in this thread.
    ``turn``: a place in the server's admission to hold while ``work`` runs
    (``Gate.turn``), waited for in the thread."""
    schedule = session_scheduler(doc)

    def run() -> None:
        try:
            with turn() if turn is not None else contextlib.nullcontext():
                value = work()
        except Exception as e:  # noqa: BLE001 - a page must hear of any failure
            message = failure_text(e, what)
            schedule(lambda: failed(message))
            return
        schedule(lambda: done(value))

    if doc is None:
        run()
    else:
        threading.Thread(target=run, name=name, daemon=True).start()


def _document_loop(doc) -> IOLoop | None:
    """The event loop of the server that holds ``doc``'s session (None: no server)."""
    try:
        return doc.session_context.server_context.application_context.io_loop
    except AttributeError:
        return None


def _session_document():
    doc = pn.state.curdoc
    return doc if doc is not None and doc.session_context is not None else None


def in_document(model, fn: Callable, *args):
    """Run ``fn(*args)`` for a raw Bokeh callback of ``model``: with its document current
    (Bokeh calls without Panel's current document, and Panel would defer its updates to the
    next tick) and held, so every change goes to the browser in one message instead of one
    each (one repaint). Without a document (tests) it just calls."""
    doc = model.document
    if doc is None:
        return fn(*args)
    with set_curdoc(doc), pn.io.hold(doc):
        return fn(*args)


def on_page(method: Callable) -> Callable:
    """Run a view's reaction on the session document's next tick (at once without one)."""

    @functools.wraps(method)
    def run(*args, **kwargs) -> None:
        session_scheduler(_session_document())(functools.partial(method, *args, **kwargs))

    return run

"""The explorer page and ``meshscope serve``.

``build_app`` makes one session's page: an ``ExplorerState`` (restored from the page's
``?session=`` token after a reload, else loaded from the specs), then the views that
watch it: the header, the sidebar controls and the tabs. Every Bokeh and Panel object is
built inside it, per session; nothing UI-related lives at module level. A bad spec or
mapping file gives a page that says what is wrong instead of a traceback.

A hand-tuned mapping survives a reload: each session gets its own token, kept in the
page URL, and a process-level ``SnapshotStore`` keeps token → ``state.snapshot()`` up to
date on every change of ``state.shown.revision``. A session opened with a token starts from a
copy of that snapshot under a new token of its own, so two pages never share a state.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import secrets
import socket
import threading
from collections import OrderedDict
from html import escape

import panel as pn

from engine.errors import MeshScopeError, SpecError
from engine.hardware import NocConstants
from engine.simulate import SyntheticRun, run_synthetic
from explorer.access import ClientAccess, ClientLimits, message_bytes
from explorer.admission import Admission, ServerBudget
from explorer.compat import release_notifications, send_without_delay
from explorer.scenes import Scene, scene_from_arg
from explorer.serving import start_server
from explorer.state import ExplorerState
from explorer.step_runner import StepRunner
from explorer.tabs import TABS, TabPage
from explorer.traffic_runner import SOURCES
from explorer.views._page import LiveHTML, notify_error, session_scheduler
from explorer.views.controls import ControlsView

__all__ = [
    "SESSION_ARG",
    "TITLE",
    "SnapshotStore",
    "build_app",
    "lazy_tabs",
    "page",
    "serve",
    "settle_heap",
    "session_state",
    "websocket_origins",
]

TITLE = "MeshScope"
SESSION_ARG = "session"  # the URL query parameter that carries a session's token
SCENE_ARG = "scene"  # … and the one that names a scene for the Traffic tab
STEP_DELAY_S = 0.15  # a simulated step starts this long after a change: the redraw goes first
RELEASE_AFTER_S = 1.0  # a closed session's memory is collected this long after it is destroyed

_HEADER_CSS = """
.ms-header { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
             color: #1f2933; display: flex; align-items: baseline; gap: 18px;
             flex-wrap: wrap; }
.ms-header .brand { font-size: 22px; font-weight: 700; letter-spacing: .01em; }
.ms-header .brand span { color: #e6550d; }
.ms-header .what { font-size: 14px; color: #4b5563; }
.ms-header .what b { color: #1f2933; }
"""

_PAGE_CSS = """
:host { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
"""


# ------------------------------------------------------------------ sessions
class SnapshotStore:
    """Token → the latest ``ExplorerState.snapshot()`` of that session, for reloads.

    Process-level and thread-safe; it keeps the ``limit`` most recently written tokens.
    """

    def __init__(self, limit: int = 256):
        self.limit = limit
        self._snapshots: OrderedDict[str, dict] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def new_token() -> str:
        return secrets.token_urlsafe(9)

    def put(self, token: str, snapshot: dict) -> None:
        with self._lock:
            self._snapshots[token] = snapshot
            self._snapshots.move_to_end(token)
            while len(self._snapshots) > self.limit:
                self._snapshots.popitem(last=False)

    def get(self, token: str | None) -> dict | None:
        with self._lock:
            return self._snapshots.get(token) if token else None

    def __len__(self) -> int:
        return len(self._snapshots)


# shared by every session of the process (a reload may open on another session): the 256
# tokens written last, a snapshot each (specs and two mappings as JSON-able dicts)
SNAPSHOTS = SnapshotStore()


def session_state(
    network: str | None,
    hardware: str | None,
    mapping: str | None = None,
    *,
    token: str | None = None,
    store: SnapshotStore = SNAPSHOTS,
    access: ClientAccess | None = None,
) -> tuple[ExplorerState, str]:
    """A new session's state and its own token, kept in ``store`` from now on.

    With the token of a stored snapshot the state restores it (a reload); otherwise,
    or when the snapshot no longer resolves, it loads the specs (raises
    ``MeshScopeError`` if they do not resolve). ``access``: what the session's client may
    ask for (default: a server's client, the specs trusted as start-up ones).
    """
    access = access or ClientAccess.for_server((network, hardware, mapping))
    state = None
    snap = store.get(token)
    if snap is not None:
        candidate = ExplorerState(access=access)
        with contextlib.suppress(MeshScopeError):
            candidate.restore(snap)
            state = candidate
    if state is None:
        state = ExplorerState.from_specs(network, hardware, mapping, access=access)
    own = store.new_token()
    store.put(own, state.snapshot())
    state.shown.param.watch(lambda _: store.put(own, state.snapshot()), "revision")
    return state, own


def _session_and_client() -> tuple[str, str]:
    """The page's Bokeh session id and its browser's address (whom a per-client cap counts)."""
    context = pn.state.curdoc.session_context if pn.state.curdoc else None
    if context is None:
        return "", ""
    request = getattr(context, "request", None)
    return str(context.id), str(getattr(request, "remote_ip", "") or "")


def _token_from_request() -> str | None:
    values = pn.state.session_args.get(SESSION_ARG) if pn.state.curdoc else None
    return values[0].decode(errors="replace") if values else None


def _when_page_is_up(token: str, state: ExplorerState) -> None:
    """Once the page is connected: show the session's token in the address bar (no
    reload), make its websocket send small frames at once, and simulate the shown
    mapping's step in the background from now on; once it is closed, let go of what
    Panel would keep of it, and hand its memory back (``Gate.closed``)."""
    doc = pn.state.curdoc
    if doc is None or doc.session_context is None:
        return
    steps = StepRunner(state, session_scheduler(doc), delay=STEP_DELAY_S)

    def closed(session_context):
        steps.close()
        release_notifications(session_context)
        # once Bokeh has let go of the document: collect it, return its pages to the system
        threading.Timer(RELEASE_AFTER_S, state.gate.closed).start()

    doc.on_session_destroyed(closed)

    def up():
        send_without_delay(doc)
        location = pn.state.location
        if location is not None:
            location.update_query(**{SESSION_ARG: token})
        steps.request()

    pn.state.onload(up)


# ------------------------------------------------------------------ page parts
def _header(state: ExplorerState) -> LiveHTML:
    pane = LiveHTML(css=_HEADER_CSS, margin=(8, 12, 4, 12))

    def refresh(*_):
        pane.object = (
            f'<div class="ms-header"><div class="brand">Mesh<span>Scope</span></div>'
            f'<div class="what" data-testid="subtitle">{_subtitle(state)}</div></div>'
        )

    refresh()
    state.watch(refresh, inputs=["network", "hardware", "mapping_path"], shown=["mapping"])
    return pane


def _subtitle(state: ExplorerState) -> str:
    net, hw, mapping = state.network, state.hardware, state.mapping
    how = (
        f"from mapping file <b>{escape(state.inputs.mapping_path)}</b>"
        if state.inputs.mapping_path
        else f"{escape(state.inputs.partition_spec or 'default')} partition, started from "
        f"<b>{escape(state.inputs.placer)}</b> placement"
    )
    return (
        f"<b>{escape(net.name)}</b> ({net.neuron_count_text()}, {net.n_populations} populations)"
        f" on <b>{escape(hw.name)}</b> ({hw.grid_width}×{hw.grid_height} routers, "
        f"{hw.cores_per_router} core{'s' if hw.cores_per_router > 1 else ''} each)"
        f" · {mapping.partition.n_parts} partitions · {how}"
    )


def _error_page(error: MeshScopeError, network, hardware, mapping) -> pn.Column:
    asked = " ".join(
        f"--{flag} {value}"
        for flag, value in (("network", network), ("hardware", hardware), ("mapping", mapping))
        if value
    )
    message = pn.pane.Alert(  # Markdown: the message escaped, the specs in a code span
        f"**Cannot open this mapping.** {escape(' '.join(str(error).split()), quote=False)}\n\n"
        f"Asked for: `meshscope serve {asked.replace('`', chr(39))}`. "
        "Run `meshscope list` to see the networks and hardware MeshScope knows; "
        "`meshscope evaluate` with the same options shows the same problem.",
        alert_type="danger",
        css_classes=["ms-error"],
        margin=(10, 10),
        width=760,
    )
    header = pn.pane.HTML(
        '<div class="ms-header"><div class="brand">Mesh<span>Scope</span></div>'
        '<div class="what">nothing to show</div></div>',
        stylesheets=[_HEADER_CSS],
        margin=(8, 12, 4, 12),
    )
    return pn.Column(header, message)


def tabs(
    state: ExplorerState, scene: Scene | None = None, on_traffic=None
) -> list[tuple[str, object]]:
    """The page's tabs (``explorer.tabs.TABS``), (title, viewable or a function that builds
    it), in order; the first comes built, the others are built when first shown
    (``lazy_tabs``). ``scene``: one for the Traffic tab to load when it is built;
    ``on_traffic``: called with the Traffic tab's view once it is built."""

    def built(title: str, view) -> None:
        if title == "Traffic" and on_traffic is not None:
            on_traffic(view.traffic)  # (a TrafficTab: the run's view, beside its scenes)

    page = TabPage(scene=scene, on_built=built)
    first, *rest = TABS
    return [(first.title, first.view(state, page))] + [
        (tab.title, functools.partial(tab.view, state, page)) for tab in rest
    ]


SYNTHETIC_ASIDE = (
    "The Traffic tab's synthetic pattern runs on a mesh of its own: the network, hardware "
    "and mapping below play no part in it."
)


def _sidebar_follows_traffic(
    controls: ControlsView, page_tabs: pn.Tabs, traffic_at: int, views: list
) -> None:
    """The sidebar says it is set aside while the Traffic tab, shown, runs a synthetic
    pattern (which uses none of it). ``views``: the list the Traffic tab's view is put in
    when it is built (``tabs``' ``on_traffic``; with a scene, before this is called)."""
    watched = []

    def update(*events) -> None:
        for view in views[len(watched) :]:  # built since: its source is followed too
            view.param.watch(update, "source")
            watched.append(view)
        synthetic = page_tabs.active == traffic_at and any(
            view.source == SOURCES[1] for view in views
        )
        controls.aside = SYNTHETIC_ASIDE if synthetic else ""

    page_tabs.param.watch(update, "active")
    update()


def lazy_tabs(entries: list[tuple[str, object]], active: int = 0, **params) -> pn.Tabs:
    """``pn.Tabs`` of ``entries`` (``tabs``) in which a function's view is built the first
    time its tab is shown, not with the page; until then the tab holds a ``pn.Spacer``
    (a lazy ``pn.param.ParamFunction`` per tab cost 5 ms apiece, on every page)."""
    builders, objects = {}, []
    titles = [title for title, _ in entries]
    for i, (title, view) in enumerate(entries):
        if callable(view) and i != active:
            builders[i], view = view, pn.Spacer()
        elif callable(view):
            view = view()
        objects.append((title, view))
    page_tabs = pn.Tabs(*objects, active=active, dynamic=True, **params)

    def shown(event) -> None:
        build = builders.pop(event.new, None)
        if build is not None:
            page_tabs[event.new] = (titles[event.new], build())

    page_tabs.param.watch(shown, "active")  # (a page's change of tab: one message still)
    return page_tabs


def _scene_from_request() -> tuple[Scene | None, str]:
    """The scene the page's ``?scene=`` names, and why it cannot be read ('' if it can)."""
    values = pn.state.session_args.get(SCENE_ARG) if pn.state.curdoc else None
    if not values:
        return None, ""
    try:
        return scene_from_arg(values[0].decode(errors="replace")), ""
    except MeshScopeError as e:
        return None, f"The link's scene cannot be read: {e}"


def build_app(
    network: str | None,
    hardware: str | None,
    mapping: str | None = None,
    *,
    token: str | None = None,
    access: ClientAccess | None = None,
    admission: Admission | None = None,
):
    """One session's page for a network spec, hardware spec and optional mapping file.

    ``token``: a session token to restore (default: the page URL's ``?session=``);
    ``access``: what the page's client may ask for (``session_state``); ``admission``: the
    server's, through which the session's heavy work waits its turn (None: none waits).
    """
    pn.extension("tabulator", notifications=True)
    try:
        state, own = session_state(
            network, hardware, mapping, token=token or _token_from_request(), access=access
        )
    except MeshScopeError as e:
        return _error_page(e, network, hardware, mapping)
    if admission is not None:
        state.gate = admission.gate(*_session_and_client())
    _when_page_is_up(own, state)
    scene, problem = _scene_from_request()
    if problem:
        pn.state.onload(lambda: notify_error(problem))
    return page(state, scene)


def page(state: ExplorerState, scene: Scene | None = None) -> pn.Column:
    """The page of a loaded ``state``: header, sidebar controls and tabs (with ``scene``: the
    Traffic tab open on it). ``build_app`` serves it; ``explorer.notebook`` shows it in a
    notebook, so both are one page."""
    controls = ControlsView(state=state)
    traffic_views: list = []  # the Traffic tab's view, once built (with a scene: at once)
    entries = tabs(state, scene, on_traffic=traffic_views.append)
    traffic_at = [title for title, _ in entries].index("Traffic")
    page_tabs = lazy_tabs(
        entries, active=traffic_at if scene is not None else 0, margin=(0, 10),
        sizing_mode="stretch_width",
    )  # fmt: skip
    _sidebar_follows_traffic(controls, page_tabs, traffic_at, traffic_views)
    return pn.Column(
        _header(state),
        pn.Row(
            controls,
            page_tabs,
            margin=0,
            sizing_mode="stretch_width",  # a tab's panels wrap to the window's width
        ),
        stylesheets=[_PAGE_CSS],
        margin=0,
    )


def websocket_origins(address: str, port: int, allow: tuple[str, ...] = ()) -> list[str]:
    """The origins whose pages may open the session's websocket.

    Bokeh's default allows only ``localhost:port``, which rejects a browser that opened
    ``127.0.0.1:port``; so the listening address, localhost and 127.0.0.1 on that port are
    allowed, plus the ``allow`` ones (``--allow-origin``). Listening on every interface (to
    show the explorer in a lecture room) allows exactly the ``allow`` ones, which must be
    named: a page of any other site must not be able to drive the server.
    """
    if address in ("", "0.0.0.0", "::"):
        if not allow:
            raise SpecError(
                f"--address {address or '0.0.0.0'} lets other machines reach the explorer: name "
                "the address their browsers will use with --allow-origin HOST:PORT (e.g. "
                f"--allow-origin {socket.gethostname()}:{port}); the server has no login, "
                "see the README"
            )
        return list(dict.fromkeys(allow))
    return list(
        dict.fromkeys([f"{address}:{port}", f"localhost:{port}", f"127.0.0.1:{port}", *allow])
    )


def serve(
    network: str | None,
    hardware: str | None,
    mapping: str | None = None,
    port: int = 5006,
    address: str = "127.0.0.1",
    show: bool = True,
    *,
    allow_files: tuple[str, ...] = (),
    allow_origins: tuple[str, ...] = (),
    limits: ClientLimits | None = None,
    threaded: bool = False,
    session_lifetime_ms: int | None = None,
    secret: bytes | None = None,
    budget: ServerBudget | None = None,
    admission: Admission | None = None,
):
    """Serve the explorer on ``address:port``; blocks unless ``threaded``.

    ``allow_files``: folders whose files clients may name; ``allow_origins``: the origins
    (``host:port``) allowed besides the local ones; ``limits``: what one client may ask
    for (``ClientLimits``). ``threaded=True`` returns Panel's server thread (stop it with
    ``.stop()``); tests use it to serve the page in-process. ``session_lifetime_ms``: how
    long a closed page's session lives on (Bokeh's default, 15 s, when None). ``secret``:
    the key that signs session ids (``serving.read_secret``; a new one when None). The
    server answers only the hosts it was started for and sends a Content-Security-Policy
    (``explorer.serving``). ``budget``: the server-wide memory budget and queue of heavy
    work (``explorer.admission``; ``ServerBudget.default()`` when None), or ``admission``
    itself (tests hold its places).
    """
    origins = websocket_origins(address, port, tuple(allow_origins))
    access = ClientAccess.for_server((network, hardware, mapping), allow_files, limits)
    _warm_up(network, hardware, mapping, access)  # before listening: the first page is fast
    settle_heap()

    admission = admission or Admission(budget or ServerBudget.default())

    def app():
        return build_app(network, hardware, mapping, access=access, admission=admission)

    return start_server(
        app,
        port=port,
        address=address,
        websocket_origins=origins,
        allow_origins=allow_origins,
        secret=secret,
        # an upload travels in one message: Bokeh's default bound (20 MB) closed the page
        # of a file under the upload limit (the browser sends none over it)
        websocket_max_message_size=message_bytes(access.limits.upload_bytes),
        show=show,
        title=TITLE,
        threaded=threaded,
        **(
            {}
            if session_lifetime_ms is None
            else {
                "unused_session_lifetime_milliseconds": session_lifetime_ms,
                "check_unused_sessions_milliseconds": max(1, session_lifetime_ms // 2),
            }
        ),
    )


def _warm_up(network, hardware, mapping, access: ClientAccess) -> None:
    """Resolve and edit once before the first visitor: imports, generated workloads and
    the numba kernels of an evaluation and of a swap, so the first drag is fast too."""
    with contextlib.suppress(MeshScopeError):  # the page will say what is wrong
        state = ExplorerState.from_specs(network, hardware, mapping, access=access)
        cores = state.mapping.placement.cores
        state.swap_cores(int(cores[0]), int(cores[-1]))
        state.undo()
    # the simulator's kernels load (or, on a new machine, compile: about 15 s) in the
    # background, so the page opens at once and the Traffic tab's first run is fast
    threading.Thread(target=_warm_simulator, name="meshscope-warm-up", daemon=True).start()


def settle_heap() -> None:
    """Move every object alive now (modules, the warmed network and hardware, kernels) out
    of the garbage collector's sight (``gc.freeze``), after collecting what the warm-up
    left. They live as long as the server, yet a full collection walked them all — Panel
    runs one a few seconds after each closed page, and Python whenever enough objects
    piled up — about 300,000 objects and 200 ms in which no page got an answer
    (``benchmarks/gc_pause.py``). Sessions' objects, made later, are collected as before."""
    gc.collect()
    gc.freeze()


def _warm_simulator() -> None:
    run_synthetic(NocConstants(), SyntheticRun("uniform", 2, 2, rate=0.1, warmup=0, cycles=20))

"""The explorer page and ``meshscope serve``.

``build_app`` makes one session's page: an ``ExplorerState`` loaded from the specs,
then the views that watch it. Every Bokeh and Panel object is built inside it, per
session; nothing UI-related lives at module level. A bad spec or mapping file gives a
page that says what is wrong instead of a traceback.
"""

from __future__ import annotations

import contextlib
from html import escape

import panel as pn

from engine.errors import MeshScopeError
from explorer.state import ExplorerState
from explorer.views.mesh import MeshView
from explorer.views.metrics import MetricsView

__all__ = ["TITLE", "build_app", "serve", "websocket_origins"]

TITLE = "MeshScope"

_HEADER_CSS = """
.ms-header { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
             color: #1f2933; }
.ms-header .brand { font-size: 22px; font-weight: 700; letter-spacing: .01em; }
.ms-header .brand span { color: #e6550d; }
.ms-header .what { font-size: 14px; color: #4b5563; margin-top: 2px; }
.ms-header .what b { color: #1f2933; }
"""


def _header(subtitle_html: str) -> pn.pane.HTML:
    return pn.pane.HTML(
        f'<div class="ms-header"><div class="brand">Mesh<span>Scope</span></div>'
        f'<div class="what" data-testid="subtitle">{subtitle_html}</div></div>',
        stylesheets=[_HEADER_CSS],
        margin=(8, 10, 4, 10),
    )


def _subtitle(state: ExplorerState) -> str:
    net, hw, ev = state.network, state.hardware, state.evaluation
    how = (
        f"mapping file <b>{escape(state.mapping_path)}</b>"
        if state.mapping_path
        else f"default partition, <b>{escape(state.placer)}</b> placement"
    )
    return (
        f"<b>{escape(net.name)}</b> ({net.n_neurons:,} neurons, {net.n_populations} populations)"
        f" on <b>{escape(hw.name)}</b> ({hw.grid_width}×{hw.grid_height} routers, "
        f"{hw.cores_per_router} core{'s' if hw.cores_per_router > 1 else ''} each)"
        f" · {ev.cores_used} partitions · {how}"
    )


def _error_page(error: MeshScopeError, network, hardware, mapping) -> pn.Column:
    asked = " ".join(
        f"--{flag} {value}"
        for flag, value in (("network", network), ("hardware", hardware), ("mapping", mapping))
        if value
    )
    message = pn.pane.Alert(
        f"**Cannot open this mapping.** {' '.join(str(error).split())}\n\n"
        f"Asked for: `meshscope serve {asked}`. "
        "Run `meshscope list` to see the networks and hardware MeshScope knows; "
        "`meshscope evaluate` with the same options shows the same problem.",
        alert_type="danger",
        css_classes=["ms-error"],
        margin=(10, 10),
        width=760,
    )
    return pn.Column(_header("nothing to show"), message)


def build_app(network: str | None, hardware: str | None, mapping: str | None = None):
    """One session's page for a network spec, hardware spec and optional mapping file."""
    try:
        state = ExplorerState.from_specs(network, hardware, mapping)
    except MeshScopeError as e:
        return _error_page(e, network, hardware, mapping)
    return pn.Column(
        _header(_subtitle(state)),
        MetricsView(state=state),
        MeshView(state=state),
    )


def websocket_origins(address: str, port: int) -> list[str]:
    """The origins whose pages may open the session's websocket.

    Bokeh's default allows only ``localhost:port``, which rejects a browser that
    opened ``127.0.0.1:port``. Listening on every interface (to show the explorer on
    another machine in a lecture room) allows any host on that port.
    """
    if address in ("", "0.0.0.0", "::"):
        return [f"*:{port}"]
    return list(dict.fromkeys([f"{address}:{port}", f"localhost:{port}", f"127.0.0.1:{port}"]))


def serve(
    network: str | None,
    hardware: str | None,
    mapping: str | None = None,
    port: int = 5006,
    address: str = "127.0.0.1",
    show: bool = True,
    *,
    threaded: bool = False,
):
    """Serve the explorer on ``address:port``; blocks unless ``threaded``.

    ``threaded=True`` returns Panel's server thread (stop it with ``.stop()``); tests
    use it to serve the page in-process.
    """
    _warm_up(network, hardware, mapping)

    def app():
        return build_app(network, hardware, mapping)

    return pn.serve(
        app,
        port=port,
        address=address,
        websocket_origin=websocket_origins(address, port),
        show=show,
        title=TITLE,
        threaded=threaded,
    )


def _warm_up(network, hardware, mapping) -> None:
    """Resolve once before the first visitor: imports, generated workloads, numba kernels."""
    with contextlib.suppress(MeshScopeError):  # the page will say what is wrong
        ExplorerState.from_specs(network, hardware, mapping)

"""The page and its metric cards, built without a server or browser."""

from __future__ import annotations

import panel as pn
import pytest

from explorer.app import build_app, websocket_origins
from explorer.state import ExplorerState
from explorer.views.metrics import METRICS, TERM_LABELS, MetricsView, format_quantity, metric_values


def _texts(viewable) -> list[str]:
    out = []
    for obj in viewable.select(lambda o: isinstance(o, (pn.pane.HTML, pn.pane.Alert))):
        out.append(str(obj.object))
    return out


@pytest.mark.parametrize(
    ("x", "text"),
    [(34.9531, "34.95"), (1.01618, "1.016"), (0.0123456, "0.01235"), (999.96, "1,000"),
     (20753.06, "20,753"), (0.0, "0")],
)  # fmt: skip
def test_format_quantity(x, text):
    assert format_quantity(x) == text


def test_metric_cards_show_the_evaluation(demo_state):
    ev = demo_state.evaluation
    values = metric_values(ev, demo_state.hardware)
    assert list(values) == list(METRICS)
    assert values["latency"][1] == format_quantity(ev.latency_us)
    assert values["energy"][1] == format_quantity(ev.energy_uj)
    assert values["power"][1] == format_quantity(ev.power_w)
    assert values["bottleneck"][1] == TERM_LABELS[ev.bottleneck]
    assert values["cores"][1] == str(ev.cores_used)
    html = "".join(_texts(MetricsView(state=demo_state).__panel__()))
    for key in METRICS:
        assert f'data-testid="metric-{key}-value"' in html
    assert f">{format_quantity(ev.latency_us)}<" in html


def test_cards_follow_the_state():
    state = ExplorerState.from_specs("sparse-mlp-1", "loihi2")
    row = MetricsView(state=state).__panel__()
    state.load("linear-dense:M=4,N=64", "loihi2")
    html = "".join(_texts(row))
    assert f">{format_quantity(state.evaluation.latency_us)}<" in html
    assert ">8<" in html  # cores used: 4 + 4


def test_build_app_shows_the_demo():
    page = build_app("sparse-mlp-1", "loihi2")
    text = " ".join(_texts(page))
    assert "sparse-mlp-1" in text and "loihi2" in text
    assert len(page.select(pn.pane.Bokeh)) == 1
    assert not page.select(pn.pane.Alert)


@pytest.mark.parametrize(
    ("network", "hardware", "mapping", "says"),
    [
        ("no-such-network", "loihi2", None, "unknown network 'no-such-network'"),
        ("sparse-mlp-1", "mesh:0x4", None, "must be at least 1"),
        ("sparse-mlp-1", "loihi2", "/nonexistent/mapping.json", "cannot read mapping file"),
        ("linear-dense:M=4,N=64", "mesh:2x2", None, "needs 8 cores"),
    ],
)
def test_bad_input_gives_a_page_that_says_why(network, hardware, mapping, says):
    page = build_app(network, hardware, mapping)
    alerts = page.select(pn.pane.Alert)
    assert len(alerts) == 1 and alerts[0].alert_type == "danger"
    assert says in alerts[0].object
    assert "meshscope list" in alerts[0].object
    assert not page.select(pn.pane.Bokeh)


def test_websocket_origins():
    assert websocket_origins("127.0.0.1", 5077) == ["127.0.0.1:5077", "localhost:5077"]
    assert "localhost:5006" in websocket_origins("localhost", 5006)
    assert websocket_origins("0.0.0.0", 80) == ["*:80"]

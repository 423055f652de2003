"""The bottleneck view without a browser: terms per core, heaviest links, the roofline."""

from __future__ import annotations

import re

import numpy as np
import pytest

from engine.evaluation.flows import link_label
from engine.evaluation.roofline import ridge, roof, roofline_point, roofline_xy
from engine.hardware import load_hardware
from engine.search import ESConfig, Record
from explorer.runner import SearchRunner
from explorer.state import ExplorerState
from explorer.views.bottlenecks import (
    CORE_TERMS,
    BottleneckView,
    bound_sentence,
    core_term_columns,
    heaviest_links,
    links_table_html,
    log_ticks,
    search_roofline_columns,
)

NET = "mlp:widths=256-512-256-10"


@pytest.fixture
def state():
    return ExplorerState.from_specs(NET, "loihi2")


# ------------------------------------------------------------------ (a) terms per core
def test_core_terms_cover_every_used_core_busiest_first(demo_state):
    hw, net, ev = demo_state.hardware, demo_state.network, demo_state.evaluation
    cols = core_term_columns(hw, net, ev)
    assert sorted(cols["core_id"].tolist()) == sorted(ev.cores.tolist())
    largest = cols["largest_us"]
    assert np.all(np.diff(largest) <= 0)
    for i, core in enumerate(cols["core_id"].tolist()):
        part = int(np.flatnonzero(ev.cores == core)[0])
        for term in CORE_TERMS:
            assert cols[f"{term}_us"][i] == ev.core_terms_us[term][part]
        assert largest[i] == max(ev.core_terms_us[t][part] for t in CORE_TERMS)
    # the busiest core's largest term is the model's compute term of that kind
    top = cols["largest"][0]
    assert largest[0] == pytest.approx(ev.terms_us[top])
    assert len(core_term_columns(hw, net, ev, limit=5)["core"]) == 5


def test_bound_sentence_names_the_term_and_where(demo_state, state):
    ev = demo_state.evaluation
    assert ev.bottleneck == "link"
    text = bound_sentence(demo_state.hardware, ev)
    assert "bounded by link load" in text and "router link" in text
    assert f"{ev.latency_us:,.3f} µs" in text
    ev2 = state.evaluation
    assert ev2.bottleneck == "synmem"
    ct = state.hardware.core_table  # (x,y):s, the global router grid's, as every view names it
    c = ev2.bottleneck_core
    where = f"({ct['gx'][c]},{ct['gy'][c]}):{ct['slot'][c]}"
    assert f"SynMem reads on core {where}" in bound_sentence(state.hardware, ev2)


# ------------------------------------------------------------------ (b) heaviest links
def _brute_force(hardware, ev, k):
    kind = hardware.link_table["kind"]
    ids = [i for i in range(kind.size) if kind[i] >= 0 and ev.link_messages[i] > 0]
    return sorted(ids, key=lambda i: (-ev.link_us[i], i))[:k]


@pytest.mark.parametrize("k", [1, 5, 15, 400])
def test_heaviest_links_equal_a_brute_force_sort(demo_state, k):
    hw, ev = demo_state.hardware, demo_state.evaluation
    table = heaviest_links(hw, ev, k)
    assert table["link"].tolist() == _brute_force(hw, ev, k)
    assert np.array_equal(table["messages"], ev.link_messages[table["link"]])
    assert np.array_equal(table["us"], ev.link_us[table["link"]])
    assert table["utilization"][0] == pytest.approx(ev.link_us[table["link"][0]] / ev.latency_us)


def test_heaviest_links_break_ties_by_id(demo_state):
    # sparse-mlp-1 has many core links with equal loads: the cut at 15 falls inside a tie
    hw, ev = demo_state.hardware, demo_state.evaluation
    us = ev.link_us[heaviest_links(hw, ev, 40)["link"]]
    assert len(set(us.tolist())) < us.size  # there are ties …
    for k in range(1, 41):
        assert heaviest_links(hw, ev, k)["link"].tolist() == _brute_force(hw, ev, k)


def test_link_rows_name_kind_and_end_points(two_chip_state):
    hw, ev = two_chip_state.hardware, two_chip_state.evaluation
    table = heaviest_links(hw, ev, 1000)
    reference = {d["id"]: d for d in ev.links(hw)}
    assert set(table["kind"]) >= {"off-chip", "core-to-router", "router-to-core"}
    for i, link in enumerate(table["link"].tolist()):
        d = reference[link]
        assert table["kind"][i] == d["kind"]
        # the ends in the one notation: "E (x,y)->(x+1,y)", "(x,y):s->(x,y)", …
        assert link_label(hw, link).endswith(f"{table['from'][i]}->{table['to'][i]}")
        assert re.fullmatch(r"\(\d+,\d+\)(:\d+)?", table["from"][i])
        assert table["direction"][i] == (d["direction"] or "")


def test_links_table_html(demo_state):
    hw, ev = demo_state.hardware, demo_state.evaluation
    table = heaviest_links(hw, ev)
    html = links_table_html(table, ev.bottleneck_link)
    assert 'data-testid="heaviest-links"' in html
    assert html.count("<tr") == 16  # header and 15 links
    assert html.count('class="bound"') == 1
    assert f"{ev.link_messages[ev.bottleneck_link]:,.1f}" in html
    empty = links_table_html(heaviest_links(hw, ev, 0))
    assert "No link carries" in empty


# ------------------------------------------------------------------ (c) roofline
def test_roof_is_min_of_flat_and_slope():
    hw = load_hardware("loihi2")
    t_so, b = hw.model.synop_ns * 1e-3, hw.links.router_bits_per_us
    knee = ridge(hw)
    assert knee == pytest.approx(1 / (t_so * b))
    assert roof(hw, knee) == pytest.approx(1 / t_so)
    assert roof(hw, knee / 10) == pytest.approx(b * knee / 10)
    assert roof(hw, knee * 10) == pytest.approx(1 / t_so)


def test_roofline_point_of_a_link_bound_mapping_lies_on_the_slope(demo_state):
    hw, ev = demo_state.hardware, demo_state.evaluation
    point = roofline_point(hw, ev)
    assert point["bound"] == "link"
    # on one chip every link has the mesh bandwidth: N_LL is the heaviest link's bits on the
    # busier of the two meshes, so between half the heaviest link's bits (both meshes) and all
    total = ev.max_link_messages * hw.links.message_bits
    assert total / hw.links.meshes - 1e-6 <= point["n_ll_bits"] <= total + 1e-6
    assert point["n_so"] == pytest.approx(ev.synops.max())
    assert point["x"] < ridge(hw)
    assert point["y"] == pytest.approx(float(roof(hw, point["x"])))


def test_every_point_of_a_search_lies_under_the_roof(state):
    view = BottleneckView(state=state)
    runner = SearchRunner(state, interval_s=0.0)
    runner.start(ESConfig(budget=60, seed=4))
    runner.join(60)
    hw = state.hardware
    data = view.roofline.search.data
    assert len(data["x"]) == len(state.search.points) == 60
    x, y = np.asarray(data["x"]), np.asarray(data["y"])
    ok = np.isfinite(x)
    assert ok.sum() > 0
    assert np.all(y[ok] <= roof(hw, x[ok]) * (1 + 1e-9))
    # SynOp- and link-bound points sit on the roof, the others strictly under it
    bound = np.asarray(data["bound"])
    on_roof = np.isclose(y, roof(hw, x), rtol=1e-9)
    assert np.all(on_roof[ok & np.isin(bound, ["synops", "link"])])
    assert not np.any(on_roof[ok & np.isin(bound, ["dendops", "synmem", "barrier"])])
    # the runner's terms are the evaluations' own (no evaluation failed: row = record index)
    best = state.search.best_evaluation
    row = state.search.points[state.search.best.index]
    assert row.latency_us == pytest.approx(best.latency_us) and row.bottleneck == best.bottleneck
    assert row.terms_us["synops"] == pytest.approx(best.terms_us["synops"])
    assert row.terms_us["link"] == pytest.approx(best.terms_us["link"])
    bx, by = roofline_xy(hw, best.terms_us["synops"], best.terms_us["link"], best.latency_us)
    assert view.roofline.marks["best"].data["x"] == [pytest.approx(float(bx))]
    assert view.roofline.marks["best"].data["y"] == [pytest.approx(float(by))]


def record(latency_us, synops_us, link_us, bound) -> Record:
    """A search's record of one evaluation with the model's terms (what the runner publishes)."""
    return Record(
        index=0, generation=0, level="init", latency_us=latency_us, energy_uj=1.0, power_w=1.0,
        cores_used=4, accepted=False, failed=False, fitness=latency_us,
        cores_per_population=(4,), placement=(0, 1, 2, 3), bottleneck=bound,
        terms_us={"synops": synops_us, "link": link_us},
    )  # fmt: skip


def test_search_columns_from_records():
    hw = load_hardware("loihi2")
    rows = [record(10.0, 5.0, 10.0, "link"), record(4.0, 4.0, 0.0, "synops")]
    cols = search_roofline_columns(hw, rows)
    t_so, b = hw.model.synop_ns * 1e-3, hw.links.router_bits_per_us
    assert cols["x"][0] == pytest.approx((5.0 / t_so) / (10.0 * b))
    assert cols["y"][0] == pytest.approx((5.0 / t_so) / 10.0)
    assert np.isnan(cols["x"][1])  # no link traffic: no place on a log-log roofline
    assert cols["bound"].tolist() == ["link", "synops"]
    assert search_roofline_columns(hw, [])["x"].size == 0


def test_log_ticks():
    assert log_ticks(0.013, 1.3) == [0.02, 0.05, 0.1, 0.2, 0.5, 1.0]
    assert log_ticks(300, 11000) == [500.0, 1000.0, 2000.0, 5000.0, 10000.0]


# ------------------------------------------------------------------ the view
def test_view_follows_the_evaluation_reference_and_start(state):
    view = BottleneckView(state=state)
    view.__panel__()
    hw = state.hardware
    marks = view.roofline.marks
    start = roofline_point(hw, state.shown.start_evaluation)
    assert marks["current"].data["x"] == [start["x"]]
    assert marks["start"].data["x"] == [start["x"]]
    assert marks["reference"].data["x"] == [] and marks["best"].data["x"] == []
    assert view.link_table["link"].tolist() == _brute_force(hw, state.evaluation, 15)

    other = ExplorerState.from_specs(NET, "loihi2", placer="spread-row")
    state.set_mapping(other.mapping)
    now = roofline_point(hw, state.evaluation)
    assert marks["current"].data["y"] == [pytest.approx(now["y"])]
    assert marks["start"].data["x"] == [start["x"]]  # the start stays
    assert view.link_table["link"].tolist() == _brute_force(hw, state.evaluation, 15)
    assert view.terms_plot.source.data["core_id"].size == state.evaluation.cores_used
    state.set_reference("start")
    assert marks["reference"].data["x"] == [start["x"]]
    # the figure's ranges show every point and the knee
    fig = view.roofline.figure
    xs = [start["x"], now["x"], ridge(hw)]
    assert fig.x_range.start < min(xs) and fig.x_range.end > max(xs)
    assert fig.y_range.end > 1 / (hw.model.synop_ns * 1e-3)


def test_view_on_two_chips(two_chip_state):
    view = BottleneckView(state=two_chip_state)
    hw, ev = two_chip_state.hardware, two_chip_state.evaluation
    assert view.terms_plot.figure.xaxis[0].axis_label.startswith("core (x,y):slot")
    assert view.link_table["link"].tolist() == _brute_force(hw, ev, 15)


def test_no_synops_or_no_traffic_has_no_roofline_point():
    hw = load_hardware("loihi2")
    x, y = roofline_xy(hw, [0.0, 1.0, 1.0], [1.0, 0.0, 1.0], [2.0, 2.0, 2.0])
    assert np.isnan(x[:2]).all() and np.isnan(y[:2]).all()
    assert np.isfinite(x[2]) and np.isfinite(y[2])

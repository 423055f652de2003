"""Flows: the flows crossing a link are exactly its load, and links have names that read back;
under O1TURN a flow is listed once per route, each with half its messages."""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pytest

from engine.errors import SpecError
from engine.evaluation.flows import (
    chip_note,
    core_flows,
    core_label,
    flows_through,
    layer_link_messages,
    link_label,
    parse_link,
    route_links,
    router_label,
)
from engine.evaluation.traffic import port_cores
from engine.hardware import load_hardware
from engine.hardware.routing import XY, YX
from engine.pipeline import build_mapping, evaluate

CASES = [
    ("mlp:widths=64-256-128-32", "loihi2", "spread-col"),  # several cores per router
    ("mlp:widths=64-128-32-10", "mesh:2x2x2@2x1", "random"),  # two chips
    ("qubo:n=300", "mesh:6x5", "packed-row"),  # recurrent: flows both ways
]


@pytest.fixture(scope="module", params=CASES, ids=[c[1] for c in CASES])
def mapped(request):
    network, hardware, placement = request.param
    m = build_mapping(network, hardware, placement=placement)
    return m, evaluate(m)


def test_the_flows_through_each_link_are_its_load(mapped):
    """Summed over the flows that cross it, every link carries what the model says it does
    (the model routes the same flows), and the shares of a loaded link sum to one."""
    m, ev = mapped
    hw, cores = m.hardware, m.mapping.placement.cores
    loaded = np.flatnonzero(ev.link_messages > 0)
    assert loaded.size > 0
    for link in loaded.tolist():
        flows = flows_through(hw, m.graph, cores, link)
        assert flows.messages.sum() == pytest.approx(ev.link_messages[link], rel=1e-6)
        assert flows.share.sum() == pytest.approx(1.0)
        assert np.all(np.diff(flows.messages) <= 0)  # heaviest first
    for link in np.flatnonzero((ev.link_messages == 0) & (hw.link_table["kind"] >= 0))[:50]:
        assert len(flows_through(hw, m.graph, cores, int(link))) == 0


def test_a_flow_crosses_a_link_exactly_when_its_route_does(mapped):
    m, ev = mapped
    hw, g, cores = m.hardware, m.graph, m.mapping.placement.cores
    routes = [set(route_links(hw, cores[s], cores[d]).tolist())
              for s, d in zip(g.pair_src[:200], g.pair_dst[:200], strict=True)]  # fmt: skip
    for link in np.argsort(-ev.link_messages)[:12].tolist():
        crossing = set(flows_through(hw, g, cores, link).pair.tolist())
        expected = {i for i, r in enumerate(routes) if link in r}
        assert crossing & set(range(len(routes))) == expected


def test_a_route_is_x_first_then_y_and_ends_at_the_cores():
    hw = load_hardware("mesh:4x3")
    src, dst = hw.core_id(0, 3, 0, 0), hw.core_id(0, 1, 2, 0)
    labels = [link_label(hw, i) for i in route_links(hw, src, dst)]
    assert labels == ["(3,0):0->(3,0)", "W (3,0)->(2,0)", "W (2,0)->(1,0)",
                      "S (1,0)->(1,1)", "S (1,1)->(1,2)", "(1,2)->(1,2):0"]  # fmt: skip


def test_a_cores_flows_are_its_partitions_messages(mapped):
    m, ev = mapped
    hw, g, cores = m.hardware, m.graph, m.mapping.placement.cores
    for part in range(min(g.n_parts, 6)):
        out, inbound = core_flows(hw, g, cores, int(cores[part]))
        assert out.messages.sum() == pytest.approx(g.pair_messages[g.pair_src == part].sum())
        # inbound: from other partitions and from the input port (the spike sources)
        into = (
            g.pair_messages[g.pair_dst == part].sum() + g.input_messages[g.input_dst == part].sum()
        )
        assert inbound.messages.sum() == pytest.approx(into)
        assert set(out.src_part.tolist()) <= {part} and set(inbound.dst_part.tolist()) <= {part}
    empty = np.setdiff1d(np.arange(hw.n_cores), cores)
    if empty.size:
        assert [len(t) for t in core_flows(hw, g, cores, int(empty[0]))] == [0, 0]


def test_rows_name_layers_and_core_addresses(mapped):
    m, ev = mapped
    link = int(np.argmax(ev.link_messages))
    rows = flows_through(m.hardware, m.graph, m.mapping.placement.cores, link).rows(
        m.hardware, m.graph
    )
    assert rows and set(rows[0]) == {
        "src_layer", "src_partition", "src_core", "src_chip", "dst_layer", "dst_partition",
        "dst_core", "dst_chip", "messages", "share", "hops", "route",
    }  # fmt: skip
    assert {r["route"] for r in rows} == {"xy"}  # (the presets route X then Y)
    assert rows[0]["src_layer"] in m.network.population_names
    table = flows_through(m.hardware, m.graph, m.mapping.placement.cores, link)
    ct = m.hardware.core_table
    for r, c in zip(rows, table.src_core.tolist(), strict=True):  # (x,y):s of the global grid
        assert r["src_core"] == f"({ct['gx'][c]},{ct['gy'][c]}):{ct['slot'][c]}"
        assert r["src_chip"] == ct["chip"][c]


def test_one_notation_on_a_board_of_chips():
    """Routers by global (x,y), cores (x,y):slot, the chip only where it helps."""
    hw = load_hardware("mesh:2x2x2@2x1")  # two chips side by side, routers (0..3, 0..1)
    core = hw.core_id(1, 0, 1, 1)  # chip 1's router (0,1) is the board's (2,1)
    assert (
        core_label(hw, core) == "(2,1):1"
        and router_label(hw, hw.core_table["router"][core]) == "(2,1)"
    )
    west = parse_link(hw, "W (2,1)->(1,1)")
    assert hw.link_table["kind"][west] == 1  # off-chip
    assert chip_note(hw, west) == "chip 1 -> chip 0"
    assert chip_note(hw, parse_link(hw, "(2,1):1->(2,1)")) == "chip 1"
    assert chip_note(load_hardware("mesh:3x2x2"), 0) == ""
    assert parse_link(hw, "(2,1):1->(2,1)") == 4 * hw.n_routers + core
    assert parse_link(hw, "(2,1)->(2,1):1") == 4 * hw.n_routers + hw.n_cores + core
    assert parse_link(hw, f"core {core} in") == parse_link(hw, "(2,1)->(2,1):1")


@pytest.mark.parametrize("text", ["(2,1):1->(1,1)", "(9,1):0->(9,1)", "(2,1)->(2,1):7"])
def test_a_bad_core_link_is_refused(text):
    with pytest.raises(SpecError):
        parse_link(load_hardware("mesh:2x2x2@2x1"), text)


@pytest.mark.parametrize("hardware", ["mesh:3x2x2", "mesh:2x2@2x1"])
def test_every_link_name_reads_back(hardware):
    hw = load_hardware(hardware)
    valid = np.flatnonzero(hw.link_table["kind"] >= 0)
    for link in valid.tolist():
        assert parse_link(hw, link_label(hw, link)) == link
        assert parse_link(hw, str(link)) == link
    assert parse_link(hw, " E ( 0 , 1 ) ") == parse_link(hw, "E (0,1)->(1,1)")


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("E (0,1)->(0,2)", "leads to (1,1)"),
        ("W (0,0)", "no neighbour to the W"),
        ("E (9,9)", "routers lie at"),
        ("core 99 out", "has cores 0..11"),
        ("999", "does not exist"),
        ("the hot one", "is not a link"),
    ],
)
def test_a_bad_link_name_says_how_to_write_one(text, says):
    with pytest.raises(SpecError, match=re.escape(says)):
        parse_link(load_hardware("mesh:3x2x2"), text)


def test_max_is_the_most_loaded_link():
    hw = load_hardware("mesh:3x2x2")
    loads = np.zeros(hw.n_link_ids)
    loads[7] = 3.0
    assert parse_link(hw, "max", loads) == 7
    with pytest.raises(SpecError, match="no link carries"):
        parse_link(hw, "max", np.zeros(hw.n_link_ids))


def test_the_layers_loads_add_up_to_the_whole_load(mapped):
    m, ev = mapped
    hw, g, cores = m.hardware, m.graph, m.mapping.placement.cores
    layers = range(m.network.n_populations)
    parts = [layer_link_messages(hw, g, cores, [k]) for k in layers]
    np.testing.assert_allclose(np.sum(parts, axis=0), ev.link_messages, rtol=1e-9, atol=1e-6)
    np.testing.assert_allclose(layer_link_messages(hw, g, cores, layers), ev.link_messages,
                               rtol=1e-9, atol=1e-6)  # fmt: skip
    assert not layer_link_messages(hw, g, cores, []).any()


# ------------------------------------------------------------------ O1TURN: two routes a flow
@pytest.fixture(scope="module")
def o1turn():
    """An MLP placed at random on a 4×4 mesh routed O1TURN: each flow half X then Y, half Y
    then X."""
    m = build_mapping("mlp:widths=64-256-128-32", "mesh:4x4x1", partition="min+3",
                      placement="random")  # fmt: skip
    hw = replace(m.hardware, noc=replace(m.hardware.noc, routing="o1turn"))
    m = replace(m, hardware=hw)
    return m, evaluate(m)


def test_o1turn_flows_through_each_link_are_its_load(o1turn):
    m, ev = o1turn
    hw, cores = m.hardware, m.mapping.placement.cores
    loaded = np.flatnonzero(ev.link_messages > 0)
    assert loaded.size > 0
    for link in loaded.tolist():
        flows = flows_through(hw, m.graph, cores, link)
        assert flows.messages.sum() == pytest.approx(ev.link_messages[link], rel=1e-6)
        assert flows.share.sum() == pytest.approx(1.0)
        # a row per route that crosses the link, with half its flow's messages
        np.testing.assert_allclose(flows.messages, m.graph.routed_messages[flows.pair] / 2)
        for pair, order in zip(flows.pair.tolist(), flows.route.tolist(), strict=True):
            s, d = port_cores(hw, cores)[m.graph.routed_pairs[0][pair]], port_cores(
                hw, cores)[m.graph.routed_pairs[1][pair]]  # fmt: skip
            assert link in route_links(hw, s, d, order)


def test_an_o1turn_flow_is_listed_with_both_routes_each_half(o1turn):
    """A flow that turns has two routes: its source core's outbound flows list it twice, X then
    Y and Y then X, each with half of its messages; the two routes share only their ends."""
    m, _ = o1turn
    hw, g, cores = m.hardware, m.graph, m.mapping.placement.cores
    ct = hw.core_table
    turns = [p for p in range(g.pair_src.size)
             if ct["gx"][cores[g.pair_src[p]]] != ct["gx"][cores[g.pair_dst[p]]]
             and ct["gy"][cores[g.pair_src[p]]] != ct["gy"][cores[g.pair_dst[p]]]]  # fmt: skip
    assert turns
    p = turns[0]
    out, _ = core_flows(hw, g, cores, int(cores[g.pair_src[p]]))
    rows = np.flatnonzero(out.pair == p)
    assert sorted(out.route[rows].tolist()) == [XY, YX]
    np.testing.assert_allclose(out.messages[rows], g.pair_messages[p] / 2)
    assert out.messages.sum() == pytest.approx(g.pair_messages[g.pair_src == g.pair_src[p]].sum())
    assert {r["route"] for r in out.rows(hw, g)} == {"xy", "yx"}
    s, d = int(cores[g.pair_src[p]]), int(cores[g.pair_dst[p]])
    xy, yx = route_links(hw, s, d, XY), route_links(hw, s, d, YX)
    assert xy.size == yx.size and set(xy[1:-1]).isdisjoint(yx[1:-1])
    assert (xy[0], xy[-1]) == (yx[0], yx[-1])


def test_a_route_y_first():
    hw = load_hardware("mesh:4x3")
    src, dst = hw.core_id(0, 3, 0, 0), hw.core_id(0, 1, 2, 0)
    labels = [link_label(hw, i) for i in route_links(hw, src, dst, YX)]
    assert labels == ["(3,0):0->(3,0)", "S (3,0)->(3,1)", "S (3,1)->(3,2)",
                      "W (3,2)->(2,2)", "W (2,2)->(1,2)", "(1,2)->(1,2):0"]  # fmt: skip

"""Routings: the registry every router, model and menu reads, and its dimension-order routes.

* Every entry is a hardware's possible ``[noc] routing``, with its own simulator kernel id;
  O1TURN refuses a router whose VCs it cannot halve, in one line.
* A routing's split of a weight over its orders adds up to the weight exactly; O1TURN's
  halves it, and its expected loads are half of each order's.
* Route choices are seeded: the same seed, the same orders; each order about half.
* O1TURN's VC classes are BookSim2's ``xy_yx_mesh``'s: X then Y on the lower half of the
  VCs, Y then X on the upper half.
* ``dor_path`` walks a route by hand; ``dor_loads`` and ``dor_crosses`` agree with it on
  every link, in both orders.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engine.errors import InvalidHardwareError
from engine.hardware import NocConstants, load_hardware
from engine.hardware.routing import XY, YX, dor_crosses, dor_loads, dor_path, routings

PRESETS = Path(__file__).resolve().parents[3] / "engine" / "presets"


# ------------------------------------------------------------------ the registry
def test_every_routing_is_a_valid_noc_routing_with_its_own_kernel_id():
    assert {"xy", "yx", "o1turn"} <= set(routings)
    kernels = [routings[name].kernel for name in routings]
    assert len(set(kernels)) == len(kernels)
    for name in routings:
        r = routings[name]
        assert r.name == name and set(r.orders) <= {XY, YX} and r.label and routings.doc(name)
        assert NocConstants(routing=name).routing == name


def test_o1turn_needs_an_even_number_of_vcs():
    assert NocConstants(routing="o1turn", vcs=4).vcs == 4
    for vcs in (1, 3):
        with pytest.raises(InvalidHardwareError, match=f"vcs must be even .*not {vcs}") as e:
            NocConstants(routing="o1turn", vcs=vcs)
        assert "\n" not in str(e.value)
    assert NocConstants(routing="xy", vcs=3).vcs == 3
    with pytest.raises(InvalidHardwareError, match="one of xy, yx, o1turn"):
        NocConstants(routing="west-first")


def test_a_preset_file_may_route_o1turn(tmp_path):
    text = (PRESETS / "seneca.toml").read_text()
    assert 'routing = { value = "xy"' in text
    path = tmp_path / "seneca-o1turn.toml"
    path.write_text(text.replace('routing = { value = "xy"', 'routing = { value = "o1turn"'))
    hw = load_hardware(str(path))
    assert hw.noc.routing == "o1turn"


# ------------------------------------------------------------------ shares and choices
def test_a_split_adds_up_to_the_weight_and_o1turn_halves_it():
    w = np.array([0, 1, 2, 7, 10, 2**40 + 1], dtype=np.int64)
    xy, yx = routings["o1turn"].split(w)
    np.testing.assert_array_equal(xy + yx, w)
    np.testing.assert_array_equal(xy, [0, 0, 1, 3, 5, 2**39])
    assert np.all(np.abs(xy - yx) <= 1)
    (only,) = routings["xy"].split(w)
    np.testing.assert_array_equal(only, w)
    xy_f, yx_f = routings["o1turn"].split(w.astype(np.float64))  # fixed point held in floats
    np.testing.assert_array_equal(xy_f, xy)


def test_route_choices_are_seeded_and_even():
    o1 = routings["o1turn"]
    a, b, c = o1.choose(20_000, 3), o1.choose(20_000, 3), o1.choose(20_000, 4)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert set(np.unique(a).tolist()) == {XY, YX}
    assert abs(a.mean() - 0.5) < 0.02
    np.testing.assert_array_equal(routings["yx"].choose(5, 3), [YX] * 5)
    np.testing.assert_array_equal(routings["xy"].choose(5, 3), [XY] * 5)


@pytest.mark.parametrize(
    ("vcs", "xy", "yx"), [(2, 0b01, 0b10), (4, 0b0011, 0b1100), (6, 0b000111, 0b111000)]
)
def test_o1turn_vc_classes_are_booksim2s_halves(vcs, xy, yx):
    """BookSim2's xy_yx_mesh: available = vcs / 2; X then Y takes VCs [0, vcs − 1 − available],
    Y then X [available, vcs − 1]."""
    assert routings["o1turn"].vc_masks(vcs) == (xy, yx)
    assert routings["xy"].vc_masks(vcs) == ((1 << vcs) - 1,) * 2


# ------------------------------------------------------------------ routes
def test_dor_path_by_hand():
    """From router (3,0) to (1,2) on a 4-wide grid: X then Y goes west along row 0, then
    south down column 1; Y then X south down column 3, then west along row 2."""
    slot = {"E": 0, "W": 1, "S": 2, "N": 3}

    def links(*steps):
        return [(y * 4 + x) * 4 + slot[d] for d, x, y in steps]

    assert dor_path(4, 3, 0, 1, 2, XY).tolist() == links(
        ("W", 3, 0), ("W", 2, 0), ("S", 1, 0), ("S", 1, 1)
    )
    assert dor_path(4, 3, 0, 1, 2, YX).tolist() == links(
        ("S", 3, 0), ("S", 3, 1), ("W", 3, 2), ("W", 2, 2)
    )
    assert dor_path(4, 2, 2, 2, 0, YX).tolist() == links(("N", 2, 2), ("N", 2, 1))
    assert dor_path(4, 1, 1, 1, 1, XY).size == 0


def _pairs(rng, width, height, n):
    return [rng.integers(0, k, n) for k in (width, height, width, height)]


@pytest.mark.parametrize("order", [XY, YX])
def test_dor_loads_and_crossings_follow_the_path(order):
    width, height = 5, 4
    rng = np.random.default_rng(order)
    sx, sy, dx, dy = _pairs(rng, width, height, 300)
    w = rng.integers(1, 1000, sx.size)
    walked = np.zeros(width * height * 4, dtype=np.int64)
    paths = [dor_path(width, *p, order) for p in zip(sx, sy, dx, dy, strict=True)]
    for path, weight in zip(paths, w, strict=True):
        walked[path] += weight
    np.testing.assert_array_equal(dor_loads(width, height, sx, sy, dx, dy, w, order == YX), walked)
    yx = np.full(sx.size, order == YX)  # … and with the order given per message
    np.testing.assert_array_equal(dor_loads(width, height, sx, sy, dx, dy, w, yx), walked)
    for link in range(width * height * 4):
        router, d = divmod(link, 4)
        hits = dor_crosses(order, d, router % width, router // width, sx, sy, dx, dy)
        np.testing.assert_array_equal(hits, [link in p for p in paths])


def test_o1turns_expected_loads_are_half_of_each_orders():
    width, height = 6, 3
    sx, sy, dx, dy = _pairs(np.random.default_rng(9), width, height, 200)
    w = np.full(sx.size, 6)
    o1 = routings["o1turn"].router_loads(width, height, sx, sy, dx, dy, w)
    xy = routings["xy"].router_loads(width, height, sx, sy, dx, dy, w)
    yx = routings["yx"].router_loads(width, height, sx, sy, dx, dy, w)
    np.testing.assert_array_equal(2 * o1, xy + yx)
    assert not np.array_equal(xy, yx)  # (the orders load different links)
    # per message orders: each message on its own order only
    order = np.where(np.arange(sx.size) % 3 == 0, YX, XY)
    mixed = routings["o1turn"].router_loads(width, height, sx, sy, dx, dy, w, order)
    by_order = [
        routings[n].router_loads(width, height, sx[m], sy[m], dx[m], dy[m], w[m])
        for n, m in (("xy", order == XY), ("yx", order == YX))
    ]
    np.testing.assert_array_equal(mixed, by_order[0] + by_order[1])

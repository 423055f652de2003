"""Stall counters: the cycles virtual channels waited, per router and cause, are where the
traffic jams — around a hotspot, along the column every packet to it must take (X then Y)
— and all but absent in a nearly empty network."""

from __future__ import annotations

import numpy as np
import pytest

from engine.hardware import NocConstants
from engine.simulate import SyntheticRun, run_synthetic

CAUSES = {"vc_busy", "vc_lost", "no_credit", "switch_lost"}


@pytest.fixture(scope="module")
def hotspot():
    """Every packet to node 27 = (3, 3) of an 8×8 mesh, at 0.05 flits/node/cycle: 3.2 flits
    a cycle offered to a core link that carries one."""
    run = SyntheticRun("hotspot:nodes=27", 8, 8, rate=0.05, warmup=1000, cycles=2000)
    return run_synthetic(NocConstants(), run, seed=1)


def total(stalls: dict) -> np.ndarray:
    assert set(stalls) == CAUSES
    return sum(stalls[k] for k in CAUSES).reshape(8, 8)  # [y, x]


def test_past_saturation_virtual_channels_stall(hotspot):
    s = hotspot.stalls
    assert not hotspot.stable
    for cause in ("vc_busy", "no_credit"):
        assert s[cause].sum() > 0, cause
    assert all(np.all(v >= 0) for v in s.values())


def test_stalls_gather_in_the_hotspots_column(hotspot):
    """X then Y: every packet reaches column 3 in its own row, then runs down or up that
    column to (3, 3); the column's routers, its two neighbours in it above all, wait most."""
    t = total(hotspot.stalls)
    column = t[:, 3]
    rest = np.delete(t, 3, axis=1)
    y, x = np.unravel_index(np.argmax(t), t.shape)
    assert x == 3, t
    assert column.mean() >= 1.5 * rest.mean()
    assert min(t[2, 3], t[4, 3]) > rest.max()  # the hotspot's neighbours in its column


def test_a_nearly_empty_network_hardly_stalls():
    run = SyntheticRun("uniform", 8, 8, rate=0.005, warmup=500, cycles=3000)
    res = run_synthetic(NocConstants(), run, seed=1)
    assert res.stable
    router_flits = res.link_flits[: 4 * 64].sum()
    assert router_flits > 1000
    assert total(res.stalls).sum() <= 0.01 * router_flits


def test_stalls_grow_with_the_load():
    per_flit = []
    for rate in (0.02, 0.2, 0.45):
        run = SyntheticRun("uniform", 8, 8, rate=rate, warmup=500, cycles=1500)
        res = run_synthetic(NocConstants(), run, seed=1)
        per_flit.append(total(res.stalls).sum() / res.link_flits.sum())
    assert per_flit[0] < per_flit[1] < per_flit[2]

"""The simulator's figures, frozen: a fixed set of synthetic runs, traced runs, walks and
mapping steps must give the figures recorded in ``tests/data/simulate_frozen.json``.

Those figures are the simulator's own output at the time they were recorded (before the
statistics were streamed, issue 41): this test holds a rewrite of how the simulator keeps
its records to *the same* results — every latency average and histogram bin, accepted and
offered rate, step cycle count, per-link flit count, stall counter, trace window and walked
hop — not to results someone computed by hand. Integers (counts, cycles, flits, stalls,
digests) must be equal, floats equal within a relative ``FLOAT_REL_TOL`` (see there). Runs
cover the unicast kernel and the full one (a trace, a tracked packet, multicast), runs
stopped past saturation in the warm-up and in the measurement, a drain that gives up,
packets longer than their buffers, Y-first, O1TURN and round-robin allocation.

Re-record (only when a change of the simulator's *behaviour* is intended, and say so in the
commit; the venv is /work/main/.venv in a worktree):

    PYTHONPATH=$PWD .venv/bin/python tests/engine/simulate/test_results_frozen.py --record
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
from dataclasses import replace
from functools import cache
from pathlib import Path

import numpy as np
import pytest

DATA = Path(__file__).resolve().parents[2] / "data" / "simulate_frozen.json"
SECRET_KEYS = ("wall_s", "cycles_per_s", "flits_per_s")  # timings: not figures
# Floats are equal to within this share of themselves. The histogram's log-spaced edges come from
# numpy's geomspace (log, exp, power), whose last bit depends on the numpy version and on the SIMD
# code it picks for the CPU: numpy 2.4.6 gives 4.8122447691403405 on a CPU with AVX-512 and the
# recorded 4.812244769140341 without it (NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL"), 1e-16
# apart, so even locked versions do not make them equal. A real change moves a figure far more:
# one cycle more on one packet moves an average latency by 1/packets, at least 7e-9 of it in these
# runs (126,131 packets averaging 1,085 cycles), and one more on the slowest moves every edge but
# 0 and 1 by at least 7e-6 of itself (test_a_one_cycle_change_to_one_latency_fails_...). 1e-12
# lies between, thousands of times from either side.
FLOAT_REL_TOL = 1e-12
NEW_KEYS = ("stopped", "saturated", "bound_core_name")  # said since the recording (stopped:
# when a run stopped past saturation; saturated: BookSim2's test failed or latency 3× zero-load,
# issue 59; bound_core_name: the bound core in the page's notation, issue 57)

# name -> (pattern, width, height, rate, packet flits, warmup, cycles, drain limit, window,
#          router changes, seed)
SYNTHETIC = {
    "uniform-4x4": ("uniform", 4, 4, 0.2, 1, 300, 2000, 20000, 0, {}, 1),
    "transpose-8x8-4flit-4vc": ("transpose", 8, 8, 0.25, 4, 500, 3000, 20000, 0,
                                {"vcs": 4, "buf": 4}, 2),
    "shuffle-6x6-8flit-yx": ("shuffle", 8, 8, 0.15, 8, 200, 1500, 20000, 0,
                             {"buf": 4, "routing": "yx"}, 3),
    "hotspot-5x5-o1turn-round-robin": ("hotspot:nodes=0+24,fraction=0.3", 5, 5, 0.12, 2, 200,
                                     2000, 20000, 0, {"routing": "o1turn",
                                                      "allocator": "round-robin"}, 4),
    "uniform-6x6-past-saturation-in-warmup": ("uniform", 6, 6, 1.0, 1, 3000, 1000, 20000, 0,
                                              {}, 5),
    "uniform-6x6-past-saturation-measured": ("uniform", 6, 6, 0.7, 1, 0, 6000, 20000, 0, {}, 6),
    "uniform-5x5-drain-gives-up": ("uniform", 5, 5, 0.45, 1, 200, 1000, 5, 0, {}, 7),
    "uniform-4x4-traced": ("uniform", 4, 4, 0.3, 2, 100, 800, 20000, 50, {}, 8),
    "neighbor-4x4-delays": ("neighbor", 4, 4, 0.3, 3, 100, 1200, 20000, 0,
                            {"vc_alloc_delay": 2, "sw_alloc_delay": 2, "credit_delay": 2}, 9),
}  # fmt: skip
WALKS = {  # name -> (synthetic case, source, destination or None for the slowest, which)
    "walk-uniform-slowest": ("uniform-4x4", None, None, "slowest"),
    "walk-uniform-pair-median": ("uniform-4x4", 0, 15, "median"),
    "walk-transpose-first": ("transpose-8x8-4flit-4vc", 1, 8, "first"),
}
STEPS = {  # name -> (mode, multicast, window, seed)
    "step-pipelined-unicast": ("pipelined", False, 0, 1),
    "step-fall-through-multicast": ("fall-through", True, 0, 2),
    "step-pipelined-multicast-traced": ("pipelined", True, 40, 3),
}


def _noc(changes: dict):
    from engine.hardware import NocConstants

    return replace(NocConstants(), **changes)


def _run(name: str):
    from engine.simulate import SyntheticRun

    pattern, w, h, rate, flits, warmup, cycles, drain, window, router, seed = SYNTHETIC[name]
    run = SyntheticRun(pattern, w, h, rate=rate, packet_flits=flits, warmup=warmup,
                       cycles=cycles, drain_limit=drain, window=window)  # fmt: skip
    return _noc(router), run, seed


@cache
def _synthetic(name: str, keep: bool = False):
    from engine.simulate import run_synthetic

    noc, run, seed = _run(name)
    return run_synthetic(noc, run, seed=seed, keep_packets=keep)


def _digest(a) -> dict:
    """An array too long to list: its shape, dtype kind, sum and a hash of its values."""
    a = np.ascontiguousarray(np.asarray(a).astype(np.int64))
    return {"shape": list(a.shape), "sum": int(a.sum()),
            "sha256": hashlib.sha256(a.tobytes()).hexdigest()}  # fmt: skip


def _ints(a) -> list:
    return np.asarray(a).astype(np.int64).tolist()


def _trace_figures(trace) -> dict:
    out = {
        "link_flits": _digest(trace.link_flits),
        "occupancy": _digest(trace.occupancy),
        "waits": None if trace.waits is None else _digest(trace.waits),
        "meta_cycles": trace.cycles,
        "n_windows": trace.n_windows,
    }
    for key in sorted(trace.packets):
        out[f"packet_{key}"] = _digest(trace.packets[key])
    for key in sorted(trace.stalls):
        out[f"stall_{key}"] = _ints(trace.stalls[key])
    return out


def synthetic_figures(name: str, res=None) -> dict:
    """The figures of the synthetic case ``name`` (of ``res``, its result, if given)."""
    res = _synthetic(name) if res is None else res
    out = {k: v for k, v in res.to_dict().items() if k not in SECRET_KEYS + NEW_KEYS}
    counts, edges = res.latency_histogram
    out["latency_histogram"] = {"counts": _ints(counts), "edges": np.asarray(edges).tolist()}
    out["stalls"] = {k: _ints(v) for k, v in res.stalls.items()}
    out["link_flits"] = _ints(res.link_flits)
    if res.trace is not None:
        out["trace"] = _trace_figures(res.trace)
    return out


def walk_figures(name: str) -> dict:
    from engine.simulate.walk import slowest_pair, walk_synthetic

    case, src, dst, which = WALKS[name]
    first = _synthetic(case, keep=True)  # (a walk asks for its run's packets)
    noc, run, seed = _run(case)
    if src is None:
        src, dst = slowest_pair(first.machine)
    walk = walk_synthetic(noc, run, src, dst, which=which, seed=seed, first=first)
    return walk.to_dict()


@cache
def _mapped():
    from engine.hardware import load_hardware
    from engine.pipeline import build_mapping

    hw = load_hardware("mesh:4x4x2@2x1")
    hw = replace(hw, noc=replace(hw.noc, flit_bits=hw.links.message_bits // 2))  # 2-flit
    return build_mapping("mlp:widths=128-256-128", hw, partition="min+6",
                         placement="spread-col")  # fmt: skip


def step_figures(name: str) -> dict:
    from engine.simulate import simulate_step
    from engine.simulate.walk import slowest_pair, walk_step

    mode, multicast, window, seed = STEPS[name]
    mapped = _mapped()
    step = simulate_step(mapped, mode=mode, multicast=multicast, seed=seed, window=window)
    out = {
        k: v for k, v in step.to_dict(mapped.hardware).items() if k not in SECRET_KEYS + NEW_KEYS
    }
    for row in out.get("links", ()):  # a link's name in the page's notation: said since, too
        row.pop("name", None)
        row.pop("chips", None)
    out["link_flits"] = _ints(step.link_flits)
    out["stall_arrays"] = {k: _ints(v) for k, v in step.stalls.items()}
    if step.trace is not None:
        out["trace"] = _trace_figures(step.trace)
    src, dst = slowest_pair(step.machine)
    walk = walk_step(mapped, src, dst, which="slowest", first=step, mode=mode,
                     multicast=multicast, seed=seed)  # fmt: skip
    out["walk"] = walk.to_dict()
    return out


def packets_figures() -> dict:
    from engine.hardware import NocConstants
    from engine.simulate import Topology, run_packets

    noc = NocConstants()
    topo = Topology.mesh(4, 4, noc)
    rng = np.random.default_rng(11)
    src, dst = rng.integers(0, 16, 60), rng.integers(0, 16, 60)
    res = run_packets(topo, noc, src, dst, flits=rng.integers(1, 6, 60),
                      ready=rng.integers(0, 40, 60))  # fmt: skip
    return {
        "ready": _ints(res.ready), "injected": _ints(res.injected),
        "arrived": _ints(res.arrived), "hops": _ints(res.hops),
        "link_flits": _ints(res.link_flits), "cycles": res.cycles,
    }  # fmt: skip


def figures(name: str) -> dict:
    """The frozen figures of one case, as plain JSON values."""
    if name in SYNTHETIC:
        out = synthetic_figures(name)
    elif name in WALKS:
        out = walk_figures(name)
    elif name in STEPS:
        out = step_figures(name)
    else:
        out = packets_figures()
    return json.loads(json.dumps(out))  # tuples as lists, numpy scalars refused


CASES = [*SYNTHETIC, *WALKS, *STEPS, "packets-4x4"]


def _difference(got, want, path="") -> str | None:
    """Where ``got`` and ``want`` differ first (None: equal). Integers, booleans and strings
    compare exactly; two floats are equal within ``FLOAT_REL_TOL`` of the recorded one (NaN
    equals NaN); an int never equals a float."""
    if isinstance(want, dict) and isinstance(got, dict):
        if set(got) != set(want):
            return f"{path}: keys {sorted(set(got) ^ set(want))} differ"
        for key in want:
            diff = _difference(got[key], want[key], f"{path}.{key}")
            if diff:
                return diff
        return None
    if isinstance(want, list) and isinstance(got, list):
        if len(got) != len(want):
            return f"{path}: {len(got)} items, recorded {len(want)}"
        for k, (g, w) in enumerate(zip(got, want, strict=True)):
            diff = _difference(g, w, f"{path}[{k}]")
            if diff:
                return diff
        return None
    if isinstance(want, float) and isinstance(got, float):
        if math.isnan(want) or math.isnan(got):
            same = math.isnan(want) and math.isnan(got)
        else:
            same = math.isclose(got, want, rel_tol=FLOAT_REL_TOL, abs_tol=0.0)
        return None if same else f"{path}: {got!r}, recorded {want!r}"
    if type(got) is not type(want) or got != want:
        return f"{path}: {got!r}, recorded {want!r}"
    return None


@cache
def _recorded() -> dict:
    return json.loads(DATA.read_text())


@pytest.mark.parametrize("name", CASES)
def test_figures_equal_the_recorded_ones(name):
    recorded = _recorded()
    assert name in recorded, f"{name} is not recorded: re-record (see the module docstring)"
    diff = _difference(figures(name), recorded[name], name)
    assert diff is None, diff


@pytest.mark.parametrize(
    ("got", "want", "same"),
    [(4.8122447691403405, 4.812244769140341, True),  # the last bit: library maths
     (20.135290462876668, 20.135290462876668 + 1 / 2000, False),  # 1 cycle of 2,000 packets
     (0.0, 0.0, True), (0.0, 1e-300, False), (float("nan"), float("nan"), True),
     (float("nan"), 1.0, False), (1.0, float("nan"), False),
     (7, 7, True), (7, 8, False), (7, 7.0, False), (True, 1, False),
     ([1, 2.0], [1, 2.0 + 1e-15], True), ({"a": 1}, {"a": 1, "b": 2}, False)],
)  # fmt: skip
def test_integers_are_exact_and_floats_close_to_within_the_tolerance(got, want, same):
    assert (_difference(got, want) is None) == same


@pytest.mark.parametrize("which", ["first", "slowest"])
def test_a_one_cycle_change_to_one_latency_fails_the_comparison(monkeypatch, which):
    """One measured packet (the first to arrive, or the slowest) delivered one cycle later,
    nothing else touched: the figures no longer equal the recorded ones, and the averages,
    floats compared within the tolerance, say so on their own (the slowest also moves the
    histogram's log-spaced edges)."""
    from engine.simulate import run_synthetic, synthetic

    name = "uniform-4x4"
    noc, run, seed = _run(name)
    recorded = _recorded()[name]
    slowest = int(recorded["latency_max"])
    real_add, delayed = synthetic._Tally.add, []

    def add(tally, batch):
        lat = batch["atime"] - batch["ctime"]
        pick = (batch["meas"] == 1) & (lat == slowest if which == "slowest" else True)
        if not delayed and pick.any():
            batch = {k: v.copy() for k, v in batch.items()}
            batch["atime"][np.flatnonzero(pick)[0]] += 1  # its tail a cycle later
            delayed.append(int(lat[pick][0]))
        real_add(tally, batch)

    monkeypatch.setattr(synthetic._Tally, "add", add)
    got = json.loads(json.dumps(synthetic_figures(name, run_synthetic(noc, run, seed=seed))))
    assert len(delayed) == 1 and got["measured_packets"] == recorded["measured_packets"]
    assert got["latency_avg"] == pytest.approx(
        recorded["latency_avg"] + 1 / recorded["measured_packets"], rel=1e-12
    )
    assert _difference(got, recorded, name) is not None
    for key in ("latency_avg", "network_latency_avg", "queueing_avg"):
        assert _difference(got[key], recorded[key], key) is not None, key
    edges = _difference(got["latency_histogram"]["edges"], recorded["latency_histogram"]["edges"])
    assert (edges is not None) == (which == "slowest")


def test_the_recording_covers_the_interesting_paths():
    """The cases do what they are there for: runs stopped in the warm-up and in the
    measurement, a drain that gave up with packets in flight, a stable run, a trace."""
    rec = _recorded()
    assert rec["uniform-6x6-past-saturation-in-warmup"]["cycles"] == 3000
    assert rec["uniform-6x6-past-saturation-in-warmup"]["stable"] is False
    assert not rec["uniform-6x6-past-saturation-measured"]["stable"]
    assert rec["uniform-6x6-past-saturation-measured"]["cycles"] < 6000 + 20000
    assert rec["uniform-5x5-drain-gives-up"]["unfinished_packets"] > 0
    assert rec["uniform-4x4"]["stable"] and rec["uniform-4x4"]["unfinished_packets"] == 0
    assert rec["uniform-4x4-traced"]["trace"]["n_windows"] > 10


if __name__ == "__main__":
    if sys.argv[1:] != ["--record"]:
        raise SystemExit(f"usage: {sys.argv[0]} --record  (see the module docstring)")
    DATA.write_text(json.dumps({name: figures(name) for name in CASES}, indent=1) + "\n")
    print(f"recorded {len(CASES)} cases in {DATA}")

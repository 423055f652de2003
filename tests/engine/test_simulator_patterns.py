"""Traffic patterns as BookSim2's ``traffic.cpp`` defines them, the sweep's reading of a
curve, and the trace file against bad input."""

from __future__ import annotations

import numpy as np
import pytest

from engine.errors import InputFileError, SpecError
from engine.hardware import NocConstants
from engine.simulate import (
    SyntheticRun,
    build_pattern,
    load_trace,
    parse_rates,
    patterns,
    run_synthetic,
    sweep,
)


def destinations(spec: str, width: int, height: int) -> list[int]:
    pat = build_pattern(spec, width, height, width * height)
    return pat.perm.tolist()


# ------------------------------------------------------------------ BookSim2's definitions
def test_bit_permutations_by_hand():
    # 16 terminals, 4 bits: s = 1 = 0b0001
    assert destinations("transpose", 4, 4)[1] == 0b0100  # halves swapped
    assert destinations("transpose", 4, 4)[0b0110] == 0b1001
    assert destinations("bitcomp", 4, 4)[1] == 0b1110
    assert destinations("bitrev", 4, 4)[1] == 0b1000
    assert destinations("bitrev", 4, 4)[0b0011] == 0b1100
    assert destinations("shuffle", 4, 4)[1] == 0b0010  # rotated left
    assert destinations("shuffle", 4, 4)[0b1000] == 0b0001
    # 64 terminals: transpose swaps x and y
    t = destinations("transpose", 8, 8)
    assert all(t[x + 8 * y] == y + 8 * x for x in range(8) for y in range(8))


def test_digit_permutations_by_hand():
    # tornado moves every coordinate ⌈k/2⌉ − 1 on: 3 on an 8-ary mesh, 1 on a 4-ary one
    assert destinations("tornado", 8, 8)[0] == 3 + 8 * 3
    assert destinations("tornado", 8, 8)[7 + 8 * 6] == 2 + 8 * 1
    assert destinations("tornado", 4, 4)[0] == 1 + 4 * 1
    # neighbor moves every coordinate one on, wrapping
    assert destinations("neighbor", 8, 8)[7] == 0 + 8 * 1
    assert destinations("neighbor", 8, 8)[63] == 0


@pytest.mark.parametrize("name", ["transpose", "bitcomp", "bitrev", "shuffle", "tornado",
                                  "neighbor", "randperm"])  # fmt: skip
def test_permutations_are_permutations(name):
    assert sorted(destinations(name, 8, 8)) == list(range(64))


def test_patterns_draw_the_destinations_they_define():
    rng = np.random.default_rng(0)
    n = 64
    uniform = build_pattern("uniform", 8, 8, n).destinations(np.zeros(64_000, int), n, rng)
    counts = np.bincount(uniform, minlength=n)
    assert counts.min() > 800 and counts.max() < 1200  # every terminal, itself included
    hot = build_pattern("hotspot:nodes=5+9,rates=3+1", 8, 8, n)
    d = hot.destinations(np.arange(40_000) % n, n, rng)
    assert set(np.unique(d).tolist()) == {5, 9}
    assert np.mean(d == 5) == pytest.approx(0.75, abs=0.02)
    mixed = build_pattern("hotspot:nodes=5,fraction=0.4", 8, 8, n)
    d = mixed.destinations(np.arange(40_000) % n, n, rng)
    assert np.mean(d == 5) == pytest.approx(0.4 + 0.6 / n, abs=0.02)


def test_the_kernel_draws_what_the_pattern_defines():
    """Synthetic packets in the simulator go where the numpy definition says."""
    run = SyntheticRun("hotspot:nodes=5+9,rates=3+1", 4, 4, rate=0.02, warmup=0, cycles=20_000)
    res = run_synthetic(NocConstants(), run)
    pk = res.machine.packets()
    dest = res.machine.dest[: pk["src"].size]
    assert set(np.unique(dest).tolist()) == {5, 9}
    assert np.mean(dest == 5) == pytest.approx(0.75, abs=0.03)
    perm = run_synthetic(NocConstants(), SyntheticRun("tornado", 4, 4, rate=0.05, warmup=0,
                                                      cycles=2000))  # fmt: skip
    pk = perm.machine.packets()
    expected = np.array(destinations("tornado", 4, 4))[pk["src"]]
    np.testing.assert_array_equal(perm.machine.dest[: pk["src"].size], expected)


def test_a_traffic_matrix_from_a_file(tmp_path):
    weights = np.zeros((16, 16))
    weights[np.arange(16), (np.arange(16) + 5) % 16] = 2.0
    weights[0] = 0  # a silent row sends to itself
    weights[3, [1, 2]] = [1, 3]
    path = tmp_path / "m.csv"
    np.savetxt(path, weights, delimiter=",")
    pat = build_pattern(f"matrix:file={path}", 4, 4, 16)
    rng = np.random.default_rng(1)
    assert (pat.destinations(np.full(100, 0), 16, rng) == 0).all()
    d3 = pat.destinations(np.full(20_000, 3), 16, rng)
    assert set(np.unique(d3).tolist()) == {1, 2, 8}
    assert np.mean(d3 == 2) == pytest.approx(3 / 6, abs=0.02)


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ("1,2\n3,4\n", "2 × 2"),
        ("\n", "empty"),
        ("1,x\n" * 16, "not a CSV"),
        (("-1," + "0," * 14 + "0\n") * 16, "non-negative"),
    ],
    ids=["shape", "empty", "text", "negative"],
)
def test_a_bad_traffic_matrix_is_an_input_file_error(tmp_path, content, words):
    path = tmp_path / "m.csv"
    path.write_text(content)
    with pytest.raises(InputFileError, match=words):
        build_pattern(f"matrix:file={path}", 4, 4, 16)
    with pytest.raises(InputFileError):
        build_pattern(f"matrix:file={tmp_path / 'missing.csv'}", 4, 4, 16)


@pytest.mark.parametrize(
    ("spec", "mesh", "words"),
    [
        ("nosuch", (4, 4), "nosuch"),
        ("transpose", (4, 2), "even power of two"),
        ("bitcomp", (3, 3), "power-of-two"),
        ("hotspot:nodes=16", (4, 4), "0..15"),
        ("hotspot:nodes=a", (4, 4), "whole numbers"),
        ("hotspot:fraction=2", (4, 4), "fraction"),
        ("uniform:speed=3", (4, 4), "uniform"),
        ("randperm:seed=x", (4, 4), "seed"),
    ],
)
def test_bad_pattern_specs_say_what_is_wrong(spec, mesh, words):
    with pytest.raises(SpecError, match=words):
        build_pattern(spec, *mesh, mesh[0] * mesh[1])


def test_every_registered_pattern_builds_on_an_8x8_mesh():
    for name in patterns.names():
        if name != "matrix":
            assert build_pattern(name, 8, 8, 64).name == name


# ------------------------------------------------------------------ sweeps
@pytest.mark.parametrize(
    ("text", "rates"),
    [("0.1:0.3:0.1", [0.1, 0.2, 0.3]), ("0.05,0.2", [0.05, 0.2]), ("0.01:0.01:0.5", [0.01])],
)
def test_rates_parse(text, rates):
    assert parse_rates(text) == pytest.approx(rates)


@pytest.mark.parametrize("text", ["", "a:b:c", "0.3:0.1:0.1", "0.1:0.2:0", "0.5,2", "-0.1"])
def test_bad_rates_say_how_to_write_them(text):
    with pytest.raises(SpecError, match="rates"):
        parse_rates(text)


def test_a_sweep_reads_zero_load_and_saturation(tmp_path):
    base = SyntheticRun("uniform", 4, 4, warmup=500, cycles=2000)
    seen = []
    result = sweep(NocConstants(), base, [0.9, 0.05, 0.3, 0.6], workers=1, progress=seen.append)
    rates = [p["rate"] for p in result.points]
    assert rates == [0.05, 0.3, 0.6, 0.9] and [p["rate"] for p in seen] == rates
    assert result.zero_load_latency == result.points[0]["latency_avg"]
    stable = [p["rate"] for p in result.points if p["stable"]]
    assert result.saturation_rate in stable and 0.3 <= result.saturation_rate < 0.9
    assert not result.points[-1]["stable"]
    assert result.channel_bound == pytest.approx(1.0)
    result.write_csv(tmp_path / "s.csv")
    lines = (tmp_path / "s.csv").read_text().splitlines()
    assert lines[0].startswith("rate,offered_flit_rate,accepted_flit_rate") and len(lines) == 5
    result.write_figure(tmp_path / "s.svg")
    assert (tmp_path / "s.svg").read_text().lstrip().startswith("<?xml")
    parallel = sweep(NocConstants(), base, [0.05, 0.3, 0.6, 0.9], workers=2)
    timing = ("wall_s", "cycles_per_s", "flits_per_s")  # the workers change nothing else

    def computed(points):
        return [{k: v for k, v in p.items() if k not in timing} for p in points]

    assert computed(parallel.points) == computed(result.points)


# ------------------------------------------------------------------ trace files
def test_a_synthetic_trace_round_trips(tmp_path):
    res = run_synthetic(NocConstants(), SyntheticRun("uniform", 4, 4, rate=0.2, warmup=200,
                                                     cycles=800, window=40))  # fmt: skip
    trace = res.trace
    np.testing.assert_array_equal(trace.link_flits.sum(axis=0), res.link_flits)
    assert trace.frame(3)["end_cycle"] == 160
    with pytest.raises(IndexError):
        trace.frame(trace.n_windows)
    trace.save(tmp_path / "t.npz")
    back = load_trace(tmp_path / "t.npz")
    assert back.meta == trace.meta and back.window == 40
    for cause, values in trace.stalls.items():
        np.testing.assert_array_equal(back.stalls[cause], values)


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda p: p.write_bytes(b""), "not a MeshScope trace"),
        (lambda p: p.write_text("just text"), "not a MeshScope trace"),
        (lambda p: np.savez(p, x=np.zeros(3)), "no meta"),
        (lambda p: p.mkdir(), "folder"),
    ],
    ids=["empty", "text", "other npz", "folder"],
)
def test_a_bad_trace_file_is_an_input_file_error(tmp_path, make, words):
    path = tmp_path / "t.npz"
    make(path)
    with pytest.raises(InputFileError, match=words):
        load_trace(path)

"""Synthetic traffic patterns as BookSim2's ``traffic.cpp`` defines them, worked out by hand
for a few sources; hotspot and matrix probabilities as the kernel draws them; the channel-
load bound against a brute-force routing of every flow; and every bad spec or matrix file
refused with a clear error.

BookSim2 numbers a mesh's nodes ``x + k · y``; on a 4×4 mesh (16 nodes, 4 bits) and an 8×8
mesh (64 nodes, 6 bits):

* transpose swaps the high and low halves of the bits: (x, y) → (y, x);
* bitcomp complements every bit: s → n − 1 − s;
* bitrev reverses the bits; shuffle rotates them left by one;
* tornado moves every coordinate ⌈k/2⌉ − 1 on (``(c + (k + 1)/2 − 1) mod k``);
* neighbor moves every coordinate one on (``(c + 1) mod k``).
"""

from __future__ import annotations

import numpy as np
import pytest

from engine.errors import InputFileError, SpecError, UnknownNameError
from engine.hardware import NocConstants
from engine.simulate import SyntheticRun, build_pattern, channel_load_bound, run_synthetic

# (pattern, k) -> {source: destination}, by hand from traffic.cpp
BY_HAND = {
    ("transpose", 4): {1: 4, 6: 9, 11: 14, 0: 0, 15: 15},  # 6 = (2,1) → (1,2) = 9
    ("transpose", 8): {1: 8, 10: 17, 63: 63, 7: 56},  # 10 = (2,1) → (1,2) = 17
    ("bitcomp", 4): {0: 15, 5: 10, 9: 6},
    ("bitcomp", 8): {0: 63, 10: 53, 63: 0},
    ("bitrev", 4): {1: 8, 3: 12, 6: 6, 11: 13},  # 1011 → 1101
    ("bitrev", 8): {1: 32, 3: 48, 10: 20},  # 001010 → 010100
    ("shuffle", 4): {1: 2, 8: 1, 9: 3, 15: 15},  # 1001 → 0011
    ("shuffle", 8): {5: 10, 32: 1, 33: 3},
    ("tornado", 4): {0: 5, 3: 4, 15: 0, 6: 11},  # offset (4 + 1) // 2 − 1 = 1
    ("tornado", 8): {0: 27, 6: 25, 63: 18},  # offset 3: (6,0) → (1,3) = 25
    ("neighbor", 4): {0: 5, 3: 4, 15: 0},
    ("neighbor", 8): {0: 9, 7: 8, 63: 0, 56: 1},  # (0,7) → (1,0)
}


@pytest.mark.parametrize(("name", "k"), list(BY_HAND))
def test_permutations_send_where_booksim2_does(name, k):
    pattern = build_pattern(name, k, k, k * k)
    for src, dst in BY_HAND[(name, k)].items():
        assert pattern.perm[src] == dst, (name, k, src)
    # and the kernel sends there: every packet of a short run follows the table
    res = run_synthetic(NocConstants(), SyntheticRun(name, k, k, rate=0.05, warmup=0,
                                                     cycles=300), keep_packets=True)  # fmt: skip
    pk = res.machine.packets()
    assert pk["src"].size > 50
    assert np.array_equal(res.machine.dest[: pk["src"].size], pattern.perm[pk["src"]])


@pytest.mark.parametrize("name", ["transpose", "bitcomp", "bitrev", "shuffle", "tornado",
                                  "neighbor", "randperm:seed=4"])  # fmt: skip
def test_permutations_are_permutations(name):
    for k in (4, 8):
        perm = build_pattern(name, k, k, k * k).perm
        assert sorted(perm.tolist()) == list(range(k * k))


def test_transpose_and_bitcomp_are_involutions_and_tornado_moves_every_coordinate():
    for k in (4, 8):
        for name in ("transpose", "bitcomp", "bitrev"):
            perm = build_pattern(name, k, k, k * k).perm
            assert np.array_equal(perm[perm], np.arange(k * k)), name
        s = np.arange(k * k)
        t = build_pattern("tornado", k, k, k * k).perm
        shift = (k + 1) // 2 - 1
        assert np.array_equal(t % k, (s % k + shift) % k)
        assert np.array_equal(t // k, (s // k + shift) % k)


def test_randperm_depends_on_its_seed_only():
    a = build_pattern("randperm:seed=5", 4, 4, 16).perm
    assert np.array_equal(a, build_pattern("randperm:seed=5", 4, 4, 16).perm)
    assert not np.array_equal(a, build_pattern("randperm:seed=6", 4, 4, 16).perm)


def kernel_destinations(spec: str, k: int, rate: float, cycles: int, seed: int = 0):
    """Sources and destinations of every packet the kernel made in a short run."""
    run = SyntheticRun(spec, k, k, rate=rate, warmup=0, cycles=cycles)
    res = run_synthetic(NocConstants(), run, seed=seed, keep_packets=True)
    pk = res.machine.packets()
    n = pk["src"].size
    return pk["src"], res.machine.dest[:n]


def test_uniform_sends_everywhere_itself_included():
    src, dst = kernel_destinations("uniform", 4, 0.3, 2000)
    counts = np.bincount(dst, minlength=16)
    n = dst.size
    assert np.all(np.abs(counts - n / 16) < 5 * np.sqrt(n / 16))
    share_self = np.mean(src == dst)
    assert share_self == pytest.approx(1 / 16, abs=5 * np.sqrt(1 / 16 / n))


def test_hotspot_fraction_and_rates():
    """hotspot:nodes=0+63,rates=1+3,fraction=0.5 on 8×8: half of the packets go to the
    hotspots, 1 : 3, the other half uniformly (hotspots included)."""
    spec = "hotspot:nodes=0+63,rates=1+3,fraction=0.5"
    src, dst = kernel_destinations(spec, 8, 0.02, 4000)
    n = dst.size
    expected = {0: 0.5 / 4 + 0.5 / 64, 63: 0.5 * 3 / 4 + 0.5 / 64}
    for node, p in expected.items():
        assert np.mean(dst == node) == pytest.approx(p, abs=5 * np.sqrt(p / n)), node
    others = ~np.isin(dst, [0, 63])
    assert np.mean(others) == pytest.approx(0.5 * 62 / 64, abs=5 * np.sqrt(0.5 / n))
    # BookSim2's hotspot (fraction 1): every packet to the one hotspot
    _, only = kernel_destinations("hotspot:nodes=9", 4, 0.1, 500)
    assert only.size > 50 and np.all(only == 9)
    # the numpy sampler of the same pattern agrees with the kernel
    pattern = build_pattern(spec, 8, 8, 64)
    d = pattern.destinations(np.zeros(40000, dtype=np.int64), 64, np.random.default_rng(1))
    assert np.mean(d == 63) == pytest.approx(expected[63], abs=0.01)


def test_a_matrix_pattern_from_a_csv(tmp_path):
    """Row s of the matrix: where s sends. Here s sends to s + 1 with weight 3 and to s + 5
    with weight 1 (mod 16), and source 2 is silent (a silent row sends to itself)."""
    w = np.zeros((16, 16))
    s = np.arange(16)
    w[s, (s + 1) % 16] = 3
    w[s, (s + 5) % 16] = 1
    w[2] = 0
    path = tmp_path / "m.csv"
    np.savetxt(path, w, delimiter=",")
    src, dst = kernel_destinations(f"matrix:file={path}", 4, 0.3, 2000)
    step = (dst - src) % 16
    talk = src != 2
    assert set(step[talk].tolist()) == {1, 5}
    assert np.mean(step[talk] == 1) == pytest.approx(0.75, abs=0.03)
    assert np.all(dst[~talk] == 2)


BAD_MATRICES = {
    "wrong-shape": "1,2\n3,4\n",
    "negative": "\n".join(
        ",".join("-1" if i == j == 3 else "1" for j in range(16)) for i in range(16)
    ),  # fmt: skip
    "non-numeric": "a,b,c\n1,2,3\n",
    "not-finite": "\n".join(
        ",".join("nan" if i == j == 0 else "1" for j in range(16)) for i in range(16)
    ),  # fmt: skip
    "ragged": "1,2,3\n1,2\n",
    "empty": "",
}


@pytest.mark.parametrize("case", list(BAD_MATRICES))
def test_a_bad_matrix_file_is_an_input_file_error(tmp_path, case):
    path = tmp_path / f"{case}.csv"
    path.write_text(BAD_MATRICES[case])
    with pytest.raises(InputFileError):
        build_pattern(f"matrix:file={path}", 4, 4, 16)


def test_a_missing_matrix_file_is_an_input_file_error(tmp_path):
    with pytest.raises(InputFileError, match="does not exist"):
        build_pattern(f"matrix:file={tmp_path / 'nope.csv'}", 4, 4, 16)
    with pytest.raises(SpecError, match="file"):
        build_pattern("matrix", 4, 4, 16)


BAD_SPECS = [
    ("sideways", 4, 4),  # no such pattern
    ("transpose", 8, 4),  # 32 terminals: not an even power of two
    ("bitcomp", 6, 5),  # not a power of two
    ("bitrev", 3, 3),
    ("shuffle", 5, 4),
    ("hotspot:nodes", 4, 4),  # malformed parameter
    ("hotspot:nodes=16", 4, 4),  # outside the mesh
    ("hotspot:nodes=a+b", 4, 4),
    ("hotspot:nodes=1,fraction=1.5", 4, 4),
    ("hotspot:nodes=1,fraction=half", 4, 4),
    ("hotspot:nodes=1+2,rates=0+1", 4, 4),
    ("randperm:seed=x", 4, 4),
    ("uniform:speed=2", 4, 4),  # a parameter the pattern does not take
    ("tornado:k=3", 4, 4),
]


@pytest.mark.parametrize(("spec", "w", "h"), BAD_SPECS)
def test_bad_specs_are_spec_errors(spec, w, h):
    with pytest.raises(SpecError):
        build_pattern(spec, w, h, w * h)


def test_an_unknown_pattern_names_the_known_ones():
    with pytest.raises(UnknownNameError) as err:
        build_pattern("sideways", 4, 4, 16)
    for name in ("uniform", "transpose", "tornado", "hotspot", "matrix"):
        assert name in str(err.value)


def test_tornado_and_neighbor_need_one_terminal_per_router():
    with pytest.raises(SpecError):
        build_pattern("tornado", 4, 4, 32)


# ------------------------------------------------------------------ the channel-load bound
def dor_router_loads(width, height, src, dst, weight) -> np.ndarray:
    """Per router-link slot ``4 · router + direction`` (E, W, S, N) the summed ``weight`` of
    the X-then-Y routes from router ``src[k]`` to router ``dst[k]``, hop by hop."""
    loads = np.zeros(4 * width * height)
    weight = np.asarray(weight, dtype=float)
    sx, sy, dx, dy = src % width, src // width, dst % width, dst // width
    x_step, y_step = np.sign(dx - sx), np.sign(dy - sy)
    x_port, y_port = np.where(x_step > 0, 0, 1), np.where(y_step > 0, 2, 3)
    for k in range(max(width, height) - 1):
        on = k < np.abs(dx - sx)  # the X leg, along the source's row
        np.add.at(loads, (4 * (sy * width + sx + k * x_step) + x_port)[on], weight[on])
        on = k < np.abs(dy - sy)  # the Y leg, along the destination's column
        np.add.at(loads, (4 * ((sy + k * y_step) * width + dx) + y_port)[on], weight[on])
    return loads


def probability_matrix(spec: str, w: int, h: int) -> np.ndarray:
    """P(d | s) written out here: uniform 1/n; a permutation's table; the hotspots'
    weights × fraction plus the uniform rest."""
    n = w * h
    if spec == "uniform":
        return np.full((n, n), 1 / n)
    if spec.startswith("hotspot"):
        p = np.full((n, n), 0.5 / n)
        p[:, 3] += 0.5 * 1 / 4
        p[:, 7] += 0.5 * 3 / 4
        return p
    p = np.zeros((n, n))
    p[np.arange(n), build_pattern(spec, w, h, n).perm] = 1
    return p


def brute_force_bound(p: np.ndarray, w: int, h: int) -> float:
    n = w * h
    s, d = np.repeat(np.arange(n), n), np.tile(np.arange(n), n)
    links = dor_router_loads(w, h, s, d, p.ravel())
    heaviest = max(1.0, links.max(), p.sum(axis=0).max())  # injection 1, ejection, links
    return 1.0 / heaviest


MESHES = [(4, 4), (8, 8), (8, 4), (6, 5), (3, 7)]
BOUND_SPECS = ["uniform", "transpose", "bitcomp", "bitrev", "shuffle", "tornado", "neighbor",
               "randperm:seed=3", "hotspot:nodes=3+7,rates=1+3,fraction=0.5"]  # fmt: skip


@pytest.mark.parametrize(("w", "h"), MESHES)
def test_channel_load_bound_equals_routing_every_flow(w, h):
    checked = 0
    for spec in BOUND_SPECS:
        try:
            pattern = build_pattern(spec, w, h, w * h)
        except SpecError:
            continue  # a bit pattern on a mesh that is not a power of two
        expected = brute_force_bound(probability_matrix(spec, w, h), w, h)
        assert channel_load_bound(pattern, w, h) == pytest.approx(expected, rel=1e-9), spec
        checked += 1
    assert checked >= 5


def test_channel_load_bound_of_a_matrix(tmp_path):
    w = np.zeros((16, 16))
    s = np.arange(16)
    w[s, (s + 1) % 16] = 3
    w[s, (s + 5) % 16] = 1
    path = tmp_path / "m.csv"
    np.savetxt(path, w, delimiter=",")
    pattern = build_pattern(f"matrix:file={path}", 4, 4, 16)
    p = w / w.sum(axis=1, keepdims=True)
    assert channel_load_bound(pattern, 4, 4) == pytest.approx(brute_force_bound(p, 4, 4))

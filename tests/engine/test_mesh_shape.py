"""SENMap §IV-B's compression schemes (``engine.mesh_shape``) and ``meshscope
mesh-shape``."""

from __future__ import annotations

import json

import pytest

from engine.cli import main
from engine.errors import MeshScopeError, SpecError
from engine.mesh_shape import SCHEMES, mesh_shape, mesh_slots
from tests.support.cli import run

N = range(1, 301)


def pairs(n: int) -> list[tuple[int, int]]:
    """Every factor pair (r, c) of ``n`` with r ≤ c, by trying every r."""
    return [(r, n // r) for r in range(1, n + 1) if n % r == 0 and r <= n // r]


def is_prime(n: int) -> bool:
    return n > 1 and all(n % d for d in range(2, n))


# ------------------------------------------------------------------ the paper's examples
def test_the_papers_examples():
    assert mesh_shape(30) == (5, 6)
    assert mesh_shape(30, "strict-area") == (5, 6)
    assert mesh_shape(31, "strict-area") == (1, 31)
    assert mesh_shape(31, "loose-area") == (4, 8)
    assert mesh_slots(31, "loose-area") == 32
    assert mesh_shape(26, "strict-area") == (2, 13)
    assert mesh_shape(26, "square") == (5, 6)
    assert mesh_slots(26, "square") == 30


@pytest.mark.parametrize(
    "cores, scheme, shape",
    [
        (1, "strict-area", (1, 1)),
        (1, "loose-area", (1, 1)),
        (1, "square", (1, 1)),
        (2, "loose-area", (1, 2)),  # 3 cores (1x3) is no shorter
        (3, "loose-area", (1, 3)),  # 4 cores (2x2) has the same sum, 4
        (5, "loose-area", (2, 3)),
        (4, "loose-area", (2, 2)),  # not a prime: never grown
        (30, "square", (5, 6)),
        (31, "square", (6, 6)),
        (36, "square", (6, 6)),
        (36, "strict-area", (6, 6)),
        (2, "square", (1, 2)),
        (3, "square", (2, 2)),
    ],
)
def test_edge_cases(cores, scheme, shape):
    assert mesh_shape(cores, scheme) == shape


# ------------------------------------------------------------------ brute force, n = 1..300
def test_strict_area_is_the_exact_factorisation_with_the_smallest_sum():
    for n in N:
        rows, columns = mesh_shape(n, "strict-area")
        assert rows * columns == n, n
        assert rows <= columns, n
        assert rows + columns == min(r + c for r, c in pairs(n)), n
        assert (rows == 1) == (n == 1 or is_prime(n)), n


def test_loose_area_grows_only_a_prime_and_only_when_the_sum_shrinks():
    for n in N:
        rows, columns = mesh_shape(n, "loose-area")
        assert rows <= columns, n
        grown_sum = min(r + c for r, c in pairs(n + 1))
        if is_prime(n) and grown_sum < 1 + n:
            assert rows * columns == n + 1, n
            assert rows + columns == grown_sum, n
            assert (rows, columns) == mesh_shape(n + 1, "strict-area"), n
        else:
            assert (rows, columns) == mesh_shape(n, "strict-area"), n
        assert mesh_slots(n, "loose-area") == rows * columns, n


def test_loose_area_grows_every_prime_from_5_and_nothing_else():
    grown = [n for n in N if mesh_slots(n, "loose-area") != n]
    assert grown == [n for n in N if is_prime(n) and n >= 5]


def test_square_is_the_smallest_near_square_mesh_that_holds_n():
    for n in N:
        rows, columns = mesh_shape(n, "square")
        assert rows * columns >= n, n
        assert rows <= columns <= rows + 1, n
        assert columns == next(c for c in range(1, n + 1) if c * c >= n), n  # ⌈√n⌉
        assert rows == next(r for r in range(1, columns + 1) if r * columns >= n), n
        near = [(r, c) for c in range(1, n + 1) for r in (c - 1, c) if r >= 1 and r * c >= n]
        assert rows * columns == min(r * c for r, c in near), n
        assert mesh_slots(n, "square") == rows * columns, n


def test_square_is_exact_beyond_floating_point():
    k = 2**30  # √(k² + 1) rounds to k in a float
    assert mesh_shape(k * k, "square") == (k, k)
    assert mesh_shape(k * k + 1, "square") == (k, k + 1)
    assert mesh_shape(k * (k + 1) + 1, "square") == (k + 1, k + 1)


def test_default_scheme_is_strict_area():
    assert SCHEMES == ("strict-area", "loose-area", "square")
    assert all(mesh_shape(n) == mesh_shape(n, "strict-area") for n in (7, 12, 26, 31))


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("cores", [0, -1, -30, True, 2.5, 30.0, "30", None])
def test_bad_core_counts_raise_spec_error(cores):
    for scheme in SCHEMES:
        with pytest.raises(SpecError, match="cores must be a positive whole number"):
            mesh_shape(cores, scheme)
    with pytest.raises(SpecError):
        mesh_slots(cores)


@pytest.mark.parametrize("scheme", ["nope", "Square", "", None])
def test_an_unknown_scheme_lists_the_known_ones(scheme):
    with pytest.raises(SpecError) as e:
        mesh_shape(30, scheme)
    assert f"unknown mesh scheme {scheme!r}" in str(e.value)
    assert all(s in str(e.value) for s in SCHEMES)


# ------------------------------------------------------------------ meshscope mesh-shape
@pytest.mark.parametrize(
    "argv, line",
    [
        (["--cores", "30"], "5x6\n"),
        (["--cores", "30", "--scheme", "strict-area"], "5x6\n"),
        (["--cores", "31"], "1x31\n"),
        (["--cores", "31", "--scheme", "loose-area"], "4x8\n"),
        (["--cores", "26", "--scheme", "square"], "5x6\n"),
        (["--cores", "1", "--scheme", "square"], "1x1\n"),
    ],
)
def test_cli_prints_one_line(capsys, argv, line):
    assert run(capsys, "mesh-shape", *argv) == (0, line, "")


@pytest.mark.parametrize(
    "cores, scheme, rows, columns, slots",
    [(30, "strict-area", 5, 6, 30), (31, "loose-area", 4, 8, 32), (26, "square", 5, 6, 30)],
)
def test_cli_json(capsys, cores, scheme, rows, columns, slots):
    code, out, err = run(capsys, "mesh-shape", "--cores", str(cores), "--scheme", scheme, "--json")
    assert (code, err) == (0, "")
    assert json.loads(out) == {
        "cores": cores,
        "scheme": scheme,
        "rows": rows,
        "columns": columns,
        "slots": slots,
    }


def test_cli_json_defaults_to_strict_area(capsys):
    code, out, _ = run(capsys, "mesh-shape", "--cores", "31", "--json")
    assert code == 0
    assert json.loads(out)["scheme"] == "strict-area"
    assert json.loads(out)["slots"] == 31


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--cores", "0"], "positive whole number"),
        (["--cores", "-4"], "positive whole number"),
        (["--cores", "x"], "positive whole number"),
        (["--cores", "2.5"], "positive whole number"),
        (["--cores", "30", "--scheme", "nope"], "strict-area, loose-area, square"),
        ([], "--cores"),
    ],
    ids=["zero", "negative", "not a number", "fraction", "unknown scheme", "no cores"],
)
def test_cli_bad_input_exits_2_with_one_line(capsys, argv, message):
    code, out, err = run(capsys, "mesh-shape", *argv)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("meshscope: error: ")
    assert message in err


# ------------------------------------------------------------------ sizing a mapping's mesh
def test_a_preset_resized_keeps_its_core_and_takes_the_new_grid():
    from engine.hardware import load_hardware

    base, small = load_hardware("seneca"), load_hardware("seneca@5x6")
    assert (small.n_cores, small.n_chips, small.height, small.width) == (30, 1, 5, 6)
    assert small.limits == base.limits and small.model == base.model
    assert small.fingerprint != base.fingerprint
    assert load_hardware("loihi2-x8@2x3").n_cores == 2 * 3 * 4  # its cores per router stay
    with pytest.raises(MeshScopeError):
        load_hardware("seneca@0x3")


@pytest.mark.parametrize("scheme", SCHEMES)
def test_a_mapping_is_placed_on_the_mesh_its_scheme_sizes(scheme, tmp_path):
    from engine.pipeline import build_mapping, evaluate, write_mapping_file

    mapped = build_mapping(
        "sparse-mlp-1", "loihi2", partition="min", placement="packed-row", mesh_scheme=scheme
    )
    parts = mapped.mapping.partition.n_parts  # 43 partitions, 4 cores a router: 11 routers
    rows, columns = mesh_shape(-(-parts // 4), scheme)
    hw = mapped.hardware
    assert (hw.height, hw.width, hw.name) == (rows, columns, f"loihi2@{rows}x{columns}")
    assert hw.n_cores >= parts and len(set(mapped.mapping.placement.cores.tolist())) == parts
    path = tmp_path / "m.json"
    write_mapping_file(path, mapped)
    again = build_mapping(mapping_file=str(path))  # the file's hardware name is a spec
    assert again.hardware == hw
    assert evaluate(again).latency_us == evaluate(mapped).latency_us


def test_the_command_line_sizes_the_mesh_and_refuses_it_with_a_mapping_file(tmp_path, capsys):
    assert main(["evaluate", "--network", "sparse-mlp-1", "--hardware", "seneca",
                 "--partition", "greedy", "--mesh-scheme", "square", "--json"]) == 0  # fmt: skip
    out = json.loads(capsys.readouterr().out)
    assert out["cores_used"] == 6
    assert main(["evaluate", "--mapping", str(tmp_path / "x.json"), "--mesh-scheme",
                 "square"]) == 2  # fmt: skip
    assert "--mesh-scheme" in capsys.readouterr().err


def test_the_factor_search_is_bounded():
    with pytest.raises(SpecError, match="use the square scheme"):
        mesh_shape(2**61 - 1, "strict-area")  # a prime: √n steps would take minutes
    assert mesh_shape(2**61 - 1, "square")[0] * mesh_shape(2**61 - 1, "square")[1] >= 2**61 - 1

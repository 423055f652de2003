"""``meshscope simulate``, ``sweep``, ``evaluate --simulate`` and the simulated objective, as
a user and a script meet them: the documented JSON keys, the same numbers as the Python
API, one-line errors, outputs written whole, progress on a terminal."""

from __future__ import annotations

import csv
import dataclasses
import json
import math

import numpy as np
import pytest

from engine.hardware import NocConstants
from engine.pipeline import build_mapping, evaluate, spike_loads
from engine.simulate import (
    SyntheticRun,
    build_pattern,
    channel_load_bound,
    draw_spikes,
    load_trace,
    run_synthetic,
    simulate_step,
)
from engine.simulate.walk import endpoint_text
from tests.support.cli import run, run_json, run_on_a_terminal

NET = "mlp:widths=64-96-48"
HW = "mesh:3x3x2"
PATTERN = ["--pattern", "uniform", "--mesh", "4x4", "--warmup", "300", "--cycles", "1500"]

SYNTHETIC_KEYS = {
    "latency_avg", "network_latency_avg", "offered_flit_rate", "accepted_flit_rate",
    "hops_avg", "stable", "cycles", "wall_s", "cycles_per_s",
}  # fmt: skip
STEP_KEYS = {"step_cycles", "step_us", "mode", "bound", "links"}


def assert_one_line_error(code, out, err, *words):
    assert code == 2, err
    assert out == ""
    assert err.startswith("meshscope: error: ") and err.count("\n") == 1, err
    for word in words:
        assert word in err, err


# ------------------------------------------------------------------ synthetic traffic
def test_a_synthetic_run_prints_the_documented_keys_and_the_api_numbers(capsys):
    data = run_json(capsys, "simulate", *PATTERN, "--rate", "0.15", "--seed", "3", "--json")
    assert set(data) >= SYNTHETIC_KEYS
    run_ = SyntheticRun("uniform", 4, 4, rate=0.15, warmup=300, cycles=1500)
    api = run_synthetic(NocConstants(), run_, seed=3).to_dict()
    for key in SYNTHETIC_KEYS - {"wall_s", "cycles_per_s"}:
        assert data[key] == api[key], key
    assert data["stable"] is True
    assert math.isclose(data["accepted_flit_rate"], 0.15, rel_tol=0.1)
    assert data["cycles_per_s"] > 0
    assert sum(data["latency_histogram"]["counts"]) == data["measured_packets"]


def test_router_options_change_the_router(capsys):
    """Deeper pipelines add latency: one more cycle of VC allocation per router crossed."""
    base = run_json(capsys, "simulate", *PATTERN, "--rate", "0.01", "--json")
    slower = run_json(capsys, "simulate", *PATTERN, "--rate", "0.01", "--vc-alloc-delay", "2",
                      "--json")  # fmt: skip
    assert slower["zero_load_latency"] == pytest.approx(
        base["zero_load_latency"] + base["hops_avg"], rel=0.02
    )
    assert slower["latency_avg"] > base["latency_avg"] + 2


def test_a_synthetic_trace_is_written_and_reads_back(capsys, tmp_path):
    path = tmp_path / "run.npz"
    data = run_json(capsys, "simulate", *PATTERN, "--rate", "0.1", "--save-trace", str(path),
                    "--window", "50", "--json")  # fmt: skip
    trace = load_trace(path)
    assert trace.window == 50 and trace.meta["kind"] == "synthetic"
    assert trace.n_windows == math.ceil(data["cycles"] / 50)
    assert trace.link_flits.sum() > 0


def test_the_text_report_names_the_verdict_and_speed(capsys):
    code, out, err = run(capsys, "simulate", *PATTERN, "--rate", "1.0")
    assert code == 0, err
    assert "UNSTABLE" in out  # at the channel-load bound of a 4x4 mesh, past saturation
    assert "cycles/s" in out


# ------------------------------------------------------------------ a mapping's step
@pytest.fixture(scope="module")
def mapped():
    return build_mapping(NET, HW, partition="min+1", placement="spread-row")


def test_a_step_prints_the_documented_keys_and_the_api_numbers(capsys, mapped):
    data = run_json(capsys, "simulate", "--network", NET, "--hardware", HW, "--partition",
                    "min+1", "--placement", "spread-row", "--seed", "4", "--json")  # fmt: skip
    assert set(data) >= STEP_KEYS
    api = simulate_step(mapped, seed=4)
    assert (data["step_cycles"], data["step_us"], data["bound"]) == (
        api.step_cycles, api.step_us, api.bound,
    )  # fmt: skip
    assert data["mode"] == "pipelined"
    flits = np.zeros_like(api.link_flits)
    for link in data["links"]:
        flits[link["id"]] = link["flits"]
    np.testing.assert_array_equal(flits, api.link_flits)
    spikes = draw_spikes(mapped.network.rate, "sample", seed=4)
    np.testing.assert_array_equal(flits, spike_loads(mapped, spikes) * api.packet_flits)
    assert data["analytic"]["latency_us"] == pytest.approx(evaluate(mapped).latency_us)


def test_fall_through_reports_one_phase_per_layer(capsys, mapped):
    data = run_json(capsys, "simulate", "--network", NET, "--hardware", HW, "--partition",
                    "min+1", "--placement", "spread-row", "--mode", "fall-through",
                    "--json")  # fmt: skip
    assert data["mode"] == "fall-through"
    assert [p["layer"] for p in data["phases"]] == list(mapped.network.population_names)
    starts = [p["start_cycles"] for p in data["phases"]]
    assert starts == sorted(starts)


def test_a_step_writes_its_trace_and_exports(capsys, tmp_path):
    argv = ["simulate", "--network", NET, "--hardware", HW, "--partition", "min+1",
            "--save-trace", tmp_path / "step.npz", "--export-booksim", tmp_path / "bs",
            "--export-noxim", tmp_path / "step.noxim"]  # fmt: skip
    code, out, err = run(capsys, *map(str, argv))
    assert code == 0, err
    names = {p.name for p in tmp_path.iterdir()}
    assert names == {"step.npz", "bs.anynet", "bs.cfg", "bs.trace", "step.noxim"}
    assert load_trace(tmp_path / "step.npz").meta["kind"] == "step"
    assert "simulated" in out and "analytic" in out


def test_router_options_apply_to_a_step(capsys):
    argv = ["simulate", "--network", NET, "--hardware", HW, "--partition", "min+1", "--json"]
    base = run_json(capsys, *argv)
    deep = run_json(capsys, *argv, "--vc-alloc-delay", "4")
    assert deep["latency"]["transit_avg_cycles"] > base["latency"]["transit_avg_cycles"] + 3
    assert deep["step_cycles"] >= base["step_cycles"]


def test_evaluate_simulate_reports_both_models(capsys, mapped):
    data = run_json(capsys, "evaluate", "--network", NET, "--hardware", HW, "--partition",
                    "min+1", "--placement", "spread-row", "--simulate", "--json")  # fmt: skip
    assert data["latency_us"] == pytest.approx(evaluate(mapped).latency_us)
    assert data["simulated"]["step_us"] == simulate_step(mapped, seed=0).step_us
    code, out, _ = run(capsys, "evaluate", "--network", NET, "--hardware", HW, "--simulate")
    assert code == 0 and "latency" in out and "simulated" in out


def test_evaluate_multicast_lowers_the_loads(capsys):
    argv = ["evaluate", "--network", NET, "--hardware", HW, "--partition", "min+1",
            "--placement", "spread-row", "--json"]  # fmt: skip
    unicast = run_json(capsys, *argv)
    multicast = run_json(capsys, *argv, "--multicast")
    assert multicast["multicast"] is True
    assert multicast["max_link_messages"] <= unicast["max_link_messages"] * (1 + 1e-6)


# ------------------------------------------------------------------ sweep
def test_sweep_reads_the_curve_and_writes_csv_and_figure(capsys, tmp_path):
    rates = [0.05, 0.2, 0.45]
    data = run_json(capsys, "sweep", "--mesh", "4x4", "--rates", ",".join(map(str, rates)),
                    "--warmup", "300", "--cycles", "1500", "--workers", "2", "--csv",
                    str(tmp_path / "s.csv"), "--figure", str(tmp_path / "s.png"),
                    "--json")  # fmt: skip
    assert [p["rate"] for p in data["points"]] == rates
    assert data["channel_bound"] == pytest.approx(1.0)  # 4/k on a 4x4 mesh
    assert data["zero_load_latency"] == data["points"][0]["latency_avg"]
    assert all(p["accepted_flit_rate"] <= data["channel_bound"] + 0.02 for p in data["points"])
    rows = list(csv.DictReader((tmp_path / "s.csv").open()))
    assert [float(r["rate"]) for r in rows] == rates
    assert (tmp_path / "s.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_sweep_text(capsys):
    code, out, err = run(capsys, "sweep", "--mesh", "4x4", "--rates", "0.05:0.1:0.05",
                         "--cycles", "500", "--warmup", "100", "--workers", "1")  # fmt: skip
    assert code == 0, err
    assert "zero-load latency" in out and "channel-load bound 1.0000" in out


def test_a_run_past_saturation_that_passes_booksim2s_test_says_saturated(capsys):
    """Issue 59: transpose 8×8 at 0.10 averaged 203 cycles, six times zero-load, and said only
    "stable": true. It now says "saturated" too (the sweep's test); 0.08 is not."""
    past = run_json(capsys, "simulate", "--pattern", "transpose", "--mesh", "8x8", "--rate",
                    "0.1", "--json")  # fmt: skip
    assert past["stable"] and past["saturated"]
    assert past["latency_avg"] >= 3 * past["zero_load_latency"]
    below = run_json(capsys, "simulate", "--pattern", "transpose", "--mesh", "8x8", "--rate",
                     "0.08", "--json")  # fmt: skip
    assert below["stable"] and not below["saturated"]


def test_sweep_refine_locates_saturation_within_its_step(capsys):
    data = run_json(capsys, "sweep", "--pattern", "transpose", "--mesh", "8x8", "--rates",
                    "0.02,0.06,0.12", "--refine", "0.01", "--workers", "1", "--json")  # fmt: skip
    rates = [p["rate"] for p in data["points"]]
    assert rates == sorted(rates) and len(rates) > 3  # rates added between 0.06 and 0.12
    sat = data["saturation_rate"]
    assert abs(sat - 0.09) <= 0.01 + 1e-9  # BookSim2: 0.09 (test_transpose_booksim.py)
    assert min(r for r in rates if r > sat) - sat == pytest.approx(0.01)
    code, _, err = run(capsys, "sweep", "--rates", "0.1", "--refine", "2")
    assert code == 2 and "--refine" in err


def test_walk_one_packet_from_the_command_line(capsys, mapped):
    """``--walk`` follows a packet of the same run: the slowest by default, or one between
    two named ends, in JSON and as text."""
    data = run_json(capsys, "simulate", *PATTERN, "--rate", "0.3", "--walk", "slowest", "--json")
    walk = data["walk"]
    assert walk["latency"] == data["latency_max"]
    assert walk["hops"][0]["came_from"] == "core" and walk["hops"][-1]["out"] == "core"
    assert walk["latency"] - walk["zero_load"] == walk["at_source"] + sum(
        h["waited"] for h in walk["hops"]
    )
    step = ["--network", NET, "--hardware", HW, "--partition", "min+1", "--placement",
            "spread-row"]  # fmt: skip
    first = simulate_step(mapped).machine  # a pair of the step's traffic, far apart
    pk, table = first.packets(), mapped.hardware.core_table
    src, dst = pk["src"], first.dest[pk["lo"]]
    j = int(np.argmax(np.abs(table["gx"][src] - table["gx"][dst])
                      + np.abs(table["gy"][src] - table["gy"][dst])))  # fmt: skip
    ends = f"{endpoint_text(mapped.hardware, src[j])}->{endpoint_text(mapped.hardware, dst[j])}"
    data = run_json(capsys, "simulate", *step, "--walk", ends, "--walk-which", "first",
                    "--json")  # fmt: skip
    walk = data["walk"]
    assert (walk["src"], walk["dst"]) == (src[j], dst[j])
    (sx, sy), (dx, dy) = [(table["gx"][c], table["gy"][c]) for c in (src[j], dst[j])]
    route = [f"({x},{sy})" for x in range(sx, dx, 1 if dx > sx else -1)]
    route += [f"({dx},{y})" for y in range(sy, dy + (1 if dy >= sy else -1), 1 if dy >= sy else -1)]
    assert [h["router"] for h in walk["hops"]] == route
    code, out, err = run(capsys, "simulate", *step, "--walk", "slowest")
    assert code == 0, err
    assert "walk: the slowest of" in out and "why" in out


def test_o1turn_from_the_command_line(capsys, mapped):
    """``--routing o1turn``: a synthetic run and a sweep are the API's O1TURN runs; a mapping's
    step routes each packet as its seed draws, the analytic figures follow the same routing,
    and the text names it."""
    o1turn = NocConstants(routing="o1turn")
    transpose = ["--pattern", "transpose", "--mesh", "4x4", "--warmup", "300", "--cycles", "1500"]
    data = run_json(capsys, "simulate", *transpose, "--rate", "0.1", "--routing", "o1turn",
                    "--seed", "2", "--json")  # fmt: skip
    run_ = SyntheticRun("transpose", 4, 4, rate=0.1, warmup=300, cycles=1500)
    api = run_synthetic(o1turn, run_, seed=2).to_dict()
    assert data["latency_avg"] == api["latency_avg"]
    assert data["latency_avg"] != run_synthetic(NocConstants(), run_, seed=2).latency_avg
    curve = run_json(capsys, "sweep", *transpose, "--rates", "0.05", "--routing", "o1turn",
                     "--workers", "1", "--json")  # fmt: skip
    bound = channel_load_bound(build_pattern("transpose", 4, 4, 16), 4, 4, "o1turn")
    assert (
        curve["channel_bound"]
        == pytest.approx(bound)
        != channel_load_bound(build_pattern("transpose", 4, 4, 16), 4, 4)
    )
    step = ["simulate", "--network", NET, "--hardware", HW, "--partition", "min+1",
            "--placement", "spread-row", "--seed", "4", "--routing", "o1turn"]  # fmt: skip
    data = run_json(capsys, *step, "--json")
    hw = dataclasses.replace(mapped.hardware, noc=dataclasses.replace(
        mapped.hardware.noc, routing="o1turn"))  # fmt: skip
    routed = dataclasses.replace(mapped, hardware=hw)
    flits = np.zeros(hw.n_link_ids, dtype=np.int64)
    for link in data["links"]:
        flits[link["id"]] = link["flits"]
    spikes = draw_spikes(mapped.network.rate, "sample", seed=4)
    np.testing.assert_array_equal(flits, spike_loads(routed, spikes, seed=4)
                                  * data["packet_flits"])  # fmt: skip
    assert data["analytic"]["latency_us"] == pytest.approx(evaluate(routed).latency_us)
    code, out, err = run(capsys, "simulate", *transpose, "--routing", "o1turn")
    assert code == 0 and "O1TURN" in out, err


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["simulate", "--pattern", "uniform", "--network", NET], ["--network", "mapping"]),
        (["simulate", "--rate", "0.1"], ["--rate", "--pattern"]),
        (["simulate", "--pattern", "uniform", "--mesh", "8by8"], ["--mesh", "8by8"]),
        (["simulate", "--pattern", "nosuch"], ["nosuch", "uniform"]),
        (["simulate", "--pattern", "transpose", "--mesh", "3x3"], ["power-of-two"]),
        (["simulate", "--pattern", "uniform", "--rate", "1.5"], ["[0, 1]"]),
        (["simulate", "--pattern", "uniform", "--vcs", "0"], ["vcs"]),
        (["simulate", "--pattern", "uniform", "--routing", "o1turn", "--vcs", "3"],
         ["o1turn", "vcs must be even"]),
        (["simulate", "--pattern", "uniform", "--routing", "west-first"], ["xy", "o1turn"]),
        (["simulate", "--pattern", "hotspot:nodes=99", "--mesh", "4x4"], ["hotspot"]),
        (["simulate", "--pattern", "matrix"], ["matrix:file="]),
        (["simulate", "--pattern", "uniform", "--mesh", "4x4", "--walk", "0,0-3,3"], ["SRC->DST"]),
        (["simulate", "--pattern", "uniform", "--mesh", "4x4", "--walk", "0,0->4,0"],
         ["off the 4×4 mesh"]),
        (["simulate", "--network", NET, "--hardware", HW, "--walk", "0,0,2->1,1"],
         ["cores 0–1"]),
        (["simulate", "--pattern", "uniform", "--walk-which", "median"], ["--walk too"]),
        (["simulate", "--pattern", "uniform", "--walk", ""], ["SRC->DST"]),
        (["sweep", "--rates", "0.5:0.1:0.1"], ["START:STOP:STEP"]),
        (["sweep", "--rates", "0.1", "--figure", "x.gif"], [".png"]),
        (["evolve", "--objective", "simulated-latency", "--evaluator-cmd", "true"],
         ["simulated-latency", "--evaluator-cmd"]),
    ],
    ids=["pattern+network", "rate alone", "mesh", "pattern", "transpose 3x3", "rate",
         "vcs", "o1turn vcs", "routing", "hotspot node", "matrix file", "walk arrow",
         "walk off the mesh", "walk core",
         "walk-which alone", "walk empty",
         "rates", "figure", "objective+cmd"],
)  # fmt: skip
def test_bad_simulator_input_is_one_line(capsys, tmp_path, monkeypatch, argv, words):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, *argv)
    assert_one_line_error(code, out, err, *words)
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------ the simulated objective
def test_evolve_can_minimise_the_simulated_step(capsys, tmp_path):
    history = tmp_path / "h.jsonl"
    data = run_json(capsys, "evolve", "--network", "linear-dense:M=2,N=8", "--hardware", HW,
                    "--budget", "10", "--objective", "simulated-latency", "--history",
                    str(history), "--json")  # fmt: skip
    run, *records, end = [json.loads(line) for line in history.read_text().splitlines()]
    assert run["objectives"] == ["simulated-latency"]
    assert end["end"] == "complete" and len(records) == 10
    simulated = [r["simulated_us"] for r in records if not r["failed"]]
    assert simulated and all(s > 0 for s in simulated)
    best = min(records, key=lambda r: r["fitness"])
    assert best["fitness"] == best["simulated_us"] == data["best_simulated_us"]
    assert set(data["heuristics_simulated_us"]) == set(data["heuristics"])


# ------------------------------------------------------------------ progress
def test_a_long_synthetic_run_shows_a_bar_on_a_terminal(tmp_path):
    code, terminal = run_on_a_terminal(
        ["simulate", "--pattern", "uniform", "--mesh", "4x4", "--cycles", "8000"], tmp_path
    )
    assert code == 0, terminal
    assert "█" in terminal and "cycle" in terminal


# ------------------------------------------------------------------ past saturation
PAST = ["--pattern", "uniform", "--mesh", "6x6", "--rate", "0.7", "--warmup", "0", "--cycles",
        "6000", "--seed", "6"]  # fmt: skip


def test_a_run_past_saturation_says_it_stopped(capsys):
    code, out, err = run(capsys, "simulate", *PAST)
    assert code == 0, err
    assert "STOPPED at cycle 5,000" in out and "--keep-going" in out
    data = run_json(capsys, "simulate", *PAST, "--json")
    assert data["cycles"] == 5000 and data["stopped"]["cycle"] == 5000
    assert data["stopped"]["kept_going"] is False


def test_keep_going_runs_past_saturation_to_the_end(capsys):
    data = run_json(capsys, "simulate", *PAST, "--keep-going", "--json")
    assert data["cycles"] > 6000 and data["stable"] is False
    assert data["stopped"]["kept_going"] is True
    code, out, err = run(capsys, "simulate", *PAST, "--keep-going")
    assert "STOPPED" not in out and "ran on to the end (--keep-going)" in out
    code, out, err = run(capsys, "simulate", "--network", NET, "--hardware", HW, "--keep-going")
    assert_one_line_error(code, out, err, "--keep_going", "--pattern")


def test_a_synthetic_run_starts_without_the_mapping_side():
    """``meshscope simulate --pattern`` is a process a student runs many times: it imports the
    simulator and not the mapping machinery (engine.pipeline, engine.evaluation.cost, scipy's sparse
    matrices and KD-trees), which a step needs and a bare mesh does not."""
    import subprocess
    import sys

    code = (
        "import contextlib, io, sys\n"
        "from explorer.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert main(['simulate', *sys.argv[1:], '--json']) == 0\n"
        "heavy = ('engine.pipeline', 'engine.evaluation.cost', 'engine.simulate.step',\n"
        "         'scipy.sparse', 'scipy.spatial')\n"
        "print(' '.join(m for m in heavy if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code, *PATTERN], capture_output=True, text=True,
                          check=True, timeout=300)  # fmt: skip
    assert done.stdout.split() == []


def test_stable_says_what_it_means_and_how_far_past_zero_load(capsys):
    """'stable' is BookSim2's test (every measured packet delivered, average latency under 500
    cycles), which transpose at 0.1 on an 8x8 mesh passes at six times its zero-load latency,
    past the 3x a sweep calls saturation (docs/simulator.md: saturated from 0.08); the line
    says both, and a run far from saturation says it is under."""
    code, out, err = run(capsys, "simulate", "--pattern", "transpose", "--mesh", "8x8", "--rate",
                         "0.1")  # fmt: skip
    assert code == 0, err
    line = next(x for x in out.splitlines() if "stable" in x)
    assert "BookSim2's test" in line and "under 500 cycles" in line
    assert "past the 3x 'sweep' calls saturation" in line
    ratio = float(line.split("average latency ")[2].split("x")[0])
    assert ratio > 3
    code, out, _ = run(
        capsys, "simulate", "--pattern", "uniform", "--mesh", "8x8", "--rate", "0.05"
    )
    assert "under the 3x 'sweep' calls saturation" in out

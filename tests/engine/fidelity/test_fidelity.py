"""Fidelity: the microbenchmarks' op counts, calibration, validation statistics, the
measurements CSV and the three commands (microbench, calibrate, validate)."""

from __future__ import annotations

import csv
import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from engine.errors import CapacityError, InputFileError, UnknownNameError
from engine.evaluation.cost import TERMS
from engine.fidelity.calibrate import calibrate, fit_clock, fit_max_affine
from engine.fidelity.measurements import read_measurements
from engine.fidelity.predict import constants_vector, max_affine, predict
from engine.fidelity.stats import agreement
from engine.fidelity.suites import suite_runs
from engine.hardware import ROUTER, load_hardware
from engine.hardware.provenance import write_preset
from engine.pipeline import build_mapping, evaluate
from engine.simulate import simulate_step
from tests.support.cli import run

LOIHI2 = load_hardware("loihi2")


def truth(hw=LOIHI2, **scale):
    """``hw`` with its five model constants scaled (the hardware a synthetic test measures)."""
    m, lk = hw.model, hw.links
    return replace(
        hw,
        model=replace(
            m,
            dendop_ns=m.dendop_ns * scale.get("dendops", 1.0),
            synop_ns=m.synop_ns * scale.get("synops", 1.0),
            synmem_read_ns=m.synmem_read_ns * scale.get("synmem", 1.0),
            barrier_us=m.barrier_us * scale.get("barrier", 1.0),
        ),
        links=replace(lk, router_bits_per_us=lk.router_bits_per_us * scale.get("bandwidth", 1.0)),
    )


def synthetic_times(x, hw, noise: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return max_affine(x, constants_vector(hw)) * (1 + noise * rng.standard_normal(len(x)))


# ------------------------------------------------------------------ microbenchmarks
def stats_of(network: str, placement: str):
    mapped = build_mapping(network, "loihi2", partition="natural", placement=placement)
    return mapped, evaluate(mapped)


def test_the_dendop_microbenchmark_is_n_neuron_updates_on_one_core_and_nothing_else():
    mapped, ev = stats_of("mb-dendop:N=4095", "packed-row")
    g = mapped.graph
    assert g.n_parts == 1 and g.neurons.tolist() == [4095]
    assert g.synops.sum() == 0 and g.synmem_reads.sum() == 0 and ev.link_messages.sum() == 0


@pytest.mark.parametrize("n", [64, 256, 512])
def test_the_synop_microbenchmark_does_n_squared_synops(n):
    mapped, ev = stats_of(f"mb-synop:N={n}", "pairs-halves")
    g = mapped.graph
    assert g.synops.max() == n * n  # Fig. 2c: N spikes × N weights
    assert g.neurons.tolist() == [n, n]
    assert g.synmem_reads.max() == n * math.ceil(n * 1 / 64)  # 1-bit rows of 64-bit words
    assert ev.bottleneck == "synops" or n == 64


@pytest.mark.parametrize("n", [64, 256])
def test_the_synmem_microbenchmark_reads_whole_rows_for_n_synops(n):
    mapped, ev = stats_of(f"mb-synmem:N={n}", "pairs-halves")
    g = mapped.graph
    assert g.synops.max() == n  # identity: one non-zero weight per spike (Fig. 2d)
    assert g.synmem_reads.max() == n * math.ceil(8 * n / 64)  # 8-bit rows read whole: O(N²)


def test_the_link_microbenchmark_puts_m_times_n_messages_on_one_link():
    m, n = 12, 4095  # the paper's
    mapped, ev = stats_of(f"mb-link:M={m},N={n}", "pairs-column")
    kind = mapped.hardware.link_table["kind"]
    router = np.where(kind == ROUTER, ev.link_messages, 0)
    assert router.max() == m * n  # all pairs share the column's middle link (Fig. 3a)
    assert np.count_nonzero(router == m * n) >= 1
    assert ev.link_messages[kind != ROUTER].max() == n  # a core link carries one pair's
    assert mapped.graph.synops.max() == n and ev.bottleneck == "link"
    xs = mapped.hardware.core_table["gx"][mapped.mapping.placement.cores]
    assert set(xs.tolist()) == {0}  # one router column


def test_the_barrier_microbenchmark_sends_nothing():
    mapped, ev = stats_of("mb-barrier", "pairs-halves")
    assert ev.link_messages.sum() == 0 and mapped.graph.synops.sum() == 0
    assert mapped.graph.neurons.tolist() == [1, 1] and ev.bottleneck == "barrier"


def test_pairs_column_refuses_more_pairs_than_a_column_holds():
    with pytest.raises(CapacityError, match=r"at most 16"):
        build_mapping("mb-link:M=17,N=8", "loihi2", partition="natural", placement="pairs-column")


def test_every_microbenchmark_saturates_the_term_it_is_named_for_once_scaled():
    runs = suite_runs("microbench", "loihi2")
    assert {r.saturates for r in runs} == set(TERMS)
    preds = predict(runs, simulator=False)
    for term in TERMS:  # the largest run of each benchmark is bound by its term (Fig. 4)
        largest = [p for r, p in zip(runs, preds, strict=True) if r.saturates == term][-1]
        assert largest.bound == term


def test_the_linear_grid_keeps_only_the_configurations_that_fit():
    runs = suite_runs("linear-grid", "loihi2")
    names = {r.network for r in runs}
    assert "linear-dense:M=1,N=1,bits=1" in names and "linear-dense:M=60,N=1,bits=8" in names
    assert "linear-dense:M=60,N=256,bits=1" not in names  # 15,360 inbound axons > 8,192
    assert {int(r.network.split("bits=")[1]) for r in runs} == set(range(1, 9))
    for run_ in (runs[-1], max(runs, key=lambda r: int(r.network.split("N=")[1].split(",")[0]))):
        mapped = build_mapping(run_.network, "loihi2", partition=run_.partition,
                               placement=run_.placement)  # fmt: skip
        evaluate(mapped)  # fits: raises otherwise


def test_an_unknown_suite_is_named_with_the_known_ones():
    with pytest.raises(UnknownNameError, match="microbench"):
        suite_runs("microbenchmarks", "loihi2")


# ------------------------------------------------------------------ the model's counts
def test_the_max_affine_model_of_the_counts_is_the_evaluated_latency():
    runs = suite_runs("tiled-identity", "loihi2")[:4] + suite_runs("microbench", "loihi2")[::3]
    for p in predict(runs, simulator=False):
        assert max_affine(p.counts, constants_vector(LOIHI2))[0] == pytest.approx(
            evaluate(p.mapped).latency_us, rel=1e-12
        )


# ------------------------------------------------------------------ calibration
@pytest.fixture(scope="module")
def microbench_counts():
    runs = suite_runs("microbench", "loihi2")
    return runs, np.array([p.counts for p in predict(runs, simulator=False)])


SCALES = {"dendops": 1.3, "synops": 0.7, "synmem": 1.2, "bandwidth": 1.4, "barrier": 0.8}


@pytest.mark.parametrize("labelled", [True, False], ids=["labelled", "unlabelled"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_calibration_recovers_known_constants_from_noisy_measurements(
    microbench_counts, labelled, seed
):
    runs, x = microbench_counts
    true = truth(**SCALES)
    t = synthetic_times(x, true, noise=0.02, seed=seed)
    labels = [r.saturates for r in runs] if labelled else None
    cal = calibrate(x, t, LOIHI2, what="synthetic.csv", labels=labels)
    got, want = constants_vector(cal.hardware), constants_vector(true)
    assert np.all(np.abs(got / want - 1) < 0.05), got / want
    for fit in cal.terms:
        assert fit.points > 0 and fit.source.startswith("fitted: synthetic.csv, ")


def test_calibration_starting_far_off_still_finds_the_constants(microbench_counts):
    runs, x = microbench_counts
    true = truth(**SCALES)
    t = synthetic_times(x, true, noise=0.02, seed=5)
    start = truth(dendops=4.0, synops=0.2, synmem=5.0, bandwidth=0.25, barrier=3.0)
    cal = calibrate(x, t, start, what="synthetic.csv")
    assert np.all(np.abs(constants_vector(cal.hardware) / constants_vector(true) - 1) < 0.05)


def test_a_term_no_run_is_bound_by_keeps_its_constant_and_its_source(microbench_counts):
    runs, x = microbench_counts
    keep = np.array([r.saturates != "synmem" for r in runs])
    t = synthetic_times(x[keep], truth(**SCALES), noise=0.0, seed=0)
    cal = calibrate(x[keep], t, LOIHI2, what="some.csv")
    synmem = next(f for f in cal.terms if f.term == "synmem")
    assert synmem.points == 0 and synmem.value == LOIHI2.model.synmem_read_ns
    assert cal.hardware.source("model.synmem_read_ns") == LOIHI2.source("model.synmem_read_ns")
    assert cal.hardware.source("model.synop_ns").startswith("fitted: some.csv")


def test_core_and_offchip_bandwidths_keep_their_ratio_to_the_fitted_mesh_link(microbench_counts):
    runs, x = microbench_counts
    cal = calibrate(x, synthetic_times(x, truth(**SCALES), 0.0, 0), LOIHI2, what="r.csv")
    lk = cal.hardware.links
    assert lk.router_bits_per_us == pytest.approx(1.4 * LOIHI2.links.router_bits_per_us)
    before = LOIHI2.links.offchip_bits_per_us / LOIHI2.links.router_bits_per_us
    assert lk.offchip_bits_per_us / lk.router_bits_per_us == pytest.approx(before)
    source = cal.hardware.source("links.offchip_bits_per_us")
    assert source.startswith("fitted: the fitted router_bits_per_us × 0.25")


def test_the_written_constants_reproduce_the_fit():
    """A run that one term's start would bound but the fit moves to another: the constant
    it left is the start's again, so the preset predicts what the fit does."""
    x = np.array([[0, 40_000, 0, 78_049, 1], [0, 0, 0, 0, 1]], dtype=float)  # SynOps, link
    t = np.array([6.0, 2.0])  # faster than the start's SynOp (8 µs) and link (10 µs) terms
    theta, _ = fit_max_affine(x, t, constants_vector(LOIHI2))
    cal = calibrate(x, t, LOIHI2, what="r.csv")
    written = constants_vector(cal.hardware)
    assert max_affine(x, written) == pytest.approx(max_affine(x, theta), rel=1e-12)
    assert np.all((written == theta) | np.isclose(written, theta, rtol=1e-12))
    synop = next(f for f in cal.terms if f.term == "synops")
    kept = synop.points == 0 and synop.value == LOIHI2.model.synop_ns
    assert kept or synop.source.startswith("fitted:")


def test_the_clock_is_kept_when_nothing_can_fit_it():
    runs = [r for r in suite_runs("microbench", "loihi2") if r.saturates == "barrier"]
    preds = predict(runs, simulator=False)
    hw, fit = fit_clock([p.mapped for p in preds], np.array([1.9]), LOIHI2, what="r.csv",
                        previous_bandwidth=LOIHI2.links.router_bits_per_us)  # fmt: skip
    assert hw.noc.cycle_ns == LOIHI2.noc.cycle_ns and fit.points == 0
    assert hw.source("noc.cycle_ns") == LOIHI2.source("noc.cycle_ns")
    faster = truth(bandwidth=2.0)  # a fitted bandwidth twice the preset's: the clock follows
    hw, fit = fit_clock([p.mapped for p in preds], np.array([1.9]), faster, what="r.csv",
                        previous_bandwidth=LOIHI2.links.router_bits_per_us)  # fmt: skip
    assert hw.noc.cycle_ns == pytest.approx(LOIHI2.noc.cycle_ns / 2)
    assert hw.source("noc.cycle_ns").startswith("fitted: the preset's clock × 0.5")


def test_the_simulator_clock_is_fitted_to_link_bound_runs():
    runs = [r for r in suite_runs("microbench", "loihi2") if r.saturates == "link"][:2]
    preds = predict(runs, simulator=False)
    true_cycle = 1.25
    hw_true = replace(LOIHI2, noc=replace(LOIHI2.noc, cycle_ns=true_cycle))
    from engine.pipeline import Mapped

    t = np.array([
        simulate_step(Mapped.of(p.mapped.network, hw_true, p.mapped.mapping),
                      mode="pipelined", spikes="expected").step_us
        for p in preds
    ])  # fmt: skip
    hw, fit = fit_clock([p.mapped for p in preds], t, LOIHI2, what="r.csv")
    assert hw.noc.cycle_ns == pytest.approx(true_cycle, rel=0.03)
    assert fit.points == 2 and hw.source("noc.cycle_ns").startswith("fitted: r.csv, 2 link-bound")


# ------------------------------------------------------------------ statistics
def test_the_statistics_equal_scipys():
    rng = np.random.default_rng(7)
    m = rng.uniform(5, 50, 30)
    p = m * rng.uniform(0.7, 1.1, 30)
    s = agreement(m, p)
    assert s["pearson_r"] == pytest.approx(stats.pearsonr(p, m).statistic, rel=1e-12)
    assert s["kendall_tau"] == pytest.approx(stats.kendalltau(p, m).statistic, rel=1e-12)
    assert s["mape"] == pytest.approx(100 * np.mean(np.abs(p - m) / m), rel=1e-12)
    assert s["lower_bound_share"] == pytest.approx(np.mean(p <= m))
    assert s["n"] == 30


def test_the_statistics_say_why_they_are_missing():
    one = agreement([3.0], [2.0])
    assert one["pearson_r"] is None and "two runs" in one["why"]
    assert one["mape"] == pytest.approx(100 / 3)
    flat = agreement([3.0, 3.0, 3.0], [1.0, 2.0, 3.0])
    assert flat["kendall_tau"] is None and "differ" in flat["why"]


# ------------------------------------------------------------------ the measurements file
def write_csv(path: Path, rows: list[dict], header=None) -> Path:
    header = header or list(rows[0])
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, header)
        w.writeheader()
        w.writerows(rows)
    return path


SPEC_ROW = {"network": "mb-dendop:N=512", "hardware": "loihi2", "partition": "natural",
            "placement": "packed-row", "measured_us": "2.5"}  # fmt: skip


def test_measurements_read_specs_mappings_and_skip_rows_not_yet_measured(tmp_path):
    mapped = build_mapping("mb-barrier", "loihi2", partition="natural", placement="pairs-halves")
    from engine.pipeline import write_mapping_file

    (tmp_path / "maps").mkdir()
    write_mapping_file(tmp_path / "maps" / "b.json", mapped)
    rows = [
        {**SPEC_ROW, "mapping": "", "steps": "100", "saturates": "dendops"},
        {**SPEC_ROW, "mapping": "maps/b.json", "network": "", "measured_us": "1.9"},
        {**SPEC_ROW, "mapping": "", "measured_us": ""},
    ]
    runs, skipped = read_measurements(write_csv(tmp_path / "runs.csv", rows))
    assert skipped == 1 and len(runs) == 2
    assert runs[0].steps == 100 and runs[0].saturates == "dendops" and runs[0].row == 2
    assert runs[1].mapping == str(tmp_path / "maps" / "b.json")  # relative to the CSV
    preds = predict(runs, simulator=False)
    assert [p.bound for p in preds] == ["barrier", "barrier"]


@pytest.mark.parametrize(
    ("rows", "header", "message"),
    [
        ([{"network": "x"}], None, "no measured_us column"),
        ([{"network": "x", "measured_us": "1"}], None, "missing hardware, partition, placement"),
        ([{**SPEC_ROW, "measured_us": "fast"}], None, "runs.csv:2: measured_us must be a number"),
        ([{**SPEC_ROW, "measured_us": "-3"}], None, "measured_us must be positive"),
        ([{**SPEC_ROW, "measured_us": "nan"}], None, "measured_us must be positive"),
        ([{**SPEC_ROW, "placement": ""}], None, "placement is empty"),
        ([{**SPEC_ROW, "measured_us": ""}], None, "1 rows have an empty measured_us"),
        ([{**SPEC_ROW, "steps": "1.5"}], None, "steps must be a whole number"),
        ([{**SPEC_ROW, "seed": "-1"}], None, "seed must be a whole number"),
        ([{**SPEC_ROW, "saturates": "memory"}], None, "saturates must be one of"),
        ([{**SPEC_ROW, "mapping": "gone.json"}], None, "gone.json does not exist"),
    ],
)
def test_a_malformed_measurements_file_names_the_line_and_the_fix(tmp_path, rows, header, message):
    path = write_csv(tmp_path / "runs.csv", rows, header)
    with pytest.raises(InputFileError, match=message.replace("(", r"\(")):
        read_measurements(path)


def test_a_row_with_more_cells_than_columns_is_refused(tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text("network,hardware,partition,placement,measured_us\nmb-barrier,loihi2,"
                    "natural,pairs-halves,2.0,extra\n")  # fmt: skip
    with pytest.raises(InputFileError, match="runs.csv:2: more cells"):
        read_measurements(path)


# ------------------------------------------------------------------ the commands
def read_rows(path: Path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def fill(template: Path, out: Path, hw, noise=0.02, seed=0) -> Path:
    rows = read_rows(template)
    x = np.array(
        [[float(r[k]) for k in ("dendops", "synops", "synmem_reads", "link_bits")] + [1.0]
         for r in rows]
    )  # fmt: skip
    t = synthetic_times(x, hw, noise, seed)
    for r, v in zip(rows, t, strict=True):
        r["measured_us"] = f"{v:.5f}"
    return write_csv(out, rows)


def test_microbench_calibrate_validate_end_to_end(tmp_path, capsys):
    template, maps = tmp_path / "runs.csv", tmp_path / "maps"
    maps.mkdir()
    code, out, err = run(capsys, "microbench", "--hardware", "loihi2", "--out", str(template),
                         "--mappings", str(maps))  # fmt: skip
    assert code == 0, err
    rows = read_rows(template)
    assert len(rows) == len(suite_runs("microbench", "loihi2"))
    assert all(r["measured_us"] == "" and (tmp_path / r["mapping"]).exists() for r in rows)
    assert {r["saturates"] for r in rows} == set(TERMS)

    filled = fill(template, tmp_path / "filled.csv", truth(**SCALES))
    preset = tmp_path / "my-loihi2.toml"
    code, out, err = run(capsys, "calibrate", "--measurements", str(filled), "--hardware",
                         "loihi2", "--out", str(preset), "--json")  # fmt: skip
    assert code == 0, err
    cal = json.loads(out)
    for predictor in ("model", "simulator"):
        assert set(("pearson_r", "kendall_tau", "mape")) <= set(cal[predictor])
    assert cal["model"]["mape"] < 3 < cal["before"]["model"]["mape"]
    assert cal["warnings"] == [] and cal["outliers"] == [] and "warning" not in err
    assert cal["constants"]["links.router_bits_per_us"]["value"] == pytest.approx(
        1.4 * LOIHI2.links.router_bits_per_us, rel=0.05
    )
    hw = load_hardware(str(preset))
    assert hw.source("model.synop_ns").startswith("fitted: filled.csv, ")
    assert hw.source("noc.cycle_ns").startswith("fitted: filled.csv, ")
    assert hw.source("limits.neurons") == LOIHI2.source("limits.neurons")  # kept, with source

    code, out, err = run(capsys, "list", "--hardware", str(preset), "--constants", "--json")
    kinds = {r["key"]: r["kind"] for r in json.loads(out)["constants"]}
    assert kinds["model.dendop_ns"] == "fitted" and kinds["energy.route_pj"] == "paper"

    figure = tmp_path / "fit.png"
    code, out, err = run(capsys, "validate", "--measurements", str(filled), "--hardware",
                         str(preset), "--figure", str(figure), "--json")  # fmt: skip
    assert code == 0, err
    val = json.loads(out)
    assert val["runs"] == len(rows) and len(val["rows"]) == len(rows)
    assert val["model"]["pearson_r"] > 0.99 and val["model"]["mape"] < 3
    assert val["simulator"]["pearson_r"] > 0.99
    assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    code, out, err = run(capsys, "validate", "--measurements", str(filled), "--no-simulator")
    assert code == 0 and "Pearson r" in out and "not run (--no-simulator)" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["calibrate", "--measurements", "{csv}", "--out", "{tmp}/x.json"], "must end in .toml"),
        (["validate", "--measurements", "{tmp}/none.csv"], "does not exist"),
        (["validate", "--measurements", "{csv}", "--figure", "{tmp}/f.gif"], "f.gif must end in"),
        (
            ["validate", "--measurements", "{csv}", "--hardware", "hypergraph-small"],
            "another topology",
        ),
        (["microbench", "--mappings", "{tmp}"], "add --out"),
        (["list", "--constants"], "add --hardware NAME"),
    ],
)
def test_the_fidelity_commands_refuse_bad_input_in_one_line(tmp_path, capsys, argv, message):
    csv_path = write_csv(tmp_path / "runs.csv", [SPEC_ROW])
    argv = [a.format(csv=csv_path, tmp=tmp_path) for a in argv]
    code, out, err = run(capsys, *argv)
    assert code == 2 and message in err and err.count("\n") == 1, err


def test_list_constants_says_where_each_came_from(capsys):
    code, out, err = run(capsys, "list", "--hardware", "loihi2", "--constants")
    assert code == 0
    line = next(ln for ln in out.splitlines() if "limits.neurons" in ln)
    assert "8192" in line and "paper" in line and "Loihi 2 mapping ES §3.1" in line
    assert out.strip().splitlines()[-1].endswith("illustrative")  # the tally


# ------------------------------------------------------------------ review: edge cases
def test_a_spreadsheets_byte_order_mark_is_not_part_of_the_first_column(tmp_path):
    path = write_csv(tmp_path / "runs.csv", [SPEC_ROW])
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    runs, _ = read_measurements(path)
    assert runs[0].network == SPEC_ROW["network"]


@pytest.mark.parametrize(
    ("cell", "message"),
    [
        ({"seed": "²"}, "seed must be a whole number"),
        ({"mapping": "maps"}, "is a folder"),
    ],
)
def test_odd_cells_are_one_line_errors(tmp_path, cell, message):
    (tmp_path / "maps").mkdir()
    path = write_csv(tmp_path / "runs.csv", [{**SPEC_ROW, **cell}])
    with pytest.raises(InputFileError, match=message):
        read_measurements(path)


def test_a_run_that_cannot_be_built_names_its_row(tmp_path):
    path = write_csv(tmp_path / "runs.csv", [SPEC_ROW, {**SPEC_ROW, "placement": "nosuch"}])
    runs, _ = read_measurements(path)
    with pytest.raises(InputFileError, match=r"runs.csv:3: unknown placer 'nosuch'"):
        predict(runs, simulator=False)


def test_a_preset_file_in_the_hardware_column_is_found_beside_the_csv(tmp_path, monkeypatch):
    (tmp_path / "sub").mkdir()
    write_preset(tmp_path / "sub" / "mine.toml", LOIHI2)
    path = write_csv(tmp_path / "sub" / "runs.csv", [{**SPEC_ROW, "hardware": "mine.toml"}])
    monkeypatch.chdir(tmp_path)  # not the CSV's folder
    runs, _ = read_measurements(path)
    assert predict(runs, simulator=False)[0].mapped.hardware == LOIHI2


@pytest.mark.parametrize("hardware", ["mesh:2x1", "mesh:8x1x2", "mesh:4x1x4", "mesh:4x4"])
def test_every_run_a_suite_lists_for_small_hardware_builds(hardware):
    runs = suite_runs("microbench", hardware)
    try:
        runs += suite_runs("tiled-identity", hardware)
    except CapacityError as e:
        assert "no run of the tiled-identity suite fits" in str(e)
    assert runs
    predict(runs, simulator=False)  # every one builds and fits


def test_the_link_microbenchmark_stays_on_one_chip_of_a_board():
    run = next(r for r in suite_runs("microbench", "loihi2-x8") if r.saturates == "link")
    (pred,) = predict([run], simulator=False)
    ev = evaluate(pred.mapped)
    kind = pred.mapped.hardware.link_table["kind"]
    assert kind[ev.bottleneck_link] == ROUTER  # an on-chip mesh link, not an off-chip one


def test_stages_and_multicast_are_refused_together(capsys):
    code, out, err = run(capsys, "evaluate", "--stages", "--multicast")
    assert code == 2 and "drop --multicast" in err


def test_calibration_names_runs_it_cannot_fit(tmp_path, capsys, microbench_counts):
    """A clean fit says nothing; a run twice as slow as any constant explains is named."""
    runs, x = microbench_counts
    t = synthetic_times(x, truth(**SCALES), noise=0.0, seed=0)
    assert calibrate(x, t, LOIHI2, what="r.csv").warnings == []
    slow = t.copy()
    k = next(i for i, r in enumerate(runs) if r.saturates == "synmem")  # barrier-bound at N=64
    slow[k] *= 3.0  # a run something else slowed down
    where = [f"r.csv:{i + 2} ({r.name})" for i, r in enumerate(runs)]
    cal = calibrate(x, slow, LOIHI2, what="r.csv", runs=where)
    assert cal.outliers == [k]
    (off,) = [w for w in cal.warnings if "predicted more than 1.5× off" in w]
    assert off.endswith(f"check it ({where[k]})")  # the row to look at, in the warning itself
    assert any("barrier-bound runs scatter" in w for w in cal.warnings)


def test_an_implausible_fit_is_refused_naming_the_run(microbench_counts):
    """One absurd measurement (a dendop-bound run 10^15 times too slow) would make the
    preset's dendop_ns ~10^15 times larger: refused, naming that run, not warned about."""
    runs, x = microbench_counts
    t = synthetic_times(x, truth(**SCALES), noise=0.0, seed=0)
    k = next(i for i, r in enumerate(runs) if r.saturates == "dendops")
    where = [f"runs.csv:{i + 2} ({r.name})" for i, r in enumerate(runs)]
    assert calibrate(x, t, LOIHI2, what="runs.csv", runs=where).terms  # plausible: fitted
    t[k] *= 1e15
    with pytest.raises(InputFileError, match="not plausible") as e:
        calibrate(x, t, LOIHI2, what="runs.csv", runs=where)
    assert str(e.value).startswith(f"{where[k]}: its measured_us")


def test_a_fit_that_moves_a_constant_too_far_is_refused_naming_the_run():
    """Both runs within 1000× of what the preset predicts (its barrier, 2 µs), yet only a
    dendop_ns over 1000× the preset's 1.1 ns fits them: refused, naming a run."""
    x = np.array([[1000, 0, 0, 0, 1], [500, 0, 0, 0, 1]], dtype=float)  # dendops only
    runs = ["r.csv:2 (a)", "r.csv:3 (b)"]
    fit = calibrate(x, np.array([1000.0, 500.0]), LOIHI2, what="r.csv", runs=runs)
    assert fit.terms[0].value == pytest.approx(1000.0)  # 909×: taken
    with pytest.raises(
        InputFileError, match=r"^r.csv:[23] \(.\): .* dendop_ns to 1200, 1.09e\+03×"
    ):
        calibrate(x, np.array([1200.0, 600.0]), LOIHI2, what="r.csv", runs=runs)


def test_calibrate_refuses_an_implausible_measurement_and_writes_nothing(tmp_path, capsys):
    rows = [
        {**SPEC_ROW, "measured_us": "7e15"},
        {**SPEC_ROW, "network": "mb-barrier", "placement": "pairs-halves", "measured_us": "2"},
    ]
    csv_path = write_csv(tmp_path / "runs.csv", rows)
    preset = tmp_path / "fit.toml"
    code, out, err = run(capsys, "calibrate", "--measurements", str(csv_path), "--out",
                         str(preset), "--no-simulator")  # fmt: skip
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert f"{csv_path}:2 (mb-dendop" in err and "its measured_us 7e+15" in err
    assert "not plausible" in err
    assert not preset.exists()

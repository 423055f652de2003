"""Multi-chip strategies (Loihi 2 mapping ES §5.3) and the `meshscope evolve` command."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from engine.cli import main
from engine.errors import CapacityError, MeshScopeError
from engine.evaluation.cost import model_evaluation
from engine.hardware import load_hardware
from engine.search import ChipwiseSearch, ESConfig, make_search
from engine.search.multichip import fewest_segments, segment_layers
from engine.specs import load_network_spec
from tests.support.cli import run

NET = "mlp:widths=256-512-512-512-256-10"


def test_segments_are_contiguous_fit_and_cut_where_traffic_is_least():
    cores = np.array([2, 3, 3, 2, 2])
    crossing = np.array([10.0, 1.0, 50.0, 2.0, 0.0])  # a cut after layer 1 or 3 is cheap
    segs = segment_layers(cores, n_segments=3, capacity=6, crossing=crossing)
    assert [s.tolist() for s in segs] == [[0, 1], [2, 3], [4]]
    assert all(cores[s].sum() <= 6 for s in segs)
    # with room for everything, no cut at all is cheapest
    assert [s.tolist() for s in segment_layers(cores, 3, 100, crossing)] == [[0, 1, 2, 3, 4]]


def test_segments_refuse_what_cannot_fit():
    with pytest.raises(CapacityError, match="more than the 4 of one chip"):
        segment_layers(np.array([2, 5]), 2, 4)
    with pytest.raises(CapacityError, match="cannot hold them"):
        segment_layers(np.array([3, 3, 3]), 2, 4)


@pytest.fixture(scope="module")
def two_chips():
    # 2 chips of 2x2 routers x 4 cores: 16 cores each
    return load_network_spec(NET), load_hardware("mesh:2x2x4@2x1")


def test_chipwise_puts_each_segment_on_its_own_chip(two_chips):
    net, hw = two_chips
    search = ChipwiseSearch(net, hw, ESConfig(budget=60, seed=1))
    assert len(search.segments) == 2, "one segment per chip"
    result = search.run()
    assert len(result.history) == 60
    chip = hw.core_table["chip"]
    searched = [r for r in result.history if r.note.startswith("chip ") and not r.failed]
    assert searched, "the chips' searches evaluated mappings"
    for r in searched:  # every mapping a chip's search made keeps each segment on its chip
        offsets = np.concatenate([[0], np.cumsum(r.cores_per_population)])
        for s, layers in enumerate(search.segments):
            for k in layers:
                cores = np.asarray(r.placement[offsets[k] : offsets[k + 1]])
                assert set(chip[cores]) == {search.chips[s]}, (r.note, k)
    ev = model_evaluation(net, hw, result.mapping(net))
    assert ev.latency_us == pytest.approx(result.best.latency_us)
    assert result.best.fitness <= min(r.fitness for r in result.heuristics.values())


def test_both_strategies_share_the_heuristic_baseline(two_chips):
    net, hw = two_chips
    results = {
        s: make_search(net, hw, ESConfig(budget=30, seed=2), strategy=s).run()
        for s in ("global", "chipwise")
    }
    g, c = results["global"].heuristics, results["chipwise"].heuristics
    assert {n: r.latency_us for n, r in g.items()} == {n: r.latency_us for n, r in c.items()}


def test_chipwise_needs_several_chips():
    with pytest.raises(MeshScopeError, match="several chips"):
        ChipwiseSearch(load_network_spec(NET), load_hardware("loihi2"), ESConfig(budget=10))


# ------------------------------------------------------------------ CLI
def run_cli(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_evolve_json_reports_best_heuristics_initial_and_improvement(capsys, tmp_path):
    best_file, hist = tmp_path / "best.json", tmp_path / "h.csv"
    code, out, err = run_cli(
        capsys, "evolve", "--network", NET, "--hardware", "loihi2", "--budget", "30",
        "--seed", "3", "--json", "--out", str(best_file), "--history", str(hist),
    )  # fmt: skip
    assert code == 0, err
    d = json.loads(out)
    assert {"best", "heuristics", "initial", "evaluations", "failed", "improvement_pct"} <= set(d)
    assert set(d["heuristics"]) == {
        "packed-row",
        "packed-col",
        "spread-row",
        "spread-col",
        "random",
    }
    assert d["evaluations"] == 30 and d["failed"] == 0
    best_h = min(d["heuristics"].values())
    assert d["improvement_pct"] == pytest.approx(100 * (best_h - d["best"]["latency_us"]) / best_h)
    assert d["initial"]["latency_us"] == pytest.approx(best_h)
    # the saved best mapping evaluates to the reported best
    code, out, _ = run_cli(capsys, "evaluate", "--mapping", str(best_file), "--json")
    assert json.loads(out)["latency_us"] == pytest.approx(d["best"]["latency_us"])
    lines = hist.read_text().splitlines()  # the run, a header, 30 records, the end
    assert lines[0].startswith("# evolve run {") and '"strategy": "global"' in lines[0]
    assert len(lines) == 33 and lines[-1] == "# end: complete, 30 evaluations, 0 failed"


def test_evolve_resume_continues_the_same_run(capsys, tmp_path):
    ck = tmp_path / "run.ckpt"
    args = ["evolve", "--network", NET, "--hardware", "loihi2", "--seed", "4", "--json"]
    code, full, _ = run_cli(capsys, *args, "--budget", "45")
    code, _, _ = run_cli(capsys, *args, "--budget", "21", "--checkpoint", str(ck))
    assert code == 0 and ck.exists()
    code, resumed, err = run_cli(capsys, *args, "--budget", "45", "--resume", str(ck))
    assert code == 0, err
    assert json.loads(resumed)["best"] == json.loads(full)["best"]


def test_evolve_with_an_external_evaluator(capsys, tmp_path):
    script = tmp_path / "rate.py"
    script.write_text(
        "import json, sys\n"
        "m = json.load(sys.stdin)\n"
        "xs = [a[1] + a[2] for a in m['placement']]\n"
        "print(json.dumps({'latency_us': 1.0 + sum(xs), 'energy_uj': 2.0}))\n"
    )
    code, out, err = run_cli(
        capsys, "evolve", "--network", NET, "--hardware", "loihi2", "--budget", "14",
        "--evaluator-cmd", f"{sys.executable} {script}", "--workers", "2", "--json",
    )  # fmt: skip
    assert code == 0, err
    d = json.loads(out)
    assert d["failed"] == 0 and d["evaluations"] == 14
    # the result is what the evaluator measured, the model's prediction labelled beside it
    assert d["measured_by"] == "evaluator command"
    assert d["best"]["latency_us"] == pytest.approx(d["objective_values"]["best"])
    assert d["best"]["energy_uj"] == 2.0
    assert d["best"]["model"]["latency_us"] != pytest.approx(d["best"]["latency_us"])
    assert d["best"]["latency_us"] <= min(d["heuristics"].values())
    assert d["initial"]["latency_us"] == min(d["heuristics"].values())


def test_a_measured_run_prints_the_measured_best_and_names_failed_heuristics(capsys, tmp_path):
    """The evaluator's figures are the result; a starting point whose evaluation failed says
    so with its reason (JSON: null and the reason), never 'inf'."""
    script = tmp_path / "rate.py"
    script.write_text(
        "import json, sys\n"
        "m = json.load(sys.stdin)\n"
        "xs = [a[1] + 10 * a[2] for a in m['placement']]\n"
        "if xs == sorted(xs) and len(set(xs)) < len(xs):\n"  # packed-row: refuse it
        "    sys.exit('board busy')\n"
        "print(json.dumps({'latency_us': 5.0 + sum(xs) / 100, 'energy_uj': 3.0}))\n"
    )
    argv = ["evolve", "--network", NET, "--hardware", "loihi2", "--budget", "12",
            "--evaluator-cmd", f"{sys.executable} {script}"]  # fmt: skip
    code, out, err = run_cli(capsys, *argv)
    assert code == 0, err
    best = next(line for line in out.splitlines() if line.strip().startswith("best"))
    model = next(line for line in out.splitlines() if "model's prediction" in line)
    hist = tmp_path / "h.jsonl"
    code, js, _ = run_cli(capsys, *argv, "--json", "--history", str(hist))
    d = json.loads(js)
    records = [json.loads(line) for line in hist.read_text().splitlines()[1:-1]]  # run, end
    assert min(r["latency_us"] for r in records if not r["failed"]) == d["best"]["latency_us"]
    assert f"latency {d['best']['latency_us']:.3f} us" in best and "(measured)" in best
    assert f"latency {d['best']['model']['latency_us']:.3f} us" in model
    assert "packed-row failed (" in out and "board busy" in out and "inf" not in out
    assert d["heuristics"]["packed-row"] is None
    assert "board busy" in d["heuristic_failures"]["packed-row"]


@pytest.mark.parametrize(
    "args,message",
    [
        (["--network", "nope"], "unknown network"),
        (["--strategy", "chipwise"], "several chips"),
        (["--resume", "/nonexistent/ckpt"], "cannot read checkpoint"),
    ],
)
def test_evolve_bad_input_is_one_line_and_exit_2(capsys, args, message):
    code, _, err = run_cli(capsys, "evolve", "--network", NET, *args)
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and message in err


# ------------------------------------------------------------------ chipwise segments
def test_exact_segments_cut_even_when_one_segment_would_fit():
    cores = np.array([2, 3, 3, 2, 2])
    crossing = np.array([10.0, 1.0, 50.0, 2.0, 0.0])
    segs = segment_layers(cores, 3, 100, crossing, exact=True)
    assert len(segs) == 3 and [int(s[0]) for s in segs][0] == 0
    assert np.concatenate(segs).tolist() == [0, 1, 2, 3, 4]  # contiguous, in order, all
    assert max(crossing[s[-1]] for s in segs[:-1]) == 2.0  # the cheapest two cuts: 1 and 3
    with pytest.raises(MeshScopeError, match="need at least 6 layers"):
        segment_layers(cores, 6, 100, crossing, exact=True)


@pytest.mark.parametrize("k", [2, 3, 4])
def test_chipwise_splits_into_as_many_segments_as_asked(k):
    net, hw = load_network_spec(NET), load_hardware("mesh:4x4x4@2x2")  # 64 cores a chip
    search = ChipwiseSearch(net, hw, ESConfig(budget=10, seed=0, segments=k))
    assert len(search.segments) == k
    assert len({g["chip"] for g in search.segment_summary()}) == k
    default = ChipwiseSearch(net, hw, ESConfig(budget=10, seed=0))
    assert len(default.segments) == 2  # as few as hold the layers, at least two


def test_the_default_segments_are_the_fewest_that_hold_the_layers():
    assert fewest_segments(np.array([3, 3, 3]), 8, 10) == 2  # one would do: at least two
    assert fewest_segments(np.array([6, 5, 4, 6]), 8, 10) == 3  # 6 | 5 4 | 6
    assert fewest_segments(np.array([6, 5, 4, 6]), 2, 10) == 2  # no more than the chips
    assert fewest_segments(np.array([4]), 8, 10) == 1  # one layer: one segment


def test_chipwise_improves_on_its_start_and_every_segment_is_searched():
    """Each chip's search evaluates offspring of its segment and accepts those better than its
    parent: the best of the run is better than the chip-wise start (the fill order that did
    best on the whole network, segment by segment) and every segment's search improved or
    kept what it was given."""
    net, hw = load_network_spec(NET), load_hardware("mesh:2x2x4@2x2")  # 4 chips of 16 cores
    search = ChipwiseSearch(net, hw, ESConfig(budget=120, seed=0))
    result = search.run()
    notes = [r.note.split(":")[0] for r in result.history]
    for s in range(len(search.segments)):
        mine = [r for r, n in zip(result.history, notes, strict=True) if n == f"chip {s}"]
        assert len(mine) > 5, f"segment {s} was evaluated"
        accepted = [r for r in mine if r.accepted]
        assert accepted and all(not r.failed for r in accepted)
        assert min(r.fitness for r in accepted) <= mine[0].fitness
    start = next(r for r, n in zip(result.history, notes, strict=True) if n == "chip 0")
    assert result.best.fitness < start.fitness


def test_evolve_chipwise_reports_chips_used_and_segments(capsys):
    code, out, err = run_cli(
        capsys, "evolve", "--network", NET, "--hardware", "mesh:4x4x4@2x2", "--budget", "12",
        "--strategy", "chipwise", "--segments", "3", "--json",
    )  # fmt: skip
    assert code == 0, err
    d = json.loads(out)
    assert len(d["segments"]) == 3 and len({g["chip"] for g in d["segments"]}) == 3
    layers = [name for g in d["segments"] for name in g["layers"]]
    net = load_network_spec(NET)  # every layer on cores, in order (the input runs on none)
    assert layers == [net.population_names[k] for k in net.core_populations]
    assert isinstance(d["chips_used"], int)  # the best may still be a whole-network heuristic


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--segments", "2"], "add --strategy chipwise"),
        (["--strategy", "chipwise", "--segments", "5"], "ask for at most 4 segments"),
        (["--strategy", "chipwise", "--segments", "0"], "must be ≥ 1"),
    ],
)
def test_evolve_segments_refuse_what_cannot_be(capsys, args, message):
    code, out, err = run(
        capsys, "evolve", "--network", NET, "--hardware", "mesh:4x4x4@2x2", "--budget", "5", *args
    )
    assert code == 2 and message in err, err

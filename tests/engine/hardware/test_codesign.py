"""Hardware co-design (SENMap §IV-H): a preset's [codesign] ranges, what each parameter does to
the models, and a search that returns a front of (hardware, mapping) pairs."""

from __future__ import annotations

import json

import numpy as np
import pytest

from engine.cli import main
from engine.errors import InputFileError, SpecError
from engine.hardware import PRESET_DIR, load_hardware
from engine.hardware.codesign import Codesign, hardware_metrics, variant
from engine.pipeline import Mapped, build_mapping, evaluate
from engine.search.pareto import ParetoConfig, ParetoSearch, read_history, write_history
from engine.specs import load_network_spec

SENECA = load_hardware("seneca")


def test_the_preset_gives_ranges_and_they_change_no_fingerprint():
    table = dict(SENECA.codesign)
    assert table["memory_kib"] == (256.0, 512.0, 1024.0, 2048.0)
    assert SENECA.source("codesign.npes").startswith("illustrative")
    assert load_hardware("loihi2").codesign == ()
    text = (PRESET_DIR / "seneca.toml").read_text()
    plain = text[: text.index("[codesign]")]
    assert load_hardware_text(plain).fingerprint == SENECA.fingerprint


def load_hardware_text(text: str):
    import tomllib

    from engine.hardware import hardware_from_dict

    return hardware_from_dict(tomllib.loads(text))


@pytest.mark.parametrize(
    "table, message",
    [
        ("warp = { values = [1, 2] }", "unknown parameter 'warp'"),
        ("npes = { values = [] }", "npes must be"),
        ("npes = { values = [0, 2] }", "npes must be"),
        ("npes = [1, 2]", "npes must be"),
    ],
)
def test_a_bad_codesign_table_is_refused(table, message):
    text = (PRESET_DIR / "seneca.toml").read_text()
    text = text[: text.index("[codesign]")] + "[codesign]\n" + table + "\n"
    with pytest.raises(InputFileError, match=message):
        load_hardware_text(text)


def test_each_parameter_changes_what_it_says():
    base = SENECA
    v = variant(base, {"memory_kib": 256})
    assert v.limits.synaptic_memory_bytes == 256 * 1024 and v.fingerprint != base.fingerprint
    v = variant(base, {"npes": 4})
    assert v.model.synop_ns == base.model.synop_ns / 4
    assert v.model.dendop_ns == base.model.dendop_ns / 4
    assert v.model.synmem_read_ns == base.model.synmem_read_ns
    v = variant(base, {"clock_scale": 2})
    assert v.model.synmem_read_ns == base.model.synmem_read_ns / 2
    assert v.model.barrier_us == base.model.barrier_us / 2
    assert v.noc.cycle_ns == base.noc.cycle_ns / 2
    assert v.links.router_bits_per_us == 2 * base.links.router_bits_per_us
    assert v.energy == base.energy  # energy per operation and hop stays
    v = variant(base, {"flit_scale": 0.5})
    assert v.links.core_bits_per_us == base.links.core_bits_per_us / 2
    assert v.n_cores == base.n_cores and "flit_scale=0.5" in v.name
    with pytest.raises(SpecError, match="unknown co-design parameter"):
        variant(base, {"warp": 2})


def test_npes_halve_the_synop_term_of_the_same_mapping():
    mapped = build_mapping("sparse-mlp-1", "seneca", partition="min", placement="packed-row")
    two = variant(SENECA, {"npes": 2})
    on_two = build_mapping("sparse-mlp-1", two, partition="min", placement="packed-row")
    a, b = evaluate(mapped), evaluate(on_two)
    assert b.terms_us["synops"] == pytest.approx(a.terms_us["synops"] / 2)
    assert b.terms_us["synmem"] == pytest.approx(a.terms_us["synmem"])
    used = a.cores_used
    assert hardware_metrics(two, {"npes": 2}, used)["npes_used"] == 2 * used


def test_ranges_come_from_the_preset_or_a_clear_error():
    cd = Codesign.of(SENECA, ["all"])
    assert cd.names == tuple(n for n, _ in SENECA.codesign)
    assert cd.choice(cd.base(SENECA))["memory_kib"] == 1024  # the preset's own 1 MiB
    with pytest.raises(SpecError, match="no co-design ranges"):
        Codesign.of(load_hardware("loihi2"), ["all"])
    with pytest.raises(SpecError, match="no range for warp"):
        Codesign.of(SENECA, ["npes", "warp"])


@pytest.fixture(scope="module")
def run():
    net = load_network_spec("sparse-mlp-1")
    cd = Codesign.of(SENECA, ["memory_kib", "npes"])
    cfg = ParetoConfig(objectives=("latency", "memory", "npes"), budget=120, seed=3)
    search = ParetoSearch(net, SENECA, cfg, codesign=cd)
    return search, search.run()


def test_the_front_pairs_hardware_and_mappings_and_is_non_dominated(run):
    search, res = run
    names = res.config.objectives
    pts = np.array([[e.objectives[n] for n in names] for e in res.front])
    assert len(res.front) >= 3
    assert all(not (np.all(a <= b) and np.any(a < b)) for a in pts for b in pts)
    choices = {tuple(sorted(e.hardware.items())) for e in res.evaluations if e.feasible}
    assert len(choices) > 3  # several variants evaluated
    for e in res.front:
        hw = variant(SENECA, e.hardware)
        got = evaluate(Mapped.of(search.network, hw, e.mapping(search.network)))
        assert got.latency_us == pytest.approx(e.objectives["latency"])
        assert e.objectives["memory"] == got.cores_used * hw.limits.synaptic_memory_bytes / 1024


def test_a_variant_too_small_for_a_split_breaks_a_constraint(run):
    search, _ = run
    layout = search.layout
    from engine.search.genotype import PartitionGenotype

    x = PartitionGenotype(np.zeros(layout.n_layers, dtype=np.int64), layout.spare)
    small = search.codesign.values[0].index(256.0)
    base = search.problem.base
    assert search.problem.violations(x, base) == (0.0, 0.0)  # the preset's 1 MiB: fits
    assert search.problem.violations(x, (small, *base[1:]))[0] > 0


def test_a_codesign_run_resumes_from_its_history(run, tmp_path):
    search, res = run
    path = tmp_path / "h.csv"
    write_history(path, res)
    known, rows = read_history(path, res.config.objectives, res.settings)
    assert rows == 120
    cd = search.codesign
    again = ParetoSearch(search.network, SENECA, res.config, codesign=cd, known=known)
    out = again.run()
    assert [e.objectives for e in out.evaluations] == [e.objectives for e in res.evaluations]
    assert again.reused == sum(e.feasible for e in res.evaluations)


def test_the_command_line(tmp_path, capsys):
    out = tmp_path / "front.json"
    common = ["pareto", "--network", "sparse-mlp-1", "--hardware", "seneca", "--budget", "50"]
    assert main([*common, "--codesign", "npes", "--objectives", "latency,npes",
                 "--out", str(out)]) == 0  # fmt: skip
    capsys.readouterr()
    data = json.loads(out.read_text())
    assert all(set(p["hardware"]) == {"npes"} for p in data["front"])
    assert main([*common, "--codesign", "npes", "--workers", "2"]) == 2
    assert "in this process" in capsys.readouterr().err
    assert main([*common, "--hardware", "loihi2", "--codesign", "all"]) == 2
    assert "no co-design ranges" in capsys.readouterr().err


def test_the_cores_parameter_caps_the_cores_a_mapping_may_use():
    net = load_network_spec("sparse-mlp-1")
    cd = Codesign.of(SENECA, ["cores"])
    search = ParetoSearch(net, SENECA, ParetoConfig(objectives=("latency", "chip-cores"),
                                                    budget=60, seed=0), codesign=cd)  # fmt: skip
    res = search.run()
    from engine.search.genotype import PartitionGenotype

    layout = search.layout
    x = PartitionGenotype(np.full(layout.n_layers, 3), layout.spare - 3 * layout.n_layers)
    used = int(x.cores_per_layer(layout).sum())  # 24 cores: over a 16-core chip
    assert search.problem.violations(x, (cd.values[0].index(16.0),)) == (0.0, used - 16)
    assert search.problem.violations(x, (cd.values[0].index(32.0),)) == (0.0, 0.0)
    for e in res.evaluations:
        if e.feasible:
            assert sum(e.cores_per_population) <= e.hardware["cores"]
            assert e.objectives["chip-cores"] == e.hardware["cores"]
    wide = variant(SENECA, {})  # the table may not promise more cores than the mesh has
    import dataclasses

    bad = dataclasses.replace(wide, codesign=(("cores", (16.0, 128.0)),))
    with pytest.raises(SpecError, match="has 64 cores"):
        Codesign.of(bad, ["cores"])


def test_variants_share_their_population_splits_without_changing_an_answer():
    from engine.mapping.resources import memory_key
    from engine.search.genotype import layout_for

    net = load_network_spec("sparse-mlp-1")
    shared: dict = {}
    base = layout_for(net, SENECA, splits=shared)
    for choice in ({"memory_kib": 256}, {"memory_kib": 512, "npes": 4}, {"clock_scale": 2}):
        hw = variant(SENECA, choice)
        assert memory_key(hw) == memory_key(SENECA)  # memory counted alike: shareable
        alone, together = layout_for(net, hw), layout_for(net, hw, splits=shared)
        assert np.array_equal(alone.c_min, together.c_min)
        for i in range(alone.n_layers):
            for c in range(max(1, int(alone.c_min[i]) - 2), int(alone.c_min[i]) + 3):
                assert alone.fits(i, c) == together.fits(i, c)
    assert variant(SENECA, {"memory_kib": 256}).limits != SENECA.limits
    assert len(shared) == len(base.free)  # one split a population, built once
    assert memory_key(variant(SENECA, {"state_bits": 8})) != memory_key(SENECA)

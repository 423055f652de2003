"""The QUBO solver's stages (engine.qubo_stages, Loihi 2 runtime model §V-C): the heaviest
link with every neuron spiking, times each stage's activity rate — on a case worked by hand."""

from __future__ import annotations

import pytest

from engine.errors import SpecError
from engine.pipeline import build_mapping, evaluate
from engine.qubo_stages import stage_times

# four variables, every pair coupled (density 1), a temperature neuron feeding them all and a
# loss neuron hearing them all; variables 0, 1 on the core of router x = 0, variables 2, 3 on
# x = 1, the temperature neuron on x = 2, the loss neuron on x = 3: a row of four routers
SPEC, MESH = "qubo:n=4,density=1", "mesh:4x1x1"


@pytest.fixture(scope="module")
def mapped():
    return build_mapping(SPEC, MESH, partition="cores:2,1,1", placement="packed-row")


def test_every_neuron_spiking_loads_the_links_as_counted_by_hand(mapped):
    """With every neuron spiking, a neuron sends one message to each other core holding one of
    its targets. Eastward x0→x1: variables 0 and 1 to the core of 2, 3 and to the loss's, 4;
    x1→x2 and x2→x3: the four variables to the loss, 4 each. Westward x1→x0: variables 2, 3
    and the temperature to the core of 0, 1, 3; x2→x1: the temperature to both variable
    cores, 2. The heaviest: 4 messages."""
    out = stage_times(mapped, {})
    assert out["all_spiking"]["max_link_messages"] == pytest.approx(4.0)
    hw = mapped.hardware
    per_message_us = hw.links.message_bits / hw.links.router_bits_per_us
    assert out["all_spiking"]["link_us"] == pytest.approx(4 * per_message_us)


def test_a_stage_charges_its_activity_times_that_link(mapped):
    """At activity 0.25 a stage's link term is 0.25 × 4 messages: one message's time — though
    the temperature neuron, spiking every step, sends 2 messages out of its core, which the
    model with the variables at 0.25 takes as its heaviest link (the paper's estimate scales
    the all-spiking link instead). The time is the largest term."""
    hw = mapped.hardware
    per_message_us = hw.links.message_bits / hw.links.router_bits_per_us
    out = stage_times(mapped, {"checking": 0.25, "switching": 0.5})
    check, switch = out["stages"]["checking"], out["stages"]["switching"]
    assert check["terms_us"]["link"] == pytest.approx(1 * per_message_us)
    assert switch["terms_us"]["link"] == pytest.approx(2 * per_message_us)
    model = evaluate(build_mapping("qubo:n=4,density=1,rate=0.25", MESH, partition="cores:2,1,1",
                                   placement="packed-row"))  # fmt: skip
    assert model.max_link_messages == pytest.approx(2.0)  # the temperature core's link
    for stage in (check, switch):
        assert stage["time_us"] == max(stage["terms_us"].values())
        assert stage["terms_us"]["barrier"] == hw.model.barrier_us
        assert stage["bound"] == max(stage["terms_us"], key=stage["terms_us"].get)
    assert check["terms_us"]["synops"] == pytest.approx(model.terms_us["synops"])
    assert check["terms_us"]["synops"] < switch["terms_us"]["synops"]  # more spikes, more work


def test_bad_stages_are_one_clear_error(mapped):
    with pytest.raises(SpecError, match="lies in"):
        stage_times(mapped, {"checking": 1.5})
    with pytest.raises(SpecError, match="no population"):
        stage_times(mapped, {"checking": 0.5}, population="neurons")

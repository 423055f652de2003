"""The QUBO solver's two stages as the Loihi 2 runtime model estimates them (§V-C, Fig. 7a).

The solver's neurons alternate a *checking* stage (each works out the probability of flipping
its variable) and a *switching* stage (each flips with it and tells the others). Both use the
recurrent connectivity of the QUBO matrix, so "the traffic pattern is the same for both the
checking stage and the switching stage". TrafficStats assumes every neuron spikes every
step; the solver's neurons spike stochastically, so the paper measures each stage's activity
rate on the board and multiplies the heaviest link load by it:

    T_stage = max(N_DO·T_DO, N_SO·T_SO, N_SMR·T_SMR, a_stage · N_LL / B, T_BS)

with ``N_LL`` the heaviest link load with every neuron spiking (``all_spiking``) and
``a_stage`` the stage's activity rate. The compute terms the paper reads from the board's
counters in each stage; here they are the model's expected counts with the variable
neurons spiking at the stage's rate (the other populations — the temperature and loss
neurons — keep theirs). The activity rates are inputs: the paper prints none, and does not
define the solver's dynamics they come from (it cites Pierro et al.).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from engine.errors import SpecError
from engine.pipeline import Mapped, evaluate

__all__ = ["stage_times"]

COMPUTE = ("dendops", "synops", "synmem")


def stage_times(mapped: Mapped, activity: dict, *, population: str = "variables") -> dict:
    """Each stage's time per step (module note) for the QUBO network ``mapped`` holds, its
    ``population`` spiking at ``activity[stage]`` in each stage: ``all_spiking`` (the heaviest
    link's messages and its time with every neuron spiking) and, per stage, its activity,
    terms (µs), time and bound."""
    net, hw, mapping = mapped.network, mapped.hardware, mapped.mapping
    if population not in net.population_names:
        raise SpecError(
            f"{net.name} has no population {population!r} (its populations: "
            f"{', '.join(net.population_names)}); the stages change the variables' activity"
        )
    for stage, a in activity.items():
        if not 0 <= a <= 1:
            raise SpecError(f"stage {stage!r}: an activity rate lies in [0, 1], not {a}")
    every = replace(net, rate=np.ones(net.n_neurons))  # TrafficStats: every neuron, every step
    full = evaluate(Mapped.of(every, hw, mapping))
    k = net.population_names.index(population)
    stages = {}
    for stage, a in activity.items():
        rate = net.rate.copy()
        rate[net.population == k] = a
        ev = evaluate(Mapped.of(replace(net, rate=rate), hw, mapping))
        terms = {t: ev.terms_us[t] for t in COMPUTE}
        terms["link"] = a * full.terms_us["link"]
        terms["barrier"] = hw.model.barrier_us
        bound = max(terms, key=terms.get)
        stages[stage] = {"activity": a, "terms_us": terms, "time_us": terms[bound], "bound": bound}
    return {
        "all_spiking": {"max_link_messages": full.max_link_messages,
                        "link_us": full.terms_us["link"]},
        "stages": stages,
    }  # fmt: skip

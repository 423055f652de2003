"""The model read stage by stage (Loihi 2 mapping ES §5.6).

The max-affine model charges a step with the heaviest link of *all* layers' traffic at
once. The Loihi 2 mapping ES paper reads it per execution stage instead: stage ``l`` is
layer ``l``'s work — the messages into its cores, their synaptic work, its neuron updates —
and, since the stages run mostly asynchronously, the predicted step is the slowest stage:

    T_stages = max(max_l max(N_DO,l T_DO, N_SO,l T_SO, N_SMR,l T_SMR, N_LL,l / B), T_BS)

with ``N_LL,l`` the heaviest link under layer ``l``'s incoming messages alone. Compute
terms are the same as the whole-step model's (a core belongs to one layer); the link term
can only be smaller, as no two stages' messages share a link. Activation sparsity enters
through the rates, as everywhere. ``stage_breakdown`` returns every stage and names the
slowest: which layer to give more cores or a better place.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.evaluation.cost import TERMS
from engine.evaluation.traffic import port_cores, route_loads
from engine.mapping.partition_graph import FIXED

__all__ = ["StageBreakdown", "stage_breakdown", "stage_loads"]

_STAGE_TERMS = ("dendops", "synops", "synmem", "link")


@dataclass(frozen=True, eq=False)
class StageBreakdown:
    rows: list[dict]  # per layer with cores: name, cores, the four terms (µs), bound, time_us
    barrier_us: float

    @property
    def latency_us(self) -> float:
        return max([r["time_us"] for r in self.rows] + [self.barrier_us])

    @property
    def slowest(self) -> str:
        """The name of the slowest stage, or "barrier"."""
        if not self.rows or self.barrier_us >= max(r["time_us"] for r in self.rows):
            return "barrier"
        return max(self.rows, key=lambda r: r["time_us"])["layer"]

    def to_dict(self) -> dict:
        return {"latency_us": self.latency_us, "slowest": self.slowest, "rows": self.rows}


def stage_loads(mapped, layer: int, mesh: int | None = None) -> np.ndarray:
    """Per link id, the load (fixed point, ``engine.evaluation.traffic.FIXED`` per message) of the
    expected messages into the cores of population ``layer`` (on one of the hardware's
    parallel meshes, or all), a spike source's from the input port; over every layer they
    sum to the whole step's loads."""
    hw, g = mapped.hardware, mapped.graph
    cores = port_cores(hw, mapped.mapping.placement.cores)
    src, dst, fixed = g.routed_pairs
    on = g.population[dst] == layer
    if mesh is not None:
        on &= hw.core_table["mesh"][cores[src]] == mesh
    return route_loads(hw, cores[src[on]], cores[dst[on]], fixed[on])


def _time_loads(mapped, layer: int) -> np.ndarray:
    """The loads that set each link's time: its busiest mesh's (a router's link into a core
    has a copy on every mesh, as its router links do; a core sends on one mesh)."""
    hw = mapped.hardware
    if hw.links.meshes == 1:
        return stage_loads(mapped, layer)
    return np.max([stage_loads(mapped, layer, m) for m in range(hw.links.meshes)], axis=0)


def stage_breakdown(mapped) -> StageBreakdown:
    """Every layer's stage of the step of ``mapped`` (an ``engine.pipeline.Mapped``)."""
    hw, g = mapped.hardware, mapped.graph
    m = hw.model
    us_per_fixed = hw.link_table["us_per_message"] / FIXED
    compute = {
        "dendops": g.neurons * m.dendop_ns * 1e-3,
        "synops": g.synops * m.synop_ns * 1e-3,
        "synmem": g.synmem_reads * m.synmem_read_ns * 1e-3,
    }
    names = mapped.network.population_names
    rows = []
    for layer in np.unique(g.population).tolist():
        mine = g.population == layer
        us = _time_loads(mapped, layer) * us_per_fixed
        link = int(np.argmax(us))
        link_us = float(us[link])
        terms = {k: float(v[mine].max()) for k, v in compute.items()}
        terms["link"] = link_us
        bound = max(_STAGE_TERMS, key=lambda k: (terms[k], -TERMS.index(k)))
        rows.append(
            {
                "layer": names[layer],
                "cores": int(mine.sum()),
                "terms_us": terms,
                "bound": bound,
                "time_us": terms[bound],
                "heaviest_link": link if link_us > 0 else -1,
            }
        )
    return StageBreakdown(rows, m.barrier_us)

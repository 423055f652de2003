"""What a click on the mesh explains: the session's inspection part.

``Inspector`` answers for the mapping a session shows (``ExplorerState.shown_evaluation``):
why a link is loaded (every flow through it), what a core holds (its partition's terms,
its memory against the hardware's limits, the flows that leave and reach it), and the link
loads of a few layers' flows alone. It keeps nothing of its own — each answer is worked
out from the session as it is now — so it has no parameters to watch; the mesh view keeps
the last answer (``MeshView.inspection``) for the views that show it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from engine.errors import SpecError
from engine.evaluation.cost import Evaluation
from engine.evaluation.flows import (
    FlowTable,
    chip_note,
    core_flows,
    core_label,
    flows_through,
    layer_mesh_messages,
    link_label,
    route_links,
)
from engine.mapping.resources import limits

__all__ = ["Inspection", "Inspector"]


@dataclass(frozen=True)
class Inspection:
    """What a click on a link or a core of the shown mapping explains.

    ``tables``: (caption, flows) pairs, heaviest flows first; ``routes`` the link ids of
    each table's flows, row by row (``route_links``), to highlight on the mesh; ``facts``
    label → value lines (the link's load, the core's terms and memory against its limits).
    """

    kind: str  # "link" or "core"
    target: int  # link id or core id
    title: str
    facts: dict
    tables: list
    routes: list  # per table, per row: np.ndarray of link ids
    layer_names: tuple = ()  # the network's population names (FlowTable.src_pop/dst_pop)

    def route_ids(self, table: int | None = None, rows=None) -> np.ndarray:
        """The links of the chosen rows (default every row) of one table (default all)."""
        chosen = []
        for t, per_row in enumerate(self.routes):
            if table is not None and t != table:
                continue
            picked = per_row if rows is None else [per_row[r] for r in rows if r < len(per_row)]
            chosen.extend(picked)
        return np.unique(np.concatenate(chosen)) if chosen else np.zeros(0, dtype=np.int64)


class Inspector:
    """The explanations of a session's shown mapping (``state``: an ``ExplorerState``)."""

    def __init__(self, state):
        self.state = state

    def _shown(self):
        """(hardware, shown evaluation, shown mapping, its partition graph)."""
        s = self.state
        s.require_loaded()
        mapping = s.shown_mapping()
        return s.hardware, s.shown_evaluation, mapping, s.graph_of(mapping)

    def _routes(self, table: FlowTable) -> list:
        hw = self.state.hardware
        return [
            route_links(hw, int(s), int(d), int(o))
            for s, d, o in zip(
                table.src_core.tolist(), table.dst_core.tolist(), table.route.tolist(), strict=True
            )  # fmt: skip
        ]

    def layer_evaluation(self, layers) -> Evaluation:
        """The shown evaluation with its link loads narrowed to the flows that leave the
        populations ``layers`` (everything else — latency, terms, the bottleneck — as is)."""
        hw, ev, mapping, graph = self._shown()
        per_mesh = layer_mesh_messages(hw, graph, mapping.placement.cores, layers)
        messages = per_mesh.sum(axis=1)
        existing = hw.link_table["kind"] >= 0
        return dataclasses.replace(
            ev,
            link_messages=messages,
            link_us=per_mesh.max(axis=1) * hw.link_table["us_per_message"],
            link_mesh_messages=per_mesh if per_mesh.shape[1] > 1 else None,
            max_link_messages=float(messages[existing].max()) if existing.any() else 0.0,
        )

    def link(self, link: int) -> Inspection:
        """Why a link of the shown mapping is loaded: every flow that crosses it."""
        hw, ev, mapping, graph = self._shown()
        if not (0 <= link < hw.n_link_ids) or hw.link_table["kind"][link] < 0:
            raise SpecError(f"link {link} does not exist on {hw.name}")
        table = flows_through(hw, graph, mapping.placement.cores, link)
        label = link_label(hw, link)
        chips = chip_note(hw, link)
        per = ev.mesh_messages[link]
        facts = {"messages / step": f"{ev.link_messages[link]:,.1f}"}
        if per.size > 1:  # parallel meshes: each one's copy, the busier one times the link
            facts["messages / step"] += " over both meshes"
            busier = int(np.argmax(per))
            for m in range(per.size):
                facts[f"mesh {m}"] = f"{per[m]:,.1f}" + (" (busier: times the link)"
                                                        if m == busier else "")  # fmt: skip
        facts["busy"] = f"{ev.link_utilization[link]:.1%} of the step"
        facts["flows"] = f"{len(table):,}"
        title = f"Link {label}" + (f" ({chips})" if chips else "")
        return Inspection("link", int(link), title, facts, [("flows", table)],
                          [self._routes(table)], self.state.network.population_names)  # fmt: skip

    def core(self, core: int) -> Inspection:
        """A core of the shown mapping: its partition's terms, memory against the limits, and
        the flows that leave and reach it."""
        hw, ev, mapping, graph = self._shown()
        net = self.state.network
        if not 0 <= core < hw.n_cores:
            raise SpecError(f"cores lie in 0..{hw.n_cores - 1}")
        cores = mapping.placement.cores
        held = np.flatnonzero(cores == core)
        address = core_label(hw, core) + (
            f" on chip {int(hw.core_table['chip'][core])}" if hw.n_chips > 1 else ""
        )
        if held.size == 0:
            return Inspection("core", int(core), f"Core {address}: empty", {}, [], [])
        part = int(held[0])
        facts = {
            "partition": f"{part} of {net.population_names[graph.population[part]]}",
            **{f"{k} term": f"{ev.core_terms_us[k][part]:.3f} µs" for k in ev.core_terms_us},
        }
        use = graph.core_use
        for limit in limits(hw):
            value = getattr(use, limit.field)[part]
            facts[limit.what] = f"{value:,.0f} of {limit.bound:,} ({value / limit.bound:.0%})"
        out, inbound = core_flows(hw, graph, cores, core)
        tables = [("outbound flows", out), ("inbound flows", inbound)]
        routes = [self._routes(t) for _, t in tables]
        return Inspection("core", int(core), f"Core {address}", facts, tables, routes,
                          net.population_names)  # fmt: skip

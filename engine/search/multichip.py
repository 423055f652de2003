"""Loihi 2 mapping ES §5.3: mapping across several chips, globally or chip by chip.

``global`` is the nested ES over every core of every chip. ``chipwise`` divides the
layers into contiguous segments — as many as asked (``ESConfig.segments``), by default as
few as the chips that hold the layers, and at least two — cut where the least traffic
crosses, each within one chip's cores;
then it searches each chip in turn with the nested ES, the other segments held where
they are (each evaluation is of the whole network, so inter-chip traffic is always
counted), and keeps each chip's best before moving on. Both start by evaluating the
whole-network heuristics, so their improvements share a baseline.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import numpy as np

from engine.errors import CapacityError, SpecError
from engine.hardware import Hardware
from engine.mapping.assignment import Partition
from engine.mapping.partition_graph import partition_graph
from engine.mapping.placement.fill import ORDERS, core_order
from engine.model.network import Network
from engine.search.config import ESConfig, default_evaluator, strategies
from engine.search.evolution import ESResult, NestedES
from engine.search.genotype import layout_for
from engine.search.history import History
from engine.search.record import Event, Record, better

__all__ = ["ChipwiseSearch", "fewest_segments", "layer_crossing_traffic", "segment_layers"]


def segment_layers(
    cores: np.ndarray,
    n_segments: int,
    capacity: int,
    crossing: np.ndarray | None = None,
    *,
    exact: bool = False,
) -> list[np.ndarray]:
    """Split layers, in order, into at most ``n_segments`` contiguous segments of ≤ capacity
    cores (exactly ``n_segments`` with ``exact``).

    ``crossing[i]`` is the traffic (messages per step) that a cut after layer ``i`` sends
    between chips. A dynamic program picks the segmentation whose heaviest cut carries
    the least traffic, then the one whose largest segment is smallest.
    """
    cores = np.asarray(cores, dtype=np.int64)
    n = cores.size
    if exact and n_segments > n:
        raise SpecError(
            f"{n_segments} segments need at least {n_segments} layers; the network has {n}: "
            f"ask for at most {n} segments"
        )
    if cores.max() > capacity:
        k = int(np.argmax(cores))
        raise CapacityError(
            f"layer {k} alone needs {cores[k]} cores, more than the {capacity} of one chip; "
            "use the global strategy"
        )
    crossing = np.zeros(n) if crossing is None else np.asarray(crossing, dtype=float)
    prefix = np.concatenate([[0], np.cumsum(cores)])
    s = min(n_segments, n)
    worst = (np.inf, np.inf)
    # best[j][i]: (heaviest cut, largest segment) over the first i layers in j segments
    best = [[worst] * (n + 1) for _ in range(s + 1)]
    cut = np.zeros((s + 1, n + 1), dtype=np.int64)
    best[0][0] = (0.0, 0)
    for j in range(1, s + 1):
        for i in range(1, n + 1):
            for m in range(j - 1, i):
                load = prefix[i] - prefix[m]
                if best[j - 1][m] == worst or load > capacity:
                    continue
                heaviest = max(best[j - 1][m][0], crossing[m - 1] if m > 0 else 0.0)
                cand = (heaviest, max(best[j - 1][m][1], load))
                if cand < best[j][i]:
                    best[j][i], cut[j, i] = cand, m
    j = s if exact else min(range(1, s + 1), key=lambda jj: best[jj][n])
    if best[j][n] == worst:
        raise CapacityError(
            f"the layers need {prefix[-1]} cores; {s} chips of {capacity} cannot hold them "
            f"in {'exactly ' if exact else ''}{s if exact else 'at most ' + str(s)} contiguous "
            "segments"
        )
    bounds, i = [], n
    for jj in range(j, 0, -1):
        bounds.append((int(cut[jj, i]), i))
        i = int(cut[jj, i])
    return [np.arange(a, b) for a, b in reversed(bounds)]


def fewest_segments(cores: np.ndarray, n_chips: int, capacity: int) -> int:
    """The fewest contiguous segments of ≤ ``capacity`` cores that hold the layers ``cores``,
    at least two (the strategy spans chips) and at most ``n_chips`` (then the layers do not
    fit, and ``segment_layers`` says so). Every segment more is one more cut whose traffic
    crosses between chips, over links slower than a chip's own (``benchmarks/evolve.py``
    compares this default with one segment per chip on SparseMLP-2)."""
    n, load = 1, 0
    for c in np.asarray(cores, dtype=np.int64).tolist():  # per layer, not per neuron
        if load + c > capacity and load > 0:  # packing in order: the fewest contiguous segments
            n, load = n + 1, 0
        load += c
    return int(min(max(2, n), n_chips, max(len(cores), 1)))


def layer_crossing_traffic(network, hardware, cores_per_population) -> np.ndarray:
    """Messages per step that a cut after each layer would send between segments."""
    graph = partition_graph(network, hardware, Partition.layered(network, cores_per_population))
    pop = graph.population
    src, dst = pop[graph.pair_src], pop[graph.pair_dst]
    n = network.n_populations
    return np.array(
        [
            graph.pair_messages[((src <= i) & (dst > i)) | ((dst <= i) & (src > i))].sum()
            for i in range(n)
        ]
    )


class ChipwiseSearch:
    """One nested ES per chip, over that chip's segment of layers (strategy ``chipwise``)."""

    def __init__(self, network: Network, hardware: Hardware, config: ESConfig, *, evaluator=None):
        if hardware.n_chips < 2:
            raise SpecError(
                f"the chipwise strategy needs hardware with several chips; {hardware.name} has "
                "one: use --strategy global"
            )
        self.network, self.hardware, self.config = network, hardware, config
        self.evaluator = evaluator or default_evaluator(network, hardware, config.objective)
        full = layout_for(network, hardware)  # the layers on cores (not the spike sources)
        c0 = np.zeros(network.n_populations, dtype=np.int64)  # per population
        c0[full.free] = np.minimum(full.c_min + config.init_k, full.c_max)
        crossing = layer_crossing_traffic(network, hardware, c0)[full.free]
        wanted = config.segments or fewest_segments(
            c0[full.free], hardware.n_chips, hardware.cores_per_chip
        )
        if wanted > hardware.n_chips:
            raise SpecError(
                f"{wanted} segments need {wanted} chips; {hardware.name} has "
                f"{hardware.n_chips}: ask for at most {hardware.n_chips} segments"
            )
        segments = segment_layers(
            c0[full.free], wanted, hardware.cores_per_chip, crossing, exact=True
        )
        self.segments = [full.free[seg] for seg in segments]  # population ids
        self.c0 = c0
        self.chips = _snake(hardware)[: len(self.segments)]  # consecutive segments are neighbours
        self.placed: dict[int, np.ndarray] = {}
        self._lay_out("packed-row")
        self.full_layout = full
        self.history = History()
        self.heuristics: dict[str, Record] = {}
        self._best: Record | None = None

    def _chip_cores(self, s: int, heuristic: str) -> np.ndarray:
        """The cores of segment s's chip, in the order of a fill heuristic."""
        order = core_order(self.hardware, heuristic if heuristic in ORDERS else "spread-col")
        return order[self.hardware.core_table["chip"][order] == self.chips[s]]

    def _lay_out(self, heuristic: str) -> None:
        """Every layer at min+k on its segment's chip, in the heuristic's fill order."""
        for s, layers in enumerate(self.segments):
            cores, start = self._chip_cores(s, heuristic), 0
            for k in layers.tolist():
                self.placed[k] = cores[start : start + self.c0[k]]
                start += int(self.c0[k])

    def segment_summary(self) -> list[dict]:
        """Each segment: its chip and its layers' names, in order."""
        names = self.network.population_names
        return [
            {"chip": int(chip), "layers": [names[k] for k in layers.tolist()]}
            for chip, layers in zip(self.chips, self.segments, strict=True)
        ]

    def _budgets(self, remaining: int) -> list[int]:
        n = len(self.segments)
        return [remaining // n + (s < remaining % n) for s in range(n)]

    def iter_run(self, cancel=None, checkpoint=None) -> Iterator[Event]:
        if checkpoint is not None:
            raise SpecError("checkpoints are kept for the global strategy only")
        cfg = self.config
        # the whole-network heuristics: the same baseline as the global strategy
        base = NestedES(
            self.network,
            self.hardware,
            dataclasses.replace(cfg, budget=min(cfg.budget, len(cfg.heuristics))),
            evaluator=self.evaluator,
            layout=self.full_layout,
        )
        yield from self._relay(base.iter_run(cancel), "")
        self.heuristics = base.result().heuristics
        # start every chip from the fill order that did best on the whole network
        self._lay_out(min(self.heuristics, key=lambda n: self.heuristics[n].fitness))
        budgets = self._budgets(cfg.budget - len(self.history))
        for s, layers in enumerate(self.segments):
            if cancel is not None and cancel.is_set():
                return
            fixed = {k: v for k, v in self.placed.items() if k not in set(layers.tolist())}
            layout = layout_for(
                self.network,
                self.hardware,
                cores=self._chip_cores(s, "packed-row"),
                free=layers,
                fixed_cores=fixed,
            )
            sub_cfg = dataclasses.replace(
                cfg,
                budget=max(budgets[s], 1),
                seed=int(np.random.SeedSequence([cfg.seed, s]).generate_state(1)[0]),
            )
            es = NestedES(
                self.network, self.hardware, sub_cfg, evaluator=self.evaluator, layout=layout
            )
            yield from self._relay(es.iter_run(cancel), f"chip {s}")
            if es.best is not None:  # keep this chip's best for the chips that follow
                offsets = np.concatenate([[0], np.cumsum(es.best.cores_per_population)])
                for k in layers.tolist():
                    self.placed[k] = np.asarray(es.best.placement[offsets[k] : offsets[k + 1]])

    def _relay(self, events: Iterator[Event], note: str) -> Iterator[Event]:
        for e in events:
            r = dataclasses.replace(
                e.record,
                index=len(self.history),
                note=f"{note}: {e.record.note}".strip(": ") if note else e.record.note,
            )
            self.history.append(r)
            self._best = better(self._best, r)
            yield Event(len(self.history), self.config.budget, self._best or r, r)

    def run(self, cancel=None, checkpoint=None, callback=None) -> ESResult:
        for event in self.iter_run(cancel, checkpoint):
            if callback is not None:
                callback(event)
        return self.result(cancelled=len(self.history) < self.config.budget)

    def result(self, cancelled: bool = False) -> ESResult:
        if self._best is None:
            raise self.history.all_failed_error()
        initial = min(self.heuristics.values(), key=lambda r: r.fitness)
        return ESResult(
            self._best, initial, self.heuristics, self.history, cancelled, self.segment_summary()
        )

    def settings(self) -> dict:
        """What the run maps onto what, and how: its history's first line says it."""
        return {
            "network": self.network.fingerprint,
            "hardware": self.hardware.fingerprint,
            "strategy": "chipwise",
            **self.config.to_dict(),
        }


def _snake(hardware: Hardware) -> list[int]:
    """Chip ids in boustrophedon order over the chip grid (rows alternate direction)."""
    out = []
    for cy in range(hardware.chips_y):
        row = [cy * hardware.chips_x + cx for cx in range(hardware.chips_x)]
        out += row if cy % 2 == 0 else row[::-1]
    return out


strategies.add(
    "chipwise",
    ChipwiseSearch,
    doc="one search per chip, over its segment of layers (Loihi 2 mapping ES §5.3)",
)

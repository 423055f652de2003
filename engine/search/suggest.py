"""Suggest: the single swaps and moves that lower a mapping's latency most, with their gain.

A move takes the partition on one core to another core: a *swap* when that core holds a
partition (the two exchange), a *move* when it is empty. ``suggest`` scans them where they
can help first — every move of a core whose flows cross the bottleneck link (or of the
bottleneck core and the cores it exchanges messages with) — then, while its time budget
lasts, every other move in a seeded random order. Each is timed exactly by the predictor's
incremental evaluator (``Evaluator.swap_cores`` there and back: the integers of the loads
return to what they were), so the gain listed is the gain a full evaluation gives.

    >>> s = suggest(build_mapping("sparse-mlp-1", "loihi2"), top=3)   # doctest: +SKIP
    >>> s.moves[0].gain_us, s.scanned, s.complete                     # doctest: +SKIP
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from engine.errors import SpecError

__all__ = ["Move", "Suggestions", "suggest"]

SUGGEST_BUDGET_S = 2.0  # the default time budget of a scan
_CHECK_EVERY = 64  # candidates between two looks at the clock


@dataclass(frozen=True)
class Move:
    """One suggested move: the partition on ``core_a`` to ``core_b`` (a swap when ``core_b``
    holds one), and the step after it."""

    core_a: int
    core_b: int
    kind: str  # "swap" or "move"
    latency_us: float
    energy_uj: float
    gain_us: float  # latency before − after (> 0)
    energy_gain_uj: float

    def to_dict(self, hardware) -> dict:
        return {
            "kind": self.kind,
            "from": list(hardware.core_address(self.core_a)),
            "to": list(hardware.core_address(self.core_b)),
            "from_core": self.core_a,
            "to_core": self.core_b,
            "latency_us": self.latency_us,
            "gain_us": self.gain_us,
            "energy_uj": self.energy_uj,
            "energy_gain_uj": self.energy_gain_uj,
        }


@dataclass(frozen=True)
class Suggestions:
    """The best moves found (best first; empty when none lowers the latency) and what the
    scan covered."""

    moves: tuple[Move, ...]
    latency_us: float  # of the mapping as it is
    energy_uj: float
    bottleneck: str  # its bounding term (engine.evaluation.cost.TERMS)
    predictor: str  # which predictor timed every move
    focus: str  # what the first stage scanned around
    focus_moves: int  # moves in the first stage
    scanned: int  # moves timed in all
    candidates: int  # single moves there are (unordered pairs of cores, one occupied)
    seconds: float

    @property
    def complete(self) -> bool:
        """Every single move was timed: the first listed is the best there is."""
        return self.scanned == self.candidates

    @property
    def verdict(self) -> str:
        """One sentence: the best gain, or why no move is listed, and what was scanned."""
        scope = (
            f"scanned {self.scanned:,} of {self.candidates:,} moves"
            f"{' (all)' if self.complete else ''}, {self.focus_moves:,} around {self.focus} "
            f"first, in {self.seconds:.2f} s, timed by the {self.predictor} predictor"
        )
        if self.moves:
            return f"best move saves {self.moves[0].gain_us:.4g} us/step; {scope}"
        why = {
            "barrier": "the barrier bounds the step and no placement changes it",
            "link": "no single move lowers the busiest link's time",
        }.get(
            self.bottleneck,
            f"the {self.bottleneck} term of one core bounds the step and moving cores does not "
            "change a core's work",
        )
        return f"no move helps: {why}; {scope}"

    def to_dict(self, hardware) -> dict:
        return {
            "latency_us": self.latency_us,
            "energy_uj": self.energy_uj,
            "bottleneck": self.bottleneck,
            "predictor": self.predictor,
            "moves": [m.to_dict(hardware) for m in self.moves],
            "focus": self.focus,
            "focus_moves": self.focus_moves,
            "scanned": self.scanned,
            "candidates": self.candidates,
            "complete": self.complete,
            "seconds": self.seconds,
            "verdict": self.verdict,
        }


def suggest(
    mapped, *, top: int = 5, budget_s: float = SUGGEST_BUDGET_S, seed: int = 0,
    multicast: bool | None = None, predictor: str | None = None,
) -> Suggestions:  # fmt: skip
    """The ``top`` single moves of ``mapped`` (an ``engine.pipeline.Mapped``) that lower its
    latency most by ``predictor`` (None: the default), best first, ties broken by energy.

    The moves around the bottleneck are all timed whatever the budget; the rest while
    ``budget_s`` seconds last, in an order drawn from ``seed``."""
    from engine.evaluation.flows import core_flows, flows_through
    from engine.pipeline import evaluator

    if top < 1:
        raise SpecError(f"top must be 1 or more, not {top}: how many moves to list")
    if not budget_s > 0:
        raise SpecError(f"the time budget must be above 0 seconds, not {budget_s}")
    t0 = time.perf_counter()
    hw, graph = mapped.hardware, mapped.graph
    ev = evaluator(mapped, multicast=multicast, predictor=predictor)
    full = ev.evaluation(locality=False)
    cores = ev.core_of_part.copy()
    if full.bottleneck == "link" and full.bottleneck_link >= 0:
        flows = flows_through(hw, graph, cores, full.bottleneck_link)
        from engine.evaluation.flows import link_label

        focus = f"the busiest link, {link_label(hw, full.bottleneck_link)}"
        parts = np.concatenate([flows.src_part, flows.dst_part])
    else:
        core = full.bottleneck_core if full.bottleneck_core >= 0 else int(cores[0])
        out, into = core_flows(hw, graph, cores, core)
        focus = f"core {list(hw.core_address(core))}"
        parts = np.concatenate([[ev.part_of_core[core]], out.dst_part, into.src_part])
    parts = np.unique(parts[parts < graph.n_parts])
    first, rest = _candidates(hw.n_cores, cores, cores[parts], np.random.default_rng(seed))
    pairs = np.concatenate([first, rest])
    latency = np.full(len(pairs), np.inf)
    energy = np.full(len(pairs), np.inf)
    base = ev.latency_us, ev.energy_uj
    deadline = t0 + budget_s
    done = 0
    for i, (a, b) in enumerate(pairs.tolist()):
        if (
            i >= len(first)
            and (i == len(first) or i % _CHECK_EVERY == 0)
            and time.perf_counter() > deadline
        ):
            break
        latency[i], energy[i] = ev.swap_cores(a, b)
        ev.swap_cores(a, b)  # back: the integers return exactly
        done = i + 1
    order = np.lexsort((energy[:done], latency[:done]))
    better = order[latency[order] < base[0]][:top]
    occupied = ev.part_of_core >= 0
    moves = []
    for i in better.tolist():
        a, b = (int(v) for v in pairs[i])
        if not occupied[a]:  # the occupied core is the one that moves
            a, b = b, a
        moves.append(
            Move(
                a, b, "swap" if occupied[b] else "move", float(latency[i]), float(energy[i]),
                float(base[0] - latency[i]), float(base[1] - energy[i]),
            )
        )  # fmt: skip
    return Suggestions(
        moves=tuple(moves), latency_us=base[0], energy_uj=base[1], bottleneck=full.bottleneck,
        predictor=ev.predictor, focus=focus, focus_moves=len(first), scanned=done,
        candidates=len(pairs), seconds=time.perf_counter() - t0,
    )  # fmt: skip


def _candidates(n_cores: int, cores: np.ndarray, focus: np.ndarray, rng) -> tuple:
    """Every unordered pair of distinct cores at least one of which holds a partition, as
    rows (a, b): those with a core of ``focus`` first, then the others shuffled by ``rng``."""
    occupied = np.zeros(n_cores, dtype=bool)
    occupied[cores] = True
    in_focus = np.zeros(n_cores, dtype=bool)
    in_focus[focus] = True
    a = np.repeat(np.flatnonzero(occupied), n_cores)
    b = np.tile(np.arange(n_cores), int(occupied.sum()))
    once = (a != b) & (~occupied[b] | (a < b))  # a pair of occupied cores once
    a, b = a[once], b[once]
    near = in_focus[a] | in_focus[b]
    first = np.stack([a[near], b[near]], axis=1)
    rest = np.stack([a[~near], b[~near]], axis=1)
    return first, rest[rng.permutation(len(rest))]

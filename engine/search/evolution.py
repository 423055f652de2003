"""Loihi 2 mapping ES §4.3: the nested (1+λ) evolutionary strategy over partitioning and placement.

Each generation first mutates the partitioning genotype λ_part times, carrying the
parent's placement to every offspring with the reordering operator, and selects
(elitist ``(1+λ)`` by default, ``(1,λ)`` for the ablation); then it mutates the
placement of the new parent λ_place times and selects elitistically. The search starts
from ``min+k`` placed by each heuristic of §4.3.1 (packed/spread × row/column and a
random placement) — and from a given mapping too, a hand-tuned one (``start=``) — the
best of them as parent. The budget counts fitness evaluations, the initial ones included.

``NestedES.iter_run`` is a generator of ``Event`` (one per evaluation); it honours a
cancel token (anything with ``is_set()``) and writes a checkpoint after every
generation (``engine.search.checkpoint``: appended, so it costs in proportion to the
generation) from which ``NestedES.resume`` continues the very same run.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from engine.errors import InputFileError, SpecError
from engine.hardware import Hardware
from engine.mapping.assignment import Mapping
from engine.mapping.placement.fill import core_order
from engine.model.network import Network
from engine.search.checkpoint import FORMAT, VERSION, CheckpointWriter, read_checkpoint
from engine.search.config import (
    ESConfig,
    default_evaluator,
    objectives,
    predictor_setting,
    require_hardware_for,
    searches,
    strategies,
)
from engine.search.evaluators import Candidate, ModelEvaluator
from engine.search.genotype import Layout, PartitionGenotype, decode, encode, layout_for
from engine.search.history import History, check_records
from engine.search.operators import mutate_partition, mutate_placement, reorder
from engine.search.record import Event, Record, better

__all__ = ["START", "ESResult", "NestedES", "check_strategy", "evolve"]

START = "start"  # the note of the given starting mapping's evaluation (``NestedES(start=)``)


@dataclass(frozen=True)
class ESResult:
    best: Record
    initial: Record  # the parent the evolution started from
    heuristics: dict[str, Record]
    history: History
    cancelled: bool
    # the chipwise strategy's segments: each one's chip and layers (None: one search)
    segments: list[dict] | None = None

    @property
    def evaluations(self) -> int:
        return len(self.history)

    @property
    def failed(self) -> int:
        return sum(r.failed for r in self.history)

    @property
    def improvement_pct(self) -> float:
        """Fitness improvement of the best over the best heuristic, in percent."""
        base = min(r.fitness for r in self.heuristics.values())
        return 100.0 * (base - self.best.fitness) / base if math.isfinite(base) else math.nan

    def mapping(self, network: Network) -> Mapping:
        return self.best.mapping(network)


@dataclass
class _Individual:
    x: PartitionGenotype
    omega: np.ndarray
    record: Record | None = None

    @property
    def fitness(self) -> float:
        return self.record.fitness if self.record else math.inf


class NestedES:
    """The nested evolutionary strategy over every core of the hardware (strategy ``global``)."""

    def __init__(
        self,
        network: Network,
        hardware: Hardware,
        config: ESConfig | None = None,
        *,
        evaluator=None,
        layout: Layout | None = None,
        start: Mapping | None = None,
    ):
        self.network, self.hardware = network, hardware
        self.config = config or ESConfig()
        self.layout = layout or layout_for(network, hardware)
        # a mapping to start from besides the heuristics (a hand-tuned one): evaluated first
        self._start = None if start is None else encode(self.layout, network, start)
        self.evaluator = evaluator or default_evaluator(network, hardware, self.config.objective)
        self.rng = np.random.default_rng(self.config.seed)
        self.history = History()
        self.generation = 0
        self.parent: _Individual | None = None
        self.heuristic_index: dict[str, int] = {}
        self._best: Record | None = None  # running best for events
        self.phase = "partition"  # the step the next generation half runs
        self._writer: CheckpointWriter | None = None

    # ------------------------------------------------------------ bookkeeping
    @property
    def count(self) -> int:
        return len(self.history)

    @property
    def best(self) -> Record | None:
        """The best individual evaluated so far (the first of equals)."""
        ok = [r for r in self.history if r.feasible]
        return min(ok, key=lambda r: r.fitness) if ok else None

    def _evaluate(self, items, level: str) -> list[_Individual]:
        """Evaluate (x, ω, note) triples; records are appended with accepted=False."""
        decoded = [decode(self.layout, x, omega) for x, omega, _ in items]
        outcomes = self.evaluator.evaluate_batch([Candidate(c, p) for c, p in decoded])
        name = self.config.objective
        out = []
        for (x, omega, note), (cores, placement), o in zip(items, decoded, outcomes, strict=True):
            record = Record.of(
                o, objectives={name: objectives[name].value(o)}, cores_per_population=cores,
                placement=placement, index=self.count, generation=self.generation,
                level=level, accepted=False, note=note,
            )  # fmt: skip
            self.history.append(record)
            out.append(_Individual(x, omega, record))
        return out

    def _accept(self, ind: _Individual) -> None:
        rec = dataclasses.replace(ind.record, accepted=True)
        self.history[rec.index] = rec
        ind.record = rec
        self.parent = ind

    def _events(self, start: int) -> Iterator[Event]:
        """One Event per record from ``start`` on, each with the best found up to it."""
        for r in self.history[start:]:
            self._best = better(self._best, r)
            yield Event(r.index + 1, self.config.budget, self._best or r, r)

    # ------------------------------------------------------------ the run
    def _initial_omegas(self) -> list[tuple[str, np.ndarray]]:
        cores = self.layout.cores
        rank = np.full(self.hardware.n_cores, -1)
        out = []
        for name in self.config.heuristics:
            if name == "random":
                out.append((name, self.rng.permutation(cores)))
            else:
                order = core_order(self.hardware, name)
                rank[order] = np.arange(order.size)
                out.append((name, cores[np.argsort(rank[cores], kind="stable")]))
        return out

    def _remaining(self) -> int:
        return self.config.budget - self.count

    def iter_run(self, cancel=None, checkpoint=None) -> Iterator[Event]:
        """Run until the budget is spent or ``cancel.is_set()``; yield an Event per evaluation."""
        try:
            yield from self._generations(cancel, checkpoint)
        finally:
            self._close_checkpoint()

    def _generations(self, cancel, checkpoint) -> Iterator[Event]:
        cfg, layout, ops = self.config, self.layout, self.config.operators

        def cancelled():
            return cancel is not None and cancel.is_set()

        if self.parent is None:
            x0 = PartitionGenotype.min_plus(layout, cfg.init_k)
            items = [(x0, om, name) for name, om in self._initial_omegas()]
            if self._start is not None:
                items.insert(0, (*self._start, START))
            items = items[: self._remaining()]
            inds = self._evaluate(items, "init")
            self.heuristic_index = {
                note: ind.record.index for (_, _, note), ind in zip(items, inds, strict=True)
            }
            self._accept(min(inds, key=lambda i: i.fitness))
            yield from self._events(0)
            self.generation = 1
            self._checkpoint(checkpoint)

        while self._remaining() > 0 and not cancelled():
            start = self.count
            parent = self.parent
            if self.phase == "partition":
                # mutate x, carry ω over with the reordering operator
                kids = []
                for _ in range(min(cfg.lambda_part, self._remaining())):
                    x = mutate_partition(parent.x, layout, ops, self.rng)
                    omega = (
                        reorder(parent.omega, layout, parent.x, x) if cfg.reorder else parent.omega
                    )
                    kids.append((x, omega, ""))
                offspring = self._evaluate(kids, "partition")
                pool = offspring + ([parent] if cfg.elitist else [])
                # min() keeps the first of equals; with the parent last, an equal child wins
                best = min(pool, key=lambda i: i.fitness)
                if math.isfinite(best.fitness):
                    self._accept(best)
                self.phase = "placement"
            else:
                # mutate ω of the (new) parent; always elitist
                c_used = int(parent.x.cores_per_layer(layout).sum())
                kids = [
                    (parent.x, mutate_placement(parent.omega, c_used, ops, self.rng), "")
                    for _ in range(min(cfg.lambda_place, self._remaining()))
                ]
                offspring = self._evaluate(kids, "placement")
                best = min([*offspring, parent], key=lambda i: i.fitness)
                if best is not parent:
                    self._accept(best)
                self.phase = "partition"
                self.generation += 1
            yield from self._events(start)
            self._checkpoint(checkpoint)

    def run(self, cancel=None, checkpoint=None, callback=None) -> ESResult:
        for event in self.iter_run(cancel, checkpoint):
            if callback is not None:
                callback(event)
        return self.result(cancelled=self._remaining() > 0)

    def result(self, cancelled: bool = False) -> ESResult:
        if self.best is None:
            raise self.history.all_failed_error()
        initial = min(
            (self.history[i] for i in self.heuristic_index.values()), key=lambda r: r.fitness
        )
        return ESResult(
            best=self.best,
            initial=initial,
            heuristics={n: self.history[i] for n, i in self.heuristic_index.items()},
            history=self.history,
            cancelled=cancelled,
        )

    def settings(self) -> dict:
        """What the run maps onto what, and how: its history's first line says it."""
        return {
            "network": self.network.fingerprint,
            "hardware": self.hardware.fingerprint,
            "strategy": "global",
            **self.config.to_dict(),
            **predictor_setting(self.evaluator),
        }

    # ------------------------------------------------------------ checkpoints
    def header(self) -> dict:
        """What a checkpoint says of the run once: what it maps onto what, and how."""
        return {
            "format": FORMAT,
            "version": VERSION,
            "network": {"name": self.network.name, "fingerprint": self.network.fingerprint},
            "hardware": {"name": self.hardware.name, "fingerprint": self.hardware.fingerprint},
            "config": self.config.to_dict(),
            "layout": {
                "free": self.layout.free.tolist(),
                "cores": self.layout.cores.tolist(),
                "fixed_cores": {
                    str(k): list(map(int, v)) for k, v in self.layout.fixed_cores.items()
                },
            },
        }

    def state(self) -> dict:
        """What a checkpoint says after each generation: where the search stands."""
        p = self.parent
        return {
            "generation": self.generation,
            "phase": self.phase,
            "rng": self.rng.bit_generator.state,
            "parent": {
                "extra": p.x.extra.tolist(),
                "unused": p.x.unused,
                "omega": p.omega.tolist(),
                "index": p.record.index,
            },
            "heuristics": self.heuristic_index,
        }

    def _checkpoint(self, path) -> None:
        if path is None:
            return
        if self._writer is None or self._writer.path != path:
            self._close_checkpoint()
            self._writer = CheckpointWriter(path)
        self._writer.commit(self.header(), self.history, self.state())

    def _close_checkpoint(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    @classmethod
    def resume(
        cls, path, network: Network, hardware: Hardware, *, evaluator=None, budget=None
    ) -> NestedES:
        """Continue a run from its checkpoint (optionally with a larger budget)."""
        ck = read_checkpoint(path)
        for what, obj in (("network", network), ("hardware", hardware)):
            entry = ck.header.get(what)
            if not isinstance(entry, dict) or entry.get("fingerprint") != obj.fingerprint:
                name = entry.get("name") if isinstance(entry, dict) else None
                raise InputFileError(f"{path} is a run of {what} {name!r}, not of {obj.name!r}")
        try:
            es = cls._from_checkpoint(ck, network, hardware, evaluator, budget)
        except ValueError as e:  # (says what is wrong in words)
            raise InputFileError(f"{path} is a malformed checkpoint: {e}") from None
        except (KeyError, TypeError, IndexError, AttributeError) as e:
            raise InputFileError(
                f"{path} is a malformed checkpoint ({type(e).__name__}: {e})"
            ) from None
        return es

    def check_history(self, where) -> list[str]:
        """That the records taken from a checkpoint are a run's (``check_records``) and,
        when the model rates the mappings, that it gives every evaluated one the figure its
        record says (``InputFileError`` naming ``where`` and the record otherwise: a forged
        fitness would steer the resumed search). Returns the objectives it could not check
        (a simulated one; any an evaluator command measured)."""
        check_records(self.history, where)
        name = self.config.objective
        if not isinstance(self.evaluator, ModelEvaluator) or objectives[name].simulated:
            return [name]
        done = [r for r in self.history if not r.failed]
        outcomes = self.evaluator.evaluate_batch(
            [Candidate(r.cores_per_population, r.placement) for r in done]
        )
        for r, o in zip(done, outcomes, strict=True):
            again = objectives[name].value(o)
            if not math.isclose(again, r.fitness, rel_tol=1e-9, abs_tol=1e-12):
                raise InputFileError(
                    f"{where}: record {r.index} says {name} {r.fitness:.6g}, but the model "
                    f"gives {again:.6g} for its mapping: the checkpoint was changed since the "
                    "run wrote it (or a MeshScope of another model wrote it); it does not "
                    "resume this run"
                )
        return []

    @classmethod
    def _from_checkpoint(cls, ck, network, hardware, evaluator, budget) -> NestedES:
        header, state = ck.header, ck.state
        config = ESConfig.from_dict(header["config"])
        if budget is not None:
            config = dataclasses.replace(config, budget=budget)
        lay = header["layout"]
        fixed = {int(k): np.asarray(v) for k, v in lay["fixed_cores"].items()}
        layout = layout_for(
            network, hardware, cores=np.asarray(lay["cores"]), free=lay["free"], fixed_cores=fixed
        )
        es = cls(network, hardware, config, evaluator=evaluator, layout=layout)
        es.rng.bit_generator.state = state["rng"]
        name = config.objective  # (a record of an older checkpoint does not say it)
        es.history = History(_record(d, i, name) for i, d in enumerate(ck.records))
        if state.get("records", len(es.history)) != len(es.history):
            raise ValueError(f"{len(es.history)} records where the state counts {state['records']}")
        es.generation = int(state["generation"])
        es.phase = state["phase"]
        if es.phase not in ("partition", "placement"):
            raise KeyError(f"phase {es.phase!r}")
        es.heuristic_index = {k: int(v) for k, v in state["heuristics"].items()}
        es._best = es.best
        p = state["parent"]
        es.parent = _Individual(
            PartitionGenotype(p["extra"], p["unused"]),
            np.asarray(p["omega"], dtype=np.int64),
            es.history[p["index"]],
        )
        return es


def _record(d, i: int, objective: str) -> Record:
    """Record ``i`` of a checkpoint (a record of an older one does not say its objectives)."""
    try:
        return Record.from_dict({"objectives": {objective: d.get("fitness")}, **d})
    except ValueError as e:
        raise ValueError(f"its record {i}: {e}") from None
    except (AttributeError, TypeError) as e:
        raise ValueError(f"its record {i} is malformed ({type(e).__name__}: {e})") from None


strategies.add(
    "global", NestedES, doc="one search over every core of every chip (Loihi 2 mapping ES §5.3)"
)


def evolve(
    network: Network, hardware: Hardware, config: ESConfig, *, strategy: str = "global",
    evaluator=None, start: Mapping | None = None,
):  # fmt: skip
    """A run of the nested ES with the named strategy (``global`` or ``chipwise``), with
    ``iter_run``/``run``/``result``; ``start``: a mapping the global strategy starts from
    besides its heuristics."""
    require_hardware_for(config.objectives, hardware)
    check_strategy(config, strategy, start=start is not None)
    if start is None:
        return strategies[strategy](network, hardware, config, evaluator=evaluator)
    return strategies[strategy](network, hardware, config, evaluator=evaluator, start=start)


def check_strategy(config: ESConfig, strategy: str, *, start: bool = False) -> None:
    """Refuse settings the strategy cannot run (``start``: a mapping to start from is given)."""
    strategies[strategy]  # an unknown one raises, listing the known ones
    if config.segments and strategy != "chipwise":
        raise SpecError(
            "--segments splits the layers of the chipwise strategy: add --strategy chipwise"
        )
    if start and strategy != "global":
        raise SpecError(f"only the global strategy starts from a given mapping, not {strategy}")


searches.add("evolve", evolve, doc="the nested (1+λ)-ES of the Loihi 2 mapping paper")

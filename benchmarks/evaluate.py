"""Evaluation speed on sparse-mlp-1 / loihi2: new partitions, new placements, swaps.

Prints one JSON object: ``partition_per_s`` (a new layered partition, evaluated at a
random placement), ``placement_per_s`` (a new placement of a fixed partition),
``swap_per_s`` (an incremental exchange of two cores, occupied or empty), and
``breakdown_us``: where the time of each goes; ``beside``: new placements and swaps of the
same kind on other hardware — eight Loihi 2 chips (two meshes, off-chip links), Loihi 2's
model with multicast trees, and a multicast preset (mosaic-8x8, with a network that fits
it). Pinned to one core.

    .venv/bin/python benchmarks/evaluate.py [--quick]
"""

from __future__ import annotations

import os
import time

import numpy as np
from common import finish, parser

from engine.evaluation.cost import Evaluator
from engine.evaluation.incremental import mesh_summary
from engine.evaluation.traffic import route_loads
from engine.hardware import load_hardware
from engine.mapping.assignment import Partition, Placement, layered_assignment
from engine.mapping.partition.layer import min_cores
from engine.mapping.partition_graph import partition_graph
from engine.specs import load_network_spec


def per_second(fn, items, min_seconds=1.0):
    """Calls of fn over items (cycled) per second, after one warm-up call."""
    fn(items[0])
    count, start = 0, time.perf_counter()
    while True:
        for item in items:
            fn(item)
        count += len(items)
        elapsed = time.perf_counter() - start
        if elapsed >= min_seconds:
            return count / elapsed


def mean_us(fn, items):
    start = time.perf_counter()
    for item in items:
        fn(item)
    return 1e6 * (time.perf_counter() - start) / len(items)


BESIDE = (  # (network, hardware, partition, multicast: None = as the hardware's NoC does)
    ("sparse-mlp-1", "loihi2-x8", "min", None),
    ("sparse-mlp-1", "loihi2", "min", True),
    ("mlp:widths=240-240-10,density=0.05", "mosaic-8x8", "min", None),
)


def beside(network: str, hardware: str, partition: str, multicast, rng, args, seconds) -> dict:
    """New placements and swaps per second of ``network`` on ``hardware``."""
    from engine.mapping.partition import make_partition

    net, hw = load_network_spec(network), load_hardware(hardware)
    part = make_partition(net, hw, partition)
    placements = [
        Placement(rng.permutation(hw.n_cores)[: part.n_parts])
        for _ in range(20 if args.quick else 200)
    ]
    ev = Evaluator(net, hw, part, placements[0], multicast=multicast)
    swaps = rng.integers(0, hw.n_cores, size=(200 if args.quick else 20000, 2)).tolist()
    return {
        "network": net.name,
        "hardware": hw.name,
        "cores": hw.n_cores,
        "meshes": hw.links.meshes,
        "chips": hw.n_chips,
        "multicast": ev.multicast,
        "partitions": part.n_parts,
        "placement_per_s": per_second(ev.set_placement, placements, seconds),
        "swap_per_s": per_second(lambda ab: ev.swap_cores(*ab), swaps, seconds),
    }


def main():
    args = parser(__doc__).parse_args()
    seconds = 0.05 if args.quick else 1.0  # the least time each rate is measured over
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    rng = np.random.default_rng(0)
    net, hw = load_network_spec("sparse-mlp-1"), load_hardware("loihi2")
    base = np.asarray(min_cores(net, hw))
    on_cores = ~np.asarray(net.spike_source)  # a spike source runs on no core: it gets none
    extra_total = hw.n_cores - base.sum() - 20
    genotypes = []
    for _ in range(3 if args.quick else 20):  # random extra cores per layer, as the ES's genotype
        extra = np.zeros_like(base)
        share = on_cores / on_cores.sum()
        extra[on_cores] = rng.multinomial(int(rng.integers(0, extra_total)), share[on_cores])
        genotypes.append(base + extra)
    partitions = [Partition.layered(net, g) for g in genotypes]
    placements = [
        Placement(rng.permutation(hw.n_cores)[: partitions[0].n_parts])
        for _ in range(20 if args.quick else 200)
    ]

    def new_partition(cores):
        p = Partition.layered(net, cores)
        return Evaluator(net, hw, p, Placement(rng.permutation(hw.n_cores)[: p.n_parts]))

    ev = Evaluator(net, hw, partitions[0], placements[0])
    swaps = rng.integers(0, hw.n_cores, size=(200 if args.quick else 20000, 2)).tolist()
    figures = {
        "partition_per_s": per_second(new_partition, genotypes, 2 * seconds),
        "placement_per_s": per_second(ev.set_placement, placements, seconds),
        "swap_per_s": per_second(lambda ab: ev.swap_cores(*ab), swaps, seconds),
    }

    figures["setup_multicast"] = ev.multicast
    figures["beside"] = [beside(*case, rng, args, seconds) for case in BESIDE]

    stats = partition_graph(net, hw, partitions[0])
    cores = placements[0].cores
    src, dst = cores[stats.pair_src], cores[stats.pair_dst]
    loads = route_loads(hw, src, dst, stats.pair_fixed)
    kinds = ev._slot_kind, *ev._kind_factors
    figures["breakdown_us"] = {
        "partition.layered_assignment": mean_us(lambda g: layered_assignment(net, g), genotypes),
        "partition.partition_graph": mean_us(lambda p: partition_graph(net, hw, p), partitions),
        "placement.route_loads": mean_us(
            lambda _: route_loads(hw, src, dst, stats.pair_fixed), range(20 if args.quick else 500)
        ),
        "placement.mesh_summary": mean_us(
            lambda _: mesh_summary(loads[None, :], *kinds), range(20 if args.quick else 2000)
        ),
        "placement.total": 1e6 / figures["placement_per_s"],
        "swap.total": 1e6 / figures["swap_per_s"],
    }
    figures["setup"] = {
        "network": net.name,
        "hardware": hw.name,
        "meshes": hw.links.meshes,
        "multicast": figures.pop("setup_multicast"),
        "neurons": net.n_neurons,
        "synapses": net.n_synapses,
        "partitions_at_min": int(base.sum()),
        "pairs_per_partition": int(stats.pair_src.size),
    }
    finish(args, "evaluate", figures)


if __name__ == "__main__":
    main()

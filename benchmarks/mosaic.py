"""Mosaic routing memory (the routing paper, seed 003): Fig. 2d's requirements and their spread,
placement's effect, and the speed of the check.

``profiles``: for a grid of profiles P̂ = (p₀, p₁, 0, p₃) on ``--hardware`` (default mosaic-8x8,
1,024 neurons in order on 64 Neuron Tiles), ``--networks`` random networks with exactly that
profile (``engine.mosaic.profile.random_network``) are routed with shared paths; per profile
the largest RT and NT crossbar they need (input rows) and the routing entries, mean, standard
deviation and coefficient of variation (std / mean). The paper says the spread across networks
of one profile is small (§III: "the standard deviation of memory resource usage across networks
with identical P values is minimal"); ``max_cv`` is the largest coefficient of variation over
the grid, per quantity.

``placement``: one random network of profile (0.5, 0.05, 0, 0.01) placed in order and placed
by a random permutation of its neurons over the same tiles: the random placement scatters
what was local, so its profile moves to far distances and its routing memory grows.

``speed``: ``meshscope mosaic check``'s work (routing memory, profile, removal plan) on the NIR
paper's Sinabs CNN (8,970 neurons on cores, 1.1 M synapses) on a 24 × 24 Mosaic, median of
``--repeats``.

Prints one JSON object and writes it to ``benchmarks/results/mosaic.json``.

    .venv/bin/python benchmarks/mosaic.py               # about a minute on 2 cores

``--quick``: a tiny case through the same code, printed and not written
(tests/benchmarks/test_quick.py runs it).
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import numpy as np
from common import NIR_CNN as CNN
from common import finish, parser

from engine.hardware import load_hardware
from engine.mosaic.check import check, in_order
from engine.mosaic.memory import routing_memory
from engine.mosaic.profile import profile_of, random_network, requirements, sequential_nt
from engine.specs import load_network_spec


def profiles(hardware, networks: int, quick: bool = False) -> dict:
    rows = []
    for p0 in (0.25,) if quick else (0.25, 0.5):
        for p1 in (0.05,) if quick else (0.02, 0.05, 0.1):
            for p3 in (0.0, 0.01) if quick else (0.0, 0.005, 0.01):
                out = requirements(hardware, (p0, p1, 0.0, p3), seeds=range(networks))
                for key in ("rt_size", "nt_size", "routing_entries"):
                    m, s = out[key]["mean"], out[key]["std"]
                    out[key]["cv"] = s / m if m else 0.0
                rows.append(out)
    max_cv = {
        key: max(r[key]["cv"] for r in rows) for key in ("rt_size", "nt_size", "routing_entries")
    }
    return {"networks_per_profile": networks, "profiles": rows, "max_cv": max_cv}


def placement(hardware, seed: int = 0) -> dict:
    n = hardware.limits.neurons * hardware.width * hardware.height
    nt = sequential_nt(n, hardware)
    net = random_network(hardware, nt, (0.5, 0.05, 0.0, 0.01), seed=seed)
    shuffled = np.random.default_rng(seed).permutation(nt)
    out = {}
    for name, where in (("in order", nt), ("random", shuffled)):
        mem = routing_memory(net, hardware, where)
        p = profile_of(hardware, where, net)
        out[name] = {
            "routing_entries": mem.routing_entries,
            "max_rt_rows": int(mem.rows[mem.grid.kind != 0].max()),
            "mappable": mem.mappable,
            "farthest_hops": int(np.flatnonzero(p.connections).max()),
        }
    return out


def speed(repeats: int, network: str = str(CNN), side: int = 24) -> dict:
    name = network
    network = load_network_spec(network)
    hardware = load_hardware(f"mosaic-8x8@{side}x{side}")
    nt = in_order(network, hardware)
    times, report = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        _, report = check(network, hardware, nt)
        times.append(time.perf_counter() - t0)
    return {
        "network": Path(name).name,
        "synapses": network.n_synapses,
        "hardware": hardware.name,
        "check_s": {"median": statistics.median(times), "min": min(times), "max": max(times)},
        "mappable": report["mappable"],
        "routing_entries": report["routing_entries"],
        "overflowing_tiles": len(report["overflowing_tiles"]),
    }


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--hardware", default="mosaic-8x8")
    ap.add_argument("--networks", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    if args.quick:
        args.networks, args.repeats = 2, 1
    hardware = load_hardware(args.hardware)
    t0 = time.perf_counter()
    out = {
        "hardware": hardware.name,
        "profiles": profiles(hardware, args.networks, args.quick),
        "placement": placement(hardware),
        # quick: a small MLP on 8 × 8 tiles, through the same check
        "speed": speed(1, "mlp:widths=256-256-256", 8) if args.quick else speed(args.repeats),
    }
    out["seconds"] = time.perf_counter() - t0
    finish(args, "mosaic", out)


if __name__ == "__main__":
    main()

"""The papers' real networks against SNN hypergraphs Table III: nodes, connections, layers.

For each built-in ANN-derived workload (``engine.workloads.cnn``): its nodes (every neuron,
the input's too, as Table III counts them), connections (synapses), mean h-edge cardinality
(pins per h-edge, its source counted: 1 + connections / nodes, as Table III's figures are),
populations, how many synapses stay structured, the time and memory to build it, and beside
them Table III's figures and the ratio.

    .venv/bin/python benchmarks/networks.py            # writes benchmarks/results/networks.json

``--quick``: a tiny case through the same code, printed and not written
(tests/benchmarks/test_quick.py runs it).
"""

from __future__ import annotations

import resource
import time

from common import finish, parser

from engine.workloads import build_workload, workload_explicit, workload_size
from engine.workloads.cnn import ARCHITECTURES, CONNECTIONS_TOLERANCE, NODES_TOLERANCE, TABLE_III

QUICK_SIZES = {"mobilenet-v1": 32, "alexnet": 8, "vgg11": 32, "lenet": 16}  # built, not counted


def main() -> None:
    args = parser(__doc__).parse_args()
    rows = []
    for name, arch in ARCHITECTURES.items():
        nodes, connections = workload_size(name)
        built = f"{name}:size={QUICK_SIZES[name]}" if args.quick and name in QUICK_SIZES else name
        t = time.perf_counter()
        net = build_workload(built)
        seconds = time.perf_counter() - t
        row = {
            "network": name,
            "about": arch.about,
            "input": "x".join(map(str, net.shapes[0])),
            "populations": net.n_populations,
            "nodes": nodes,
            "connections": connections,
            "cardinality": 1 + connections / nodes,  # pins: the source and its destinations
            "structured": connections - workload_explicit(name),
            "build_s": round(seconds, 2),
        }
        if name in TABLE_III:
            paper_nodes, paper_connections, paper_cardinality = TABLE_III[name]
            row["paper"] = {
                "nodes": paper_nodes,
                "connections": paper_connections,
                "cardinality": paper_cardinality,
            }
            row["nodes_ratio"] = nodes / paper_nodes
            row["connections_ratio"] = connections / paper_connections
        rows.append(row)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    finish(
        args,
        "networks",
        {
            "rows": rows,
            "tolerance": {"nodes": NODES_TOLERANCE, "connections": CONNECTIONS_TOLERANCE},
            "peak_rss_mb": round(peak),
        },
    )


if __name__ == "__main__":
    main()

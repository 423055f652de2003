"""The papers' real networks against SNN hypergraphs Table III: nodes, connections, layers.

For each built-in ANN-derived workload (``engine.workloads.cnn``): its nodes (every neuron,
the input's too, as Table III counts them), connections (synapses), mean h-edge cardinality
(pins per h-edge, its source counted: 1 + connections / nodes, as Table III's figures are),
populations, how many synapses stay structured, the time and memory to build it, and beside
them Table III's figures and the ratio. Then the issue's end-to-end maps (``MAPS``: MobileNet
V1 by overlap and by its layers, hierarchical on VGG11 and AlexNet, Hilbert placement), each a
process of its own: seconds per phase and peak memory, against 10 min and 16 GiB.

    .venv/bin/python benchmarks/networks.py            # writes benchmarks/results/networks.json
    .venv/bin/python benchmarks/networks.py --no-maps  # the counts alone (seconds)
    .venv/bin/python benchmarks/networks.py --keep-maps  # the counts anew, the maps as recorded

``--quick``: a tiny case through the same code, printed and not written
(tests/benchmarks/test_quick.py runs it).
"""

from __future__ import annotations

import json
import resource
import sys
import time

from common import RESULTS, finish, parser, spawn

from engine.specs import build_workload, workload_explicit, workload_size
from engine.workloads.cnn import ARCHITECTURES, CONNECTIONS_TOLERANCE, NODES_TOLERANCE, TABLE_III

QUICK_SIZES = {"mobilenet-v1": 32, "alexnet": 8, "vgg11": 32, "lenet": 16}  # built, not counted
# (network, partitioner, placer): the maps the real-networks issue times, on seed004-large
MAPS = (("mobilenet-v1", "overlap", "hilbert"), ("mobilenet-v1", "min", "hilbert"),
        ("vgg11", "hierarchical", "hilbert"), ("alexnet", "hierarchical", "hilbert"))  # fmt: skip
TARGET_S, TARGET_GIB = 600, 16
QUICK_MAPS = {"mobilenet-v1": 32}  # the one map a quick run makes, at this size (a process)


def map_child(spec: str) -> None:
    """One map, in this process: seconds per phase, partitions, latency, peak memory."""
    from engine.pipeline import build_mapping, evaluate

    a = json.loads(spec)
    try:
        t = time.perf_counter()
        mapped = build_mapping(a["network"], "seed004-large", partition=a["partitioner"],
                               placement=a["placer"])  # fmt: skip
        t1 = time.perf_counter()
        ev = evaluate(mapped)
        out = {"seconds": {**mapped.seconds, "evaluate": time.perf_counter() - t1},
               "wall_s": time.perf_counter() - t, "partitions": mapped.mapping.partition.n_parts,
               "latency_us": ev.latency_us, "connectivity": ev.metrics["connectivity"],
               "peak_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20}  # fmt: skip
    except Exception as e:  # noqa: BLE001 - a row says what went wrong
        out = {"error": f"{type(e).__name__}: {' '.join(str(e).split())[:300]}"}
    print(json.dumps(out))


def maps(quick: bool) -> list[dict]:
    rows = []
    for name, partitioner, placer in MAPS:
        if quick and (name not in QUICK_MAPS or rows):
            continue
        network = f"{name}:size={QUICK_MAPS[name]}" if quick else name
        r = spawn(__file__, 2 * TARGET_S, network=network, partitioner=partitioner, placer=placer)
        rows.append({"network": name, "partitioner": partitioner, "placer": placer, **r})
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    return rows


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--no-maps", action="store_true", help="the counts alone")
    ap.add_argument(
        "--keep-maps", action="store_true",
        help="count anew and keep the recorded maps (meta.kept says their command and date)",
    )  # fmt: skip
    ap.add_argument("--child")
    args = ap.parse_args()
    if args.child:
        map_child(args.child)
        return
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
    meta = None
    if args.keep_maps and not args.quick:  # the maps of the recorded run, with its command
        before = json.loads((RESULTS / "networks.json").read_text())
        made = [k for k in before["meta"].get("kept", []) if "maps" in k["sections"]]
        was = made[0] if made else {k: before["meta"][k] for k in ("command", "date")}
        meta = {"kept": [{"sections": ["maps"], "command": was["command"], "date": was["date"]}]}
        recorded = before["maps"]
    else:
        recorded = [] if args.no_maps else maps(args.quick)
    finish(
        args,
        "networks",
        {
            "rows": rows,
            "tolerance": {"nodes": NODES_TOLERANCE, "connections": CONNECTIONS_TOLERANCE},
            "peak_rss_mb": round(peak),
            "maps": recorded,
            "targets": {"seconds": TARGET_S, "peak_gib": TARGET_GIB},
        },
        meta=meta,
    )


if __name__ == "__main__":
    main()

"""The SNN hypergraphs paper's placers on one partition: quality and time.

Partitions ``rand:n=16384,card=128`` (the paper's random cortex-like network) with
``sequential-ordered`` on hypergraph-small once, then places those partitions with every
placer of the paper, alone and refined by force (``PLACER+force``), as ``meshscope map
--placer NAME`` does. Prints one JSON object (``benchmarks/results/placers.json``): per placer
the paper's metrics (ELP, average latency, congestion, connection locality, connectivity) and
the seconds of the placement alone; and each placer's ELP relative to Hilbert's.

    .venv/bin/python benchmarks/placers.py

``--quick``: a tiny case through the same code, printed and not written
(tests/benchmarks/test_quick.py runs it).
"""

from __future__ import annotations

from common import finish, parser

from engine.pipeline import build_mapping, evaluate

PLACERS = ("hilbert", "hilbert+force", "spectral", "spectral+force", "min-distance")
KEEP = ("elp", "average_latency_ns", "congestion", "connection_locality", "connectivity")


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--network", default="rand:n=16384,card=128")
    ap.add_argument("--hardware", default="hypergraph-small")
    args = ap.parse_args()
    if args.quick:
        args.network = "rand:n=4096,card=64"
    first = build_mapping(args.network, args.hardware, partition="sequential-ordered",
                          placement=PLACERS[0])  # fmt: skip
    partition = first.mapping.partition
    rows = {}
    for placer in PLACERS:
        mapped = build_mapping(first.network, first.hardware, partition=partition,
                               placement=placer)  # fmt: skip
        metrics = evaluate(mapped).metrics
        rows[placer] = {**{k: metrics[k] for k in KEEP}, "place_s": mapped.seconds["place"]}
    for row in rows.values():
        row["elp_vs_hilbert"] = row["elp"] / rows["hilbert"]["elp"]
    out = {
        "network": first.network.name,
        "hardware": first.hardware.name,
        "partitioner": "sequential-ordered",
        "partitions": int(partition.n_parts),
        "placers": rows,
    }
    finish(args, "placers", out)


if __name__ == "__main__":
    main()

"""Every partitioner from 4k to 262k neurons (seed004-large's cardinality), and how it grows.

Generates ``rand:n=N,card=C`` once per size, then runs each registered hypergraph
partitioner on it in a fresh process (``benchmarks/partition.py``'s machinery: peak memory
is the run's own, a time-out ends a run), Mt-KaHyPar too when its package is installed.
Prints one JSON object: per partitioner and size the seconds, peak MB, partitions and
connectivity (or the error / time-out), and per partitioner the exponent ``b`` of
``seconds ≈ a · n^b`` fitted over the sizes it finished.

    .venv/bin/python benchmarks/scale.py                       # 4k … 262k, card 256
    .venv/bin/python benchmarks/scale.py --sizes 4096 16384 --timeout 120

``--quick``: a tiny case through the same code, printed and not written
(tests/benchmarks/test_quick.py runs it).
"""

from __future__ import annotations

import importlib.util
import json
import math
import sys
import tempfile
import time
from pathlib import Path

from common import finish, parser
from partition import LAYERED, spawn  # the sibling script's runner


def exponent(points: list[tuple[int, float]]) -> float | None:
    """Least-squares slope of log(seconds) against log(n)."""
    if len(points) < 2:
        return None
    xs = [math.log(n) for n, _ in points]
    ys = [math.log(max(s, 1e-6)) for _, s in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mx) ** 2 for x in xs
    )


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--sizes", nargs="*", type=int, default=[4096, 16384, 65536, 262144])
    ap.add_argument("--card", type=int, default=256)
    ap.add_argument("--timeout", type=float, default=600, help="seconds per run")
    ap.add_argument(
        "--hardware", default="hypergraph-large",
        help="one hardware for every size, so the runs differ only in n (default hypergraph-large)",
    )  # fmt: skip
    ap.add_argument("--skip", nargs="*", default=[], help="partitioners to leave out")
    args = ap.parse_args()
    if args.quick:
        args.sizes, args.card, args.timeout, args.hardware = (
            [2048],  # one size: each (partitioner, size) is a process of its own
            64,
            120,
            "hypergraph-small",
        )

    from engine.io.network_file import save_network
    from engine.mapping.partition import partitioners
    from engine.specs import build_workload

    names = [
        n
        for n in partitioners.names()
        if n not in LAYERED and ":" not in partitioners.grammar(n) and n not in args.skip
    ]
    if args.quick:  # a greedy one and a multilevel one: each run is a process of its own
        names = [n for n in names if n in ("sequential", "hierarchical")]
    if importlib.util.find_spec("mtkahypar") is not None:  # optional: pip install mtkahypar
        names.append("mtkahypar")
    out: dict = {"card": args.card, "hardware": args.hardware, "timeout_s": args.timeout,
                 "runs": {n: {} for n in names}}  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            start = time.perf_counter()
            network = build_workload(f"rand:n={n},card={args.card}")
            out.setdefault("generate_s", {})[n] = round(time.perf_counter() - start, 2)
            hardware = args.hardware
            path = str(Path(tmp) / f"rand-{n}.npz")
            save_network(network, path, compress=False)
            del network
            best = None
            for name in names:
                kw = {"network": path, "hardware": hardware, "partitioner": name}
                if name == "mtkahypar":
                    if best is None:
                        continue
                    kw["k"] = best
                row = spawn(args.timeout, **kw)
                if "partitions" in row and name != "mtkahypar":
                    best = row["partitions"] if best is None else min(best, row["partitions"])
                out["runs"][name][n] = row
                print(json.dumps({"n": n, "partitioner": name, **row}), file=sys.stderr, flush=True)
    out["exponent"] = {
        name: exponent([(int(n), r["seconds"]) for n, r in runs.items() if "seconds" in r])
        for name, runs in out["runs"].items()
    }
    finish(args, "scale", out)


if __name__ == "__main__":
    main()

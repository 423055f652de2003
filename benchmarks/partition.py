"""The SNN hypergraphs paper's partitioners at scale, with Mt-KaHyPar as an optional reference row.

Runs every registered hypergraph partitioner on the SNN hypergraphs random networks, each in a
fresh process so that its peak memory is its own, and prints JSON rows: partitions,
connectivity (eq. 7), seconds, peak resident memory, and whether every core limit
holds. Hardware follows SNN hypergraphs §V-A: "small" (Loihi's limits) up to 2^26 synapses,
"large" beyond. If the `mtkahypar` package is installed (not a dependency of MeshScope;
`make bench` installs it, the `bench` extra), it partitions the same hypergraph — exported as
hMETIS — into the same number of blocks as our best partition with at most C_npc
nodes per block (the one limit it can express), minimizing km1 (= eq. 7); its row says
which of our other limits it breaks.

    .venv/bin/python benchmarks/partition.py [--sizes 16384:128 65536:192 262144:256]

``--quick``: a tiny case through the same code, printed and not written
(tests/benchmarks/test_quick.py runs it).
"""

from __future__ import annotations

import json
import resource
import sys
import tempfile
import time
from pathlib import Path

import common
from common import finish, parser

LAYERED = {"min", "natural"}  # need a layered network; parameterized ones have ":" grammars


def run_one(spec: str, hardware: str, partitioner: str) -> dict:
    from engine.hardware import load_hardware
    from engine.mapping.partition import make_partition
    from engine.mapping.partition_graph import partition_graph
    from engine.specs import load_network_spec

    net, hw = load_network_spec(spec), load_hardware(hardware)  # a saved .npz: cheap to load
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    part = make_partition(net, hw, partitioner)
    seconds = time.perf_counter() - start
    stats = partition_graph(net, hw, part)
    return {
        "partitions": part.n_parts,
        "connectivity": stats.connectivity,
        "seconds": seconds,
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "loaded_mb": before / 1024,  # the process after loading the network
        "limits_ok": not stats.limit_violations(hw),
    }


def run_mtkahypar(spec: str, hardware: str, k: int) -> dict:
    from engine.hardware import load_hardware
    from engine.mapping.partition_graph import partition_graph
    from engine.specs import load_network_spec

    net, hw = load_network_spec(spec), load_hardware(hardware)
    part, seconds, km1 = common.mtkahypar_partition(net, hw, k)
    stats = partition_graph(net, hw, part)
    violations = stats.limit_violations(hw)
    return {
        "partitions": int(part.n_parts),
        "connectivity": stats.connectivity,
        "seconds": seconds,
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "limits_ok": not violations,
        "violations": violations[:3],
        "km1_reported": km1,
    }


def child(args_json: str) -> None:
    a = json.loads(args_json)
    try:
        if a["partitioner"] == "mtkahypar":
            out = run_mtkahypar(a["network"], a["hardware"], a["k"])
        else:
            out = run_one(a["network"], a["hardware"], a["partitioner"])
    except Exception as e:  # noqa: BLE001 - a row says what went wrong
        out = {"error": f"{type(e).__name__}: {' '.join(str(e).split())[:300]}"}
    print(json.dumps(out))


def spawn(timeout_s: float | None = None, **kw) -> dict:
    return common.spawn(__file__, timeout_s, **kw)


def main():
    ap = parser(__doc__)
    ap.add_argument("--sizes", nargs="*", default=["16384:128", "65536:192", "262144:256"])
    ap.add_argument("--child")
    ap.add_argument("--skip", nargs="*", default=[], help="partitioners to leave out")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per run")
    ap.add_argument("--no-mtkahypar", action="store_true")
    ap.add_argument(
        "--mtkahypar-nodes", type=int, default=common.MTKAHYPAR_NODES,
        help="run Mt-KaHyPar on networks of at most this many nodes (into hundreds of blocks "
        "it takes over 20 minutes on the 64k network)",
    )  # fmt: skip
    args = ap.parse_args()
    if args.child:
        child(args.child)
        return
    if args.quick:
        args.sizes, args.timeout = ["4096:64"], 120
    from engine.mapping.partition import partitioners

    names = [
        n
        for n in partitioners.names()
        if n not in LAYERED and ":" not in partitioners.grammar(n) and n not in args.skip
    ]
    if args.quick:  # the baseline and the multilevel one: each is a process of its own
        names = [n for n in names if n in ("sequential-ordered", "overlap")]
    try:
        import mtkahypar  # noqa: F401

        have_mtk = not args.no_mtkahypar
    except ImportError:
        have_mtk = False
    from engine.io.network_file import save_network
    from engine.specs import build_workload

    rows = []
    tmp = tempfile.TemporaryDirectory()
    for size in args.sizes:
        n, card = (int(v) for v in size.split(":"))
        name = f"rand:n={n},card={card}"
        spec = str(Path(tmp.name) / f"rand-{n}-{card}.npz")  # generated once, loaded per run
        network = build_workload(name)
        hardware = "hypergraph-small" if network.n_synapses <= 2**26 else "hypergraph-large"
        save_network(network, spec)
        del network
        results = {}
        for partitioner in names:
            results[partitioner] = spawn(
                args.timeout, network=spec, hardware=hardware, partitioner=partitioner
            )
        ok = {k: v for k, v in results.items() if "connectivity" in v}
        if have_mtk and ok and n <= args.mtkahypar_nodes:
            k = min(v["partitions"] for v in ok.values())
            results["mtkahypar"] = spawn(
                args.timeout, network=spec, hardware=hardware, partitioner="mtkahypar", k=k
            )
        base = ok.get("sequential-ordered", {}).get("connectivity")
        for partitioner, result in results.items():
            row = {"network": name, "hardware": hardware, "partitioner": partitioner, **result}
            if base and "connectivity" in result:
                row["vs_sequential_ordered"] = result["connectivity"] / base
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
    finish(args, "partition", {"sizes": args.sizes, "rows": rows})


if __name__ == "__main__":
    main()

"""Structured convolutions: a C-channel 3×3 conv on S×S mapped from its description.

Writes a NIR graph Input(C, S, S) → Conv2d(C→C, 3×3, padding 1) → LIF → Output, reads it
(the conv stays a ``ConvProjection``), and maps it with the minimum partition on a mesh
large enough (``mesh:WxHx4``), one split after another. For a smaller conv (``--compare``)
it also builds the partition graph from the expanded synapses, to set the two side by side.

Prints one JSON object: ``synapses``, ``read_s``, per split ``cores``, ``partition_s``,
``partition_graph_s``, ``latency_us``; ``peak_rss_mb`` of the whole run; and under
``compare`` the structured and explicit partition-graph times and the explicit CSR's size.

    .venv/bin/python benchmarks/structured.py                 # 64 channels on 128×128
    .venv/bin/python benchmarks/structured.py --channels 16 --side 64 --splits tiles,rows

``--quick``: a tiny case through the same code, printed and not written
(tests/benchmarks/test_quick.py runs it).
"""

from __future__ import annotations

import resource
import tempfile
import time
from pathlib import Path

import nir
import numpy as np
from common import finish, parser

from engine.hardware import load_hardware
from engine.io.nir_graph import read_nir
from engine.mapping.partition import make_partition
from engine.mapping.partition_graph import partition_graph
from engine.pipeline import build_mapping, evaluate


def conv_graph(path: Path, channels: int, side: int) -> Path:
    one = np.ones((channels, side, side), dtype=np.float32)
    nodes = {
        "in": nir.Input(input_type=np.array([channels, side, side])),
        "conv": nir.Conv2d(
            input_shape=(side, side), weight=np.ones((channels, channels, 3, 3), np.float32),
            stride=1, padding=1, dilation=1, groups=1, bias=np.zeros(channels, np.float32),
        ),
        "lif": nir.LIF(tau=one, r=one, v_leak=0 * one, v_threshold=one),
        "out": nir.Output(output_type=np.array([channels, side, side])),
    }  # fmt: skip
    edges = [("in", "conv"), ("conv", "lif"), ("lif", "out")]
    nir.write(path, nir.NIRGraph(nodes=nodes, edges=edges, type_check=False))
    return path


def mesh_for(network, hardware_cores: int) -> str:
    side = int(np.ceil(np.sqrt(hardware_cores / 4)))
    return f"mesh:{side}x{side}x4"


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--channels", type=int, default=64)
    ap.add_argument("--side", type=int, default=128)
    ap.add_argument("--splits", default="tiles,rows")
    ap.add_argument("--compare", default="16x48", help="CxS of the structured/explicit check")
    args = ap.parse_args()
    if args.quick:
        args.channels, args.side, args.compare = 4, 16, "4x12"
    out: dict = {"channels": args.channels, "side": args.side}
    with tempfile.TemporaryDirectory() as tmp:
        path = conv_graph(Path(tmp) / "conv.nir", args.channels, args.side)
        t = time.perf_counter()
        net = read_nir(path)
        out["read_s"] = round(time.perf_counter() - t, 2)
        out["synapses"] = net.n_synapses
        out["explicit_synapses"] = net.n_explicit
        # enough cores: the neurons at ~90 a core (Loihi 2's memory for 576 synapses each)
        hw_spec = mesh_for(net, net.n_neurons // 90 + 64)
        out["hardware"] = hw_spec
        for split in args.splits.split(","):
            t = time.perf_counter()
            mapped = build_mapping(net, hw_spec, partition="min", placement="packed-row",
                                   split=split)  # fmt: skip
            t1 = time.perf_counter()
            out[split] = {
                "cores": int(mapped.graph.n_parts),
                "partition_s": round(mapped.seconds["partition"], 2),
                "partition_graph_s": round(mapped.seconds["partition_graph"], 2),
                "map_s": round(t1 - t, 2),
                "latency_us": round(evaluate(mapped).latency_us, 2),
                "synaptic_reuse": round(mapped.graph.synaptic_reuse, 2),
            }
        c, s = (int(v) for v in args.compare.split("x"))
        small = conv_graph(Path(tmp) / "small.nir", c, s)
        structured, explicit = read_nir(small, expand=False), read_nir(small, expand=True)
        hw = load_hardware(mesh_for(explicit, 4 * explicit.n_neurons // 90 + 64))
        partition = make_partition(structured, hw, "min", split="tiles")
        times = {}
        for name, network in (("structured", structured), ("explicit", explicit)):
            t = time.perf_counter()
            graph = partition_graph(network, hw, partition)
            times[f"{name}_partition_graph_s"] = round(time.perf_counter() - t, 3)
            times[f"{name}_axons"] = int(graph.axons.sum())
        csr = explicit.indices.nbytes + explicit.indptr.nbytes + explicit.weights.nbytes
        out["compare"] = {"conv": args.compare, "cores": partition.n_parts, **times,
                          "explicit_csr_mb": round(csr / 2**20, 1)}  # fmt: skip
    out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    finish(args, "structured", out)


if __name__ == "__main__":
    main()

"""Why hierarchical trails overlap on AlexNet and leads on MobileNet V1 (SNN hypergraphs,
docs/reproduction.md): a trace of hierarchical's coarsening, where each partition's
connectivity comes from, and how placeable its partitions' traffic is.

Per network, on the paper's hardware (``seed004-small`` up to 2^26 synapses, else
``seed004-large``), hierarchical as ``make_partition`` runs it (seed 0, default window, rounds
and passes), its coarsening traced (``coarsen(trace=…)``): per round of pairing, the nodes, the
pairs formed, the candidate pairs each core limit refused, and of the nodes it forms the share
that mixes layers and, per layer with a (channels, height, width) shape, the pixel spread: the
pixels a node's neurons of that layer cover over the fewest that hold them (⌈neurons /
channels⌉; 1 = whole pixels, every channel of a pixel together). Then the coarsest nodes (their
synapse load over the limit), their packing (the partition before refinement) and the final
partitions of hierarchical and overlap: connectivity (eq. 7), partitions mixing layers, pixel
spread, connectivity by source layer, and how placeable their traffic is (``neighbourhood``:
streams per partition, the share of messages in a partition's four heaviest streams,
the id distance of a message). Networks run one after another, in this process.

    .venv/bin/python benchmarks/papers/hierarchical_pairs.py               # ~10 min
    .venv/bin/python benchmarks/papers/hierarchical_pairs.py --networks vgg11
    .venv/bin/python benchmarks/papers/hierarchical_pairs.py --networks alexnet vgg11 lenet \
        mobilenet-v1                                                       # ~75 min, 14 GB
    .venv/bin/python benchmarks/papers/hierarchical_pairs.py --quick       # lenet, seconds
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common

from common import finish, parser, seed004_hardware  # noqa: E402

NETWORKS = ("alexnet", "vgg11", "lenet")  # LeNet for contrast: there hierarchical leads
PASSES = 4  # hierarchical's default refinement passes per level


def layer_of(network) -> np.ndarray:
    """Each neuron's population (layer)."""
    return np.asarray(network.population, dtype=np.int64)


def mixed_share(node: np.ndarray, layer: np.ndarray, n_layers: int) -> float:
    """The share of groups (nodes or partitions) holding neurons of more than one layer."""
    held = np.unique(node * n_layers + layer)  # one entry per (group, layer) present
    layers = np.bincount(held // n_layers)
    return float((layers > 1).sum() / (layers > 0).sum())


def pixel_spread(network, node: np.ndarray) -> dict[str, float]:
    """Per layer shaped (C, H, W), neurons numbered channel by channel: the pixels the groups
    cover over the fewest that could hold their neurons (Σ ⌈neurons / C⌉ over the groups)."""
    out = {}
    layer = layer_of(network)
    for k, name in enumerate(network.population_names):
        shape = network.shape_of(k)
        if len(shape) != 3:
            continue
        channels, pixels = shape[0], shape[1] * shape[2]
        groups = node[layer == k].astype(np.int64)
        pixel = np.arange(groups.size) % pixels
        covered = np.unique(groups * pixels + pixel).size
        counts = np.bincount(groups)
        out[name] = float(covered / np.ceil(counts[counts > 0] / channels).sum())
    return out


def by_source_layer(network, hardware, graph) -> dict[str, float]:
    """A partition's connectivity (eq. 7) by source layer: the messages per step of each
    spiking neuron to the partitions other than its own."""
    msgs = graph.messages(hardware.model)
    sent = msgs.neuron[msgs.src >= 0]  # a spike source's enter at the port: not in eq. 7
    per = np.bincount(
        layer_of(network)[sent], weights=network.rate[sent], minlength=network.n_populations
    )
    return dict(zip(network.population_names, per.tolist(), strict=True))


def neighbourhood(graph, near: int = 4) -> dict[str, float]:
    """How placeable a partition's traffic is. Its partners, counted by direction (a partition
    it sends to and one it hears from; one that does both counts twice: a stream each way,
    as ``PartitionGraph.adjacency`` lists them), median over the partitions; the share of all
    messages carried by each partition's ``near`` heaviest streams (a router has four
    neighbours: the traffic a placement can keep one hop away); and the message-weighted
    median distance between partition ids (the order a partitioner forms its partitions in;
    the placers order them afresh)."""
    indptr, other, w = graph.adjacency
    row = np.repeat(np.arange(indptr.size - 1), np.diff(indptr))
    order = np.lexsort((-w, row))  # each partition's partners, heaviest first
    rank = np.arange(order.size) - indptr[row[order]]
    gap = np.abs(graph.pair_src - graph.pair_dst)
    by_gap = np.argsort(gap, kind="stable")
    half = np.searchsorted(np.cumsum(graph.pair_messages[by_gap]), graph.connectivity / 2)
    median_gap = gap[by_gap[min(half, gap.size - 1)]] if gap.size else 0
    return {
        "partners_median": float(np.median(np.diff(indptr))),
        "near_share": float(w[order][rank < near].sum() / w.sum()) if w.size else 0.0,
        "id_gap_median": int(median_gap),
    }


def final(network, hardware, partition, seconds: float) -> dict:
    from engine.mapping.partition_graph import partition_graph

    graph = partition_graph(network, hardware, partition)
    node = np.asarray(partition.assignment, dtype=np.int64)
    on = node >= 0
    return {
        "partitions": int(partition.n_parts),
        "connectivity": graph.connectivity,
        "seconds": seconds,
        "mixed": mixed_share(node[on], layer_of(network)[on], network.n_populations),
        "spread": pixel_spread(network, node),
        "by_layer": by_source_layer(network, hardware, graph),
        "neighbourhood": neighbourhood(graph),
    }


def trace_network(spec: str) -> dict:
    from engine.mapping.partition import make_partition
    from engine.mapping.partition.limits import checked_partition
    from engine.mapping.partition.multilevel import coarsen, uncoarsen
    from engine.mapping.partition.multilevel.coarsen import LIMITS
    from engine.mapping.partition.multilevel.initial import pack, pack_order
    from engine.mapping.partition.multilevel.level import caps_of
    from engine.mapping.partition_graph import partition_graph
    from engine.mapping.resources import capacity
    from engine.specs import load_network_spec

    net = load_network_spec(spec)
    hw = seed004_hardware(net)
    cap = capacity(net, hw)
    # hierarchical() step by step (engine/mapping/partition/multilevel/__init__.py), as
    # make_partition runs it: the network expanded, seed 0, the default window, rounds and passes
    explicit = net.explicit(why="the hierarchical partitioner")
    rng = np.random.default_rng(0)
    trace: list = []
    t0 = time.perf_counter()
    levels, maps = coarsen(explicit, cap, rng, trace=trace)
    coarsening_s = time.perf_counter() - t0
    part, _ = uncoarsen(levels, maps, cap, rng, PASSES)
    hier = checked_partition(explicit, hw, part, "hierarchical")
    hier_s = time.perf_counter() - t0
    del explicit
    layer, n_layers = layer_of(net), net.n_populations
    rounds, node = [], maps[0]  # neuron → its node, round after round
    for r in trace:
        node = node if r.cmap is None else r.cmap[node]
        rounds.append({
            "nodes": r.nodes, "pairs": r.pairs,
            "refused": dict(zip(LIMITS, r.refused.tolist(), strict=True)),
            "mixed_after": mixed_share(node, layer, n_layers),
            "spread_after": pixel_spread(net, node),
        })  # fmt: skip
    coarsest, caps = levels[-1], caps_of(cap)
    packed, loads = pack(coarsest.hedges(), coarsest.loads(), pack_order(coarsest, caps), caps)
    before = checked_partition(net, hw, packed[node], "hierarchical before refinement")
    share = coarsest.synapses / cap.synapses
    out = {
        "network": spec, "hardware": hw.name, "neurons": net.n_neurons,
        "synapses": net.n_synapses, "coarsening_s": coarsening_s, "rounds": rounds,
        "coarsest": {"nodes": coarsest.n, "synapse_share_median": float(np.median(share)),
                     "packed": int(loads[0].size)},
        "before_refinement": partition_graph(net, hw, before).connectivity,
        "hierarchical": final(net, hw, hier, hier_s),
    }  # fmt: skip
    del levels, maps, coarsest, packed, before, hier, part, node  # MobileNet's levels: GBs
    t0 = time.perf_counter()
    overlap = make_partition(net, hw, "overlap")
    out["overlap"] = final(net, hw, overlap, time.perf_counter() - t0)
    h, o = out["hierarchical"]["connectivity"], out["overlap"]["connectivity"]
    print(f"{spec}: {len(rounds)} rounds, {out['coarsest']['nodes']} coarsest nodes, "
          f"hierarchical {h:,.0f} "
          f"({hier_s:.0f} s) vs overlap {o:,.0f}", file=sys.stderr, flush=True)  # fmt: skip
    return out


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--networks", nargs="*", default=list(NETWORKS))
    args = ap.parse_args()
    if args.quick:
        args.networks = ["lenet"]
    runs = [trace_network(spec) for spec in args.networks]
    finish(args, "papers/hierarchical_pairs", {"runs": runs})


if __name__ == "__main__":
    main()

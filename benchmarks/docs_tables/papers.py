"""The docs tables the papers' experiments (benchmarks/papers/*.py) feed with their results:
each one's layout, from the keys those scripts write (``benchmarks/report.py`` renders
them)."""

from __future__ import annotations

import statistics

from docs_tables import Table, num, whole


def paper_rows(d: dict) -> Table:
    """A paper's experiments: each claim, the paper's figure and MeshScope's, the verdict (with
    the reason when it differs) and the command that reruns it."""
    rows = []
    for r in d["rows"]:
        verdict = f"**{r['verdict']}**" + (f": {r['reason']}" if r["reason"] else "")
        said = f"{r['section']}: “{r['quote']}”" if r.get("quote") else "—"
        cells = [r["claim"], said, r["paper"], r["meshscope"], verdict, f"`{r['command']}`"]
        rows.append([c.replace("|", "\\|") for c in cells])  # a pipe would end the cell
    return Table(["claim", "the paper says", "paper", "MeshScope", "verdict", "rerun with"], rows)


def hypergraph_runs(d: dict) -> Table:
    """The SNN-hypergraphs comparison run by run: each network and partitioner, its partitions,
    connectivity, best ELP (and the placement that gave it), time and peak memory."""
    rows = []
    for r in d["runs"]:
        name = [f"`{r['network']}`", r["partitioner"]]
        if "error" in r:
            rows.append([*name, "—", "—", "—", "—", "—", "—", r["error"]])
            continue
        placed = r["placements"].items()
        placer, best = min(placed, key=lambda kv: kv[1]["elp"]) if placed else ("", None)
        broken = r.get("limits_broken")
        rows.append([
            *name, whole(r["partitions"]), whole(r["connectivity"]),
            f"{best['elp']:.3g} ({placer})" if best else "— (not placed)",
            " / ".join(f"{r['fill'][k]:.0%}" for k in ("neurons", "axons", "synapses"))
            if "fill" in r else "—",
            num(r["seconds"], 1), whole(r["peak_mb"]),
            ("cores over the limit of " + ", ".join(f"{k} {v}" for k, v in broken.items()))
            if broken else r.get("not_placed", ""),
        ])  # fmt: skip
    header = ["network", "partitioner", "partitions", "connectivity", "best ELP (placement)",
              "cores' fill: neurons / axons / synapses", "partition s", "peak MB",
              "note"]  # fmt: skip
    return Table(header, rows)


def hypergraph_seeds(d: dict) -> Table:
    """Hierarchical, the one partitioner with a seed, over seeds 0… where they ran: its
    partitions, connectivity and best ELP, mean ± std (min–max)."""
    seeds: dict[str, list[dict]] = {}
    for r in d["runs"]:
        if r["partitioner"] == "hierarchical" and "error" not in r:
            seeds.setdefault(r["network"], []).append(r)  # seed 0
    for r in d.get("seed_runs", []):
        if "error" not in r and r["network"] in seeds:
            seeds[r["network"]].append(r)

    def spread(values, digits=0, fmt=None) -> str:
        m = statistics.fmean(values)
        sd = statistics.stdev(values) if len(values) > 1 else 0.0
        f = fmt or (lambda v: f"{v:,.{digits}f}")
        return f"{f(m)} ± {f(sd)} ({f(min(values))}–{f(max(values))})"

    rows = []
    for net, runs in seeds.items():
        if len(runs) < 2:
            continue
        elps = [min(p["elp"] for p in r["placements"].values()) for r in runs]
        rows.append([
            f"`{net}`", str(len(runs)),
            f"{min(r['partitions'] for r in runs)}–{max(r['partitions'] for r in runs)}",
            spread([r["connectivity"] for r in runs]),
            spread(elps, fmt=lambda v: f"{v:.3g}"),
        ])  # fmt: skip
    header = ["network", "seeds", "partitions", "connectivity, mean ± std (min–max)",
              "best ELP, mean ± std (min–max)"]  # fmt: skip
    return Table(header, rows)


def hierarchical_pairs(d: dict) -> Table:
    """Hierarchical's coarsening per network: its rounds, the first a core limit refused a
    pair in, the coarsest nodes and how they end, against overlap's connectivity."""
    rows = []
    for r in d["runs"]:
        rounds = r["rounds"]
        first = next((i for i, x in enumerate(rounds) if any(x["refused"].values())), None)
        refusing = "none" if first is None else (
            f"{first + 1} of {len(rounds)} ("
            + ", ".join(k for k, v in rounds[first]["refused"].items() if v) + ")"
        )  # fmt: skip
        c, h, o = r["coarsest"], r["hierarchical"], r["overlap"]
        rows.append([
            f"`{r['network']}`", r["hardware"], refusing,
            f"{whole(c['nodes'])} ({num(c['synapse_share_median'])})",
            " / ".join(f"{x:.0%}" for x in (rounds[-1]["mixed_after"], h["mixed"], o["mixed"])),
            f"{whole(c['packed'])} → {whole(h['partitions'])} / {whole(o['partitions'])}",
            f"{whole(r['before_refinement'])} → {whole(h['connectivity'])} / "
            f"{whole(o['connectivity'])}",
            f"{h['connectivity'] / o['connectivity']:.2f}×",
        ])  # fmt: skip
    header = ["network", "hardware", "first refusal: round (limits)",
              "coarsest nodes (synapses over the limit, median)",
              "mixing layers: coarsest nodes / hierarchical / overlap",
              "partitions: packed → hierarchical / overlap",
              "connectivity: packed → hierarchical / overlap",
              "hierarchical / overlap"]  # fmt: skip
    return Table(header, rows)


def hierarchical_layers(d: dict) -> Table:
    """Per network and layer: the pixel spread of hierarchical's coarsest nodes, of its final
    partitions and of overlap's (pixels covered over the fewest that hold the neurons), and the
    connectivity each partition owes to the layer's spikes."""
    rows = []
    for r in d["runs"]:
        h, o = r["hierarchical"], r["overlap"]
        coarsest = r["rounds"][-1]["spread_after"]
        for layer, ch in h["by_layer"].items():
            oc = o["by_layer"][layer]
            if layer not in coarsest and not ch and not oc:
                continue  # no pixels, no messages
            spread = (
                " / ".join(num(x[layer]) for x in (coarsest, h["spread"], o["spread"]))
                if layer in coarsest else "—"
            )  # fmt: skip
            rows.append([f"`{r['network']}`", layer, spread, whole(ch), whole(oc),
                         f"{ch - oc:+,.0f}"])  # fmt: skip
    header = ["network", "layer", "pixel spread: coarsest nodes / hierarchical / overlap",
              "connectivity from it: hierarchical", "overlap", "difference"]  # fmt: skip
    return Table(header, rows)


def hierarchical_neighbourhood(d: dict) -> Table:
    """Per network, how placeable hierarchical's and overlap's partitions are: the streams
    of a partition (partners it sends to or hears from, each direction counted) and the
    share of messages in each partition's four heaviest streams."""
    rows = [
        [f"`{r['network']}`", name, whole(r[name]["partitions"]),
         num(r[name]["neighbourhood"]["partners_median"], 1),
         f"{r[name]['neighbourhood']['near_share']:.0%}"]
        for r in d["runs"] for name in ("hierarchical", "overlap")
    ]  # fmt: skip
    header = ["network", "partitioner", "partitions", "streams a partition (median)",
              "messages in its 4 heaviest streams"]  # fmt: skip
    return Table(header, rows)


FEEDS = {  # table (its markers in the docs) -> the results file it reads, and its layout
    "reproduction.loihi2-mapping-es": ("papers/loihi2_mapping_es", paper_rows),
    "reproduction.loihi2-runtime-model": ("papers/loihi2_runtime_model", paper_rows),
    "reproduction.senmap": ("papers/senmap", paper_rows),
    "reproduction.mosaic": ("papers/mosaic", paper_rows),
    "reproduction.snn-hypergraphs": ("papers/snn_hypergraphs", paper_rows),
    "reproduction.snn-hypergraphs-runs": ("papers/snn_hypergraphs", hypergraph_runs),
    "reproduction.snn-hypergraphs-seeds": ("papers/snn_hypergraphs", hypergraph_seeds),
    "reproduction.hierarchical-pairs": ("papers/hierarchical_pairs", hierarchical_pairs),
    "reproduction.hierarchical-layers": ("papers/hierarchical_pairs", hierarchical_layers),
    "reproduction.hierarchical-neighbourhood": (
        "papers/hierarchical_pairs",
        hierarchical_neighbourhood,
    ),
}

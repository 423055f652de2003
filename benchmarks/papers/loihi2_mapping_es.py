"""Loihi 2 mapping ES (seeds/000): its headline experiments rerun, each beside the paper's figure.

Rows of claim, the paper's figure, MeshScope's, the command that reruns it and a verdict:
reproduced (within the row's tolerance), same shape (the same direction or order, other
figures), differs (with the reason found) or cannot run. All with the built-in model of
Loihi 2 (the paper measured on hardware): §3.1's search-space sizes, §3.2's spread of one
partitioning over random placements (Fig. 3), §5.2's heuristics and ES gain, §5.3's
multi-chip strategies, §5.5's ablations. Writes
``benchmarks/results/papers/loihi2_mapping_es.json``; ``docs/reproduction.md`` renders it.

    .venv/bin/python benchmarks/papers/loihi2_mapping_es.py            # about ten minutes
    .venv/bin/python benchmarks/papers/loihi2_mapping_es.py --full     # the paper's budgets
    .venv/bin/python benchmarks/papers/loihi2_mapping_es.py --quick    # tiny budgets (the suite's)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common

import numpy as np  # noqa: E402
from common import claim_row as row  # noqa: E402
from common import es_curves, finish, parser

from engine.cost import model_evaluation  # noqa: E402
from engine.hardware import load_hardware  # noqa: E402
from engine.pipeline import build_mapping  # noqa: E402
from engine.search import ESConfig, make_search  # noqa: E402
from engine.search.space import (  # noqa: E402
    log10_partitionings,
    log10_placements,
    placement_spread,
)
from engine.specs import load_network_spec  # noqa: E402

PAPER = "Loihi 2 mapping ES"
HEURISTICS = {"packed-row": 30.14, "spread-row": 32.58, "packed-col": 34.86, "spread-col": 40.76}


def within(ours: float, paper: float, tolerance: float) -> bool:
    return abs(ours - paper) <= tolerance * abs(paper)


def search_space() -> list[dict]:
    """§3.1: the counts, from the paper's own formulas and its 152-core chip."""
    partitionings = min(log10_partitionings(152, c_min, 10) for c_min in range(10, 61))
    counts = (
        ("more than 10^13 partitionings of ten layers on 152 cores", 13, partitionings, ">"),
        ("placements of all 152 cores exceed 10^267", 267, log10_placements(152, 152), ">"),
        ("placements of half the cores exceed 10^155", 155, log10_placements(152, 76), ">"),
    )
    return [
        row(
            f"§3.1 {claim}",
            f"10^{paper}",
            f"10^{ours:.1f}",
            "meshscope evolve --json (search_space)",
            "reproduced" if ours > paper else "differs",
        )  # fmt: skip
        for claim, paper, ours, _ in counts
    ]


def spread(samples: int) -> dict:
    """§3.2 Fig. 3: one partitioning's latency varies widely over random placements."""
    mapped = build_mapping("sparse-mlp-1", "loihi2", partition="min+2")
    s = placement_spread(mapped, samples=samples, seed=0).summary()
    wide = s["max_over_min"] > 1.5
    return row(
        "§3.2 Fig. 3: one partitioning's latency varies widely across random placements",
        "a wide spread over 50 placements", f"{s['min_us']:.1f}–{s['max_us']:.1f} µs "
        f"(max/min {s['max_over_min']:.2f}, cv {s['cv']:.2f}) over {samples}",
        f"meshscope spread --network sparse-mlp-1 --hardware loihi2 --samples {samples}",
        "same shape" if wide else "differs",
        "" if wide else "the model's placements lie close together",
    )  # fmt: skip


def heuristics() -> list[dict]:
    """§5.2: the four fill orders on SparseMLP-1, min+2, one chip; packed-row the best."""
    net, hw = load_network_spec("sparse-mlp-1"), load_hardware("loihi2")
    ours, link = {}, {}
    for name in HEURISTICS:
        mapped = build_mapping(net, hw, partition="min+2", placement=name)
        ev = model_evaluation(net, hw, mapped.mapping)
        ours[name], link[name] = ev.latency_us, ev.max_link_messages
    rows = []
    for name, paper in HEURISTICS.items():
        close = within(ours[name], paper, 0.05)
        rows.append(row(
            f"§5.2 {name} placement of min+2 (µs/step)", f"{paper:.2f}", f"{ours[name]:.2f}",
            f"meshscope evaluate --network sparse-mlp-1 --hardware loihi2 --partition min+2 "
            f"--placement {name}",
            "reproduced" if close else "differs",
            "" if close else f"bound by its heaviest link ({link[name]:,.0f} messages a step); "
            "the model's constants are the runtime paper's microbenchmarks', not this board's",
        ))  # fmt: skip
    order_paper = sorted(HEURISTICS, key=HEURISTICS.get)
    order_ours = sorted(ours, key=ours.get)
    rows.append(row(
        "§5.2 the heuristics from best to worst", " < ".join(order_paper),
        " < ".join(order_ours), "meshscope evolve --json (heuristics)",
        "reproduced" if order_ours == order_paper else
        ("same shape" if order_ours[0] == order_paper[0] else "differs"),
        "" if order_ours == order_paper else "packed-row is the best in both; the others "
        "follow their heaviest links (" + ", ".join(f"{n} {link[n]:,.0f}" for n in order_ours)
        + " messages a step)",
    ))  # fmt: skip
    return rows, ours["packed-row"]


def es_gain(budget: int, seeds, packed_row: float) -> list[dict]:
    """§5.2: the nested ES from the heuristics, 125 evaluations: 19.36 µs, 35.8 % over
    packed-row."""
    net, hw = load_network_spec("sparse-mlp-1"), load_hardware("loihi2")
    rows, _ = es_curves(net, hw, seeds, budget=budget)
    best = float(rows[:, -1].mean())
    gain = 100 * (1 - best / packed_row)
    command = (f"meshscope evolve --network sparse-mlp-1 --hardware loihi2 --budget {budget} "
               f"--seed S  (S = 0…{len(seeds) - 1})")  # fmt: skip
    close = abs(gain - 35.8) <= 5
    return [
        row(f"§5.2 ES gain over packed-row after {budget} evaluations", "35.8 %",
            f"{gain:.1f} % (mean of {len(seeds)} seeds)", command,
            "reproduced" if close else ("same shape" if gain > 0 else "differs"),
            "" if close else "a gain of the same sign and order; the model's landscape is "
            "not the board's"),
        row(f"§5.2 best latency after {budget} evaluations (µs/step)", "19.36",
            f"{best:.2f}", command,
            "reproduced" if within(best, 19.36, 0.05) else "same shape",
            "" if within(best, 19.36, 0.05) else "the start differs (packed-row "
            f"{packed_row:.2f} µs here), and so the end"),
    ]  # fmt: skip


def multi_chip(budget: int, seeds) -> dict:
    """§5.3: on eight chips, the chip-wise strategy beats the global one."""
    net, hw = load_network_spec("sparse-mlp-2"), load_hardware("loihi2-x8")
    best = {}
    for strategy in ("global", "chipwise"):
        runs = [make_search(net, hw, ESConfig(budget=budget, seed=s), strategy=strategy).run()
                for s in seeds]  # fmt: skip
        best[strategy] = float(np.mean([r.best.latency_us for r in runs]))
    better = best["chipwise"] < best["global"]
    return row(
        "§5.3 chip-wise beats global on SparseMLP-2 over eight chips",
        "chip-wise lower latency (Fig. 5b)",
        f"chip-wise {best['chipwise']:.2f} µs, global {best['global']:.2f} µs "
        f"({budget} evaluations, {len(seeds)} seeds)",
        f"meshscope evolve --network sparse-mlp-2 --hardware loihi2-x8 --strategy "
        f"chipwise|global --budget {budget}",
        "same shape" if better else "differs",
        "" if better else "chip-wise did not beat global at this budget",
    )  # fmt: skip


def ablations(budget: int, seeds) -> list[dict]:
    """§5.5: without reordering the search ends 13 % worse and stalls 22 % more partition
    generations (found no improvement: ``common.es_curves``); without elitism it is clearly
    worse. A difference is told from the seeds'
    spread: it counts when it exceeds twice its standard error."""
    net, hw = load_network_spec("sparse-mlp-1"), load_hardware("loihi2")
    runs = {
        "baseline": es_curves(net, hw, seeds, budget=budget),
        "no_reorder": es_curves(net, hw, seeds, budget=budget, reorder=False),
        "no_elitism": es_curves(net, hw, seeds, budget=budget, elitist=False),
    }
    final = {k: v[0][:, -1] for k, v in runs.items()}
    stalled = {k: v[1] for k, v in runs.items()}

    def worse(name: str) -> tuple[float, float]:
        """How much worse than the baseline ``name`` ends, in %, and the standard error."""
        a, b = final[name], final["baseline"]
        se = np.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size) if a.size > 1 else 0.0
        return 100 * (a.mean() / b.mean() - 1), 100 * se / b.mean()

    command = (f"meshscope evolve --network sparse-mlp-1 --hardware loihi2 --budget {budget} "
               f"[--no-reorder | --no-elitism] --seed S  (S = 0…{len(seeds) - 1})")  # fmt: skip
    said = f"{budget} evaluations, {len(seeds)} seeds"
    gap, gap_se = worse("no_reorder")
    elitism, elitism_se = worse("no_elitism")
    base, none = stalled["baseline"], stalled["no_reorder"]
    more = 100 * (none["share"] / base["share"] - 1) if base["share"] > 0 else None
    early = (
        f"{100 * (none['first_third'] / base['first_third'] - 1):+.1f} %"
        if base["first_third"]
        else "—"
    )

    def verdict(value: float, se: float, paper: float | None) -> tuple[str, str]:
        if value > 2 * se:
            close = paper is not None and abs(value - paper) <= 2 * se + 3
            return ("reproduced" if close else "same shape"), ""
        return "differs", (f"no difference beyond the seeds' spread: {value:+.1f} ± {se:.1f} % "
                           f"(one standard error) over {len(seeds)} seeds")  # fmt: skip

    reorder_verdict = verdict(gap, gap_se, 13.0)
    elitism_verdict = verdict(elitism, elitism_se, None)
    if more is None:
        stall_verdict, stall_reason = "cannot run", "no generation stalled at this budget"
    elif more > 0:
        stall_verdict = "reproduced" if abs(more - 22) <= 8 else "same shape"
        stall_reason = (
            "" if stall_verdict == "reproduced" else
            f"more, by less: {'nearly every' if base['share'] >= 0.9 else 'many a'} "
            f"partitioning generation of a {budget}-evaluation run finds no improvement "
            f"({100 * base['share']:.0f} % with reordering), which leaves little room for 22 % "
            f"more; in the first third of the generations, where the paper sees the plateaus, "
            f"{early}"
        )  # fmt: skip
    else:
        stall_verdict, stall_reason = (
            "differs",
            (
                f"without reordering fewer generations find no improvement here ({len(seeds)} "
                f"seeds; first third {early})"
            ),
        )
    return [
        row("§5.5 without reordering, the best latency is worse", "13 % worse",
            f"{gap:+.1f} ± {gap_se:.1f} % ({said})", command, *reorder_verdict),
        row("§5.5 without reordering, more partition generations stall", "22 % more",
            ("—" if more is None else f"{more:+.1f} %") + f" ({none['share']:.3f} "
            f"against {base['share']:.3f} of the generations)", command, stall_verdict,
            stall_reason),
        row("§5.5 without elitism (partitioning), the best latency is worse", "clearly worse",
            f"{elitism:+.1f} ± {elitism_se:.1f} % ({said})", command, *elitism_verdict),
    ]  # fmt: skip


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--full", action="store_true", help="the paper's budgets and seeds")
    args = ap.parse_args()
    if args.quick:
        samples, short, seeds, multi, ablation, ab_seeds = 10, 12, range(1), 12, 12, range(1)
    elif args.full:
        samples, short, seeds, multi, ablation, ab_seeds = 50, 125, range(5), 2000, 1000, range(20)
    else:
        samples, short, seeds, multi, ablation, ab_seeds = 50, 125, range(5), 250, 1000, range(20)
    heuristic_rows, packed_row = heuristics()
    rows = [
        *search_space(),
        spread(samples),
        *heuristic_rows,
        *es_gain(short, seeds, packed_row),
        multi_chip(multi, range(len(seeds) if args.full else min(3, len(seeds)))),
        *ablations(ablation, ab_seeds),
    ]
    finish(args, "papers/loihi2_mapping_es", {"paper": PAPER, "rows": rows})


if __name__ == "__main__":
    main()

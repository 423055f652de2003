"""SENMap (seeds/002): its mesh-size schemes and its energy experiment, beside the paper's.

§IV-B's three ways to size a mesh for a number of cores, on the paper's own examples, and
§V's energy gain across event rates on PilotNet (Fig. 9), which needs the PilotNet workload.
Writes ``benchmarks/results/papers/senmap.json``; ``docs/reproduction.md`` renders it.

    .venv/bin/python benchmarks/papers/senmap.py            # seconds
    .venv/bin/python benchmarks/papers/senmap.py --quick    # the same (it is small)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common

from common import claim_row as row  # noqa: E402
from common import finish, parser

from engine.mesh_shape import mesh_shape  # noqa: E402
from engine.workloads import workloads  # noqa: E402

PAPER = "SENMap"
# §IV-B's examples: (scheme, cores, the mesh the paper gives, as a set of its two sides)
SHAPES = (
    ("strict-area", 30, (5, 6), "the factor pair of least sum"),
    ("loose-area", 31, (4, 8), "a prime count takes one core more: 32 = 4 × 8"),
    ("square", 26, None, "near-square: about √26 on a side instead of 2 × 13"),
)


def shapes() -> list[dict]:
    rows = []
    for scheme, cores, paper, said in SHAPES:
        r, c = mesh_shape(cores, scheme)
        if paper is not None:
            verdict = "reproduced" if sorted((r, c)) == sorted(paper) else "differs"
            shown = f"{paper[0]} × {paper[1]}"
        else:  # the paper gives the rule, not the sides: square-like, and room for every core
            near = abs(r - c) <= 1 and r * c >= cores
            verdict = "reproduced" if near else "differs"
            shown = "√cores a side"
        rows.append(row(
            f"§IV-B {scheme} mesh for {cores} cores ({said})", shown, f"{r} × {c}",
            f"meshscope mesh-shape --cores {cores} --scheme {scheme}", verdict,
            "" if verdict == "reproduced" else "another mesh than the paper's",
        ))  # fmt: skip
    return rows


def energy() -> dict:
    """§V (Fig. 9): about 40 % less energy from the optimal mapping across event rates."""
    have = "pilotnet" in workloads
    return row(
        "§V PilotNet: about 40 % energy improvement across frame rates (Fig. 9)", "≈ 40 %", "—",
        "meshscope pareto --network pilotnet --hardware seneca", "cannot run",
        "the rate sweep needs a frame-rate model of PilotNet's input, not built yet" if have
        else "needs the PilotNet workload (the real-networks issue)",
    )  # fmt: skip


def main() -> None:
    args = parser(__doc__).parse_args()
    finish(args, "papers/senmap", {"paper": PAPER, "rows": [*shapes(), energy()]})


if __name__ == "__main__":
    main()

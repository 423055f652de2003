"""Mosaic (seeds/003): routing memory from a hop profile, and what needs the SHD dataset.

§III's proxy: networks of one sparsity profile P̂ need about the same routing memory (the
spread across networks is small), so a profile stands for its networks. Fig. 3's accuracy
over (p₁, p₃) and against memory needs the SHD dataset and 30 training runs a point: it
cannot run here (``benchmarks/mosaic_demo.py`` trains a built-in task in miniature). Writes
``benchmarks/results/papers/mosaic.json``; ``docs/reproduction.md`` renders it.

    .venv/bin/python benchmarks/papers/mosaic.py            # about a minute
    .venv/bin/python benchmarks/papers/mosaic.py --quick    # two networks a profile
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common

from common import claim_row as row  # noqa: E402
from common import finish, parser

from engine.hardware import load_hardware  # noqa: E402
from engine.mosaic.profile import requirements  # noqa: E402

PAPER = "Mosaic"
SMALL_CV = 0.1  # "minimal" spread: a standard deviation under a tenth of the mean


def proxy(networks: int, profiles) -> dict:
    """The largest coefficient of variation (std / mean) of the routing entries and the
    crossbar sizes across ``networks`` random networks of each profile."""
    hw = load_hardware("mosaic-8x8")
    worst = 0.0
    for p in profiles:
        out = requirements(hw, p, seeds=range(networks))
        for key in ("rt_size", "nt_size", "routing_entries"):
            m, s = out[key]["mean"], out[key]["std"]
            worst = max(worst, s / m if m else 0.0)
    small = worst < SMALL_CV
    return row(
        "§III networks of one hop profile need about the same routing memory",
        "minimal spread across networks of one profile",
        f"largest cv {worst:.3f} over {len(profiles)} profiles × {networks} networks",
        "meshscope mosaic check --network … (benchmarks/mosaic.py: profiles)",
        "same shape" if small else "differs",
        "" if small else f"a coefficient of variation of {worst:.2f}",
    )  # fmt: skip


def training() -> list[dict]:
    said = ("needs the SHD dataset and 30 training runs a point; benchmarks/mosaic_demo.py "
            "trains a built-in task in miniature (docs/mosaic.md)")  # fmt: skip
    return [
        row("Fig. 3a accuracy over hop profiles (p₁, p₃), small spread per profile",
            "mean ± std of 30 runs per (p₁, p₃)", "—", "meshscope mosaic demo", "cannot run",
            said),
        row("Fig. 3b routing-aware training: higher accuracy for the memory",
            "above the non-routing-aware curve", "—", "meshscope mosaic demo", "cannot run",
            said),
    ]  # fmt: skip


def main() -> None:
    args = parser(__doc__).parse_args()
    networks = 2 if args.quick else 20
    profiles = [(p0, p1, 0.0, p3) for p0 in (0.25, 0.5) for p1 in (0.02, 0.05, 0.1)
                for p3 in (0.0, 0.01)]  # fmt: skip
    if args.quick:
        profiles = profiles[:2]
    finish(args, "papers/mosaic", {"paper": PAPER, "rows": [proxy(networks, profiles),
                                                            *training()]})  # fmt: skip


if __name__ == "__main__":
    main()

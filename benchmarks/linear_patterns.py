"""Loihi 2 runtime model Fig. 8: heaviest router link vs layer size for three patterns.

For a tiled-identity layer of M origin and M destination cores placed one pair per
router, prints the measured heaviest router-link load (in units of N messages) next to
The Loihi 2 runtime model paper's closed forms, and draws ``assets/linear-patterns.png``.

    .venv/bin/python benchmarks/linear_patterns.py

``--quick``: a tiny case through the same code, printed and not written
(tests/benchmarks/test_quick.py runs it).
"""

from __future__ import annotations

import numpy as np
from common import LINEAR_N, asset, finish, heaviest_router_link, parser


def main():
    args = parser(__doc__).parse_args()
    rows = []
    for n in (2, 4) if args.quick else (2, 4, 6, 8, 10, 12):
        m = n * n
        rows.append(
            {
                "M": m,
                "square": heaviest_router_link(m, "pairs-square", rows=n),
                "square_formula": m**1.5 / 4,
                "x": heaviest_router_link(m, "pairs-x")
                if n % 2 == 0 and (m // 2) % 2 == 0
                else None,
                "x_formula": m - 2,
                "diagonal": heaviest_router_link(m, "pairs-diagonal"),
                "diagonal_formula": m - 1,
            }
        )
    finish(args, "linear_patterns", {"N": LINEAR_N, "rows": rows})

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    m = np.array([r["M"] for r in rows])
    fig, ax = plt.subplots(figsize=(6, 3.6), dpi=120)
    ax.plot(m, [r["square"] for r in rows], "o", label="saturated square (measured)")
    ax.plot(m, m**1.5 / 4, "-", color="C0", alpha=0.5, label=r"$M^{3/2}/4$")
    xm = [(r["M"], r["x"]) for r in rows if r["x"] is not None]
    ax.plot(*zip(*xm, strict=True), "s", color="C1", label="X shape (measured)")
    ax.plot(m, m - 2, "-", color="C1", alpha=0.5, label=r"$M-2$")
    ax.plot(m, [r["diagonal"] for r in rows], "^", color="C2", label="diagonal (measured)")
    ax.plot(m, m - 1, "--", color="C2", alpha=0.5, label=r"$M-1$")
    ax.set_xlabel("origin-destination core pairs M")
    ax.set_ylabel("heaviest router link (× N messages)")
    ax.set_title("Loihi 2 runtime model §VI: link load vs placement pattern")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(asset(args, "linear-patterns.png"))


if __name__ == "__main__":
    main()

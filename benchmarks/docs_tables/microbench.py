"""The docs tables benchmarks/microbench.py feeds with its results: each one's layout, from
the keys that script writes (``benchmarks/report.py`` renders them)."""

from __future__ import annotations

from docs_tables import Table, pct


def calibration(d: dict) -> Table:
    r = d["calibration_recovery"]
    return Table(
        [
            "microbenchmark runs",
            "fits (noise seeds × with/without labels)",
            "worst constant's error, median",
            "worst constant's error, max",
        ],
        [
            [
                str(r["runs"]),
                str(r["fits"]),
                pct(100 * r["median_worst_error"]),
                pct(100 * r["max_worst_error"]),
            ]
        ],
    )


FEEDS = {  # table (its markers in the docs) -> the results file it reads, and its layout
    "fidelity.calibration": ("microbench", calibration),
}

"""The docs tables benchmarks/scale.py feeds with its results: each one's layout, from
the keys that script writes (``benchmarks/report.py`` renders them)."""

from __future__ import annotations

from docs_tables import Table, failure, num, si, whole


def scale(d: dict) -> Table:
    sizes = sorted({int(n) for runs in d["runs"].values() for n in runs})
    rows = []
    for name, runs in d["runs"].items():
        cells = []
        for n in sizes:
            r = runs.get(str(n), runs.get(n))
            if r is None:
                cells.append("—")
            elif "error" in r:
                cells.append(failure(r["error"]))
            else:
                broken = "" if r.get("limits_ok", True) else " (breaks a core limit)"
                cells.append(
                    f"{whole(r['partitions'])} / {si(r['connectivity'])} / "
                    f"{num(r['seconds'], 1)} s / {whole(r['peak_mb'])} MB{broken}"
                )
        b = d["exponent"].get(name)
        rows.append([name, *cells, "—" if b is None else num(b)])
    header = ["partitioner", *[f"n = {n:,}" for n in sizes], "time ∝ n^b"]
    return Table(header, rows)


FEEDS = {  # table (its markers in the docs) -> the results file it reads, and its layout
    "partitioning.scale": ("scale", scale),
}

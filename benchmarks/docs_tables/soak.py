"""The docs tables benchmarks/soak.py feeds with its results: each one's layout, from
the keys that script writes (``benchmarks/report.py`` renders them)."""

from __future__ import annotations

from docs_tables import Table, num


def soak(d: dict) -> Table:
    rows = [[str(s["sessions"]), num(s["rss_mb"], 1)] for s in d["samples"]]
    return Table(["sessions so far", "server memory MB"], rows)


def soak_strangers(d: dict) -> Table:
    """The many-strangers case of soak.py: pages loading a large network at once."""
    r = d["strangers"]
    rows = [
        ["pages loading at once", f"{r['strangers']} × {r['network']} on {r['hardware']}"],
        ["server memory budget (--max-memory)", f"{num(r['max_memory_mb'], 0)} MB"],
        ["loaded / refused / unfinished",
         f"{r['loaded']} / {r['refused']} / {r['unfinished']} in {num(r['wall_s'], 0)} s"],
        ["server memory: at start, peak, after every page closed",
         f"{num(r['rss_mb_at_start'], 0)} / {num(r['rss_mb_peak'], 0)} / "
         f"{num(r['rss_mb_after_close'], 0)} MB"],
        ["another page's drag → latency card, before the loads",
         f"{num(r['drag_ms_quiet_median'], 0)} ms"],
        ["… during them: median, most, lost (no change in 60 s)",
         f"{num(r['drag_ms_median'], 0)} ms, {num(r['drag_ms_max'], 0)} ms, "
         f"{r['drags_lost']} of {r['drags'] + r['drags_lost']}"],
    ]  # fmt: skip
    return Table(["many strangers", ""], rows)


FEEDS = {  # table (its markers in the docs) -> the results file it reads, and its layout
    "performance.soak": ("soak", soak),
    "performance.soak-strangers": ("soak", soak_strangers),
}

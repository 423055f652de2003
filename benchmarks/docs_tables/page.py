"""The docs tables benchmarks/page.py feeds with its results: each one's layout, from
the keys that script writes (``benchmarks/report.py`` renders them)."""

from __future__ import annotations

from docs_tables import Table, num, whole


def page_speed(d: dict) -> Table:
    rows = []
    for case, c in d["cases"].items():
        rows.append(
            [
                case,
                f"{num(c['load_ms']['median'] / 1000)} s",
                f"{whole(c['drag_ms']['median'])} ms",
                f"{whole(c['simulated_card_ms']['median'])} ms",
                f"{whole(c['simulate_first_frame_ms']['median'])} ms",
            ]
        )
    header = [
        f"median of {d['repeats']} visits",
        "page load to the drawn heatmap",
        "drag → latency card",
        "drag → simulated step card",
        "Simulate → first frame",
    ]
    return Table(header, rows)


FEEDS = {  # table (its markers in the docs) -> the results file it reads, and its layout
    "performance.page": ("page", page_speed),
}

"""The docs tables, one module per benchmark script, named after it: each table's layout,
from the keys that script writes into ``benchmarks/results/NAME.json`` (``FEEDS``: the
table's name in the docs' markers -> the results file it reads and the function that lays it
out). ``benchmarks/report.py`` renders them; this package holds what they share — the
``Table``, the number formats, and reading a results file with the line saying where its
figures come from."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[1] / "results"


@dataclass(frozen=True)
class Table:
    header: list[str]
    rows: list[list[str]]

    def markdown(self) -> str:
        lines = ["| " + " | ".join(self.header) + " |", "|" + "---|" * len(self.header)]
        lines += ["| " + " | ".join(row) + " |" for row in self.rows]
        return "\n".join(lines)


# ------------------------------------------------------------------ formatting
def num(value, digits: int = 2) -> str:
    """A figure with ``digits`` decimals and thousands separators; '—' for none."""
    if value is None:
        return "—"
    return f"{value:,.{digits}f}"


def whole(value) -> str:
    return "—" if value is None else f"{round(value):,}"


def pct(value, digits: int = 1) -> str:
    return "—" if value is None else f"{value:.{digits}f} %"


def signed(value) -> str:
    return "n/a" if value is None else f"{value:+.2f}"


def span(s: dict, digits: int = 2, key: str = "mean") -> str:
    """'15.47 (14.75–15.70)': a summary's centre and range."""
    return f"{num(s[key], digits)} ({num(s['min'], digits)}–{num(s['max'], digits)})"


def si(value, digits: int = 3) -> str:
    """'9.4 M', '561.9 k': a rate with an SI prefix."""
    for factor, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= factor:
            return f"{value / factor:.{digits - 2}f} {prefix}"
    return f"{value:.{digits - 2}f}"


def short(value) -> str:
    """'14k', '6.9M': a count as a paper prints it."""
    for factor, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= factor:
            return f"{value / factor:g}{prefix}"
    return f"{value:g}"


def failure(error: str) -> str:
    """A run's error, short enough for a table cell."""
    need = re.search(r"needs (\d+) cores; (\S+) has (\d+)", error)
    if need:
        return f"does not fit: needs {int(need[1]):,} cores, {need[2]} has {int(need[3]):,}"
    text = error.split(": ", 1)[-1]
    return text if len(text) <= 60 else text[:57] + "…"


def beside(value, paper, ratio) -> str:
    """'13,846 (14k, ×0.989)': a count, and a paper's beside it when there is one."""
    return whole(value) if paper is None else f"{whole(value)} ({short(paper)}, ×{ratio:.3f})"


PLACEMENTS = ("packed-row", "spread-row", "packed-col", "spread-col")


# ------------------------------------------------------------------ results
def load(name: str) -> dict:
    return json.loads((RESULTS / f"{name}.json").read_text())


def _sections(kept: dict) -> list[str]:
    """What a kept earlier run measured: its ``sections`` (simulate.py, evolve.py,
    networks.py) or its ``case`` (soak.py)."""
    return kept.get("sections") or [kept["case"]]


def source(d: dict, section: str | None = None) -> str:
    """Where a results file's figures come from: its command, date and machine (``section``:
    only where that section's figures come from, when a partial run kept them)."""
    m = d["meta"]
    for k in m.get("kept", ()) if section else ():
        if section in _sections(k):
            return f"`{k['command']}`, {k['date']}, {m['machine']}"
    if section:
        return f"`{m['command']}`, {m['date']}, {m['machine']}"
    kept = "".join(  # sections a partial run (simulate.py --only) kept from earlier ones
        f"; {', '.join(_sections(k))}: `{k['command']}`, {k['date']}" for k in m.get("kept", ())
    )
    runs = d.get("runs") if isinstance(d.get("runs"), list) else []
    commands = {r.get("command") or (r.get("recorded_in") or {}).get("command") for r in runs}
    if len(commands - {None}) > 1:  # runs a --resume kept from earlier commands
        kept += (
            f"; its runs come from {len(commands - {None})} commands, each run's in the "
            "JSON (`command`, or `recorded_in` for the runs recorded before they kept theirs)"
        )
    return f"`{m['command']}`, {m['date']}, {m['machine']}{kept}"

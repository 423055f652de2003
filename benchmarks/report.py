"""Render every figure table of the README and ``docs/`` from ``benchmarks/results/*.json``.

A table lives in a Markdown file between two markers::

    <!-- table: NAME -->
    … rendered here, never typed by hand …
    <!-- /table -->

``NAME`` is one of ``TABLES`` below: which results file it reads and how it lays the figures
out, declared with the other tables of the benchmark script that writes that file, in
``benchmarks/docs_tables/SCRIPT.py``; this module only renders them. Under each table a line
says where its figures come from: the results file, the command that measured them, the date
and the machine. Prose cites figures only through these tables.

    .venv/bin/python benchmarks/report.py           # rewrite the tables in place
    .venv/bin/python benchmarks/report.py --check   # exit 1 if any table differs from its JSON

The test suite runs ``--check`` (``tests/benchmarks/test_report.py``), as it runs every other
benchmark script with ``--quick``: a table cannot drift from the figures it shows.
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = ("README.md", "docs/*.md")
if str(ROOT / "benchmarks") not in sys.path:  # (the tests load this file by its path)
    sys.path.append(str(ROOT / "benchmarks"))

from docs_tables import (  # noqa: E402
    ablation,
    algorithms,
    booksim_compare,
    checkpoint,
    evaluate,
    evolve,
    fidelity_sim,
    gc_pause,
    heuristics,
    linear_patterns,
    load,
    microbench,
    mosaic,
    mosaic_demo,
    networks,
    page,
    papers,
    pareto,
    partition,
    placers,
    readme,
    scale,
    simulate,
    soak,
    source,
    structured,
)

MARKER = re.compile(r"(<!-- table: ([\w.-]+) -->\n)(.*?)(<!-- /table -->)", re.S)


TABLES = {  # every table the docs show: name -> (results file, layout)
    **ablation.FEEDS,
    **algorithms.FEEDS,
    **booksim_compare.FEEDS,
    **checkpoint.FEEDS,
    **evaluate.FEEDS,
    **evolve.FEEDS,
    **fidelity_sim.FEEDS,
    **gc_pause.FEEDS,
    **heuristics.FEEDS,
    **linear_patterns.FEEDS,
    **microbench.FEEDS,
    **mosaic.FEEDS,
    **mosaic_demo.FEEDS,
    **networks.FEEDS,
    **page.FEEDS,
    **papers.FEEDS,
    **pareto.FEEDS,
    **partition.FEEDS,
    **placers.FEEDS,
    **readme.FEEDS,
    **scale.FEEDS,
    **simulate.FEEDS,
    **soak.FEEDS,
    **structured.FEEDS,
}


# ------------------------------------------------------------------ rendering
def render(name: str) -> str:
    """The Markdown between a table's markers: the table and the line saying its source."""
    if name not in TABLES:
        raise KeyError(f"no table {name!r} (known: {', '.join(TABLES)})")
    results, build = TABLES[name]
    data = load(results)
    note = (
        ""
        if name == "readme.speed"
        else f"\n\n<sub>benchmarks/results/{results}.json: {source(data)}</sub>"
    )
    return build(data).markdown() + note + "\n"


def documents() -> list[Path]:
    return sorted(p for pattern in DOCUMENTS for p in ROOT.glob(pattern))


def rendered(text: str) -> str:
    """``text`` with every table between markers rendered anew."""
    return MARKER.sub(lambda m: m.group(1) + render(m.group(2)) + m.group(4), text)


def differences() -> list[str]:
    """A unified diff per document whose tables differ from their results ('' lines none)."""
    out = []
    for path in documents():
        text = path.read_text()
        new = rendered(text)
        if new != text:
            rel = str(path.relative_to(ROOT))
            out.append(
                "".join(
                    difflib.unified_diff(
                        text.splitlines(True), new.splitlines(True), rel, rel + " (rendered)"
                    )
                )
            )
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if a table differs")
    args = ap.parse_args()
    if args.check:
        diffs = differences()
        sys.stdout.write("\n".join(diffs))
        return 1 if diffs else 0
    for path in documents():
        text = path.read_text()
        new = rendered(text)
        if new != text:
            path.write_text(new)
            print(f"rendered {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

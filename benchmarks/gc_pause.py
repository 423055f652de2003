"""How long the explorer's server stops for a full garbage collection, before and after
``explorer.app.settle_heap`` (what ``serve`` does once its warm-up is done).

Panel runs ``gc.collect()`` a few seconds after each closed page, and Python runs a full
collection on its own whenever enough objects have piled up; while it runs, no page gets
an answer. This builds the explorer's page for a network and hardware as ``serve`` would
(twice: the warm-up's objects and one session's), times full collections, settles the
heap, builds one more page (a new session) and times them again. Prints one JSON object.

    .venv/bin/python benchmarks/gc_pause.py [--network sparse-mlp-2] [--hardware loihi2-x8]

``--quick``: a tiny case through the same code, printed and not written
(tests/benchmarks/test_quick.py runs it).
"""

from __future__ import annotations

import gc
import statistics
import time

from common import finish, parser

from explorer.app import build_app, settle_heap


def collections(repeats: int) -> dict:
    walls = []
    for _ in range(repeats):
        start = time.perf_counter()
        gc.collect()
        walls.append(1000 * (time.perf_counter() - start))
    return {
        "tracked_objects": len(gc.get_objects()),
        "collect_ms_median": round(statistics.median(walls), 1),
        "collect_ms_max": round(max(walls), 1),
    }


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--network", default="sparse-mlp-2")
    ap.add_argument("--hardware", default="loihi2-x8")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    if args.quick:
        args.network, args.hardware, args.repeats = "sparse-mlp-1", "loihi2", 2
    pages = [build_app(args.network, args.hardware) for _ in range(2)]
    before = collections(args.repeats)
    settle_heap()
    pages.append(build_app(args.network, args.hardware))  # a session after the freeze
    after = collections(args.repeats)
    out = {"network": args.network, "hardware": args.hardware, "before": before,
           "after_settle_heap": after, "frozen_objects": gc.get_freeze_count()}  # fmt: skip
    finish(args, "gc_pause", out)


if __name__ == "__main__":
    main()

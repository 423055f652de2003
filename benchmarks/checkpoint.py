"""What keeping a checkpoint and a history costs an evolution: the same run (same seed, so
the same evaluations) without them, with ``--checkpoint``, and with ``--checkpoint`` and
``--history``, each the median of ``--repeats`` runs, through the command line's own code.

Prints one JSON object: seconds per variant and the overhead over the plain run in percent
(the target: under 20 %), with the checkpoint's size.

    .venv/bin/python benchmarks/checkpoint.py [--budget 3000] [--repeats 3]

``--quick``: a tiny case through the same code, printed and not written
(tests/benchmarks/test_quick.py runs it).
"""

from __future__ import annotations

import contextlib
import io
import statistics
import tempfile
import time
from pathlib import Path

from common import finish, parser

from engine.cli import main

NETWORK, HARDWARE = "sparse-mlp-1", "loihi2"


def timed(argv: list[str]) -> float:
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        code = main(argv)
    if code != 0:
        raise SystemExit(f"meshscope {' '.join(argv)} exited {code}")
    return time.perf_counter() - start


def main_(budget: int, repeats: int) -> dict:
    base = ["evolve", "--network", NETWORK, "--hardware", HARDWARE, "--budget", str(budget),
            "--seed", "0", "--json"]  # fmt: skip
    timed([*base[:5], "--budget", "20", "--json"])  # warm: kernels compiled, caches filled
    out: dict = {"network": NETWORK, "hardware": HARDWARE, "budget": budget, "repeats": repeats}
    with tempfile.TemporaryDirectory() as tmp:
        ckpt, hist = Path(tmp) / "run.ckpt", Path(tmp) / "run.jsonl"
        variants = {
            "plain": base,
            "checkpoint": [*base, "--checkpoint", str(ckpt)],
            "checkpoint_and_history": [*base, "--checkpoint", str(ckpt), "--history", str(hist)],
        }
        walls: dict[str, list[float]] = {name: [] for name in variants}
        for _ in range(repeats):  # interleaved, so a slow moment of the machine hits all alike
            for name, argv in variants.items():
                walls[name].append(timed(argv))
        out["checkpoint_mb"] = ckpt.stat().st_size / 1e6
        out["history_mb"] = hist.stat().st_size / 1e6
    plain = statistics.median(walls["plain"])
    for name, w in walls.items():
        out[f"{name}_s"] = statistics.median(w)
        if name != "plain":
            out[f"{name}_overhead_pct"] = 100.0 * (statistics.median(w) - plain) / plain
    return out


if __name__ == "__main__":
    ap = parser(__doc__)
    ap.add_argument("--budget", type=int, default=3000)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    budget, repeats = (60, 1) if args.quick else (args.budget, args.repeats)
    finish(args, "checkpoint", main_(budget, repeats))

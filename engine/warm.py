"""Compile every numba kernel once, at install time (``make`` runs ``python -m engine.warm``).

The kernels are cached on disk (``cache=True``) per signature, so the first real command
after this loads them instead of compiling for ten to twenty seconds. Numba's
ahead-of-time compiler (``numba.pycc``) would also do, but it is deprecated and builds an
extension module per platform; running the commands themselves on small inputs compiles
exactly the signatures the commands use, through the code paths users take, and needs
nothing but the commands.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import tempfile
import time
from pathlib import Path

SMALL = "rand:n=600,card=16"
MLP = "mlp:widths=64-96-10"


def commands(tmp: Path) -> list[list[str]]:
    """Small runs that reach every kernel: each partitioner and placer, the model (unicast,
    multicast), the simulator (mapping steps, synthetic traffic, a sweep), the search, the
    hMETIS writer and reader, the mapping file's writer and reader."""
    net = ["--network", SMALL, "--hardware", "hypergraph-small"]
    runs = [
        ["map", *net, "--partition", p, "--placement", q]
        for p, q in (
            ("overlap", "spectral+force"),
            ("hierarchical", "hilbert"),
            ("sequential", "min-distance"),
            ("sequential-ordered", "force"),
            ("edgemap", "spectral"),
        )
    ]
    mlp = ["--network", MLP, "--hardware", "loihi2", "--partition", "min+1"]
    runs += [
        ["evaluate", *mlp, "--links"],
        ["evaluate", *mlp, "--multicast", "--simulate"],
        ["simulate", *mlp, "--mode", "fall-through"],
        ["simulate", "--pattern", "uniform", "--mesh", "4x4", "--rate", "0.1"],
        ["sweep", "--pattern", "transpose", "--mesh", "4x4", "--rates", "0.05:0.1:0.05"],
        ["evolve", *mlp[:4], "--budget", "12"],
        ["convert", "--network", SMALL, "--out", str(tmp / "small.hgr")],
        ["info", "--network", str(tmp / "small.hgr")],
        ["map", *mlp, "--save", str(tmp / "mlp.json")],
        ["evaluate", *mlp[:4], "--mapping", str(tmp / "mlp.json")],
    ]
    return runs


def _run(argv: list[str]) -> tuple[int, str]:
    from engine.cli import main as meshscope

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = meshscope(argv)
    return code, err.getvalue()


def main(workers: int | None = None) -> int:
    """Run the warm-up commands, in parallel processes (one per core by default)."""
    from concurrent.futures import ProcessPoolExecutor

    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        runs = commands(Path(tmp))
        # in order, after the rest: each reads what the one before wrote
        later = [a for a in runs if a[0] in ("convert", "info") or {"--save", "--mapping"} & {*a}]
        # the simulator's kernel is most of the compiling (a minute or more): one process
        # compiles it while the others take the partitioners and placers; the simulator's
        # other commands load it from the cache afterwards instead of compiling it again
        simulator = [a for a in runs if a[0] in ("simulate", "sweep") or "--simulate" in a]
        later = simulator[1:] + later
        first = simulator[:1] + [a for a in runs if a not in later and a not in simulator]
        with ProcessPoolExecutor(max_workers=workers or os.cpu_count() or 1) as pool:
            results = list(pool.map(_run, first))
        results += [_run(a) for a in later]
        for argv, (code, err) in zip(first + later, results, strict=True):
            if code != 0:
                sys.stderr.write(f"warm-up: meshscope {' '.join(argv)} failed: {err}")
                return code
    print(f"numba kernels compiled and cached in {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

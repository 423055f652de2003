"""What every benchmark script shares: its command line, where its figures go, and the record
of when, where and how they were measured.

Every script takes ``--quick``: the same code path on tiny sizes, in well under a minute,
printing the same JSON keys — the test suite runs each one so (``tests/benchmarks``), so a
benchmark cannot rot unnoticed. A quick run writes nothing to ``benchmarks/results/`` or
``assets/`` (its figures go to a temporary folder). A full run writes its JSON to
``benchmarks/results/NAME.json``, with a ``meta`` object (date, machine, command), which
``benchmarks/report.py`` renders into the tables of the README and ``docs/``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

__all__ = [
    "ASSETS",
    "NIR_CNN",
    "RESULTS",
    "ROOT",
    "asset",
    "claim_row",
    "finish",
    "machine",
    "parser",
    "seed004_hardware",
    "spawn",
]

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
ASSETS = ROOT / "assets"
# the NIR paper's Sinabs NMNIST CNN (a real export: 5 layers, 1.1 M synapses)
NIR_CNN = ROOT / "tests" / "data" / "nir" / "paper_02_cnn_cnn_sinabs.nir"
_scratch: list[tempfile.TemporaryDirectory] = []


def parser(doc: str | None) -> argparse.ArgumentParser:
    """An argument parser with ``--quick`` and ``--out`` (the results file)."""
    ap = argparse.ArgumentParser(description=(doc or "").strip().split("\n\n")[0])
    ap.add_argument(
        "--quick", action="store_true",
        help="tiny sizes, the same code path and JSON keys, nothing written to results/ or "
        "assets/ (what the test suite runs)",
    )  # fmt: skip
    ap.add_argument(
        "--out", metavar="FILE",
        help="write the JSON here (default benchmarks/results/NAME.json; none with --quick)",
    )  # fmt: skip
    return ap


def machine() -> str:
    """The processor and the machine's cores, e.g. 'AMD EPYC 7B13, 2 cores'."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores"


def asset(args, name: str) -> Path:
    """Where a figure goes: ``assets/NAME``, or a temporary folder's with ``--quick`` (the
    drawing code runs all the same)."""
    if not args.quick:
        return ASSETS / name
    if not _scratch:
        _scratch.append(tempfile.TemporaryDirectory(prefix="meshscope-bench-"))
    return Path(_scratch[0].name) / name


def command_line() -> str:
    """The command that runs this script as it was run (the figures' ``meta.command``)."""
    script = Path(sys.argv[0]).resolve()
    shown = script.relative_to(ROOT) if script.is_relative_to(ROOT) else script
    return shlex.join([".venv/bin/python", str(shown), *sys.argv[1:]])


def finish(args, name: str, figures, *, save: bool = True, meta: dict | None = None) -> dict:
    """Print the figures as one JSON object with their ``meta`` (plus ``meta``'s entries) and,
    unless quick (or not ``save``: a partial run), write them to
    ``benchmarks/results/NAME.json`` (or ``--out``). Returns the object."""
    command = command_line()
    out = {
        "meta": {
            "date": datetime.date.today().isoformat(),
            "machine": machine(),
            "command": command,
            "quick": bool(args.quick),
            **(meta or {}),
        },
        **(figures if isinstance(figures, dict) else {"rows": figures}),
    }
    text = json.dumps(out, indent=1)
    print(text)
    path = Path(args.out) if args.out else (RESULTS / f"{name}.json" if save else None)
    if args.quick and not args.out:
        path = None
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n")
    return out


def spawn(script: str, timeout_s: float | None = None, memory_gib: float | None = None,
          **kw) -> dict:  # fmt: skip
    """Run ``script --child JSON(kw)`` in a process of its own (its time and peak memory
    its own) and return the JSON object its last line prints, or ``{"error": ...}``.
    ``memory_gib``: the most address space the child may take (an allocation past it fails
    in the child, which says so), so one run cannot take a shared machine's memory."""
    limit = None if memory_gib is None else int(memory_gib * 2**30)

    def bounded() -> None:  # the soft limit only: a hard one the parent has stays
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        soft = limit if hard == resource.RLIM_INFINITY else min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))

    try:
        done = subprocess.run(
            [sys.executable, script, "--child", json.dumps(kw)],
            capture_output=True, text=True, timeout=timeout_s,
            preexec_fn=None if limit is None else bounded,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return {"error": f"did not finish within {timeout_s:g} s"}
    try:
        return json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        return {"error": (done.stderr.strip().splitlines() or ["no output"])[-1][:300]}


SMALL_UNTIL = 2**26  # synapses: seed004-small up to here, then seed004-large (SNN hypergraphs §V-A)


def seed004_hardware(network):
    """The hardware SNN hypergraphs (§V-A) maps ``network`` on: ``seed004-small`` up to 2^26
    synapses, then ``seed004-large``."""
    from engine.hardware import load_hardware

    return load_hardware("seed004-small" if network.n_synapses <= SMALL_UNTIL else "seed004-large")


# the largest network (nodes) the benchmarks give Mt-KaHyPar: into hundreds of blocks it took
# over 20 minutes on a 64k-node random network and did not finish AlexNet (208k) in 10
MTKAHYPAR_NODES = 16384


def mtkahypar_partition(network, hardware, k: int):
    """Mt-KaHyPar (one thread, seed 0, km1 — eq. 7's connectivity — with ε = 0.03) on
    ``network``'s hypergraph, exported as hMETIS, into ``k`` blocks of at most C_npc nodes
    each (the one core limit it can express): the ``Partition`` of its non-empty blocks, its
    seconds and the km1 it reports. Needs the ``mtkahypar`` package (``make bench`` installs
    it; MeshScope itself does not depend on it)."""
    import mtkahypar
    import numpy as np

    from engine.io.hgr import write_hgr
    from engine.mapping.assignment import Partition
    from engine.mapping.resources import capacity

    cap = capacity(network, hardware)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "net.hgr"
        write_hgr(network, path)
        start = time.perf_counter()
        mtk = mtkahypar.initialize(1)
        mtkahypar.set_seed(0)
        ctx = mtk.context_from_preset(mtkahypar.PresetType.DEFAULT)
        ctx.set_partitioning_parameters(k, 0.03, mtkahypar.Objective.KM1)
        ctx.set_individual_target_block_weights([cap.neurons] * k)
        ctx.logging = False
        hg = mtk.hypergraph_from_file(str(path), ctx, mtkahypar.FileFormat.HMETIS)
        phg = hg.partition(ctx)
        seconds = time.perf_counter() - start
        blocks = np.asarray(phg.get_partition(), dtype=np.int64)
    _, assignment = np.unique(blocks, return_inverse=True)
    return Partition(assignment), seconds, phg.km1()


def claim_row(claim, paper, ours, command, verdict, reason="") -> dict:
    """A paper's claim beside MeshScope's figure (``report.paper_rows`` renders them)."""
    return {"claim": claim, "paper": paper, "meshscope": ours, "command": command,
            "verdict": verdict, "reason": reason}  # fmt: skip


def es_curves(network, hardware, seeds, **config):
    """Nested ES runs, one per seed (``ESConfig`` ``config``): the best-so-far objective after
    each evaluation, a row per seed; and how often a partitioning generation found no
    improvement (Loihi 2 mapping ES §5.5: none of its offspring better than the best so far;
    an offspring equal to its parent is accepted, but improves nothing), averaged over the
    seeds: ``{"share": over the run, "first_third": over its first third of generations}``,
    with each seed's under ``"shares"`` and ``"first_thirds"`` (their spread)."""
    import numpy as np

    from engine.search import ESConfig, NestedES

    rows, share, first = [], [], []
    for seed in seeds:
        result = NestedES(network, hardware, ESConfig(seed=seed, **config)).run()
        rows.append(np.minimum.accumulate([r.fitness for r in result.history]))
        best, gens = np.inf, {}  # generation -> (best before it, its offspring's best)
        for r in result.history:
            if r.level == "partition":
                before, kids = gens.get(r.generation, (best, np.inf))
                gens[r.generation] = (before, min(kids, r.fitness))
            best = min(best, r.fitness)
        stalled = [kids >= before for before, kids in gens.values()]
        share.append(float(np.mean(stalled)) if stalled else 0.0)
        third = stalled[: max(1, len(stalled) // 3)]
        first.append(float(np.mean(third)) if third else 0.0)
    return np.array(rows), {"share": float(np.mean(share)), "first_third": float(np.mean(first)),
                            "shares": share, "first_thirds": first}  # fmt: skip


def final_stats(rows) -> dict:
    """Mean, min and max of the last column of ``es_curves``' rows (each seed's best)."""
    final = rows[:, -1]
    return {"mean": float(final.mean()), "min": float(final.min()), "max": float(final.max())}


LINEAR_N = 32  # neurons per core of the runtime paper's linear-layer patterns (a unit of load)


def heaviest_router_link(m: int, placer: str, **params) -> float:
    """Loihi 2 runtime model §VI: the heaviest router-to-router link load, in units of N
    messages, of a tiled-identity layer of ``m`` origin and ``m`` destination cores placed by
    ``placer`` (one of the ``pairs-*`` patterns) on a mesh large enough for it."""
    from engine.hardware import ROUTER
    from engine.pipeline import build_mapping, evaluate

    side = max(m, 8)
    mapped = build_mapping(
        f"linear-tiled-identity:M={m},N={LINEAR_N}",
        f"mesh:{side}x{side}x2",
        placement=placer,
        placement_params=params,
    )
    ev = evaluate(mapped)
    router = mapped.hardware.link_table["kind"] == ROUTER
    return float(ev.link_messages[router].max() / LINEAR_N)

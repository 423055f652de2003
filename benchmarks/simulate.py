"""Speed of the cycle-level simulator, beside BookSim2 on the same configuration.

Prints one JSON object. ``synthetic``: per configuration of the BookSim2 reference figures
(uniform traffic, 1-flit packets, the reference router; 8×8 at 0.05 and 0.2 flits/node/cycle,
16×16 at 0.05, 32×32 at 0.02; one measured period, no warm-up, then the drain), MeshScope's
simulated cycles and flits per second over ``--repeats`` warm runs and — when the
environment variable ``BOOKSIM`` names a BookSim2 binary — BookSim2's, its whole process
timed as many times. The two alternate run by run, so both see the same load on a shared
machine; ``speedup`` compares their fastest runs (the least disturbed), ``speedup_median``
their medians, ``speedup_paired`` each MeshScope run with the BookSim2 run right after it
(median, min and max of those ratios). ``steps``: one pipelined time step of sparse-mlp-1
on loihi2 and of sparse-mlp-2 on loihi2-x8 (min+2, spread-col), warm. ``processes``: the
four reference cases at ten times their cycles as a user runs them — ``meshscope simulate``
and BookSim2 each a whole process, alternating (``process_speedup``: BookSim2's median wall
time over MeshScope's for the same measured cycles and drain), with MeshScope's warm
in-process run beside them (``warm_speedup``) and both processes' peak memory. ``features``:
a warm 8×8 run at 0.2 for 20k cycles with each of what the Traffic tab and a walk ask (a
trace, a tracked packet), which take the full router instead of the unicast one, against the
same run without (``of_unicast``). ``startup``:
where a short process's time goes — a 1,000-cycle ``meshscope simulate`` process, an empty
Python process, and the stages before the first simulated cycle (importing numpy and numba,
numba's compiler set-up that its first cached function costs, the simulator's import, the
first run with its kernels loaded, and the same run again), medians of five processes.
``memory``: whole
``meshscope simulate`` processes (8×8 uniform at 0.2, the reference router, no warm-up) of
20k, 200k and 2M measured cycles, and a 64×64 mesh at 0.02 for 100k cycles: each process's
peak resident memory, its wall time, and the run's own ``wall_s`` and cycles per second
(which include loading the compiled kernels, about a second: short runs show it most).
``sweep``: a 50-rate curve on the 8×8 (0.01 to 0.5) as its users draw it — ``meshscope sweep``
as one process (one worker, and every core) against BookSim2 run once per rate with the
reference figures' configuration — the whole job's wall times and their ratio.

    .venv/bin/python benchmarks/simulate.py [--repeats 3]
    BOOKSIM=/path/to/booksim .venv/bin/python benchmarks/simulate.py
    BOOKSIM=… .venv/bin/python benchmarks/simulate.py --only processes  # one section anew

``--only`` measures the sections it names and keeps the others from the results file, whose
``meta.kept`` then says which sections came from which earlier command and date.

BookSim2 builds from its ``src/`` with a C++ compiler, flex and bison (``make``).

``--quick``: a tiny case through the same code, printed and not written
(tests/benchmarks/test_quick.py runs it).
"""

from __future__ import annotations

import compileall
import dataclasses
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import RESULTS, ROOT, finish, parser

from engine.hardware import NocConstants
from engine.pipeline import build_mapping
from engine.simulate import SyntheticRun, machine, run_synthetic, simulate_step

CONFIGS = [  # (mesh side, offered rate, measured cycles): the reference speed table's
    (8, 0.05, 20_000),
    (8, 0.20, 20_000),
    (16, 0.05, 5_000),
    (32, 0.02, 1_000),
]
STEPS = [("sparse-mlp-1", "loihi2"), ("sparse-mlp-2", "loihi2-x8")]
PROCESSES = [  # the reference cases at ten times their cycles, each as a whole process
    (k, rate, 10 * cycles) for k, rate, cycles in CONFIGS
]
MEMORY = [  # (mesh side, offered rate, measured cycles): whole processes, peak memory
    (8, 0.2, 20_000),
    (8, 0.2, 200_000),
    (8, 0.2, 2_000_000),
    (64, 0.02, 100_000),
]


def booksim_config(k: int, rate: float, cycles: int, noc: NocConstants) -> str:
    """The BookSim2 configuration of one run: the reference router, one sample period."""
    allocator = "islip" if noc.allocator == "islip" else "separable_input_first"
    return (
        f"topology = mesh; k = {k}; n = 2; routing_function = dor;\n"
        f"num_vcs = {noc.vcs}; vc_buf_size = {noc.buf}; vc_allocator = {allocator}; "
        f"sw_allocator = {allocator}; alloc_iters = {noc.alloc_iters};\n"
        f"credit_delay = {noc.credit_delay}; routing_delay = {noc.routing_delay}; "
        f"vc_alloc_delay = {noc.vc_alloc_delay}; sw_alloc_delay = {noc.sw_alloc_delay};\n"
        f"traffic = uniform; packet_size = 1; sim_type = latency; injection_rate = {rate}; "
        "injection_rate_uses_flits = 1;\n"
        f"sample_period = {cycles}; warmup_periods = 0; max_samples = 1;\n"
    )


def booksim_once(binary: str, cfg: Path) -> tuple[float, str]:
    """One BookSim2 process on ``cfg``: its wall time and its output."""
    start = time.perf_counter()
    done = subprocess.run([binary, str(cfg)], capture_output=True, text=True, timeout=600)
    return time.perf_counter() - start, done.stdout


def booksim_figures(walls: list[float], out: str, cycles: int) -> dict:
    simulated = cycles  # one sample period; BookSim2's drain is in the wall time too
    m = re.search(r"Time taken is (\d+) cycles", out)
    if m:
        simulated = int(m.group(1))
    lat = re.search(r"Packet latency average = ([\d.]+)", out)
    wall = statistics.median(walls)
    return {
        "cycles": simulated,
        "wall_s": wall,
        "wall_s_min": min(walls),
        "cycles_per_s": simulated / wall,
        "cycles_per_s_best": simulated / min(walls),
        "latency_avg": float(lat.group(1)) if lat else None,
        "wall_s_runs": walls,
    }


def run_figures(result, k: int) -> dict:
    """What the benchmark keeps of one MeshScope run (not the run itself: seven runs' packet
    tables held at once, 35 MB each at 8×8 and 0.2, made each later run ~30 % slower)."""
    return {
        "cycles": result.cycles,
        "wall_s": result.wall_s,
        "hop_flits": int(result.machine.link_flits[: 4 * k * k].sum()),  # router-to-router
        "latency_avg": result.latency_avg,
    }


def meshscope_figures(results: list[dict]) -> dict:
    walls = [r["wall_s"] for r in results]
    wall = statistics.median(walls)
    mid = results[walls.index(wall)] if wall in walls else results[0]
    fast = results[walls.index(min(walls))]  # each run's cycles: the drain differs by seed
    return {
        "cycles": mid["cycles"],
        "wall_s": wall,
        "wall_s_min": fast["wall_s"],
        "cycles_per_s": mid["cycles"] / wall,
        "cycles_per_s_best": fast["cycles"] / fast["wall_s"],
        "hop_flits_per_s": mid["hop_flits"] / wall,
        "latency_avg": mid["latency_avg"],
        "wall_s_runs": walls,
    }


def compare(k: int, rate: float, cycles: int, noc, repeats: int, booksim: str | None) -> dict:
    """MeshScope (seeds 0 … repeats − 1) and BookSim2, alternating run by run."""
    row = {"mesh": f"{k}x{k}", "rate": rate, "cycles": cycles}
    run = SyntheticRun("uniform", k, k, rate=rate, warmup=0, cycles=cycles)
    run_synthetic(noc, SyntheticRun("uniform", k, k, rate=rate, warmup=0, cycles=50))  # compile
    results, walls, out = [], [], ""
    with tempfile.TemporaryDirectory() as tmp:
        cfg = Path(tmp) / "booksim.cfg"
        cfg.write_text(booksim_config(k, rate, cycles, noc))
        for seed in range(repeats):
            results.append(run_figures(run_synthetic(noc, run, seed=seed), k))
            if booksim:
                wall, out = booksim_once(booksim, cfg)
                walls.append(wall)
    row["meshscope"] = meshscope_figures(results)
    if booksim:
        row["booksim2"] = b = booksim_figures(walls, out, cycles)
        m = row["meshscope"]
        row["speedup"] = m["cycles_per_s_best"] / b["cycles_per_s_best"]
        row["speedup_median"] = m["cycles_per_s"] / b["cycles_per_s"]
        # each MeshScope run against the BookSim2 run right after it: a slow spell of the
        # machine slows both of a pair, so the pairs' ratios vary less than the runs
        pairs = [
            (r["cycles"] / r["wall_s"]) / (b["cycles"] / wall)
            for r, wall in zip(results, walls, strict=True)
        ]
        row["speedup_paired"] = {"median": statistics.median(pairs), "min": min(pairs),
                                 "max": max(pairs)}  # fmt: skip
    return row


def time_steps(repeats: int, steps=STEPS) -> list[dict]:
    out = []
    for network, hardware in steps:
        mapped = build_mapping(network, hardware, partition="min+2", placement="spread-col")
        simulate_step(mapped, seed=0)  # compile, and warm the caches
        r = simulate_step(mapped, seed=0)
        walls = [r.wall_s] + [simulate_step(mapped, seed=s).wall_s for s in range(1, repeats)]
        out.append(
            {
                "network": network,
                "hardware": hardware,
                "mode": r.mode,
                "messages": r.messages,
                "step_cycles": r.step_cycles,
                "cycles_simulated": r.cycles,
                "wall_s": statistics.median(walls),
                "wall_s_runs": walls,
            }
        )
    return out


# what the Traffic tab and a walk ask of a run, against the same run without (all through the
# unicast kernel, ``kernel.router._cycle_unicast``)
FEATURES = {
    "none (the unicast kernel)": {},
    "a trace, 500-cycle windows": {"window": 500},
    "one packet tracked (a walk)": {"track": 1000},
}
# … and of a mapping's step on Loihi 2's two meshes, cores busy with each packet: the same step
# through the unicast kernel, the full router, as multicast trees (the full router's) and traced
STEP_FEATURE = ("sparse-mlp-2", "loihi2")
STEP_RUNS = {
    "unicast packets": {},
    "unicast packets, the full router": {"unicast_kernel": False},
    "multicast trees": {"multicast": True},
    "unicast packets, traced (500-cycle windows)": {"window": 500},
}


def _turns(runs: dict, repeats: int) -> dict:
    """Each of ``runs`` (name -> a function that runs once) ``repeats`` times, taking turns
    (every one sees the same load on a shared machine), after one run each to compile."""
    for go in runs.values():
        go()
    done = {name: [] for name in runs}
    for _ in range(repeats):
        for name, go in runs.items():
            done[name].append(go())
    return done


def time_features(repeats: int, k: int = 8, rate: float = 0.2, cycles: int = 20000) -> dict:
    """Warm cycles per second of a synthetic run with each of ``FEATURES`` and of a mapping's
    step with each of ``STEP_RUNS``, the median of ``repeats`` (runs taking turns)."""
    noc = NocConstants()
    runs = {name: (SyntheticRun("uniform", k, k, rate=rate, warmup=0, cycles=cycles,
                                window=ask.get("window", 0)), ask.get("track"))
            for name, ask in FEATURES.items()}  # fmt: skip
    for run, track in runs.values():  # compile
        run_synthetic(noc, dataclasses.replace(run, cycles=50), track=track)
    results = _turns({name: lambda r=run, t=track: run_synthetic(noc, r, seed=1, track=t)
                      for name, (run, track) in runs.items()}, repeats)  # fmt: skip
    synthetic = []
    for name, done in results.items():
        wall = statistics.median(r.wall_s for r in done)
        synthetic.append({"feature": name, "mesh": f"{k}x{k}", "rate": rate,
                          "cycles": done[0].cycles, "wall_s": wall,
                          "wall_s_runs": [r.wall_s for r in done],
                          "cycles_per_s": done[0].cycles / wall,
                          "unicast_kernel": bool(done[0].machine.unicast)})  # fmt: skip
    for row in synthetic:
        row["of_unicast"] = row["cycles_per_s"] / synthetic[0]["cycles_per_s"]
    return {"synthetic": synthetic, "step": _step_features(repeats)}


def _step_features(repeats: int) -> dict:
    network, hardware = STEP_FEATURE
    mapped = build_mapping(network, hardware)

    def once(ask: dict):
        build = machine.Machine.__init__
        kernel = {"unicast_kernel": ask.get("unicast_kernel", True)}
        machine.Machine.__init__ = lambda self, *a, **kw: build(self, *a, **{**kw, **kernel})
        try:
            return simulate_step(mapped, mode="pipelined", multicast=ask.get("multicast", False),
                                 seed=3, window=ask.get("window", 0))  # fmt: skip
        finally:
            machine.Machine.__init__ = build

    results = _turns({name: lambda a=a: once(a) for name, a in STEP_RUNS.items()}, repeats)
    rows = []
    for name, done in results.items():
        wall = statistics.median(r.wall_s for r in done)
        rows.append({"run": name, "cycles": done[0].cycles, "wall_s": wall,
                     "wall_s_runs": [r.wall_s for r in done], "cycles_per_s": done[0].cycles / wall,
                     "unicast_kernel": bool(done[0].machine.unicast)})  # fmt: skip
    for row in rows:
        row["of_unicast_wall"] = row["wall_s"] / rows[0]["wall_s"]
    return {"network": network, "hardware": hardware, "mode": "pipelined", "rows": rows}


def gnu_time(argv: list[str]) -> tuple[float, float, str]:
    """One process under GNU time (``/usr/bin/time -v``: a child of this process would count
    this process's memory, copied when it forked, in its own peak): its wall time, peak
    resident memory (MB) and standard output."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    done = subprocess.run(["/usr/bin/time", "-v", *argv], capture_output=True, text=True,
                          env=env, cwd=ROOT, check=True, timeout=3600)  # fmt: skip
    wall = time.perf_counter() - start
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
    return wall, int(rss.group(1)) / 1024, done.stdout


def meshscope_process(k: int, rate: float, cycles: int) -> dict:
    """One ``meshscope simulate`` process (k×k uniform, the reference router, no warm-up):
    its wall time and peak memory, and the figures it printed."""
    argv = [sys.executable, "-m", "explorer.cli", "simulate", "--pattern", "uniform",
            "--mesh", f"{k}x{k}", "--rate", str(rate), "--packet", "1", "--vcs", "2",
            "--buf", "8", "--warmup", "0", "--seed", "1", "--json",
            "--cycles", str(cycles)]  # fmt: skip
    wall, rss, out = gnu_time(argv)
    data = json.loads(out)
    return {
        "cycles": data["cycles"], "peak_rss_mb": rss, "process_wall_s": wall,
        "wall_s": data["wall_s"], "cycles_per_s": data["cycles_per_s"], "stable": data["stable"],
    }  # fmt: skip


def process_memory(k: int, rate: float, cycles: int) -> dict:
    """A whole process's peak memory, wall time and run figures, with the load it ran under."""
    return {
        "mesh": f"{k}x{k}", "rate": rate, "measured_cycles": cycles,
        **meshscope_process(k, rate, cycles), "load_avg_1min": os.getloadavg()[0],
    }  # fmt: skip


# where a process's time goes before its first simulated cycle, stage by stage (one process)
STAGES = """
import json, sys, time
t = [time.perf_counter()]
import numpy
t.append(time.perf_counter())
import numba
t.append(time.perf_counter())
from numba.core.registry import cpu_target
cpu_target.target_context.refresh()  # what numba's first cached function costs (its BLAS
t.append(time.perf_counter())        # check imports scipy.linalg)
from engine.hardware import NocConstants
from engine.simulate import SyntheticRun, run_synthetic
t.append(time.perf_counter())
run = SyntheticRun("uniform", 8, 8, rate=0.2, warmup=0, cycles=1000)
run_synthetic(NocConstants(), run, seed=1)
t.append(time.perf_counter())
run_synthetic(NocConstants(), run, seed=1)
t.append(time.perf_counter())
print(json.dumps([b - a for a, b in zip(t, t[1:])]))
"""
STAGE_NAMES = ("import numpy", "import numba", "numba's compiler set-up", "import the simulator",
               "first run (kernels loaded)", "the same run again")  # fmt: skip


def startup(repeats: int) -> dict:
    """A 1,000-cycle ``meshscope simulate`` (8×8 at 0.2) as whole processes, an empty Python
    process, and the stages before the first cycle, each the median of ``repeats`` processes."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    whole = [meshscope_process(8, 0.2, 1000)["process_wall_s"] for _ in range(repeats)]
    empty, stages = [], []
    for _ in range(repeats):
        empty.append(gnu_time([sys.executable, "-c", "pass"])[0])
        done = subprocess.run([sys.executable, "-c", STAGES], capture_output=True, text=True,
                              env=env, cwd=ROOT, check=True, timeout=600)  # fmt: skip
        stages.append(json.loads(done.stdout))
    return {
        "mesh": "8x8", "rate": 0.2, "measured_cycles": 1000,
        "process_wall_s": statistics.median(whole), "process_wall_s_runs": whole,
        "python_s": statistics.median(empty),
        "stages_s": {name: statistics.median(s[i] for s in stages)
                     for i, name in enumerate(STAGE_NAMES)},
        "load_avg_1min": os.getloadavg()[0],
    }  # fmt: skip


def whole_process(k: int, rate: float, cycles: int, noc, repeats: int, booksim: str | None):
    """A reference case at ten times its cycles as a user runs it: ``meshscope simulate`` and
    BookSim2 each as whole processes (imports and loading the compiled kernels included),
    alternating; beside them MeshScope's warm run in this process (compiled already).
    BookSim2 has no warm-up to leave out: its whole process is its only figure."""
    run = SyntheticRun("uniform", k, k, rate=rate, warmup=0, cycles=cycles)
    run_synthetic(noc, SyntheticRun("uniform", k, k, rate=rate, warmup=0, cycles=50))  # compile
    mine, theirs, warm = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        cfg = Path(tmp) / "booksim.cfg"
        cfg.write_text(booksim_config(k, rate, cycles, noc))
        for _ in range(repeats):
            mine.append(meshscope_process(k, rate, cycles))
            r = run_synthetic(noc, run, seed=1)  # (not the run: its packet table slows the next)
            warm.append((r.wall_s, r.cycles))
            if booksim:
                wall, rss, out = gnu_time([booksim, str(cfg)])
                theirs.append((wall, rss, out))
    wall = statistics.median(m["process_wall_s"] for m in mine)
    simulated = mine[0]["cycles"]
    warm_s = statistics.median(w for w, _ in warm)
    row = {
        "mesh": f"{k}x{k}", "rate": rate, "measured_cycles": cycles,
        "meshscope": {
            "cycles": simulated, "process_wall_s": wall,
            "process_wall_s_runs": [m["process_wall_s"] for m in mine],
            "process_cycles_per_s": simulated / wall,
            "warm_wall_s": warm_s, "warm_cycles_per_s": warm[0][1] / warm_s,
            "peak_rss_mb": max(m["peak_rss_mb"] for m in mine),
        },
        "load_avg_1min": os.getloadavg()[0],
    }  # fmt: skip
    if booksim:
        b = booksim_figures([w for w, _, _ in theirs], theirs[-1][2], cycles)
        b["peak_rss_mb"] = max(r for _, r, _ in theirs)
        row["booksim2"] = b
        # the same job's wall times: one measured period and its drain (BookSim2 does not
        # print the cycles its drain took, so cycles per second would count them for us only)
        row["process_speedup"] = b["wall_s"] / wall
        row["warm_speedup"] = b["wall_s"] / warm_s
    return row


# a curve as its users draw it: 50 offered rates on the reference 8×8 (the reference table's
# range), ``meshscope sweep`` as one process against BookSim2 once per rate, each rate with the
# reference figures' configuration (a 5,000-cycle warm-up period, up to three 5,000-cycle
# samples until latency converges; MeshScope: 5,000 warm-up and 10,000 measured cycles)
SWEEP = (8, "0.01:0.5:0.01")


def booksim_sweep_config(k: int, rate: float, noc: NocConstants) -> str:
    """BookSim2's configuration of one rate of a sweep: the reference figures' (README)."""
    one = booksim_config(k, rate, 5000, noc)
    return one.replace(
        "warmup_periods = 0; max_samples = 1;", "warmup_periods = 1; max_samples = 3;"
    )


def sweep_vs_booksim(booksim: str | None, quick: bool = False) -> dict:
    """``meshscope sweep`` of ``SWEEP``'s rates as one process (one worker: BookSim2 runs on
    one core too; and the default, every core), against BookSim2 run once per rate, in turn:
    the whole job's wall times and their ratio, and each curve's reading."""
    from engine.simulate.sweep import parse_rates

    k, rates = (4, "0.05:0.1:0.05") if quick else SWEEP
    argv = [sys.executable, "-m", "explorer.cli", "sweep", "--rates", rates, "--mesh",
            f"{k}x{k}", "--vcs", "2", "--buf", "8", "--seed", "1", "--json"]  # fmt: skip
    if quick:
        argv += ["--warmup", "100", "--cycles", "200"]
    row = {"mesh": f"{k}x{k}", "rates": rates, "n_rates": len(parse_rates(rates))}
    for name, extra in (("meshscope_one_worker", ["--workers", "1"]), ("meshscope", [])):
        wall, rss, out = gnu_time([*argv, *extra])
        data = json.loads(out)
        row[name] = {
            "process_wall_s": wall, "peak_rss_mb": rss,
            "cycles": sum(p["cycles"] for p in data["points"]),
            "zero_load_latency": data["zero_load_latency"],
            "saturation_rate": data["saturation_rate"],
        }  # fmt: skip
    if booksim:
        walls, cycles, latency = [], 0, {}
        with tempfile.TemporaryDirectory() as tmp:
            cfg = Path(tmp) / "booksim.cfg"
            for rate in parse_rates(rates):
                cfg.write_text(booksim_sweep_config(k, rate, NocConstants()))
                wall, out = booksim_once(booksim, cfg)
                walls.append(wall)
                m = re.search(r"Time taken is (\d+) cycles", out)
                cycles += int(m.group(1)) if m else 0
                lat = re.search(r"Packet latency average = ([\d.]+)", out)
                latency[f"{rate:g}"] = float(lat.group(1)) if lat else None
        row["booksim2"] = {"process_wall_s": sum(walls), "processes": len(walls),
                           "cycles": cycles, "latency_avg": latency}  # fmt: skip
        row["speedup_one_worker"] = sum(walls) / row["meshscope_one_worker"]["process_wall_s"]
        row["speedup"] = sum(walls) / row["meshscope"]["process_wall_s"]
    row["load_avg_1min"] = os.getloadavg()[0]
    return row


SECTIONS = ("synthetic", "steps", "features", "processes", "startup", "memory", "sweep")


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--repeats", type=int, default=3, help="runs per figure (median)")
    ap.add_argument(
        "--only", metavar="SECTION[,SECTION]", type=lambda v: v.split(","),
        help=f"measure these sections ({', '.join(SECTIONS)}) and keep the others' figures "
        "(from --out when it exists, else benchmarks/results/simulate.json), each with the "
        "command, date, BookSim2 and cores that measured it (meta.kept)",
    )  # fmt: skip
    args = ap.parse_args()
    only = set(args.only or SECTIONS)
    if not only <= set(SECTIONS):
        wrong = ", ".join(sorted(only - set(SECTIONS)))
        ap.error(f"--only takes {', '.join(SECTIONS)}, not {wrong}")
    noc = NocConstants()
    booksim = os.environ.get("BOOKSIM")
    configs, steps, memory, processes = CONFIGS, STEPS, MEMORY, PROCESSES
    if args.quick:  # a short run of the first case and the first step, once
        configs, steps, args.repeats = [(8, 0.05, 500)], STEPS[:1], 1
        memory, processes = [(8, 0.2, 500), (4, 0.02, 500)], [(4, 0.05, 500)]
    measure = {
        "synthetic": lambda: [compare(*c, noc, args.repeats, booksim) for c in configs],
        "steps": lambda: time_steps(args.repeats, steps),
        "features": lambda: time_features(
            1 if args.quick else max(args.repeats, 5), cycles=2000 if args.quick else 20000
        ),
        "processes": lambda: [whole_process(*c, noc, args.repeats, booksim) for c in processes],
        "startup": lambda: startup(1 if args.quick else max(args.repeats, 5)),
        "memory": lambda: [process_memory(*c) for c in memory],
        "sweep": lambda: sweep_vs_booksim(booksim, quick=args.quick),
    }
    if only & {
        "processes",
        "startup",
        "memory",
        "sweep",
    }:  # a user's processes find the modules' bytecode
        compileall.compile_dir(ROOT / "engine", quiet=1)
        compileall.compile_dir(ROOT / "explorer", quiet=1)
    before, meta = None, None
    if only != set(SECTIONS):  # the other sections as they were recorded
        recorded = (
            Path(args.out) if args.out and Path(args.out).exists() else RESULTS / "simulate.json"
        )
        before = json.loads(recorded.read_text())
        was = {"booksim2": before.get("booksim2"), "cpus": before.get("cpus")}
        earlier = [{**was, **k} for k in before["meta"].get("kept", [])]
        theirs = {n for k in earlier for n in k["sections"]}  # the earlier runs' own sections
        earlier = [
            *earlier,
            {
                "command": before["meta"]["command"],
                "date": before["meta"]["date"],
                "sections": [n for n in SECTIONS if n not in theirs and before.get(n) is not None],
                **was,
            },
        ]
        kept = [{**k, "sections": [n for n in k["sections"] if n not in only]} for k in earlier]
        meta = {"kept": [k for k in kept if k["sections"]]}
    out = {name: measure[name]() if name in only else before.get(name) for name in SECTIONS}
    out.update({"booksim2": booksim or None, "cpus": os.cpu_count()})
    finish(args, "simulate", out, meta=meta)


if __name__ == "__main__":
    main()

"""The cycle-level mesh simulator: routers, virtual channels and credits, flit by flit.

The engine's second traffic model beside the analytic one (``engine.evaluation.traffic``,
``engine.evaluation.cost``): where the analytic model bounds a step by its heaviest link, the
simulator moves every flit through input-queued wormhole routers (BookSim2's
``iq_router``) and reports when the step really ends, where packets queued and why.

    from engine.simulate import simulate_step, run_synthetic, SyntheticRun, sweep

    step = simulate_step(mapped, mode="pipelined", seed=1)        # a mapping's time step
    step.step_us, step.bound, step.links(mapped.hardware)
    res = run_synthetic(NocConstants(), SyntheticRun("transpose", 8, 8, rate=0.1))
    curve = sweep(NocConstants(), SyntheticRun("uniform"), parse_rates("0.01:0.5:0.01"))

Modules, in pipeline order: ``topology`` (the mesh as arrays), ``patterns`` (BookSim2's
synthetic traffic), ``kernel`` (the numba cycle loop), ``machine`` (its state in Python),
``zeroload`` (a lone packet's latency), ``synthetic`` and ``sweep`` (NoC-paper runs), ``step``
(a mapping's step; its vocabularies in ``modes``), ``packets`` (given packets at given cycles),
``trace`` (window-by-window records, ``.npz``), ``export`` (BookSim2 and Noxim files).
"""

from engine.simulate.export import booksim_files, noxim_table
from engine.simulate.machine import Machine, SimulationError
from engine.simulate.modes import MODES, SPIKES
from engine.simulate.packets import PacketRun, run_packets
from engine.simulate.patterns import build_pattern, channel_load_bound, patterns
from engine.simulate.sweep import SweepResult, parse_rates, read_curve, sweep
from engine.simulate.synthetic import SyntheticResult, SyntheticRun, run_synthetic
from engine.simulate.topology import Topology
from engine.simulate.trace import Trace, frame_window, load_trace
from engine.simulate.zeroload import zero_load_cycles

# a mapping's step needs the engine's mapping side (engine.evaluation.cost, scipy): imported when
# first asked for, so a synthetic run on the command line starts without it
_FROM_STEP = ("StepResult", "draw_spikes", "simulate_step", "traced_step")


def __getattr__(name: str):
    if name in _FROM_STEP:
        from engine.simulate import step

        return getattr(step, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_FROM_STEP])


__all__ = [
    "MODES",
    "SPIKES",
    "Machine",
    "PacketRun",
    "SimulationError",
    "StepResult",
    "SweepResult",
    "SyntheticResult",
    "SyntheticRun",
    "Topology",
    "Trace",
    "booksim_files",
    "build_pattern",
    "channel_load_bound",
    "draw_spikes",
    "frame_window",
    "load_trace",
    "noxim_table",
    "parse_rates",
    "patterns",
    "read_curve",
    "run_packets",
    "run_synthetic",
    "simulate_step",
    "sweep",
    "traced_step",
    "zero_load_cycles",
]

"""The kernel keeps the shape of a router's pipeline (issue 60): small functions, the unicast
and multicast routers chosen in one place, and no count kept by hand beside what it counts.

These read the source (``ast``), not the compiled code: what they hold is what a reader of
``engine/simulate/kernel/`` meets."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np

from engine.simulate import records as F  # noqa: N812 - the kernel's fields and layout
from engine.simulate.kernel import router

KERNEL = Path(router.__file__).parent
LONGEST = 150  # lines a kernel function may take, its decorator included


def _functions(path: Path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.FunctionDef):
            yield node


def test_no_kernel_function_is_over_150_lines():
    long = {}
    for path in sorted(KERNEL.glob("*.py")):
        for f in _functions(path):
            first = min([f.lineno, *(d.lineno for d in f.decorator_list)])
            if f.end_lineno - first + 1 > LONGEST:
                long[f"{path.name}:{f.name}"] = f.end_lineno - first + 1
    assert not long, f"kernel functions over {LONGEST} lines: {long}"


def _tests_unicast(f: ast.FunctionDef) -> bool:
    """Whether a function branches on the router's kind (``unicast`` or ``cfg.unicast``)."""
    for node in ast.walk(f):
        if isinstance(node, ast.If | ast.IfExp):
            for name in ast.walk(node.test):
                if isinstance(name, ast.Name) and name.id == "unicast":
                    return True
                if isinstance(name, ast.Attribute) and name.attr == "unicast":
                    return True
    return False


def test_the_router_is_chosen_in_one_place():
    """Only ``_router`` asks which router runs; every stage of either pipeline is one
    router's (``_u_*`` the unicast router's, ``_m_*`` the multicast router's) or both's."""
    asking = sorted(f.name for f in _functions(KERNEL / "router.py") if _tests_unicast(f))
    assert asking == ["_router"]


def test_the_stall_counters_follow_their_names():
    """The misc block's size is derived from the stall causes it holds, and the machine names
    every counter by ``STALLS``."""
    n = len(F.STALLS)
    assert n + F.M_STALL == F.N_MISC
    assert n - 1 == F.S_SW_LOST
    # a tracked hop's waits and the trace's wait groups are in the same order, one per cause
    assert n - 1 == F.H_SW_LOST - F.H_VC_BUSY
    assert len(F.W_OF_STALL) == len(F.STALLS)
    assert np.all(np.diff([F.S_VC_BUSY, F.S_VC_LOST, F.S_NO_CREDIT, F.S_SW_LOST]) == 1)


def test_the_machine_names_every_stall_counter():
    from engine.hardware import NocConstants
    from engine.simulate import SyntheticRun, run_synthetic

    run = SyntheticRun("uniform", 4, 4, rate=0.3, warmup=0, cycles=300)
    stalls = run_synthetic(NocConstants(), run, seed=1).machine.stalls()
    assert tuple(stalls) == F.STALLS
    assert sum(int(s.sum()) for s in stalls.values()) > 0  # past saturation: VCs waited

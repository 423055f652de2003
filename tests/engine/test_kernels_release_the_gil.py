"""Every numba kernel releases the GIL while it runs (``nogil=True``).

The explorer does its heavy work — partitioning, the mapping-quality metrics, simulations —
in worker threads beside the server's event loop, which answers every page. A kernel that
held the GIL for its whole run kept every page of the server waiting: a 100,000-neuron
network's lattice-hull count held it for 1.2 s, and a drag on another page waited as long.
"""

from __future__ import annotations

import importlib
import pkgutil

import numba.core.registry

import engine


def _kernels():
    for info in pkgutil.walk_packages(engine.__path__, "engine."):
        if info.name.endswith(("__main__", ".warm")):
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if isinstance(value, numba.core.registry.CPUDispatcher) and (
                value.py_func.__module__ == module.__name__
            ):
                yield f"{module.__name__}.{name}", value


def test_every_kernel_of_the_engine_releases_the_gil():
    kernels = dict(_kernels())
    assert len(kernels) > 50  # the walk found them
    holding = sorted(name for name, k in kernels.items() if not k.targetoptions.get("nogil"))
    assert not holding, f"kernels that hold the GIL while they run: {holding}"

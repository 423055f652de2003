"""Deterministic generators of demo networks, chosen by a spec string (``engine.specs``
parses one, checks its size and builds it).

A spec is ``name`` or ``name:key=value,key=value`` (``linear-dense:M=8,N=64``). Every
generator takes keyword parameters with defaults and a ``seed``; the same spec gives
the same network, array for array. The network's ``name`` is the canonical spec.
"""

from __future__ import annotations

from collections.abc import Callable

from engine.model.network import Network
from engine.registry import Registry

__all__ = ["ALL", "ON_CORES", "SIZES", "estimates", "register", "workloads"]

workloads: Registry[Callable[..., Network]] = Registry("network")
register = workloads.register
SIZES: dict[str, Callable[..., tuple[int, ...]]] = {}
ON_CORES: dict[str, Callable[..., int | None]] = {}
ALL = "all"  # ``estimates(on_cores=ALL)``: every neuron it generates sits on a core


def estimates(name: str, *, on_cores: Callable[..., int | None] | str | None = None):
    """Decorator: the function that tells, from a workload's parameters alone, how many
    neurons and synapses it generates (``workload_size``) — and, as a third value, how many
    of those synapses are explicit when its large convolutions stay structured.

    ``on_cores``: how many of the neurons sit on cores (the rest are spike sources), from
    the parameters (``ALL``: every one; None: not said) — ``workload_on_cores``, which tells
    whether a network can fit some hardware before it is generated."""

    def deco(fn):
        SIZES[name] = fn
        if on_cores == ALL:
            ON_CORES[name] = lambda **params: SIZES[name](**params)[0]
        elif on_cores is not None:
            ON_CORES[name] = on_cores
        return fn

    return deco


# import the generator modules so they register themselves
from engine.workloads import cnn, conv, linear, microbench, mlp, qubo, rand  # noqa: E402,F401

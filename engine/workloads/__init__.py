"""Deterministic generators of demo networks, chosen by a spec string.

A spec is ``name`` or ``name:key=value,key=value`` (``linear-dense:M=8,N=64``). Every
generator takes keyword parameters with defaults and a ``seed``; the same spec gives
the same network, array for array. The network's ``name`` is the canonical spec.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path

from engine.errors import InvalidNetworkError
from engine.io.files import MAX_NEURONS, MAX_SYNAPSES, shown
from engine.network import Network
from engine.registry import Registry

__all__ = [
    "build_workload", "check_workload_size", "estimates", "parse_spec", "register",
    "workload_explicit", "workload_identity", "workload_info", "workload_size", "workloads",
]  # fmt: skip

workloads: Registry[Callable[..., Network]] = Registry("network")
register = workloads.register
_SIZES: dict[str, Callable[..., tuple[int, ...]]] = {}
_ON_CORES: dict[str, Callable[..., int | None]] = {}
ALL = "all"  # ``estimates(on_cores=ALL)``: every neuron it generates sits on a core


def estimates(name: str, *, on_cores: Callable[..., int | None] | str | None = None):
    """Decorator: the function that tells, from a workload's parameters alone, how many
    neurons and synapses it generates (``workload_size``) — and, as a third value, how many
    of those synapses are explicit when its large convolutions stay structured.

    ``on_cores``: how many of the neurons sit on cores (the rest are spike sources), from
    the parameters (``ALL``: every one; None: not said) — ``workload_on_cores``, which tells
    whether a network can fit some hardware before it is generated."""

    def deco(fn):
        _SIZES[name] = fn
        if on_cores == ALL:
            _ON_CORES[name] = lambda **params: _SIZES[name](**params)[0]
        elif on_cores is not None:
            _ON_CORES[name] = on_cores
        return fn

    return deco


def parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    name, _, rest = spec.strip().partition(":")
    params = {}
    if rest:
        for item in rest.split(","):
            key, eq, value = item.partition("=")
            if not eq or not key.strip() or not value.strip():
                raise InvalidNetworkError(
                    f"malformed parameter {item!r} in {spec!r}; write name:key=value,key=value"
                )
            params[key.strip()] = value.strip()
    return name, params


def _signature(fn) -> dict[str, object]:
    return {
        p.name: p.default
        for p in inspect.signature(fn).parameters.values()
        if p.kind == p.KEYWORD_ONLY
    }


def workload_info() -> list[dict]:
    return [
        {"name": name, "params": _signature(fn), "description": (fn.__doc__ or "").split("\n")[0]}
        for name, fn in sorted(workloads.items())
    ]


def _format(value) -> str:
    """Shortest text that parses back to the same value (``0.15``, not ``0.15000000000000002``)."""
    if isinstance(value, float):
        short = f"{value:g}"
        return short if float(short) == value else repr(value)
    return str(value)


def canonical_name(name: str, fn, params: dict) -> str:
    defaults = _signature(fn)
    shown = {
        k: v for k, v in {**defaults, **params}.items() if k != "seed" or v != defaults.get("seed")
    }
    if not shown:
        return name
    return name + ":" + ",".join(f"{k}={_format(v)}" for k, v in shown.items())


def _resolve(spec: str) -> tuple[str, Callable[..., Network], dict]:
    """A spec's workload name, generator and typed parameters (raises for a bad spec)."""
    name, raw = parse_spec(spec)
    fn = workloads[name]  # an unknown name raises, listing the known ones
    defaults = _signature(fn)
    params = {}
    for key, text in raw.items():
        if key not in defaults:
            raise InvalidNetworkError(
                f"{name} has no parameter {key!r}; its parameters are "
                + ", ".join(f"{k} (default {v})" for k, v in defaults.items())
            )
        kind = type(defaults[key])
        try:
            params[key] = kind(float(text)) if kind is int and "." not in text else kind(text)
        except (ValueError, OverflowError):
            raise InvalidNetworkError(
                f"{name}: {key}={shown(text)} is not a {kind.__name__}"
            ) from None
    if params.get("seed", 0) < 0:
        raise InvalidNetworkError(f"{name}: seed={raw['seed']} must be a whole number ≥ 0")
    return name, fn, params


def build_workload(spec: str) -> Network:
    """Generate the network a spec names (raises a clear error for a bad spec, or for one
    that would generate more than ``MAX_NEURONS`` neurons or ``MAX_SYNAPSES`` explicit
    synapses — told by ``workload_size`` before anything is generated; a structured
    convolution's synapses take no memory)."""
    check_workload_size(spec, MAX_NEURONS, MAX_SYNAPSES, explicit=True)
    name, fn, params = _resolve(spec)
    network = fn(**params)
    object.__setattr__(network, "name", canonical_name(name, fn, params))
    return network


def workload_identity(spec: str) -> tuple[str, list[Path]]:
    """A spec's canonical name and the source files its network may depend on — every
    generator module (they call each other's builders) and the engine modules they use —
    what a cache of generated networks keys on."""
    name, fn, params = _resolve(spec)
    here = Path(__file__).resolve().parent
    engine = here.parent
    sources = sorted(here.glob("*.py")) + [
        engine / f for f in ("arrays.py", "network.py", "projection.py")
    ]
    return canonical_name(name, fn, params), sources


def workload_size(spec: str) -> tuple[int, int]:
    """(neurons, synapses) the spec would generate — exactly, or as expected for random
    generators — without generating it, so a server can refuse a request before spending
    minutes and gigabytes on it."""
    return _sizes(spec)[:2]


def workload_explicit(spec: str) -> int:
    """The synapses of the spec's network that are listed one by one (its structured
    convolutions' are not), without generating it."""
    return _sizes(spec)[2]


def workload_on_cores(spec: str) -> int | None:
    """How many of the spec's neurons sit on cores (not spike sources), without generating
    it; None when its generator does not say."""
    name, fn, params = _resolve(spec)
    count = _ON_CORES.get(name, lambda **_: None)(**{**_signature(fn), **params})
    return None if count is None else int(count)


def _sizes(spec: str) -> tuple[int, int, int]:
    name, fn, params = _resolve(spec)
    size = tuple(int(v) for v in _SIZES[name](**{**_signature(fn), **params}))
    return size if len(size) == 3 else (*size, size[1])


def check_workload_size(spec: str, neurons: int, synapses: int, *, explicit: bool = False) -> None:
    """``InvalidNetworkError`` if the spec would generate more than ``neurons`` neurons or
    ``synapses`` synapses — with ``explicit``, synapses listed one by one (structured
    convolutions aside) — (``workload_size``: nothing is generated)."""
    n, s, e = _sizes(spec)
    kind = "synapses listed one by one" if explicit and e < s else "synapses"
    for what, count, most in (("neurons", n, neurons), (kind, e if explicit else s, synapses)):
        if count > most:
            raise InvalidNetworkError(
                f"network {spec.strip()}: too many {what} ({count:,}; at most {most:,} are "
                "generated here)"
            )


# import the generator modules so they register themselves
from engine.workloads import cnn, conv, linear, microbench, mlp, qubo, rand  # noqa: E402,F401

"""Resolve the strings users type into engine objects (shared by the CLI and explorer).

A workload spec is ``name`` or ``name:key=value,key=value`` (``linear-dense:M=8,N=64``): a
generator of ``engine.workloads`` and its parameters. Here it is parsed, its size told
before anything is generated (``workload_size``, ``check_workload_size``, ``check_fits``)
and its network built; the network's ``name`` is the canonical spec.

Generated workloads are kept per process, and those of ``CACHE_FROM_SYNAPSES`` synapses or
more also on disk, content-addressed: the file is named by a hash of the canonical spec,
the generators' and the engine's network source files, the numpy and numba versions and the
network file format, so a changed generator never
returns an old network. The folder is ``$MESHSCOPE_CACHE_DIR``, else
``$XDG_CACHE_HOME/meshscope/networks``, else ``~/.cache/meshscope/networks``;
``--no-cache`` (``set_network_cache(False)``) or ``MESHSCOPE_NO_CACHE=1`` turns it off. The
cache is best effort: a file it cannot read is regenerated, one it cannot write is skipped.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import os
from collections.abc import Callable
from pathlib import Path

from engine.defaults import DEFAULT_HARDWARE, DEFAULT_NETWORK, DEFAULT_PLACER
from engine.errors import (
    InputFileError,
    InvalidNetworkError,
    NotEnoughCoresError,
    OutputFileError,
)
from engine.hardware import Hardware
from engine.io.files import MAX_NEURONS, MAX_SYNAPSES, ReadLimits, cut, shown
from engine.io.network_file import VERSION as NETWORK_FILE_VERSION
from engine.io.network_file import load_network, save_network
from engine.memo import SharedCache
from engine.model.network import Network
from engine.workloads import ON_CORES, SIZES, workloads

__all__ = [
    "DEFAULT_HARDWARE",
    "DEFAULT_NETWORK",
    "DEFAULT_PLACER",
    "DEMO_DIR",
    "build_workload",
    "canonical_name",
    "check_fits",
    "check_workload_size",
    "demo_files",
    "demo_path",
    "load_network_spec",
    "network_cache_bytes",
    "network_cache_dir",
    "prune_network_cache",
    "parse_spec",
    "set_network_cache",
    "workload_explicit",
    "workload_identity",
    "workload_info",
    "workload_on_cores",
    "workload_size",
]


# ------------------------------------------------------------------ workload specs
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
    import engine.arrays
    import engine.model.network
    import engine.model.projection
    import engine.workloads

    name, fn, params = _resolve(spec)
    generators = Path(engine.workloads.__file__).resolve().parent
    used = (engine.arrays, engine.model.network, engine.model.projection)
    sources = sorted(generators.glob("*.py")) + [Path(m.__file__).resolve() for m in used]
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
    count = ON_CORES.get(name, lambda **_: None)(**{**_signature(fn), **params})
    return None if count is None else int(count)


def _sizes(spec: str) -> tuple[int, int, int]:
    name, fn, params = _resolve(spec)
    size = tuple(int(v) for v in SIZES[name](**{**_signature(fn), **params}))
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


# ------------------------------------------------------------------ networks by name
DEMO_DIR = Path(__file__).resolve().parent / "demo_networks"  # shipped in the package
NETWORK_SUFFIXES = (".npz", ".hgr", ".nir")


def demo_files() -> list[Path]:
    return sorted(p for p in DEMO_DIR.glob("*") if p.suffix in NETWORK_SUFFIXES)


def demo_path(spec: str) -> str:
    """The shipped demo file a bare demo name means (``qubo-1000.npz``: the one in
    ``demo_networks/``, whatever lies in the working folder), else ``spec`` as it is. A
    server resolves its clients' names so; the command line reads a file of the working
    folder first."""
    spec = spec.strip()
    if spec in {p.name for p in demo_files()}:
        return str(DEMO_DIR / spec)
    return spec


CACHE_FROM_SYNAPSES = 1 << 22  # generated networks this large are kept on disk
_disk_cache = {"on": True}


def set_network_cache(enabled: bool) -> None:
    """Use (or not) the on-disk cache of generated networks in this process."""
    _disk_cache["on"] = bool(enabled)


def network_cache_dir() -> Path:
    if os.environ.get("MESHSCOPE_CACHE_DIR"):
        return Path(os.environ["MESHSCOPE_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "meshscope" / "networks"


def _cache_path(spec: str) -> Path:
    import numba
    import numpy as np

    name, sources = workload_identity(spec)
    versions = f"numpy {np.__version__}, numba {numba.__version__}"  # random streams, kernels
    h = hashlib.sha256(f"{name}\n{NETWORK_FILE_VERSION}\n{versions}\n".encode())
    for path in sources:
        h.update(path.read_bytes())
    return network_cache_dir() / f"{h.hexdigest()[:24]}.npz"


def _use_disk_cache(spec: str) -> bool:
    if not _disk_cache["on"] or os.environ.get("MESHSCOPE_NO_CACHE", "") not in ("", "0"):
        return False
    synapses = workload_size(spec)[1]
    if workload_explicit(spec) < synapses:  # structured: rebuilt from its description in
        return False  # seconds, and a network file would list every convolution's synapses
    return synapses >= CACHE_FROM_SYNAPSES


# generated networks this process made, found again while in use, the recent ones kept up
# to 256 MB together (engine.memo: a count of entries was no bound — eight 100,000-neuron
# networks are gigabytes)
_WORKLOADS = SharedCache(256 * 2**20)


def _cached_workload(spec: str) -> Network:
    return _WORKLOADS.get(spec, lambda: _make_workload(spec))


_cached_workload.cache_clear = _WORKLOADS.cache_clear


def _make_workload(spec: str) -> Network:
    if not _use_disk_cache(spec):
        return build_workload(spec)
    path = _cache_path(spec)
    if path.exists():
        try:
            network = load_network(path)
            with contextlib.suppress(OSError):
                os.utime(path)  # recently used: the last to go when the folder is pruned
            return network
        except InputFileError:
            pass  # a damaged entry: generate it again
    network = build_workload(spec)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        save_network(network, path, compress=False)  # a cache: speed over size
        prune_network_cache(path.parent)
    except (OSError, OutputFileError):
        pass  # a cache that cannot be written costs the next run the generation, nothing more
    return network


def network_cache_bytes() -> int:
    """The most the on-disk cache of generated networks may hold (``MESHSCOPE_CACHE_MAX_MB``,
    default 2,048 MB): a server generates what its clients name, and must not fill its disk
    with them."""
    try:
        return int(float(os.environ.get("MESHSCOPE_CACHE_MAX_MB", "2048")) * 2**20)
    except ValueError:
        return 2048 * 2**20


def prune_network_cache(folder: Path, max_bytes: int | None = None) -> int:
    """Remove the least recently used networks of ``folder`` until the rest hold at most
    ``max_bytes`` (``network_cache_bytes``); returns how many were removed."""
    limit = network_cache_bytes() if max_bytes is None else max_bytes
    entries = []
    for path in folder.glob("*.npz"):
        with contextlib.suppress(OSError):
            st = path.stat()
            entries.append((st.st_mtime_ns, st.st_size, path))
    entries.sort()
    total, removed = sum(e[1] for e in entries), 0
    for _, size, path in entries:
        if total <= limit:
            break
        with contextlib.suppress(OSError):
            path.unlink()
            total -= size
            removed += 1
    return removed


def load_network_spec(spec: str, *, limits: ReadLimits | None = None) -> Network:
    """A workload spec (``sparse-mlp-1``, ``qubo:n=500``) or a path to a network file
    (``.npz``, ``.hgr``, or a NIR graph ``.nir``).

    Generated workloads are cached per process: they are immutable. ``limits`` bound what a
    file may hold and a spec may generate (the command line's generous ones by default; a
    server passes its clients'): sizes are checked before anything that large is built.
    """
    spec = spec.strip()
    path = Path(spec)
    if spec.partition(":")[0] in workloads and path.suffix not in NETWORK_SUFFIXES:
        return _workload(spec, limits)  # a workload's name, even if a file is called so too
    # (os.path's probes: a name too long to exist is no file, where pathlib's raise)
    if path.suffix in NETWORK_SUFFIXES or os.path.exists(path):
        if not os.path.exists(path) and os.path.exists(DEMO_DIR / path.name):
            path = DEMO_DIR / path.name
        if path.suffix not in NETWORK_SUFFIXES:
            raise InputFileError(
                f"{path}: unknown network file type; MeshScope reads {', '.join(NETWORK_SUFFIXES)}"
            )
        if path.suffix == ".hgr":
            from engine.io.hgr import read_hgr

            return read_hgr(path, limits=limits)
        if path.suffix == ".nir":
            from engine.io.nir_graph import read_nir

            return read_nir(path, limits=limits)
        return load_network(path, limits=limits)
    return _workload(spec, limits)


def check_fits(spec, hardware: Hardware, *, parts: int | None = None, source: str = "") -> None:
    """Before a workload is generated: ``NotEnoughCoresError`` when its neurons on cores
    cannot fit ``hardware`` — more than its cores hold at its per-core neuron limit — or,
    ``parts`` given (a mapping file's partitions, ``source``), those partitions. Told from
    the spec alone (``workload_on_cores``), so a network of 50 million neurons named for a
    chip of one million is refused at once, not after gigabytes of generating it. Anything
    but a workload's spec (a network, a file) passes: a file is read within its bounds."""
    if not isinstance(spec, str):
        return
    spec = spec.strip()
    if spec.partition(":")[0] not in workloads or Path(spec).suffix in NETWORK_SUFFIXES:
        return
    on = workload_on_cores(spec)
    per_core = hardware.limits.neurons
    if on is None or per_core <= 0:
        return
    need = -(-on // per_core)
    if parts is not None and need > parts:
        raise NotEnoughCoresError(
            f"{source} places {parts:,} "
            f"{'partitions, which hold' if parts != 1 else 'partition, which holds'}"
            f" at most {parts * per_core:,} neurons on {hardware.name}; network {cut(spec)} has "
            f"{on:,} neurons on cores: it is no mapping of that network (nothing was generated)"
        )
    if need > hardware.n_cores:
        raise NotEnoughCoresError(
            f"network {cut(spec)} has {on:,} neurons on cores, which need at least {need:,} "
            f"cores of {per_core:,} neurons; {hardware.name} has {hardware.n_cores:,} (nothing "
            "was generated): choose larger hardware or a smaller network"
        )


def _workload(spec: str, limits: ReadLimits | None) -> Network:
    if limits is not None:
        check_workload_size(spec, limits.neurons, limits.synapses)
    return _cached_workload(spec)

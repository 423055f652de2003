"""Resolve the strings users type into engine objects (shared by the CLI and explorer).

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

import hashlib
import os
from functools import lru_cache
from pathlib import Path

from engine.defaults import DEFAULT_HARDWARE, DEFAULT_NETWORK, DEFAULT_PLACEMENT
from engine.errors import InputFileError, OutputFileError
from engine.hardware import Hardware, load_hardware
from engine.io.files import ReadLimits
from engine.io.network_file import VERSION as NETWORK_FILE_VERSION
from engine.io.network_file import load_network, save_network
from engine.network import Network
from engine.workloads import (
    build_workload,
    check_workload_size,
    workload_explicit,
    workload_identity,
    workload_size,
    workloads,
)

__all__ = [
    "DEFAULT_HARDWARE",
    "DEFAULT_NETWORK",
    "DEFAULT_PLACEMENT",
    "DEMO_DIR",
    "demo_files",
    "demo_path",
    "load_hardware_spec",
    "load_network_spec",
    "network_cache_dir",
    "set_network_cache",
]


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


@lru_cache(maxsize=8)
def _cached_workload(spec: str) -> Network:
    if not _use_disk_cache(spec):
        return build_workload(spec)
    path = _cache_path(spec)
    if path.exists():
        try:
            return load_network(path)
        except InputFileError:
            pass  # a damaged entry: generate it again
    network = build_workload(spec)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        save_network(network, path, compress=False)  # a cache: speed over size
    except (OSError, OutputFileError):
        pass  # a cache that cannot be written costs the next run the generation, nothing more
    return network


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
    if path.suffix in NETWORK_SUFFIXES or path.exists():
        if not path.exists() and (DEMO_DIR / path.name).exists():
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


def _workload(spec: str, limits: ReadLimits | None) -> Network:
    if limits is not None:
        check_workload_size(spec, limits.neurons, limits.synapses)
    return _cached_workload(spec)


def load_hardware_spec(spec: str) -> Hardware:
    return load_hardware(spec)

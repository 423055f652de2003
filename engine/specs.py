"""Resolve the strings users type into engine objects (shared by the CLI and explorer)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from engine.defaults import DEFAULT_HARDWARE, DEFAULT_NETWORK, DEFAULT_PLACEMENT
from engine.errors import InputFileError
from engine.hardware import Hardware, load_hardware
from engine.io.network_file import load_network
from engine.network import Network
from engine.workloads import build_workload, workloads

__all__ = [
    "DEFAULT_HARDWARE",
    "DEFAULT_NETWORK",
    "DEFAULT_PLACEMENT",
    "DEMO_DIR",
    "demo_files",
    "load_hardware_spec",
    "load_network_spec",
]


DEMO_DIR = Path(__file__).resolve().parent.parent / "demo_networks"
NETWORK_SUFFIXES = (".npz", ".hgr", ".nir")


def demo_files() -> list[Path]:
    return sorted(p for p in DEMO_DIR.glob("*") if p.suffix in NETWORK_SUFFIXES)


@lru_cache(maxsize=8)
def _cached_workload(spec: str) -> Network:
    return build_workload(spec)


def load_network_spec(spec: str) -> Network:
    """A workload spec (``sparse-mlp-1``, ``qubo:n=500``) or a path to a network file
    (``.npz``, ``.hgr``, or a NIR graph ``.nir``).

    Generated workloads are cached per process: they are immutable.
    """
    spec = spec.strip()
    path = Path(spec)
    if spec.partition(":")[0] in workloads and path.suffix not in NETWORK_SUFFIXES:
        return _cached_workload(spec)  # a workload's name, even if a file is called so too
    if path.suffix in NETWORK_SUFFIXES or path.exists():
        if not path.exists() and (DEMO_DIR / path.name).exists():
            path = DEMO_DIR / path.name
        if path.suffix not in NETWORK_SUFFIXES:
            raise InputFileError(
                f"{path}: unknown network file type; MeshScope reads {', '.join(NETWORK_SUFFIXES)}"
            )
        if path.suffix == ".hgr":
            from engine.io.hgr import read_hgr

            return read_hgr(path)
        if path.suffix == ".nir":
            from engine.io.nir_graph import read_nir

            return read_nir(path)
        return load_network(path)
    return _cached_workload(spec)


def load_hardware_spec(spec: str) -> Hardware:
    return load_hardware(spec)

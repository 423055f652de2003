"""MeshScope network files (``.npz``): the Network's arrays plus a JSON header.

Arrays ``indptr``, ``indices``, ``population``, ``rate`` and optionally ``weights``;
``meta`` holds a JSON object with ``format: "meshscope-network"``, ``version``,
``name``, ``population_names``, ``weight_bits``, ``encoding``, ``natural_cores``,
``spike_source`` (optional: per population, whether it is a spike source), ``shapes``
(optional: per population, its shape) and ``description``. Files are read without pickles.
Synapses are stored explicit: a network's structured convolutions are expanded on saving.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np

from engine.errors import InputFileError, MeshScopeError
from engine.io.files import atomic_open, reason
from engine.network import Network

__all__ = ["save_network", "load_network", "FORMAT"]

FORMAT = "meshscope-network"
VERSION = 1


def save_network(network: Network, path, *, compress: bool = True) -> None:
    """Write ``network`` whole or not at all (``compress=False``: faster, about 1.5× larger)."""
    network = network.explicit(why="a .npz file")
    meta = {
        "format": FORMAT,
        "version": VERSION,
        "name": network.name,
        "population_names": list(network.population_names),
        "weight_bits": list(network.weight_bits),
        "encoding": list(network.encoding),
        "natural_cores": list(network.natural_cores) if network.natural_cores else None,
        "spike_source": list(network.spike_source),
        "shapes": [list(s) for s in network.shapes] if network.shapes else None,
        "description": network.description,
    }
    arrays = {
        "indptr": network.indptr,
        "indices": network.indices,
        "population": network.population,
        "rate": network.rate,
        "meta": np.array(json.dumps(meta)),
    }
    if network.weights is not None:
        arrays["weights"] = network.weights
    with atomic_open(path, "wb", what="network file") as f:
        (np.savez_compressed if compress else np.savez)(f, **arrays)


def _not_an_archive(path: Path) -> str | None:
    """What is wrong with a file that is not a whole .npz (zip) archive, or None.

    Asked before numpy reads it: numpy takes anything but a zip for a pickle, and would say
    so ("contains pickled data") of an empty, truncated or foreign file.
    """
    with open(path, "rb") as f:
        head = f.read(6)
        f.seek(0, 2)
        size = f.tell()
    if size == 0:
        return "the file is empty"
    if head.startswith(b"\x93NUMPY"):
        return "it holds one .npy array, not the .npz archive of a network"
    if not head.startswith(b"PK"):
        return "it is not a .npz (zip) archive"
    if not zipfile.is_zipfile(path):
        return f"the archive is cut short or damaged ({size:,} bytes, no zip directory)"
    return None


def load_network(path) -> Network:
    path = Path(path)
    try:
        wrong = _not_an_archive(path)
        if wrong:
            raise InputFileError(f"{path} is not a MeshScope network file (.npz): {wrong}")
        with np.load(path, allow_pickle=False) as z:
            data = {k: z[k] for k in z.files}
    except FileNotFoundError:
        raise InputFileError(f"network file {path} does not exist") from None
    except InputFileError:
        raise
    except Exception as e:  # noqa: BLE001 - whatever numpy and zipfile raise, the file is bad
        raise InputFileError(
            f"{path} is not a MeshScope network file (.npz): {reason(e)}"
        ) from None
    missing = {"indptr", "indices", "population", "rate", "meta"} - set(data)
    if missing:
        raise InputFileError(f"{path}: missing arrays {sorted(missing)}")
    try:
        meta = json.loads(str(data["meta"]))
    except json.JSONDecodeError:
        raise InputFileError(f"{path}: its 'meta' header is not JSON") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise InputFileError(f'{path}: header lacks "format": "{FORMAT}"')
    if meta.get("version") != VERSION:
        raise InputFileError(f"{path}: version {meta.get('version')!r} is not supported")
    try:
        return Network(
            name=str(meta.get("name") or path.stem),
            indptr=data["indptr"],
            indices=data["indices"],
            population=data["population"],
            population_names=meta["population_names"],
            rate=data["rate"],
            weights=data.get("weights"),
            weight_bits=meta.get("weight_bits"),
            encoding=meta.get("encoding"),
            natural_cores=meta.get("natural_cores"),
            spike_source=meta.get("spike_source"),
            shapes=meta.get("shapes"),
            description=str(meta.get("description", "")),
        )
    except MeshScopeError as e:
        raise InputFileError(f"{path}: {e}") from None
    except (KeyError, TypeError, ValueError) as e:
        raise InputFileError(f"{path}: malformed header or arrays ({e})") from None

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
from pathlib import Path

import numpy as np

from engine.errors import InputFileError, MeshScopeError
from engine.io.files import ReadLimits, parse_json, read_npz
from engine.io.outputs import atomic_open
from engine.model.network import Network

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


META_BYTES = 16 * 2**20  # the JSON header: names, shapes and flags of the populations


def load_network(path, *, limits: ReadLimits | None = None) -> Network:
    """The network a ``.npz`` file holds; ``InputFileError`` says what is wrong with it.

    ``limits`` (the command line's generous ones by default) bound the file's bytes and the
    network's neurons and synapses: every array's declared shape is checked against them
    before it is inflated (``read_npz``), so a small archive of huge arrays costs nothing.
    """
    path = Path(path)
    lim = limits or ReadLimits()
    neurons, synapses = 8 * (lim.neurons + 1), 8 * lim.synapses  # bytes, of 64-bit values
    data = read_npz(
        path,
        "MeshScope network file",
        {
            "meta": META_BYTES,
            "indptr": neurons,
            "indices": synapses,
            "population": neurons,
            "rate": neurons,
            "weights": synapses,
        },
        required=("indptr", "indices", "population", "rate", "meta"),
        fix="write one with 'meshscope convert --network SPEC --out NAME.npz'",
        max_bytes=lim.bytes,
        why=f" (networks of at most {lim.neurons:,} neurons and {lim.synapses:,} synapses)",
        counts={"rate": (lim.neurons, "neurons"), "indices": (lim.synapses, "synapses")},
    )
    if data["meta"].dtype.kind != "U" or data["meta"].size != 1:
        raise InputFileError(f"{path}: its 'meta' header is not JSON text")
    try:
        meta = parse_json(str(data["meta"].reshape(())), f"{path}: its 'meta' header")
    except InputFileError as e:
        raise InputFileError(f"{path}: its 'meta' header is not JSON ({e})") from None
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

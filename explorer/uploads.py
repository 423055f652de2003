"""Reading what a client uploads: a mapping file, a network file, any JSON document.

``prepare_upload`` is what ``ExplorerState.prepare_upload`` does with an uploaded file —
read within the client's limits, checked, built and evaluated, without changing the state
— and ``upload_json`` reads the JSON documents the page receives (mappings, scenes).
Whatever is wrong with a file is an ``InputFileError`` naming it as the user knows it,
never the server's temporary copy and never a library's own words.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path

from engine.errors import InputFileError, MeshScopeError, MeshScopeWarning
from engine.hardware import load_hardware
from engine.mapping.assignment import parse_mapping_dict
from engine.model.network import Network
from engine.pipeline import build_mapping, resolve_network
from engine.specs import DEFAULT_HARDWARE, demo_path
from explorer.access import ClientAccess
from explorer.admission import STEP_BYTES, network_needs

__all__ = ["MAPPING_FILE", "NETWORK_FILE", "prepare_upload", "reading", "upload_json"]


def _read_network(path: Path, access: ClientAccess) -> Network:
    """The network of an uploaded file, read within the client's limits: the sizes its
    header declares are checked before anything that large is allocated, and a NIR graph is
    expanded only as far as the client may go."""
    limits = access.limits.reading()
    if path.suffix.lower() == ".nir":
        from engine.io.nir_graph import read_nir

        return read_nir(path, max_synapses=access.limits.synapses, limits=limits)
    return resolve_network(str(path), limits=limits)


MAPPING_FILE = "a JSON mapping file (as Save mapping or meshscope map --out writes it)"
NETWORK_FILE = (
    "a network file (.npz as meshscope convert writes it, hMETIS .hgr, NIR .nir exported by "
    "your SNN library)"
)


@contextlib.contextmanager
def reading(name: str, what: str, temp: Path | None = None):
    """Whatever goes wrong reading an uploaded file is an error naming it as the user
    knows it, ``name``: a reader's own ``MeshScopeError`` with the server's temporary copy
    ``temp`` renamed so; any other failure an ``InputFileError`` saying it is not ``what``
    (never a library's own words, which speak of Python, not of the file)."""
    try:
        yield
    except MeshScopeError as e:
        if temp is not None:
            e.args = (_as_uploaded(str(e), temp, name),)
        raise
    except (RecursionError, MemoryError):
        raise InputFileError(
            f"{name} could not be read: it nests too deep, or declares sizes too large, to be "
            f"{what}"
        ) from None
    except Exception:  # noqa: BLE001 - any library's failure on a client's bytes
        raise InputFileError(f"{name} could not be read: it is damaged, or not {what}") from None


def _as_uploaded(text: str, temp: Path, name: str) -> str:
    """``text`` with the server's temporary copy of an upload called ``name``, and no
    other mention of the temporary folder."""
    for form in dict.fromkeys([str(temp), os.path.realpath(temp)]):
        text = text.replace(form, name)
    for folder in dict.fromkeys([str(temp.parent), os.path.realpath(temp.parent)]):
        text = text.replace(folder + os.sep, "").replace(folder, "the upload")
    return text


def upload_json(name: str, data: bytes, what: str = MAPPING_FILE):
    """The JSON document of an uploaded file called ``name``; an ``InputFileError``
    saying, in the user's words, why it is not ``what``."""
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise InputFileError(
            f"{name} is not {what}: it is not text (not UTF-8); choose the .json file"
        ) from None
    except json.JSONDecodeError as e:
        raise InputFileError(
            f"{name} is not {what}: its JSON breaks at line {e.lineno}, column {e.colno} "
            f"({e.msg.lower()})"
        ) from None
    except RecursionError:
        raise InputFileError(f"{name} is not {what}: its JSON nests far too deep") from None


def prepare_upload(state, filename: str, data: bytes, on_wait: Callable[[int], None] | None = None):
    """What an uploaded file switches to, without changing the state (safe in a worker
    thread, like ``prepare``): a mapping of the current network and hardware is an
    edit of the current mapping; a mapping for another network or hardware switches
    to them when the file names ones this session may load (``access``); a network
    file keeps the current hardware. Whatever is wrong with the file is an error
    naming it as the user does. Building waits its turn as ``prepare``'s does. Returns an
    ``explorer.state.Prepared`` for ``state.adopt``."""
    state.require_idle()
    name = Path(filename or "upload").name
    suffix = Path(name).suffix.lower()
    access = state.access
    access.check_upload(name, len(data))
    network, hardware = state.network, state.hardware
    if suffix == ".json":
        with reading(name, MAPPING_FILE):
            mf = parse_mapping_dict(upload_json(name, data), name)
        same = (
            network is not None
            and mf.network_fingerprint == network.fingerprint
            and mf.hardware_fingerprint == hardware.fingerprint
        )
        if same:
            with (
                state.gate.turn("work", f"reading {name}", STEP_BYTES, on_wait),
                reading(name, MAPPING_FILE),
            ):
                mapped = build_mapping(network, hardware, mapping_file=mf)
            named = (mf.network_name, mf.hardware_name)
            notes = () if named == (network.name, hardware.name) else (
                f"{name} names {mf.network_name} on {mf.hardware_name}, but it is a mapping "
                f"of {network.name} on {hardware.name} (the file's fingerprints say so): "
                "applied to them",
            )  # fmt: skip
            return state.prepared_from(mapped, "mapping", edit=True, notes=notes)
        access.network(mf.network_name)  # the names inside the file are a client's too
        access.hardware(mf.hardware_name)
        needs = network_needs(mf.network_name, mf.hardware_name, access.limits)
        with (
            state.gate.turn("work", f"reading {name}", needs, on_wait),
            reading(name, MAPPING_FILE),  # a demo's name: the shipped file (demo_path)
        ):
            mapped = build_mapping(demo_path(mf.network_name), mapping_file=mf)
        access.check_network(mapped.network)
        access.check_hardware(mapped.hardware)
        note = (
            f"{name} is a mapping of {mf.network_name} on {mf.hardware_name}: they are "
            f"loaded with it, in place of {network.name} on {hardware.name}"
            if network is not None
            else ""
        )
        return state.prepared_from(
            mapped, "mapping", network_spec=mf.network_name,
            hardware_spec=mf.hardware_name, mapping_path=name, notes=(note,) if note else (),
        )  # fmt: skip
    if suffix in (".npz", ".hgr", ".nir"):  # its sizes: known once read (the limits')
        needs = network_needs(None, hardware.name if hardware else None, access.limits)
        with state.gate.turn("work", f"reading {name}", needs, on_wait):
            return _prepare_network_file(state, name, data, hardware)
    raise InputFileError(
        f"{name}: MeshScope reads mapping files (.json) and networks (.npz, hMETIS .hgr, NIR .nir)"
    )


def _prepare_network_file(state, name: str, data: bytes, hardware):
    """``prepare_upload`` of a network file: read, checked, placed on ``hardware``."""
    access = state.access
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name  # (its name: a network's name defaults to it)
        with (
            reading(name, NETWORK_FILE, temp=path),
            warnings.catch_warnings(record=True) as said,
        ):
            warnings.simplefilter("always", MeshScopeWarning)
            path.write_bytes(data)
            network = _read_network(path, access)
        notes = tuple(  # a reader's warnings (nir's own type check failed …)
            _as_uploaded(" ".join(str(w.message).split()), path, name)
            for w in said
            if issubclass(w.category, MeshScopeWarning)
        )
    access.check_network(network)
    hardware = hardware or load_hardware(DEFAULT_HARDWARE)
    mapped = build_mapping(network, hardware, placement=access.placer(state.inputs.placer))
    return state.prepared_from(
        mapped, "network", network_spec=network.name, hardware_spec=hardware.name,
        mapping_path=None, notes=notes,
    )  # fmt: skip

"""What a browser client may name and ask for: the explorer is a network service.

A client names networks and hardware from the registries (workload specs, hardware presets,
``mesh:`` specs) and the demo files, and brings anything else by uploading it; the names a
client sends — in the form, or inside an uploaded mapping file — never make the server
open a file of its own choosing. The files the server was started with (``serve --network
FILE``, ``--hardware FILE``, ``--mapping FILE``) stay allowed, and ``serve --allow-files
DIR`` opens a folder (and what lies under it) to clients. A refused path gets the same
answer whether or not it exists.

``ClientLimits`` bound what one request may cost — cores, neurons, synapses, the cycles of
one simulated step, the evaluations of one search, the bytes of one upload — far below what
the command line allows; sizes are checked before anything is built (``workload_size``,
``spec_cores``). What the server was started with is exempt. ``ClientAccess.local()`` allows
everything: the Python API, where the user is the one at the keyboard.

Every spec a client sends goes through one method of ``ClientAccess`` — ``network``,
``hardware``, ``partition``, ``placer``, ``mapping_file``, or ``scene`` for all of a
scene's — and ``named_file`` is the one place that knows which specs make the server open
a file (a path, a hardware ``.toml`` even resized with ``@RxC``, a ``file:PATH``
partition). A file a client may open must be a regular one: never a pipe, a device, a
folder, or a file of ``/proc``, ``/sys`` or ``/dev`` (reading one can block or never end).
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from engine.errors import CapacityError, InputFileError, SpecError
from engine.hardware import MAX_CORES, Hardware, spec_cores
from engine.io.files import ReadLimits, cut
from engine.mapping.partition import parse_partition_spec
from engine.mapping.placement import placers
from engine.model.network import Network
from engine.specs import demo_files, parse_spec, workload_size
from engine.workloads import workloads

__all__ = [
    "UPLOAD_BYTES",
    "ClientAccess",
    "ClientLimits",
    "looks_like_path",
    "message_bytes",
    "named_file",
]

_FILE_SUFFIXES = (".npz", ".hgr", ".nir", ".toml", ".json")
_RESIZED = re.compile(r"(@\d+x\d+)+$")  # ``hardware@RxC``: the hardware, resized
_SPECIAL_ROOTS = ("/proc", "/sys", "/dev")  # file systems whose files are not data
UPLOAD_BYTES = 32 * 2**20  # the largest upload a client may send (the browser checks first)


@dataclass(frozen=True)
class ClientLimits:
    """The most one client request may ask for."""

    cores: int = 4_096  # of the hardware (a 64×64 mesh of one core per router)
    neurons: int = 200_000
    synapses: int = 12_000_000
    cycles: int = 2_000_000  # of one simulated step (the simulated objectives)
    budget: int = 20_000  # evaluations of one search
    upload_bytes: int = UPLOAD_BYTES

    @classmethod
    def none(cls) -> ClientLimits:
        big = 2**62
        return cls(MAX_CORES, big, big, 50_000_000, big, big)

    def reading(self) -> ReadLimits:
        """What a reader may take in from one of this client's files: an upload's bytes, and
        a network of this client's size (declared sizes are checked before allocating)."""
        default = ReadLimits()
        return ReadLimits(
            bytes=min(self.upload_bytes, default.bytes),
            neurons=min(self.neurons, default.neurons),
            synapses=min(self.synapses, default.synapses),
        )


def message_bytes(upload_bytes: int) -> int:
    """The largest websocket message the server must take for uploads of ``upload_bytes``:
    the file travels in base64 (4 characters for 3 bytes) inside a small JSON message.
    Below it, Bokeh closes the session's connection ("Server connection lost")."""
    return 4 * -(-upload_bytes // 3) + 2**20


def named_file(kind: str, spec: str) -> str | None:
    """The path that a client's ``kind`` spec (network, hardware, partition, mapping) makes
    the server open, or None if it names none: the one place that knows which specs name
    files. A malformed partition spec raises its ``SpecError`` (whatever the disk holds)."""
    spec = spec.strip()
    if kind == "network":  # a registered workload otherwise (``engine.specs``)
        return spec if looks_like_path(spec) else None
    if kind == "hardware":  # a preset's name, a ``mesh:`` spec, or a .toml file; any @RxC
        base = _RESIZED.sub("", spec)
        return base if looks_like_path(base) else None
    if kind == "partition":  # ``file:PATH`` (the only partitioner that reads a file)
        return parse_partition_spec(spec)[1].get("path")
    if kind == "mapping":
        return spec
    raise ValueError(f"no such kind of spec: {kind!r}")


def looks_like_path(spec: str) -> bool:
    """Whether a name the user typed is a file path rather than a registry name."""
    spec = spec.strip()
    return (
        "/" in spec
        or "\\" in spec
        or spec.startswith(("~", "."))
        or Path(spec).suffix.lower() in _FILE_SUFFIXES
    )


@dataclass(frozen=True)
class ClientAccess:
    """The names and sizes one explorer session may ask for (see the module's text)."""

    limits: ClientLimits = field(default_factory=ClientLimits)
    trusted: frozenset[str] = frozenset()  # specs as the server was started with them
    files: frozenset[Path] = frozenset()  # resolved paths a client may name
    folders: tuple[Path, ...] = ()  # … and the folders under which it may
    any_file: bool = False

    @classmethod
    def local(cls) -> ClientAccess:
        """Everything: the Python API, where the user is the one at the keyboard."""
        return cls(ClientLimits.none(), any_file=True)

    @classmethod
    def for_server(
        cls, startup=(), allow_files=(), limits: ClientLimits | None = None
    ) -> ClientAccess:
        """The access of a server started with the specs ``startup`` (network, hardware,
        mapping; None for the ones not given) and ``--allow-files`` folders."""
        given = [s for s in startup if s]
        folders = []
        for d in allow_files:
            path = _resolved(d)
            if path is None or not os.path.isdir(path):  # (a name too long: no folder)
                raise SpecError(f"--allow-files {cut(d)}: not a folder")
            folders.append(path)
        named = [
            named_file(kind, spec)
            for kind, spec in zip(("network", "hardware", "mapping"), startup, strict=False)
            if spec
        ]
        return cls(
            limits or ClientLimits(),
            trusted=frozenset(given),
            files=frozenset(p for path in named if path and (p := _resolved(path))),
            folders=tuple(folders),
        )

    # ------------------------------------------------------------ names
    _HINTS = {
        "network": "upload the network file instead",
        "hardware": "choose a preset or a mesh:WxH spec",
        "partition": "choose a partition from the list, or upload a mapping file (.json) "
        "that holds it",
        "mapping file": "upload it instead",
    }

    def _allowed_file(self, path: str) -> bool:
        if self.any_file:
            return True
        resolved = _resolved(path)
        if resolved is None:
            return False
        return resolved in self.files or any(resolved.is_relative_to(d) for d in self.folders)

    def _refuse(self, what: str, spec: str) -> SpecError:
        return SpecError(
            f"{what} {spec!r}: the explorer opens no files its users name; {self._HINTS[what]} "
            "(whoever runs the server can open a folder with --allow-files DIR)"
        )

    def _file(self, what: str, spec: str, path: str) -> None:
        """Refuse ``spec`` unless a client may have the server open ``path`` (which it
        names) — the same answer whether or not the file exists — and unless that path,
        if it exists, is a regular file."""
        if not self._allowed_file(path):
            raise self._refuse(what, spec)
        if not _regular_or_missing(path):
            raise InputFileError(
                f"{what} {spec!r}: not a regular file (a folder, a pipe, a device or a system "
                "file); name a file"
            )

    def network(self, spec: str) -> str:
        """``spec`` if a client may load that network (a ``SpecError`` or ``CapacityError``
        otherwise); its size is checked before it is built."""
        spec = spec.strip()
        if spec in self.trusted:
            return spec
        path = named_file("network", spec)
        if path is not None:
            if spec not in {p.name for p in demo_files()}:
                self._file("network", spec, path)
            return spec
        workloads[parse_spec(spec)[0]]  # an unknown name raises, listing the known ones
        self._check_size(spec, *workload_size(spec))
        return spec

    def hardware(self, spec: str) -> str:
        """``spec`` if a client may load that hardware; a ``mesh:`` spec's size is checked
        before it is built."""
        spec = spec.strip()
        if spec in self.trusted:
            return spec
        path = named_file("hardware", spec)
        if path is not None:
            self._file("hardware", spec, path)
        cores = spec_cores(spec)
        if cores is not None:
            self._check_cores(spec, cores)
        return spec

    def partition(self, spec: str | None) -> str | None:
        """``spec`` (None: the network's default) if a client may partition with it: a
        ``file:PATH`` partition reads a file of the server's, refused like any path."""
        if spec is None:
            return None
        path = named_file("partition", spec)
        if path is not None:
            self._file("partition", spec, path)
        return spec

    def placer(self, spec: str) -> str:
        """``spec`` if it names registered placers (``A+R``: placer A, then refiner R)."""
        for stage in spec.split("+"):
            placers[stage.strip()]  # an unknown name raises, listing the known ones
        return spec

    def mapping_file(self, path: str) -> str:
        """``path`` if a client may open that mapping file."""
        if path not in self.trusted:
            self._file("mapping file", path, named_file("mapping", path))
        return path

    def scene(self, scene):
        """``scene`` (an ``explorer.scenes.Scene``) if a client may load every name it
        holds: a mapping scene's network, hardware, partition and placers."""
        if scene.kind == "mapping":
            self.network(scene.network)
            self.hardware(scene.hardware)
            self.partition(scene.partition)
            for placer in (scene.placer, *scene.compare):
                self.placer(placer)
        return scene

    # ------------------------------------------------------------ sizes
    def _check_size(self, name: str, neurons: int, synapses: int) -> None:
        lim = self.limits
        if neurons > lim.neurons or synapses > lim.synapses:
            raise CapacityError(
                f"network {name}: {neurons:,} neurons and {synapses:,} synapses; this server "
                f"lets a client load at most {lim.neurons:,} neurons and {lim.synapses:,} "
                "synapses (run meshscope on your own machine for larger ones)"
            )

    def _check_cores(self, name: str, cores: int) -> None:
        if cores > self.limits.cores:
            raise CapacityError(
                f"hardware {name}: {cores:,} cores; this server lets a client load at most "
                f"{self.limits.cores:,} (run meshscope on your own machine for larger ones)"
            )

    def check_network(self, network: Network, spec: str | None = None) -> None:
        """A loaded (uploaded) network within the limits."""
        if spec is not None and spec in self.trusted:
            return
        self._check_size(network.name, network.n_neurons, int(network.indptr[-1]))

    def check_hardware(self, hardware: Hardware, spec: str | None = None) -> None:
        if spec is not None and spec in self.trusted:
            return
        self._check_cores(hardware.name, hardware.n_cores)

    def check_upload(self, name: str, size: int) -> None:
        """Refuse an upload of ``size`` bytes (the browser asks first, ``UploadInput``)."""
        limit = self.limits.upload_bytes
        if size > limit:
            raise CapacityError(
                f"{name}: {size / 2**20:.1f} MB; this server takes uploads of at most "
                f"{limit / 2**20:.0f} MB (run meshscope on your own machine for larger files)"
            )

    def check_budget(self, budget: int) -> None:
        if budget > self.limits.budget:
            raise CapacityError(
                f"a budget of {budget:,} evaluations; this server runs searches of at most "
                f"{self.limits.budget:,} (run meshscope evolve on your own machine for more)"
            )

    @property
    def cycles(self) -> int:
        """The most cycles one simulated step may take (a longer one fails its evaluation)."""
        return int(min(self.limits.cycles, 50_000_000))


def _regular_or_missing(path: str) -> bool:
    """Whether ``path`` is a regular data file, or nothing (the reader then says so): not
    a folder, a pipe (opening one blocks until someone writes), a device, or a file of
    ``/proc``, ``/sys`` or ``/dev`` (they read without end, or change as they are read).
    Only looks (``stat``): never opens."""
    resolved = _resolved(path)
    if resolved is None:
        return True
    try:
        st = os.stat(resolved)
    except OSError:  # missing, or not reachable: the reader's own message
        return True
    if not stat.S_ISREG(st.st_mode):
        return False
    return not any(
        resolved.is_relative_to(root) or st.st_dev == _device(root) for root in _SPECIAL_ROOTS
    )


def _device(root: str) -> int | None:
    """The device of the file system mounted at ``root`` (None if none is)."""
    try:
        return os.stat(root).st_dev if os.path.ismount(root) else None
    except OSError:
        return None


def _resolved(spec: str) -> Path | None:
    try:
        return Path(spec).expanduser().resolve()
    except (OSError, RuntimeError, ValueError):  # a loop of links, a NUL byte
        return None

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
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from engine.errors import CapacityError, SpecError
from engine.hardware import MAX_CORES, Hardware, spec_cores
from engine.network import Network
from engine.specs import demo_files
from engine.workloads import parse_spec, workload_size, workloads

__all__ = ["ClientAccess", "ClientLimits", "looks_like_path"]

_FILE_SUFFIXES = (".npz", ".hgr", ".nir", ".toml", ".json")


@dataclass(frozen=True)
class ClientLimits:
    """The most one client request may ask for."""

    cores: int = 4_096  # of the hardware (a 64×64 mesh of one core per router)
    neurons: int = 200_000
    synapses: int = 12_000_000
    cycles: int = 2_000_000  # of one simulated step (the simulated objectives)
    budget: int = 20_000  # evaluations of one search
    upload_bytes: int = 32 * 2**20

    @classmethod
    def none(cls) -> ClientLimits:
        big = 2**62
        return cls(MAX_CORES, big, big, 50_000_000, big, big)


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
            path = Path(d).expanduser().resolve()
            if not path.is_dir():
                raise SpecError(f"--allow-files {d}: not a folder")
            folders.append(path)
        return cls(
            limits or ClientLimits(),
            trusted=frozenset(given),
            files=frozenset(p for s in given if looks_like_path(s) and (p := _resolved(s))),
            folders=tuple(folders),
        )

    # ------------------------------------------------------------ names
    def _allowed_file(self, spec: str) -> bool:
        if self.any_file or spec in self.trusted:
            return True
        path = _resolved(spec)
        if path is None:
            return False
        return path in self.files or any(path.is_relative_to(d) for d in self.folders)

    def _refuse(self, what: str, spec: str) -> SpecError:
        return SpecError(
            f"{what} {spec!r}: the explorer opens no files its users name; upload the file "
            "instead (whoever runs the server can open a folder with --allow-files DIR)"
        )

    def network(self, spec: str) -> str:
        """``spec`` if a client may load that network (a ``SpecError`` or ``CapacityError``
        otherwise); its size is checked before it is built."""
        spec = spec.strip()
        if spec in self.trusted:
            return spec
        if looks_like_path(spec):
            if spec in {p.name for p in demo_files()} or self._allowed_file(spec):
                return spec
            raise self._refuse("network", spec)
        workloads[parse_spec(spec)[0]]  # an unknown name raises, listing the known ones
        self._check_size(spec, *workload_size(spec))
        return spec

    def hardware(self, spec: str) -> str:
        """``spec`` if a client may load that hardware; a ``mesh:`` spec's size is checked
        before it is built."""
        spec = spec.strip()
        if spec in self.trusted:
            return spec
        if looks_like_path(spec) and not self._allowed_file(spec):
            raise self._refuse("hardware", spec)
        cores = spec_cores(spec)
        if cores is not None:
            self._check_cores(spec, cores)
        return spec

    def mapping_file(self, path: str) -> str:
        """``path`` if a client may open that mapping file."""
        if path in self.trusted or self._allowed_file(path):
            return path
        raise self._refuse("mapping file", path)

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
        limit = self.limits.upload_bytes
        if size > limit:
            raise CapacityError(
                f"{name}: {size / 2**20:.1f} MB; this server takes uploads of at most "
                f"{limit / 2**20:.0f} MB"
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


def _resolved(spec: str) -> Path | None:
    try:
        return Path(spec).expanduser().resolve()
    except (OSError, RuntimeError, ValueError):  # a loop of links, a NUL byte
        return None

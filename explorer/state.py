"""ExplorerState: the one source of truth of an explorer session.

It holds the network, the hardware, the current mapping and its evaluation, and the
actions that change them. It imports no UI toolkit (only ``param`` and the engine), so
every action is testable without a browser; views watch its parameters.

Actions raise ``engine.errors.MeshScopeError`` on bad input and leave the state as it
was: a session never holds a mapping without its evaluation.
"""

from __future__ import annotations

import os
from functools import lru_cache

import param

from engine.cost import Evaluation, evaluate
from engine.hardware import Hardware
from engine.mapping import Mapping, read_mapping_file
from engine.network import Network
from engine.partition import make_partition
from engine.placement import make_placement
from engine.specs import DEFAULT_HARDWARE, DEFAULT_NETWORK, load_hardware_spec, load_network_spec
from engine.specs import DEFAULT_PLACEMENT as DEFAULT_PLACER
from engine.traffic import partition_stats

__all__ = ["DEFAULT_NETWORK", "DEFAULT_HARDWARE", "DEFAULT_PLACER", "ExplorerState", "resolve"]


def resolve(
    network_spec: str | None,
    hardware_spec: str | None,
    mapping_path: str | None = None,
    *,
    placer: str = DEFAULT_PLACER,
) -> tuple[Network, Hardware, Mapping]:
    """The network, hardware and mapping that the ``serve`` arguments name.

    With a mapping file, a missing network or hardware spec is taken from the file;
    without one, the network's default partition is placed by ``placer``.

    Results are cached per process (a mapping file by its path, size and modification
    time), so a new browser session does not partition the network again. They are
    shared between sessions, so their arrays are made read-only: an action makes a new
    ``Mapping``, it never edits one in place.
    """
    file_key = None
    if mapping_path:
        try:
            st = os.stat(mapping_path)
            file_key = (st.st_size, st.st_mtime_ns)
        except OSError:
            file_key = None  # read_mapping_file will say what is wrong
    return _resolve_cached(network_spec, hardware_spec, mapping_path, placer, file_key)


@lru_cache(maxsize=16)
def _resolve_cached(network_spec, hardware_spec, mapping_path, placer, _file_key):
    if mapping_path:
        mf = read_mapping_file(mapping_path)
        network = load_network_spec(network_spec or mf.network_name)
        hardware = load_hardware_spec(hardware_spec or mf.hardware_name)
        mapping = mf.build(network, hardware)
    else:
        network = load_network_spec(network_spec or DEFAULT_NETWORK)
        hardware = load_hardware_spec(hardware_spec or DEFAULT_HARDWARE)
        partition = make_partition(network, hardware, None)
        stats = partition_stats(network, hardware, partition)
        mapping = Mapping(partition, make_placement(stats, hardware, placer))
    mapping.partition.assignment.flags.writeable = False
    mapping.placement.cores.flags.writeable = False
    return network, hardware, mapping


class ExplorerState(param.Parameterized):
    """One session's network, hardware, mapping and evaluation."""

    network_spec = param.String(default=DEFAULT_NETWORK, doc="what the user typed for the network")
    hardware_spec = param.String(default=DEFAULT_HARDWARE, doc="… and for the hardware")
    mapping_path = param.String(default=None, allow_None=True, doc="mapping file, if any")
    placer = param.String(default=DEFAULT_PLACER, doc="placer used when no mapping file is given")

    network = param.ClassSelector(class_=Network, default=None, allow_None=True)
    hardware = param.ClassSelector(class_=Hardware, default=None, allow_None=True)
    mapping = param.ClassSelector(class_=Mapping, default=None, allow_None=True)
    evaluation = param.ClassSelector(class_=Evaluation, default=None, allow_None=True)

    @classmethod
    def from_specs(
        cls,
        network_spec: str | None = None,
        hardware_spec: str | None = None,
        mapping_path: str | None = None,
        **params,
    ) -> ExplorerState:
        """A loaded state (raises ``MeshScopeError`` if the specs do not resolve)."""
        state = cls(**params)
        state.load(network_spec, hardware_spec, mapping_path)
        return state

    @property
    def loaded(self) -> bool:
        return self.evaluation is not None

    def load(
        self,
        network_spec: str | None = None,
        hardware_spec: str | None = None,
        mapping_path: str | None = None,
    ) -> None:
        """Resolve and evaluate a network, hardware and mapping, then switch to them at once."""
        network, hardware, mapping = resolve(
            network_spec, hardware_spec, mapping_path, placer=self.placer
        )
        evaluation = evaluate(network, hardware, mapping)
        self.param.update(
            network_spec=network_spec or network.name,
            hardware_spec=hardware_spec or hardware.name,
            mapping_path=mapping_path,
            network=network,
            hardware=hardware,
            mapping=mapping,
            evaluation=evaluation,
        )

    def set_mapping(self, mapping: Mapping) -> None:
        """Evaluate ``mapping`` on the current network and hardware and make it current."""
        self._require_loaded()
        evaluation = evaluate(self.network, self.hardware, mapping)
        self.param.update(mapping=mapping, evaluation=evaluation)

    def recompute(self) -> Evaluation:
        """Evaluate the current mapping again (after a change of cost model or inputs)."""
        self._require_loaded()
        self.evaluation = evaluate(self.network, self.hardware, self.mapping)
        return self.evaluation

    def _require_loaded(self) -> None:
        if self.network is None or self.hardware is None or self.mapping is None:
            raise RuntimeError("ExplorerState has nothing loaded yet: call load() first")

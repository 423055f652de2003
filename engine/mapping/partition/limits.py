"""What every neuron-level partitioner shares: its view of the limits, and the final check.

``hypergraph_under_limits`` gives a partitioner the network's hypergraph
(``engine.model.hypergraph.Incidence``) and the limits as counts (``Capacity``), after making
sure that every neuron fits a core on its own; ``checked_partition`` turns the block ids
a partitioner produced into a ``Partition`` after checking it against the resource
model, so a partitioner never returns something the hardware cannot hold.

Neuron-level partitioners see a network's spike sources as vertices like any other (their
h-edges still pull their destinations together); ``checked_partition`` then takes them off
their cores (partition -1) and drops the blocks that held only sources.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from engine.errors import CapacityError
from engine.hardware import Hardware
from engine.mapping.assignment import Partition
from engine.mapping.partition_graph import partition_graph
from engine.mapping.resources import Capacity, capacity, require_cores, require_each_neuron_fits
from engine.model.hypergraph import Incidence, incidence
from engine.model.network import Network

__all__ = ["checked_partition", "hypergraph_under_limits"]


def hypergraph_under_limits(network: Network, hardware: Hardware) -> tuple[Capacity, Incidence]:
    """The limits as counts and the network's incidence, once every neuron fits alone; the
    incidence's ``synapses`` count each neuron's own memory too (``Capacity.per_neuron``)."""
    cap = capacity(network, hardware)
    inc = incidence(network)
    if cap.per_neuron:
        inc = replace(inc, synapses=inc.synapses + cap.per_neuron)
    require_each_neuron_fits(network, cap, inc.axons, inc.synapses)
    return cap, inc


def checked_partition(network: Network, hardware: Hardware, assignment, how: str) -> Partition:
    """A Partition after checking it fits the hardware, with a clear error if it does not."""
    assignment = np.asarray(assignment, dtype=np.int64)
    if network.has_spike_sources:  # sources run on no core; blocks renumbered 0..P-1
        on = network.on_cores
        used, dense = np.unique(assignment[on], return_inverse=True)
        assignment = np.full(assignment.shape, -1, dtype=np.int64)
        assignment[on] = dense.ravel() if used.size else dense
    partition = Partition(assignment)
    require_cores(partition.n_parts, hardware, f"{how} partitioning of {network.name!r}")
    problems = partition_graph(network, hardware, partition).limit_violations(hardware)
    if problems:
        raise CapacityError(f"{how} partitioning does not fit: " + "; ".join(problems))
    return partition

"""MeshScope engine: map spiking neural networks onto 2D-mesh spatial accelerators.

The pipeline, one module each::

    network ─partition/─▶ Partition ─partition_graph─▶ PartitionGraph ─placement/─▶ Placement
            ─traffic─▶ link loads ─cost─▶ Evaluation          (search/ closes the loop)

``pipeline.build_mapping`` runs it from the names a user types; ``resources`` is the one
per-core limit model every step checks against. The engine never imports the explorer
or any UI toolkit.
"""

from engine.cost import Evaluation, Evaluator, evaluate
from engine.errors import MeshScopeError
from engine.hardware import Hardware, load_hardware
from engine.mapping import Mapping, Partition, Placement
from engine.network import Network
from engine.partition_graph import PartitionGraph, partition_graph
from engine.pipeline import Mapped, build_mapping, write_mapping_file

__all__ = [
    "Evaluation",
    "Evaluator",
    "Hardware",
    "Mapped",
    "Mapping",
    "MeshScopeError",
    "Network",
    "Partition",
    "PartitionGraph",
    "Placement",
    "build_mapping",
    "evaluate",
    "load_hardware",
    "partition_graph",
    "write_mapping_file",
]

"""MeshScope engine: map spiking neural networks onto 2D-mesh spatial accelerators.

The pipeline, one module each: ``network`` → ``partition`` → ``placement`` →
``traffic`` (per-link loads) → ``cost`` (latency, energy) → ``search``.
The engine never imports the explorer or any UI toolkit.
"""

from engine.cost import Evaluation, Evaluator, evaluate
from engine.errors import MeshScopeError
from engine.hardware import Hardware, load_hardware
from engine.mapping import Mapping, Partition, Placement
from engine.network import Network

__all__ = [
    "Evaluation",
    "Evaluator",
    "Hardware",
    "Mapping",
    "MeshScopeError",
    "Network",
    "Partition",
    "Placement",
    "evaluate",
    "load_hardware",
]

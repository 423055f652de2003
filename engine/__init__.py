"""MeshScope engine: map spiking neural networks onto 2D-mesh spatial accelerators.

The pipeline, one module each::

    network ─partition/─▶ Partition ─partition_graph─▶ PartitionGraph ─placement/─▶ Placement
            ─traffic─▶ link loads ─cost─▶ Evaluation          (search/ closes the loop)

``pipeline.build_mapping`` runs it from the names a user types and ``pipeline.evaluate``
costs the result; ``resources`` is the one per-core limit model every step checks against.
The engine never imports the explorer or any UI toolkit.
"""

from importlib import import_module

from engine.kernels import choose_cache

choose_cache()  # before any kernel is declared: numba must have somewhere to cache them

_WHERE = {  # name -> module: imported on first use, so ``meshscope --help`` stays light
    "Evaluation": "engine.evaluate.cost",
    "Evaluator": "engine.evaluate.cost",
    "MeshScopeError": "engine.errors",
    "Hardware": "engine.hardware",
    "load_hardware": "engine.hardware",
    "Mapping": "engine.mapping.assignment",
    "Partition": "engine.mapping.assignment",
    "Placement": "engine.mapping.assignment",
    "Network": "engine.model.network",
    "PartitionGraph": "engine.mapping.partition_graph",
    "Mapped": "engine.pipeline",
    "build_mapping": "engine.pipeline",
    "evaluate": "engine.pipeline",
    "write_mapping_file": "engine.pipeline",
}


def __getattr__(name: str):
    if name in _WHERE:
        return getattr(import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'engine' has no attribute {name!r}")


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
    "write_mapping_file",
]

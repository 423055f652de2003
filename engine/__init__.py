"""MeshScope engine: map spiking neural networks onto 2D-mesh spatial accelerators.

The pipeline, one module each::

    network ─partition/─▶ Partition ─partition_graph─▶ PartitionGraph ─placement/─▶ Placement
            ─traffic─▶ link loads ─cost─▶ Evaluation          (search/ closes the loop)

``pipeline.build_mapping`` runs it from the names a user types and ``pipeline.evaluate``
costs the result; ``resources`` is the one per-core limit model every step checks against.
The engine never imports the explorer or any UI toolkit.

From Python, the names of ``__all__`` are the public API (``engine.api`` adds networks from
arrays, hardware from keywords, the simulator, flows and searches to the pipeline's own);
docs/api.md shows each one. Every name is imported when first used, so ``import engine``
stays light.
"""

from importlib import import_module

from engine._api_names import API_NAMES
from engine.kernels import choose_cache

choose_cache()  # before any kernel is declared: numba must have somewhere to cache them

_WHERE = {  # name -> module: imported on first use, so ``meshscope --help`` stays light
    "Evaluation": "engine.evaluation.cost",
    "Evaluator": "engine.evaluation.cost",
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
    **dict.fromkeys(API_NAMES, "engine.api"),
}


def __getattr__(name: str):
    if name in _WHERE:
        return getattr(import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'engine' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_WHERE])


__all__ = sorted(_WHERE)  # the public API: docs/api.md shows each name

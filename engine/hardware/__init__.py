"""Hardware: what a preset describes, in pieces — ``constants`` (limits, links, the models'
constants), ``geometry`` (the grid and its addresses), ``system`` (``Hardware`` itself),
``provenance`` (where each constant came from), ``schema`` (the TOML and its checks),
``codesign`` (what a hardware could be, and the search over it) and ``loading`` (by name)."""

from engine.hardware.constants import (
    MEMORY_MODELS,
    NOC_ALLOCATORS,
    CoreLimits,
    EnergyConstants,
    LinkSpec,
    ModelConstants,
    NocConstants,
    TileLimits,
)  # fmt: skip
from engine.hardware.geometry import (
    CORE_TO_ROUTER,
    DIRECTIONS,
    LINK_KINDS,
    OFF_CHIP,
    ROUTER,
    ROUTER_TO_CORE,
)  # fmt: skip
from engine.hardware.loading import PRESET_DIR, load_hardware, preset_names, resized, spec_cores
from engine.hardware.schema import hardware_from_dict
from engine.hardware.system import MAX_CORES, Hardware

__all__ = [
    "CORE_TO_ROUTER", "DIRECTIONS", "LINK_KINDS", "MAX_CORES", "MEMORY_MODELS", "NOC_ALLOCATORS",
    "OFF_CHIP", "PRESET_DIR", "ROUTER", "ROUTER_TO_CORE", "CoreLimits", "EnergyConstants",
    "Hardware", "LinkSpec", "ModelConstants", "NocConstants", "TileLimits", "hardware_from_dict",
    "load_hardware", "preset_names", "resized", "spec_cores",
]  # fmt: skip

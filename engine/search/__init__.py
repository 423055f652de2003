"""Searches over mappings: seed 000's nested evolutionary strategy and its evaluators."""

from engine.search.evaluators import CommandEvaluator, ModelEvaluator
from engine.search.evolution import ESConfig, ESResult, Event, NestedES
from engine.search.operators import OperatorParams

__all__ = [
    "CommandEvaluator",
    "ESConfig",
    "ESResult",
    "Event",
    "ModelEvaluator",
    "NestedES",
    "OperatorParams",
]

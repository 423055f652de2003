"""Searches over mappings: the Loihi 2 mapping paper's nested evolutionary strategy.

``make_search`` builds a run of a registered strategy (``global`` or ``chipwise``);
its ``iter_run`` yields an ``Event`` per evaluation and ``run`` returns an ``ESResult``.
Settings, objectives and strategies are listed in ``engine.search.config``.
"""

from engine.errors import SpecError
from engine.search.config import ESConfig, Objective, heuristics, objectives, strategies
from engine.search.evaluators import (
    CommandEvaluator,
    ModelEvaluator,
    Outcome,
    SimulatorEvaluator,
    default_evaluator,
)
from engine.search.evolution import ESResult, NestedES
from engine.search.history import Event, History, HistoryLog, Record
from engine.search.multichip import ChipwiseSearch
from engine.search.operators import OperatorParams, resize_population

__all__ = [
    "ChipwiseSearch",
    "CommandEvaluator",
    "ESConfig",
    "ESResult",
    "Event",
    "History",
    "HistoryLog",
    "ModelEvaluator",
    "NestedES",
    "Objective",
    "OperatorParams",
    "Outcome",
    "Record",
    "SimulatorEvaluator",
    "default_evaluator",
    "heuristics",
    "make_search",
    "objectives",
    "resize_population",
    "strategies",
]


def make_search(
    network, hardware, config: ESConfig, *, strategy: str = "global", evaluator=None, start=None
):
    """A run of the named strategy, with ``iter_run``/``run``/``result``; ``start``: a
    ``Mapping`` the global strategy starts from besides its heuristics."""
    from engine.search.config import require_hardware_for

    require_hardware_for([config.objective], hardware)
    if start is None:
        return strategies[strategy](network, hardware, config, evaluator=evaluator)
    if strategy != "global":
        raise SpecError(f"only the global strategy starts from a given mapping, not {strategy}")
    return strategies[strategy](network, hardware, config, evaluator=evaluator, start=start)

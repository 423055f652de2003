"""Searches over mappings: the Loihi 2 mapping paper's nested evolutionary strategy and,
in ``engine.search.pareto``, SENMap's multi-objective search on pymoo.

``make_search`` builds a run of the search its settings are for (``ESConfig``: the nested
ES, strategy ``global`` or ``chipwise``; ``ParetoConfig``); every run's ``iter_run`` yields
an ``Event`` per evaluation, each with the ``Record`` of what was evaluated, and a run's
history file has one format (``engine.search.history``). ``engine.search.runs`` runs a
search the way the command line asks for it. Settings, objectives and strategies are
listed in ``engine.search.config``.
"""

from engine.search.config import (
    ESConfig,
    Objective,
    default_evaluator,
    heuristics,
    objectives,
    searches,
    strategies,
)
from engine.search.evaluators import CommandEvaluator, ModelEvaluator, Outcome, SimulatorEvaluator
from engine.search.evolution import ESResult, NestedES
from engine.search.history import History, HistoryLog, Run, read_history
from engine.search.multichip import ChipwiseSearch
from engine.search.operators import OperatorParams, resize_population
from engine.search.record import Event, Record

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
    "Run",
    "SimulatorEvaluator",
    "default_evaluator",
    "heuristics",
    "make_search",
    "objectives",
    "read_history",
    "resize_population",
    "searches",
    "strategies",
]


def make_search(network, hardware, config, *, evaluator=None, start=None, **options):
    """A run of the search ``config`` is for (its ``kind``: ``evolve`` or ``pareto``), with
    ``iter_run``/``run``/``result``. ``start``: a ``Mapping`` to start from besides the
    heuristics; ``options``: the search's own (the nested ES's ``strategy``, a pareto run's
    ``known`` and ``codesign``)."""
    return searches[config.kind](
        network, hardware, config, evaluator=evaluator, start=start, **options
    )

"""Predictors of a mapping's time step: the registry the command line, the searches and the
explorer choose from (issue 55).

A predictor is an ``engine.evaluation.cost.Evaluator`` class — full evaluations, re-placements and
swaps of one partition, an ``Evaluation`` that names it (``Evaluation.predictor``):

* ``max-affine``: the Loihi 2 runtime model's eq. 1, the busiest core's DendOps, SynOps and
  SynMem reads, the heaviest link and the barrier, each alone (``engine.evaluation.cost``);
* ``flow``: the step as a fluid of messages through links and cores' servers, as the
  cycle-level simulator runs it — blocked heads, flow control, serial cores, the
  pipeline's fill (``engine.predict.flow``);
* ``fitted``: a surrogate fitted to simulated steps, the flow and max-affine steps and the
  five busiest links blended in log time (``engine.predict.fitted``).

How each ranks mappings against the simulated step: ``benchmarks/fidelity_sim.py``,
docs/fidelity.md.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.evaluation.cost import Evaluator
from engine.predict.fitted import FittedEvaluator
from engine.predict.flow import FlowEvaluator
from engine.registry import Registry

__all__ = ["DEFAULT_PREDICTOR", "Predictor", "evaluator_class", "predictors"]


@dataclass(frozen=True)
class Predictor:
    """A predictor: its name, the words a card shows for it, and its evaluator class."""

    name: str
    label: str
    evaluator: type[Evaluator]


predictors: Registry[Predictor] = Registry("predictor")
predictors.add(
    "max-affine", Predictor("max-affine", "max-affine model", Evaluator),
    doc="Loihi 2 runtime model eq. 1: the slowest of DendOps, SynOps, SynMem reads, the "
    "heaviest link and the barrier, each alone (a lower bound)",
)  # fmt: skip


def _register(name: str, label: str, evaluator: type[Evaluator], doc: str) -> None:
    predictors.add(name, Predictor(name, label, evaluator), doc=doc)


_register(
    "flow", "flow model", FlowEvaluator,
    "the step as a fluid of messages: sources held by their busiest route, links at the "
    "bandwidth flow control leaves them, cores serving one message after another, the "
    "pipeline's fill (predicts the simulated step)",
)  # fmt: skip
_register(
    "fitted", "fitted surrogate", FittedEvaluator,
    "a surrogate fitted to simulated steps (SENMap §IV-F): the flow and max-affine steps and "
    "the five busiest links, blended in log time; on pairs it was not fitted to it ranks no "
    "better than max-affine (docs/fidelity.md)",
)  # fmt: skip

DEFAULT_PREDICTOR = "max-affine"


def evaluator_class(name: str | None = None) -> type[Evaluator]:
    """The evaluator class of predictor ``name`` (None: ``DEFAULT_PREDICTOR``)."""
    return predictors[name or DEFAULT_PREDICTOR].evaluator

"""The fitted predictor: a surrogate of the simulated step, fitted to simulator runs.

SENMap §IV-F trains a model on simulated evaluations to stand in for the simulator during a
search. This one is as small as such a model can be and still carry what the two analytic
predictors know (issue 55, docs/fidelity.md): in log time, a least-squares blend of

* ``flow``: the flow predictor's step (``engine.predict.flow``): the step's scale where
  flow control, a core's serial work and the pipeline's fill decide it;
* ``max-affine``: the max-affine model's step (``engine.evaluation.cost``): the busiest resource
  alone, which orders mappings as well as the flow does or better where contention decides;
* ``links5``: the mean time of the five busiest links (each at the bandwidth its flow
  control leaves it): how many links contend for the step, not only the busiest;

``T = exp(c) · flow^a · max-affine^b · links5^d``, never below the max-affine model (a lower
bound of the simulated step). The coefficients (``FIT``) are a least-squares fit of log
simulated step on log features over every mapping of every pair of
``benchmarks/fidelity_sim.py`` (its JSON keeps the rows and the fit;
``tests/engine/test_predict.py`` refits them and checks ``FIT``); the benchmark judges the
predictor leave-one-pair-out: each pair predicted by a fit that never saw it.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from engine.mapping.partition_graph import FIXED
from engine.predict.flow import FlowEvaluator, link_us_per_message

__all__ = ["FEATURES", "FIT", "FittedEvaluator", "fit_log_linear", "predict_log_linear"]

FEATURES = ("flow", "max-affine", "links5")
# benchmarks/fidelity_sim.py's fit of every pair's mappings (its JSON: "fitted" → "fit")
FIT = {
    "intercept": -0.006973,
    "weights": {"flow": 0.276767, "max-affine": 0.907992, "links5": -0.060199},
}


def fit_log_linear(features: np.ndarray, steps_us: np.ndarray) -> dict:
    """Least squares of log ``steps_us`` on log ``features`` (rows × ``FEATURES``) and a
    constant: ``{"intercept": c, "weights": {name: w}}``."""
    x = np.log(np.asarray(features, dtype=float))
    a = np.column_stack([x, np.ones(len(x))])
    coef, *_ = np.linalg.lstsq(a, np.log(np.asarray(steps_us, dtype=float)), rcond=None)
    return {
        "intercept": float(coef[-1]),
        "weights": {n: float(w) for n, w in zip(FEATURES, coef[:-1], strict=True)},
    }


def predict_log_linear(features: np.ndarray, fit: dict) -> np.ndarray:
    """The fitted step (µs) of each row of ``features`` (``FEATURES``), never below its
    max-affine column."""
    f = np.atleast_2d(np.asarray(features, dtype=float))
    w = np.array([fit["weights"][n] for n in FEATURES])
    t = np.exp(fit["intercept"] + np.log(f) @ w)
    return np.maximum(t, f[:, FEATURES.index("max-affine")])


class FittedEvaluator(FlowEvaluator):
    """The fitted predictor as an ``engine.evaluation.cost.Evaluator`` (see the module): the flow
    predictor's books and schedule, then the blend. ``fit``: coefficients other than
    ``FIT`` (the benchmark's held-out fits)."""

    predictor = "fitted"

    def __init__(self, *args, fit: dict | None = None, **kwargs):
        self._fit = fit or FIT
        hw = args[1] if len(args) > 1 else kwargs["hardware"]
        per_message = link_us_per_message(hw)
        self._link_flow_us = per_message / FIXED  # per fixed-point message, flow-controlled
        super().__init__(*args, **kwargs)

    def features(self) -> np.ndarray:
        """This placement's ``FEATURES`` (µs)."""
        times = self._time_loads * self._link_flow_us
        top = np.partition(times, times.size - 5)[-5:] if times.size > 5 else times
        links5 = max(float(top.mean()), 1e-9)
        return np.array([self._flow_us, self._affine_us, links5])

    def _summarize(self) -> tuple[float, float]:
        super()._summarize()
        self._flow_us = self.latency_us
        t = float(predict_log_linear(self.features(), self._fit)[0])
        self.latency_us = t
        self.energy_uj = self._static_w() * t + self._compute_energy_uj + self._routing_uj
        return self.latency_us, self.energy_uj

    def evaluation(self, *, locality: bool = True):
        ev = super().evaluation(locality=locality)
        terms = dict(ev.predictor_terms_us)
        terms["flow"] = self._flow_us
        return replace(ev, predictor_terms_us=terms)

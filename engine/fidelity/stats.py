"""How well predictions agree with measurements: Pearson r, Kendall τ, MAPE.

``agreement`` returns the JSON object ``meshscope validate`` prints per predictor:

* ``pearson_r``: linear correlation of predicted and measured step times (scipy's
  ``pearsonr``), what the Loihi 2 runtime model reports (≥ 0.97 on its workloads);
* ``kendall_tau``: rank agreement (scipy's ``kendalltau``, τ-b): does the predictor order
  the runs as the hardware does, which is what choosing a mapping needs;
* ``mape``: mean absolute percentage error, 100 · mean(|predicted − measured| / measured);
* ``lower_bound_share``: the share of runs predicted at or below their measurement (the
  max-affine model is a lower bound, so it should be 1).

r and τ need two runs and some spread on both sides; otherwise they are None and ``why``
says so.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

__all__ = ["agreement"]


def agreement(measured, predicted) -> dict:
    """Pearson r, Kendall τ, MAPE (in %) and the share of lower bounds, over paired runs."""
    m = np.asarray(measured, dtype=float)
    p = np.asarray(predicted, dtype=float)
    if m.shape != p.shape or m.ndim != 1:
        raise ValueError("measured and predicted must be 1-D arrays of the same length")
    out = {
        "n": int(m.size),
        "pearson_r": None,
        "kendall_tau": None,
        "mape": float(100.0 * np.mean(np.abs(p - m) / m)) if m.size else None,
        "lower_bound_share": float(np.mean(p <= m * (1 + 1e-9))) if m.size else None,
    }
    if m.size < 2:
        out["why"] = "r and τ need at least two runs"
    elif np.ptp(m) == 0 or np.ptp(p) == 0:
        out["why"] = "r and τ need runs whose times differ (measured and predicted)"
    else:
        out["pearson_r"] = float(stats.pearsonr(p, m).statistic)
        out["kendall_tau"] = float(stats.kendalltau(p, m).statistic)
    return out

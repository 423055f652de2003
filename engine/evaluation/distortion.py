"""Inter-spike distortion as SENMap measures it (§IV-E, eq. 2): two end signals compared by
normalised cross-correlation.

A mapping that clusters layers on one core can shift or distort the spikes a network emits;
SENMap does not compare spike times one by one but the network's end signals — ``x(t)``,
the output of a reference run, and ``y(t)``, that of the run under test — by their
cross-correlation, normalised to a signal ``z(t)``, and reads the shift of the end signal
where ``z`` peaks:

    z(t) = corr(x, y)(t) / sqrt((x · x)(y · y));     t_shift = argmax_t z(t)

The paper prints the denominator as ``sqrt((x(t) · y(t))(x(t) · y(t)))``; read literally
that is ``|x · y|``, which makes ``z`` at lag 0 equal to 1 for any two signals of positive
product and lets it exceed 1 elsewhere — not its Table III, whose values lie at or under 1
and reach 1 only for a pair with no shift. The energies of the two signals, as in every
normalised cross-correlation, give that: by Cauchy–Schwarz ``|z| ≤ 1``, with 1 exactly when
``y`` is ``x`` shifted (and scaled). "The end signals are normalized before correlation"
(§V): the paper does not say how; here each is centred and scaled to unit standard
deviation (``normalize=True``), so ``z`` at a lag is the Pearson correlation of the
overlapping parts, up to their length. ``corr(x, y)(t) = Σ_n x[n] · y[n + t]``: ``t > 0``
when ``y`` lags ``x``. The time shift is in the signals' time step times ``dt_ms`` ("the time
shift is estimated in millisecond after scaling up with the time-step in the simulation
used").
"""

from __future__ import annotations

import numpy as np
from scipy import signal

from engine.errors import SpecError

__all__ = ["end_signal_correlation"]


def end_signal_correlation(x, y, *, dt_ms: float = 1.0, normalize: bool = True) -> dict:
    """SENMap eq. 2 between the reference end signal ``x`` and the end signal ``y`` (module
    note): ``z`` at every lag, the lags (steps), the peak ``z`` and ``t_shift_ms`` where it
    peaks (the earliest lag of the highest value)."""
    x = np.asarray(x, dtype=np.float64).ravel()
    y = np.asarray(y, dtype=np.float64).ravel()
    if x.size == 0 or y.size == 0:
        raise SpecError("end signals must have at least one sample each")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise SpecError("end signals must be finite numbers")
    if normalize:
        x, y = _standard(x, "x"), _standard(y, "y")
    energy = float(np.sqrt(np.dot(x, x) * np.dot(y, y)))
    if energy == 0:
        raise SpecError("an end signal is all zeros: there is nothing to correlate")
    z = signal.correlate(y, x, mode="full", method="direct") / energy
    lags = signal.correlation_lags(y.size, x.size, mode="full")
    peak = int(np.argmax(z))
    return {"z": z, "lags": lags, "peak": float(z[peak]), "t_shift_ms": float(lags[peak] * dt_ms)}


def _standard(v: np.ndarray, name: str) -> np.ndarray:
    sd = v.std()
    if sd == 0:
        raise SpecError(f"end signal {name} is constant: it cannot be normalised")
    return (v - v.mean()) / sd

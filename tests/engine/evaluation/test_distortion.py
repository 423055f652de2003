"""SENMap eq. 2 (engine.evaluation.distortion): end signals compared by normalised
cross-correlation, on cases worked by hand."""

from __future__ import annotations

import numpy as np
import pytest

from engine.errors import SpecError
from engine.evaluation.distortion import end_signal_correlation


def test_a_delayed_signal_peaks_at_its_delay():
    """x = (0, 1, 2, 1, 0, 0), y the same one step later. Σx² = Σy² = 6, so z(t) = Σ x[n]
    y[n+t] / 6: at t = 1 the bumps meet, 1·1 + 2·2 + 1·1 = 6 → 1; at t = 0 and t = 2,
    2·1 + 1·2 = 4 → 2/3; at t = −1 and t = 3, 1 → 1/6; further, 0."""
    x = [0, 1, 2, 1, 0, 0]
    y = [0, 0, 1, 2, 1, 0]
    out = end_signal_correlation(x, y, dt_ms=5.0, normalize=False)
    z = dict(zip(out["lags"].tolist(), out["z"].tolist(), strict=True))
    assert z[1] == pytest.approx(1.0)
    assert z[0] == pytest.approx(2 / 3) and z[2] == pytest.approx(2 / 3)
    assert z[-1] == pytest.approx(1 / 6) and z[3] == pytest.approx(1 / 6)
    assert all(z[t] == pytest.approx(0.0) for t in (-5, -4, -3, -2, 4, 5))
    assert out["peak"] == pytest.approx(1.0)
    assert out["t_shift_ms"] == 5.0  # one step of 5 ms


def test_normalised_signals_ignore_offset_and_scale():
    """x = (1, 3) and y = (10, 30) both normalise to (−1, 1): Σ of squares 2 each, so z = (−1
    · 1) / 2 = −1/2 at lags ±1 and (1 + 1) / 2 = 1 at lag 0."""
    out = end_signal_correlation([1, 3], [10, 30])
    assert out["lags"].tolist() == [-1, 0, 1]
    assert out["z"] == pytest.approx([-0.5, 1.0, -0.5])
    assert (out["peak"], out["t_shift_ms"]) == (pytest.approx(1.0), 0.0)


def test_a_reversed_signal_peaks_where_its_ends_meet():
    """x = (1, 2, 3) normalises to (−a, 0, a), a = √1.5, and y = (3, 2, 1) to (a, 0, −a): Σ of
    squares 3 each. At lag 0, −a² − a² = −3 → −1; at ±1, 0; at ±2 the ends meet, a² = 1.5
    → 1/2. The peak, 1/2, is at the earliest of its lags: −2."""
    out = end_signal_correlation([1, 2, 3], [3, 2, 1], dt_ms=2.0)
    assert out["z"] == pytest.approx([0.5, 0.0, -1.0, 0.0, 0.5])
    assert out["peak"] == pytest.approx(0.5) and out["t_shift_ms"] == -4.0


def test_z_is_at_most_one():
    rng = np.random.default_rng(0)
    x = rng.normal(size=200)
    y = np.roll(x, 7) + 0.3 * rng.normal(size=200)
    out = end_signal_correlation(x, y)
    assert np.all(np.abs(out["z"]) <= 1 + 1e-12)
    assert out["t_shift_ms"] == 7.0


@pytest.mark.parametrize("x,y,words", [([], [1, 2], "at least one"), ([1, 1], [1, 2], "constant"),
                                       ([0, 0], [0, 0], "all zeros"),
                                       ([1, np.nan], [1, 2], "finite")])  # fmt: skip
def test_bad_signals_are_one_clear_error(x, y, words):
    with pytest.raises(SpecError, match=words):
        end_signal_correlation(x, y, normalize=words != "all zeros")

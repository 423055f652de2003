"""The roofline of the Loihi 2 runtime model (its Fig. 5b): where a mapping sits, and why.

With N_SO the SynOps of the busiest core, N_LL the bits over the heaviest link and T the
time per step, a mapping sits at x = N_SO / N_LL (SynOps / bit) and y = N_SO / T
(SynOps / µs), under the roof min(1 / T_SO, B · x). The max-affine model (its eq. 1)
gives T ≥ N_SO · T_SO and T ≥ N_LL / B, so no mapping is above the roof: a SynOp-bound
one sits on the flat part, a link-bound one on the slope, any other bound below both.
N_LL is the heaviest link's time × B, i.e. its bits at the mesh link bandwidth (on one
Loihi 2 chip, where every link has that bandwidth, exactly its bits).
"""

from __future__ import annotations

import numpy as np

from engine.evaluation.cost import Evaluation
from engine.hardware import Hardware

__all__ = ["ridge", "roof", "roofline_constants", "roofline_point", "roofline_xy"]


def roofline_constants(hardware: Hardware) -> tuple[float, float]:
    """(T_SO in µs, B in bits / µs)."""
    return hardware.model.synop_ns * 1e-3, hardware.links.router_bits_per_us


def roofline_xy(hardware: Hardware, synops_us, link_us, latency_us) -> tuple:
    """Roofline coordinates from eq. 1's terms (arrays or scalars, in µs).

    x = N_SO / N_LL in SynOps / bit, y = N_SO / T in SynOps / µs. A mapping without
    SynOps or without link traffic has no place on a log-log roofline: NaN.
    """
    t_so, b = roofline_constants(hardware)
    synops_us, link_us, latency_us = (np.asarray(v, dtype=float) for v in (synops_us, link_us,
                                                                         latency_us))  # fmt: skip
    n_so = synops_us / t_so
    bits = link_us * b
    ok = (n_so > 0) & (bits > 0) & (latency_us > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        x = np.where(ok, n_so / bits, np.nan)
        y = np.where(ok, n_so / latency_us, np.nan)
    return x, y


def roofline_point(hardware: Hardware, evaluation: Evaluation) -> dict:
    """One mapping on the roofline: x, y, N_SO, N_LL (bits), T and its bounding term."""
    t_so, b = roofline_constants(hardware)
    terms = evaluation.terms_us
    x, y = roofline_xy(hardware, terms["synops"], terms["link"], evaluation.latency_us)
    return {
        "x": float(x),
        "y": float(y),
        "n_so": terms["synops"] / t_so,
        "n_ll_bits": terms["link"] * b,
        "t_us": evaluation.latency_us,
        "bound": evaluation.bottleneck,
    }


def roof(hardware: Hardware, x) -> np.ndarray:
    """The roof min(1 / T_SO, B · x) in SynOps / µs at operational intensities ``x``."""
    t_so, b = roofline_constants(hardware)
    return np.minimum(1.0 / t_so, b * np.asarray(x, dtype=float))


def ridge(hardware: Hardware) -> float:
    """The operational intensity where the slope meets the flat roof: 1 / (T_SO · B)."""
    t_so, b = roofline_constants(hardware)
    return 1.0 / (t_so * b)

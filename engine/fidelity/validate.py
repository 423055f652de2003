"""Measured against predicted, for the model and the simulator, with the statistics and
a figure (predicted vs measured, and the runs on the Loihi 2 runtime model's roofline)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from engine.evaluation.cost import TERMS
from engine.fidelity.measurements import Measurement
from engine.fidelity.predict import Prediction, predict
from engine.fidelity.stats import agreement
from engine.hardware import Hardware, load_hardware
from engine.io.outputs import atomic_open

__all__ = ["Validation", "validate"]

TERM_COLORS = {  # as the explorer's bottleneck view colours them
    "dendops": "#9467bd",
    "synops": "#1f77b4",
    "synmem": "#17becf",
    "link": "#d62728",
    "barrier": "#7f7f7f",
}


@dataclass(frozen=True, eq=False)
class Validation:
    runs: list[Measurement]
    predictions: list[Prediction] = field(repr=False)
    skipped: int = 0
    hardware: Hardware | None = None  # whose constants predicted every run (None: each run's)

    @property
    def measured(self) -> np.ndarray:
        return np.array([r.measured_us for r in self.runs])

    @property
    def model(self) -> dict:
        return agreement(self.measured, [p.model_us for p in self.predictions])

    @property
    def simulator(self) -> dict | None:
        if any(p.simulator_us is None for p in self.predictions):
            return None
        return agreement(self.measured, [p.simulator_us for p in self.predictions])

    def rows(self) -> list[dict]:
        return [
            {
                "row": r.row, "name": r.name, "measured_us": r.measured_us,
                **p.to_dict(),
            }
            for r, p in zip(self.runs, self.predictions, strict=True)
        ]  # fmt: skip

    def to_dict(self) -> dict:
        return {
            "runs": len(self.runs),
            "skipped": self.skipped,
            "model": self.model,
            "simulator": self.simulator,
            "rows": self.rows(),
        }

    def write_figure(self, path, hardware: Hardware | None = None) -> None:
        """Two panels: predicted against measured step time (log–log, the diagonal is a
        perfect prediction), and the runs on the roofline of ``hardware`` (default: the one
        that predicted them, else the first run's), each at its measured time."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        from engine.evaluation.roofline import ridge, roof

        hw = hardware or self.hardware or self.predictions[0].mapped.hardware
        m = self.measured
        fig, (left, right) = plt.subplots(1, 2, figsize=(10.5, 4.4), layout="constrained")
        bounds = [p.bound for p in self.predictions]
        model = np.array([p.model_us for p in self.predictions])
        for term in TERMS:
            on = np.array([b == term for b in bounds])
            if on.any():
                left.scatter(m[on], model[on], s=22, color=TERM_COLORS[term],
                             label=f"model, {term}-bound")  # fmt: skip
        sim = self.simulator
        if sim is not None:
            left.scatter(m, [p.simulator_us for p in self.predictions], s=26, marker="x",
                         color="black", lw=0.8, label="simulator")  # fmt: skip
        shown = [m, model] + ([np.array([p.simulator_us for p in self.predictions])] if sim else [])
        lo = min(v.min() for v in shown) * 0.8
        hi = max(v.max() for v in shown) * 1.25
        left.plot([lo, hi], [lo, hi], color="gray", lw=0.8, ls=":", label="predicted = measured")
        left.set(xscale="log", yscale="log", xlim=(lo, hi), ylim=(lo, hi),
                 xlabel="measured step time (µs)", ylabel="predicted step time (µs)")  # fmt: skip
        stats = self.model
        text = f"model: r = {fmt(stats['pearson_r'])}, τ = {fmt(stats['kendall_tau'])}, " \
               f"MAPE {stats['mape']:.1f} %"  # fmt: skip
        if sim is not None:
            text += f"\nsimulator: r = {fmt(sim['pearson_r'])}, τ = {fmt(sim['kendall_tau'])}, " \
                    f"MAPE {sim['mape']:.1f} %"  # fmt: skip
        left.set_title(text, fontsize=9)
        left.legend(fontsize=7, loc="upper left")

        x_counts = np.array([p.counts for p in self.predictions])
        n_so, bits = x_counts[:, 1], x_counts[:, 3]
        ok = (n_so > 0) & (bits > 0)
        if ok.any():
            xi = n_so[ok] / bits[ok]
            yi = n_so[ok] / m[ok]
            xs = np.geomspace(min(xi.min(), ridge(hw)) / 4, max(xi.max(), ridge(hw)) * 4, 200)
            right.plot(xs, roof(hw, xs), color="black", lw=1.2, label=f"roof ({hw.name})")
            for term in TERMS:
                on = np.array([b == term for b in bounds])[ok]
                if on.any():
                    right.scatter(xi[on], yi[on], s=22, color=TERM_COLORS[term],
                                  label=f"{term}-bound (model)")  # fmt: skip
            right.set(xscale="log", yscale="log")
            right.legend(fontsize=7, loc="lower right")
        else:
            right.text(
                0.5, 0.5, "no run has both SynOps and link traffic:\nnothing to place on it",
                ha="center", va="center", transform=right.transAxes,
            )  # fmt: skip
        right.set(xlabel="SynOps per bit on the heaviest link",
                  ylabel="SynOps per µs (measured)")  # fmt: skip
        right.set_title("the runs on the roofline (Loihi 2 runtime model Fig. 5b)", fontsize=9)
        with atomic_open(path, "wb", what="figure") as f:
            fig.savefig(f, format=str(path).rsplit(".", 1)[-1].lower(), dpi=110)
        plt.close(fig)


def fmt(value) -> str:
    """A statistic to three decimals, or n/a."""
    return "n/a" if value is None else f"{value:.3f}"


def validate(
    runs: Sequence[Measurement], *, hardware: Hardware | str | None = None,
    simulator: bool = True, skipped: int = 0, progress: Callable[[int], None] | None = None,
) -> Validation:  # fmt: skip
    """Predict every measured run (with ``hardware``'s constants, if given) and compare."""
    if isinstance(hardware, str):
        hardware = load_hardware(hardware)
    preds = predict(runs, hardware=hardware, simulator=simulator, progress=progress)
    return Validation(list(runs), preds, skipped, hardware)

"""The record of a search: every evaluated individual, exportable as JSON lines or CSV."""

from __future__ import annotations

import csv
import json
import math
from dataclasses import asdict, dataclass, field

__all__ = ["Record", "History", "LEVELS"]

LEVELS = ("init", "partition", "placement")


@dataclass(frozen=True)
class Record:
    """One evaluated individual and what is needed to rebuild its mapping."""

    index: int
    generation: int
    level: str  # init (a heuristic), partition (a partitioning offspring), placement
    latency_us: float
    energy_uj: float
    power_w: float
    cores_used: int
    accepted: bool  # became (or stayed) the parent
    failed: bool
    fitness: float
    cores_per_population: tuple[int, ...]
    placement: tuple[int, ...] = field(repr=False)  # global core id of every partition
    bottleneck: str = ""
    note: str = ""  # heuristic name, or the failure message

    def to_dict(self) -> dict:
        d = asdict(self)
        d["cores_per_population"] = list(self.cores_per_population)
        d["placement"] = list(self.placement)
        for k in ("latency_us", "energy_uj", "power_w", "fitness"):
            if not math.isfinite(d[k]):
                d[k] = None
        return d

    @classmethod
    def from_dict(cls, d: dict) -> Record:
        d = dict(d)
        for k in ("latency_us", "energy_uj", "power_w", "fitness"):
            if d[k] is None:
                d[k] = math.nan if k == "power_w" else math.inf
        d["cores_per_population"] = tuple(d["cores_per_population"])
        d["placement"] = tuple(d["placement"])
        return cls(**d)


class History(list):
    """A list of Records with exporters."""

    COLUMNS = (
        "index", "generation", "level", "latency_us", "energy_uj", "power_w", "cores_used",
        "accepted", "failed", "bottleneck", "note", "cores_per_population",
    )  # fmt: skip

    def write_jsonl(self, path) -> None:
        with open(path, "w") as f:
            for r in self:
                f.write(json.dumps(r.to_dict()) + "\n")

    def write_csv(self, path) -> None:
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(self.COLUMNS)
            for r in self:
                d = r.to_dict()
                d["cores_per_population"] = " ".join(map(str, r.cores_per_population))
                w.writerow(["" if d[c] is None else d[c] for c in self.COLUMNS])

    def write(self, path) -> None:
        """By extension: ``.csv`` or JSON lines (anything else)."""
        (self.write_csv if str(path).endswith(".csv") else self.write_jsonl)(path)

"""What a search reports: a ``Record`` per evaluated mapping, an ``Event`` per evaluation,
and the ``History`` of a run, exportable as JSON lines or CSV.

This is the public face of a running search: ``NestedES.iter_run`` and
``ChipwiseSearch.iter_run`` yield one ``Event`` per evaluation (``run`` passes each to a
callback), carrying the record just made and the best so far. The command line's
progress bar and the explorer's live plots both just listen to these events.
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import asdict, dataclass, field

from engine.errors import AllFailedError, OutputFileError
from engine.io.files import appender, atomic_open, reason
from engine.mapping import Mapping
from engine.search.genotype import to_mapping

__all__ = ["ENDS", "Event", "History", "HistoryLog", "LEVELS", "Record"]

LEVELS = ("init", "partition", "placement")
ENDS = ("complete", "cancelled", "failed")  # how a run ended: the last line of its log


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
    terms_us: dict = field(default_factory=dict)  # the model's terms (empty from a command)
    simulated_us: float = math.nan  # the simulated step (the simulator evaluator only)

    def mapping(self, network) -> Mapping:
        """The mapping this record describes, on ``network``."""
        return to_mapping(network, self.cores_per_population, self.placement)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["cores_per_population"] = list(self.cores_per_population)
        d["placement"] = list(self.placement)
        for k in ("latency_us", "energy_uj", "power_w", "fitness", "simulated_us"):
            if not math.isfinite(d[k]):
                d[k] = None
        return d

    @classmethod
    def from_dict(cls, d: dict) -> Record:
        d = dict(d)
        for k in ("latency_us", "energy_uj", "power_w", "fitness"):
            if d[k] is None:
                d[k] = math.nan if k == "power_w" else math.inf
        if d.get("simulated_us") is None:
            d["simulated_us"] = math.nan
        d["cores_per_population"] = tuple(d["cores_per_population"])
        d["placement"] = tuple(d["placement"])
        d["terms_us"] = dict(d.get("terms_us") or {})
        return cls(**d)


@dataclass(frozen=True)
class Event:
    """One evaluation of a running search: how far it is, what was evaluated, the best yet."""

    count: int  # evaluations so far
    budget: int
    best: Record  # best individual so far (the record itself while nothing succeeded)
    record: Record  # the individual just evaluated

    @property
    def progress(self) -> float:
        """Share of the budget spent, in [0, 1]."""
        return min(1.0, self.count / self.budget)


class History(list):
    """A list of Records with exporters."""

    COLUMNS = (
        "index", "generation", "level", "latency_us", "energy_uj", "power_w", "cores_used",
        "accepted", "failed", "bottleneck", "note", "cores_per_population", "simulated_us",
    )  # fmt: skip

    def failures(self, first: int = 3) -> str:
        """The first distinct reasons evaluations failed for, with how often each came."""
        counts: dict[str, int] = {}
        for r in self:
            if r.failed:
                note = r.note or "no reason given"
                counts[note] = counts.get(note, 0) + 1
        shown = [f"{note!r} ({n}×)" for note, n in list(counts.items())[:first]]
        more = f" and {len(counts) - first} other reasons" if len(counts) > first else ""
        return ", ".join(shown) + more

    def all_failed_error(self) -> AllFailedError:
        """The error of a run in which every evaluation failed, naming the first reasons."""
        n = len(self)
        return AllFailedError(f"every evaluation failed ({n} of {n}): {self.failures()}")

    def write_jsonl(self, path) -> None:
        with atomic_open(path, "w", what="history file") as f:
            for r in self:
                f.write(json.dumps(r.to_dict()) + "\n")

    def write_csv(self, path) -> None:
        with atomic_open(path, "w", what="history file") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(self.COLUMNS)
            for r in self:
                w.writerow(_csv_row(r))

    def write(self, path) -> None:
        """By extension: ``.csv`` or JSON lines (anything else)."""
        (self.write_csv if str(path).endswith(".csv") else self.write_jsonl)(path)


def _csv_row(r: Record) -> list:
    d = r.to_dict()
    d["cores_per_population"] = " ".join(map(str, r.cores_per_population))
    return ["" if d[c] is None else d[c] for c in History.COLUMNS]


class HistoryLog:
    """A run's history written as it goes (``evolve --history``).

    Every record is appended and flushed as soon as its evaluation is final, so a run killed
    at any moment leaves a valid history of what it did; a run that ends writes one last
    line saying how: JSON lines ``{"end": "complete", "evaluations": N, "failed": F}``, CSV
    a comment ``# end: complete, N evaluations, F failed``. A history without that line is
    the record of a run that was killed. ``.csv`` by extension, JSON lines otherwise.
    """

    def __init__(self, path, records=()):
        self.path = path
        self.csv = str(path).endswith(".csv")
        self.count = self.failed = 0
        self.ended: str | None = None  # how the run ended, once the last line is written
        self._file = appender(path, what="history file", fresh=True)
        self._writer = csv.writer(self._file, lineterminator="\n") if self.csv else None
        if self.csv:
            self._writer.writerow(History.COLUMNS)
        self.extend(records)

    def _write(self, text: str | None = None, row: list | None = None) -> None:
        try:
            if row is not None:
                self._writer.writerow(row)
            else:
                self._file.write(text)
            self._file.flush()
        except OSError as e:
            raise OutputFileError(f"cannot write history file {self.path}: {reason(e)}") from None

    def add(self, record: Record) -> None:
        """Append one final record (an ``Event``'s)."""
        self.count += 1
        self.failed += record.failed
        if self.csv:
            self._write(row=_csv_row(record))
        else:
            self._write(json.dumps(record.to_dict()) + "\n")

    def extend(self, records) -> None:
        for r in records:
            self.add(r)

    def end(self, how: str) -> None:
        """The run ended (``complete``, ``cancelled`` or ``failed``): the last line."""
        if how not in ENDS:
            raise ValueError(f"a run ends {' or '.join(ENDS)}, not {how!r}")
        if self.csv:
            self._write(f"# end: {how}, {self.count} evaluations, {self.failed} failed\n")
        else:
            self._write(
                json.dumps({"end": how, "evaluations": self.count, "failed": self.failed}) + "\n"
            )
        self.ended = how
        self.close()

    def close(self) -> None:
        self._file.close()

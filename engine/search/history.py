"""A search's history: every ``Record`` of a run, in memory and in its one file format.

Both searches write the same file (``evolve --history``, ``pareto --history``), as CSV
(``.csv``) or JSON lines (any other name), while they run:

* the first line says which search ran and its settings — JSON lines
  ``{"run": "pareto", "settings": {…}}``, CSV a comment ``# pareto run {…}``;
* then one record per evaluation, appended and flushed as soon as it is final — a JSON
  object (``Record.to_dict``), or a CSV row under a header (``columns``: index, generation,
  each objective's value by name, …, cores per population and placement last);
* a run that ends adds one last line saying how (the completion marker) — JSON
  ``{"end": "complete", "evaluations": N, "failed": F}``, CSV
  ``# end: complete, N evaluations, F failed``; ``cancelled`` or ``failed`` likewise.

A history without that last line is the record of a run that was killed: every line
before it is whole but the last, which a kill may cut short. ``read_history`` reads
either encoding back (and a pareto history written before records had their own columns:
its first line and its columns are a subset of these); a resumed run appends to its file
after dropping a cut last line and the end line.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from dataclasses import dataclass, field

from engine.errors import AllFailedError, InputFileError, OutputFileError
from engine.io.files import (
    csv_field_limit,
    csv_rows,
    cut,
    parse_json,
    read_bytes,
    read_text,
    reason,
)
from engine.io.outputs import appender, atomic_open
from engine.search.record import Record

__all__ = [
    "ENDS", "History", "HistoryFile", "HistoryLog", "Run", "check_records", "columns",
    "read_history", "write_history",
]  # fmt: skip

ENDS = ("complete", "cancelled", "failed")  # how a run ended: the last line of its history
END = "# end: "  # a CSV history's last line, once the run ended
WHAT = "history file"

# the CSV columns after the objectives (index, generation, then each objective by name)
FIELDS = (
    "level", "accepted", "failed", "feasible", "cv_limits", "cv_cores", "latency_us",
    "energy_uj", "power_w", "simulated_us", "bottleneck", "cores_used", "note", "codesign",
    "cores_per_population", "placement",
)  # fmt: skip


def columns(names) -> list[str]:
    """A CSV history's header for a run of the objectives ``names``."""
    return ["index", "generation", *names, *FIELDS]


class History(list):
    """A run's Records, in order."""

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


@dataclass(frozen=True)
class Run:
    """What a history's first line says: which search ran (``evolve`` or ``pareto``), what
    it minimized (by name: a CSV history's objective columns) and its settings (a JSON
    object: the search's ``settings()``)."""

    kind: str
    objectives: tuple[str, ...]
    settings: dict = field(default_factory=dict)

    def line(self, csv_file: bool) -> str:
        if csv_file:
            return f"# {self.kind} run {json.dumps(self.settings, sort_keys=True)}\n"
        d = {"run": self.kind, "objectives": list(self.objectives), "settings": self.settings}
        return json.dumps(d, sort_keys=True) + "\n"


def _is_csv(path) -> bool:
    return str(path).lower().endswith(".csv")


def _csv_row(r: Record, names) -> list:
    d = r.to_dict()
    return [
        r.index, r.generation, *(repr(r.objectives.get(n, math.inf)) for n in names), r.level,
        r.accepted, r.failed, int(r.feasible), *r.violations,
        *("" if d[k] is None else d[k]
          for k in ("latency_us", "energy_uj", "power_w", "simulated_us")),
        r.bottleneck, r.cores_used, r.note, " ".join(map(str, r.knobs)),
        " ".join(map(str, r.cores_per_population)), " ".join(map(str, r.placement)),
    ]  # fmt: skip


def _end_line(how: str, count: int, failed: int, csv_file: bool) -> str:
    if csv_file:
        return f"{END}{how}, {count} evaluations, {failed} failed\n"
    return json.dumps({"end": how, "evaluations": count, "failed": failed}) + "\n"


class HistoryLog:
    """A run's history written as it goes (``--history``): the run's line, then each record
    appended and flushed as soon as its evaluation is final, then, when the run ends, the
    line saying how (``end``).

    ``existing``: the history this run continues (``read_history`` of ``path``, a resumed
    pareto run): its cut last line and end line are dropped, and records it already holds
    (by index) are not written again.
    """

    def __init__(self, path, run: Run, records=(), *, existing: HistoryFile | None = None):
        self.path = path
        self.csv = _is_csv(path)
        self.names = tuple(run.objectives)
        self.ended: str | None = None  # how the run ended, once the last line is written
        held = existing.records if existing is not None else []
        self.count, self.failed = len(held), sum(r.failed for r in held)
        self._skip = self.count  # records (by index) the file already holds
        if existing is not None:
            _drop_cut_line(path)
        self._file = appender(path, what=WHAT, fresh=existing is None)
        self._writer = csv.writer(self._file, lineterminator="\n") if self.csv else None
        if existing is None:
            self._write(run.line(self.csv))
            if self.csv:
                self._write(row=columns(self.names))
        self.extend(records)

    def _write(self, text: str | None = None, row: list | None = None) -> None:
        """One line, whole or not at all (``LineFile``: a full disk leaves no half line)."""
        if row is not None:
            self._writer.writerow(row)  # one write of the whole row
        else:
            self._file.write(text)

    def add(self, record: Record) -> None:
        """Append one final record (an ``Event``'s)."""
        if record.index < self._skip:
            return
        self.count += 1
        self.failed += record.failed
        if self.csv:
            self._write(row=_csv_row(record, self.names))
        else:
            self._write(json.dumps(record.to_dict()) + "\n")

    def extend(self, records) -> None:
        for r in records:
            self.add(r)

    def end(self, how: str) -> None:
        """The run ended (``complete``, ``cancelled`` or ``failed``): the last line."""
        if how not in ENDS:
            raise ValueError(f"a run ends {' or '.join(ENDS)}, not {how!r}")
        self._write(_end_line(how, self.count, self.failed, self.csv))
        self.ended = how
        self.close()

    def close(self) -> None:
        self._file.close()


def write_history(path, run: Run, records, end: str | None = "complete") -> None:
    """``records`` as the history ``HistoryLog`` writes, in one go (whole or not at all),
    ending ``end`` (None: no end line, as a run that was killed)."""
    csv_file = _is_csv(path)
    names = tuple(run.objectives)
    with atomic_open(path, "w", what=WHAT) as f:
        f.write(run.line(csv_file))
        w = csv.writer(f, lineterminator="\n")
        if csv_file:
            w.writerow(columns(names))
        for r in records:
            if csv_file:
                w.writerow(_csv_row(r, names))
            else:
                f.write(json.dumps(r.to_dict()) + "\n")
        if end is not None:
            f.write(_end_line(end, len(records), sum(r.failed for r in records), csv_file))


def _drop_cut_line(path) -> None:
    """Cut a history file back to its last whole line (a kill may leave half a line), and
    its end line off (the run goes on)."""
    data = read_bytes(path, WHAT)
    lines = data.splitlines(keepends=True)
    if lines and not lines[-1].endswith(b"\n"):
        lines.pop()
    while lines and (lines[-1].startswith(END.encode()) or lines[-1].startswith(b'{"end"')):
        lines.pop()
    keep = sum(map(len, lines))
    try:
        if keep < len(data):
            os.truncate(path, keep)
    except OSError as e:
        raise OutputFileError(f"cannot write the history file {path}: {reason(e)}") from None


# ------------------------------------------------------------------ reading
def check_records(records, where) -> None:
    """That the records a file holds are a run's, as a run writes them: indices 0, 1, 2 … in
    order, each once (a duplicated row is no second evaluation), no NaN anywhere, and a
    record that says it was evaluated within every constraint has finite objectives and
    plausible figures (a positive latency, energy ≥ 0). ``InputFileError`` naming ``where``
    and the record."""
    for position, r in enumerate(records):
        if r.index != position:
            went = ", ".join(str(q.index) for q in records[max(0, position - 2) : position + 1])
            raise InputFileError(
                f"{where}: its records' indices go …, {went}, where {position} should come"
                + (" (a row written twice?)" if r.index < position else "")
                + ": a history holds each evaluation once, in order; it was changed since "
                "the run wrote it"
            )
        values = {**r.objectives, "latency_us": r.latency_us, "energy_uj": r.energy_uj}
        nan = [k for k, v in values.items() if math.isnan(v)]
        if nan:
            raise InputFileError(
                f"{where}: record {r.index} says {nan[0]} is NaN, which no evaluation gives"
            )
        if r.failed or any(r.violations):
            continue
        # (an older history has no latency_us, energy_uj columns: they read as ∞)
        odd = [k for k, v in r.objectives.items() if not math.isfinite(v)]
        odd += ["latency_us"] if r.latency_us <= 0 else []
        odd += ["energy_uj"] if r.energy_uj < 0 else []
        if odd:
            raise InputFileError(
                f"{where}: record {r.index} was evaluated, yet says {odd[0]} is "
                f"{values[odd[0]]!r}: not a figure an evaluation gives"
            )


@dataclass(frozen=True)
class HistoryFile:
    """What a history file holds: its run, its whole records, how it ended (None: the run
    was killed, or is still running)."""

    run: Run
    records: list
    ended: str | None


def read_history(path) -> HistoryFile:
    """A history file (either encoding) up to its last whole line; ``InputFileError`` for a
    file that is not one, whose first line is damaged, or with a malformed record."""
    text = read_text(path, WHAT)
    if not text.endswith("\n"):  # a kill cut the last line short: it does not count
        text = text[: text.rfind("\n") + 1]
    first, _, rest = text.partition("\n")
    if first.startswith("{"):
        return _read_jsonl(path, first, rest)
    if first.startswith("#"):
        return _read_csv(path, first, rest)
    raise _older(path)


def _older(path) -> InputFileError:
    return InputFileError(
        f"{path}: not the history of a meshscope run (its first line does not say which: a "
        "history written before MeshScope named the run in it cannot be read back)"
    )


def _settings(path, text: str) -> dict:
    try:
        settings = parse_json(text, str(path), line=1)
    except InputFileError:
        raise InputFileError(f"{path}: its first line (the run's settings) is damaged") from None
    if not isinstance(settings, dict):
        raise InputFileError(f"{path}: its first line (the run's settings) is damaged")
    return settings


def _read_jsonl(path, first: str, rest: str) -> HistoryFile:
    head = _settings(path, first)
    if "run" not in head:  # a record: the first line of an older history
        raise _older(path)
    kind, names = head.get("run"), head.get("objectives")
    if not isinstance(kind, str) or not isinstance(names, list):
        raise InputFileError(f"{path}: its first line (the run's settings) is damaged")
    run = Run(kind, tuple(map(str, names)), head.get("settings") or {})
    records, ended = [], None
    for n, line in enumerate(rest.splitlines(), start=2):
        if not line.strip():
            continue
        row = parse_json(line, str(path), line=n)
        if isinstance(row, dict) and "end" in row:
            ended = str(row["end"])
            continue
        try:
            records.append(Record.from_dict(row))
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise InputFileError(
                f"{path}, line {n}: not a history record ({cut(str(e))})"
            ) from None
    return HistoryFile(run, records, ended)


def _read_csv(path, first: str, rest: str) -> HistoryFile:
    words = first[1:].split(maxsplit=2)  # "# pareto run {…}"
    if len(words) < 3 or words[1] != "run":
        raise InputFileError(f"{path}: not the history of a meshscope run (its first line "
                             "does not say which)")  # fmt: skip
    settings = _settings(path, words[2])
    ended = None
    lines = rest.splitlines(keepends=True)
    for line in lines:
        if line.startswith(END):
            ended = line[len(END) :].split(",")[0].strip()
    body = "".join(line for line in lines if not line.startswith("#"))
    with csv_field_limit(len(body)):  # a placement lists every core: its field may be long
        table = list(csv_rows(csv.reader(io.StringIO(body)), str(path)))
    header = table[0] if table else []
    names = _objective_columns(header)
    if names is None:
        raise InputFileError(f"{path}: its second line is not the header of a history")
    run = Run(words[0], names, settings)
    records = []
    for line, row in enumerate(table[1:], start=3):
        if not row:
            continue
        try:
            if len(row) != len(header):
                raise ValueError(f"{len(row)} fields, not {len(header)}")
            records.append(_from_row(dict(zip(header, row, strict=True)), names))
        except ValueError as e:
            raise InputFileError(
                f"{path}, line {line}: not a history row ({cut(str(e))})"
            ) from None
    return HistoryFile(run, records, ended)


def _objective_columns(header) -> tuple[str, ...] | None:
    """The objectives' columns of a CSV header: after index and generation, up to the first
    of the record's own (None: not a history's header)."""
    if header[:2] != ["index", "generation"] or "placement" not in header:
        return None
    names = []
    for name in header[2:]:
        if name in FIELDS:
            return tuple(names)
        names.append(name)
    return None


def _number(text: str, default: float) -> float:
    return default if text == "" else float(text)


def _ints(text: str) -> tuple[int, ...]:
    return tuple(int(c) for c in text.split())


def _from_row(d: dict, names) -> Record:
    """A record from a CSV row (by column; the columns an older history lacks get the
    values of a mapping it did not say more of)."""
    values = {n: float(d[n]) for n in names}
    failed = d.get("failed", "False") == "True"
    cores = _ints(d["cores_per_population"])
    return Record(
        index=int(d["index"]), generation=int(d["generation"]), level=d.get("level", ""),
        latency_us=_number(d.get("latency_us", ""), math.inf),
        energy_uj=_number(d.get("energy_uj", ""), math.inf),
        power_w=_number(d.get("power_w", ""), math.nan),
        cores_used=int(d.get("cores_used") or sum(cores)),
        accepted=d.get("accepted", "False") == "True", failed=failed,
        fitness=math.inf if failed else next(iter(values.values()), math.inf),
        cores_per_population=cores, placement=_ints(d["placement"]),
        bottleneck=d.get("bottleneck", ""), note=d.get("note", ""),
        simulated_us=_number(d.get("simulated_us", ""), math.nan), objectives=values,
        violations=(float(d.get("cv_limits") or 0.0), float(d.get("cv_cores") or 0.0)),
        knobs=_ints(d.get("codesign", "")),
    )  # fmt: skip

"""An evolution's checkpoint: a JSON-lines file that grows by a generation at a time.

The first line is the run's header (format, version, network, hardware, configuration,
layout). Then, for every generation, the lines of its records (``{"record": …}``) and one
line of the search's state after it (``{"state": …}``: generation, phase, random generator,
parent, the number of records so far). A run writes its first generation (and, when it
was resumed, everything it continues from) atomically, then only appends — so keeping a
checkpoint costs in proportion to the new records, not to the whole history — and
flushes after each generation's state line.

A reader takes the last state line it finds and the records before it; what a killed
run wrote after that (an unfinished generation, half a line) is ignored, and the
resumed run evaluates that generation again.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from engine.errors import InputFileError
from engine.io.files import parse_json, read_text
from engine.io.outputs import appender, atomic_open

__all__ = ["FORMAT", "Checkpoint", "CheckpointWriter", "read_checkpoint"]

FORMAT = "meshscope-es-checkpoint"
VERSION = 2


@dataclass(frozen=True)
class Checkpoint:
    """What a checkpoint file holds: its header, the records, the state after the last."""

    header: dict
    records: list  # record dicts
    state: dict


class CheckpointWriter:
    """Writes a run's checkpoint to ``path``, one generation per ``commit``."""

    def __init__(self, path):
        self.path = path
        self._file = None
        self._written = 0  # records already in the file

    def commit(self, header: dict, records: list, state: dict) -> None:
        """The generation just finished: ``records`` is the whole history so far (record
        dicts are made only for the new ones), ``state`` the search's state after it."""
        state = {**state, "records": len(records)}
        if self._file is None:
            with atomic_open(self.path, "w", what="checkpoint") as f:
                f.write(json.dumps(header) + "\n")
                f.write(_lines(records, 0))
                f.write(json.dumps({"state": state}) + "\n")
            self._file = appender(self.path, what="checkpoint")
        else:
            # the generation in one write: whole, or (a full disk) not at all
            self._file.write(_lines(records, self._written) + json.dumps({"state": state}) + "\n")
        self._written = len(records)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def _lines(records, start: int) -> str:
    return "".join(json.dumps({"record": r.to_dict()}) + "\n" for r in records[start:])


def read_checkpoint(path) -> Checkpoint:
    """A checkpoint file's content up to its last whole generation (``InputFileError`` if it
    is not a checkpoint, or has no whole generation yet)."""
    lines = read_text(path, "checkpoint").splitlines()
    if not lines:
        raise InputFileError(f"{path} is empty, not a MeshScope evolution checkpoint")
    rows = []
    for n, line in enumerate(lines, 1):
        try:
            rows.append(parse_json(line, f"checkpoint {path}", line=n))
        except InputFileError:
            if n == len(lines) and n > 1:  # a run killed in the middle of its last line
                break
            raise
    header = rows[0]
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise InputFileError(f"{path} is not a MeshScope evolution checkpoint")
    if header.get("version") == 1:  # one JSON object: header, state and history in one
        return Checkpoint(header, header.get("history"), header)
    records, kept, state = [], [], None
    for n, row in enumerate(rows[1:], 2):
        if not isinstance(row, dict) or not ({"record", "state"} & row.keys()):
            raise InputFileError(f"{path}: line {n} is neither a record nor a state")
        if "record" in row:
            records.append(row["record"])
        else:
            state, kept = row["state"], list(records)
    if state is None:
        raise InputFileError(
            f"{path} holds no whole generation yet (the run stopped before its first ended)"
        )
    return Checkpoint(header, kept, state)

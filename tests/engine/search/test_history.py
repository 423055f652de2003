"""The searches' one history format (``engine.search.history``): both encodings read back
what was written, a killed run's file reads to its last whole line, a resumed run appends
once, an old pareto history still resumes and an older evolve history says what it is."""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import os

import pytest

from engine.errors import InputFileError
from engine.hardware import load_hardware
from engine.search import ESConfig, NestedES
from engine.search.history import HistoryLog, Run, columns, read_history, write_history
from engine.search.pareto import ParetoConfig, ParetoSearch
from engine.search.pareto import read_history as read_pareto_history
from engine.specs import load_network_spec

MLP = "mlp:widths=256-512-256-10"


@pytest.fixture(scope="module")
def mlp():
    return load_network_spec(MLP), load_hardware("mesh:2x2x4")


@pytest.fixture(scope="module")
def evolved(mlp):
    """An evolve run's records, the last one failed with a note CSV must quote."""
    net, hw = mlp
    es = NestedES(net, hw, ESConfig(budget=13, seed=2))
    res = es.run()
    broken = dataclasses.replace(
        res.history[-1], index=13, latency_us=math.inf, energy_uj=math.inf, power_w=math.nan,
        fitness=math.inf, failed=True, accepted=False, objectives={"latency": math.inf},
        note='exit code 2: "quoted", with a comma',
    )  # fmt: skip
    run = Run("evolve", ("latency",), es.settings())
    return run, [*res.history, broken]


@pytest.fixture(scope="module")
def pareto_run(mlp):
    net, hw = mlp
    search = ParetoSearch(net, hw, ParetoConfig(budget=30, seed=4))
    return search, search.run()


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_a_history_reads_back_what_was_written(evolved, tmp_path, suffix):
    run, records = evolved
    path = tmp_path / f"h{suffix}"
    write_history(path, run, records, end="complete")
    lines = path.read_text().splitlines()
    assert len(lines) == 1 + (suffix == ".csv") + len(records) + 1  # run, [header], …, end
    got = read_history(path)
    assert got.run == run and got.ended == "complete"
    if suffix == ".jsonl":  # everything a record holds
        assert got.records == records
        assert json.loads(lines[-2])["latency_us"] is None
        assert json.loads(lines[-1]) == {"end": "complete", "evaluations": 14, "failed": 1}
        return
    assert lines[-1] == "# end: complete, 14 evaluations, 1 failed"
    rows = list(csv.reader(lines[1:-1]))
    assert rows[0] == columns(("latency",))
    for row, r in zip(rows[1:], records, strict=True):
        d = dict(zip(rows[0], row, strict=True))
        assert d["note"] == r.note and d["failed"] == str(r.failed)
        assert d["latency_us"] == ("" if r.failed else repr(r.latency_us))
    for back, r in zip(got.records, records, strict=True):  # the columns a CSV keeps
        for name in ("index", "generation", "level", "fitness", "objectives", "note", "failed",
                     "cores_per_population", "placement", "accepted", "cores_used"):  # fmt: skip
            assert getattr(back, name) == getattr(r, name), name
        assert back.latency_us == r.latency_us or (r.failed and math.isinf(back.latency_us))


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_a_killed_runs_history_reads_to_its_last_whole_line(evolved, tmp_path, suffix):
    run, records = evolved
    path = tmp_path / f"h{suffix}"
    write_history(path, run, records[:9], end=None)  # no end line: the run was killed …
    text = path.read_text()
    path.write_text(text + text.splitlines(keepends=True)[-1][:17])  # … writing a line
    got = read_history(path)
    assert got.ended is None and [r.index for r in got.records] == list(range(9))


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_a_resumed_run_appends_once_after_its_last_whole_line(evolved, tmp_path, suffix):
    """A resumed pareto run appends to its file: a cut line and the end line go, the
    records the file holds are not written again, the end line counts them all."""
    run, records = evolved
    path = tmp_path / f"h{suffix}"
    first = HistoryLog(path, run, records[:2])  # the run's line, then record by record
    first.extend(records[2:6])
    first.end("cancelled")
    assert read_history(path).run == run
    text = path.read_text()
    path.write_text(text + text.splitlines(keepends=True)[-2][:11])  # a half line after it
    log = HistoryLog(path, run, existing=read_history(path))
    log.extend(records)  # the resumed run yields every record again
    log.end("complete")
    got = read_history(path)
    assert [r.index for r in got.records] == list(range(len(records)))
    assert got.ended == "complete"
    ends = [line for line in path.read_text().splitlines() if line.startswith(("# end", '{"end'))]
    assert len(ends) == 1 and ends[0].endswith(("14 evaluations, 1 failed", '"failed": 1}'))


def test_an_old_pareto_history_still_resumes(pareto_run, tmp_path):
    """A history written before records had their own columns: the same first line, the
    objectives, constraints, note, co-design, cores and placement."""
    search, res = pareto_run
    names = res.config.objectives
    path = tmp_path / "old.csv"
    with open(path, "w", newline="") as f:
        f.write("# pareto run " + json.dumps(res.settings, sort_keys=True) + "\n")
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["index", "generation", *names, "cv_limits", "cv_cores", "feasible", "note",
                    "codesign", "cores_per_population", "placement"])  # fmt: skip
        for e in res.evaluations:
            w.writerow([e.index, e.generation, *(repr(e.objectives[n]) for n in names),
                        *e.violations, int(e.feasible), e.note, "",
                        " ".join(map(str, e.cores_per_population)),
                        " ".join(map(str, e.placement))])  # fmt: skip
        f.write("# end: complete, 30 evaluations\n")
    known, rows = read_pareto_history(path, names, search.settings())
    assert rows == 30 and len(known) == len({k for k in known})
    again = ParetoSearch(search.network, search.hardware, res.config, known=known)
    out = again.run()
    assert again.reused == sum(e.feasible for e in res.evaluations)
    assert [e.objectives for e in out.evaluations] == [e.objectives for e in res.evaluations]


def test_an_older_evolve_history_says_it_is_of_an_older_format(evolved, tmp_path):
    """Before the first line named the run, an evolve history began with its header (CSV)
    or its first record (JSON lines)."""
    _, records = evolved
    old_csv = tmp_path / "old.csv"
    old_csv.write_text("index,generation,level,latency_us\n0,0,init,2.5\n")
    old_jsonl = tmp_path / "old.jsonl"
    old_jsonl.write_text(json.dumps(records[0].to_dict()) + "\n")
    for path in (old_csv, old_jsonl):
        with pytest.raises(InputFileError, match="written before MeshScope named the run"):
            read_history(path)


def test_an_evolve_history_does_not_resume_a_pareto_run(evolved, tmp_path):
    run, records = evolved
    path = tmp_path / "h.csv"
    write_history(path, run, records)
    with pytest.raises(InputFileError, match="history of an evolve run, not of a pareto run"):
        read_pareto_history(path, ("latency",))


def test_a_record_of_an_older_checkpoint_reads_with_its_objective(evolved):
    """Records written before they said their objectives, violations, co-design and metrics
    read with the defaults (``NestedES.resume`` gives them the checkpoint's objective)."""
    _, records = evolved
    old = {k: v for k, v in records[0].to_dict().items()
           if k not in ("objectives", "violations", "hardware", "knobs", "metrics")}  # fmt: skip
    back = type(records[0]).from_dict(old)
    assert back.objectives == {} and back.violations == (0.0, 0.0) and back.metrics == {}
    assert back.latency_us == records[0].latency_us


# ------------------------------------------------------------------ a full disk
@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_a_full_disk_is_one_error_and_leaves_whole_lines(evolved, tmp_path, suffix):
    """The log's file descriptor is pointed at /dev/full (every write: ENOSPC, from the
    kernel) once a few records are down: the next record is an ``OutputFileError`` naming
    the file, nothing of it reaches the file, and closing it raises nothing (it used to
    re-flush its buffer in close(): a second ENOSPC, a traceback, half a line)."""
    from engine.errors import OutputFileError

    run, records = evolved
    path = tmp_path / f"h{suffix}"
    log = HistoryLog(path, run, records[:4])
    before = path.read_bytes()
    full = os.open("/dev/full", os.O_WRONLY)
    os.dup2(full, log._file.fileno())  # the disk is full from now on
    os.close(full)
    with pytest.raises(OutputFileError) as info:
        log.add(records[4])
    assert str(info.value) == f"cannot write history file {path}: No space left on device"
    log.close()  # nothing buffered: nothing to flush, no second error
    assert path.read_bytes() == before
    got = read_history(path)
    assert [r.index for r in got.records] == [r.index for r in records[:4]] and got.ended is None


def test_a_write_cut_short_by_the_disk_is_cut_back_off(evolved, tmp_path):
    """A write the disk takes only part of (the file-size limit stands in for the disk:
    RLIMIT_FSIZE makes write() take what fits, then fail) leaves no half line: every line
    of the file is whole and the file reads back."""
    import subprocess
    import sys

    run, records = evolved
    path = tmp_path / "h.jsonl"
    write_history(path, run, records[:3], end=None)
    size = path.stat().st_size + 100  # room for the first line and 3 records, and a bit
    path.unlink()
    child = f"""
import dataclasses, json, resource, sys
from engine.errors import OutputFileError
from engine.search.history import HistoryLog, Run
from engine.search.record import Record
resource.setrlimit(resource.RLIMIT_FSIZE, ({size}, {size}))
run = Run(**json.loads(sys.argv[2]))
records = [Record.from_dict(d) for d in json.loads(sys.argv[3])]
log = HistoryLog(sys.argv[1], run, records[:3])
try:
    log.extend(records[3:])
except OutputFileError as e:
    print(e)
log.close()
"""
    rows = json.dumps([r.to_dict() for r in records])
    head = json.dumps({"kind": run.kind, "objectives": run.objectives, "settings": run.settings})
    done = subprocess.run([sys.executable, "-c", child, str(path), head, rows],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"cannot write history file {path}: File too large"), done
    text = path.read_text()
    assert text.endswith("\n") and path.stat().st_size < size  # the part that fit: cut off
    got = read_history(path)
    assert [r.index for r in got.records] == [r.index for r in records[:3]]

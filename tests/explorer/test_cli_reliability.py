"""The command line against hostile or unlucky input: one line, exit 2, nothing lost.

* Every numeric option is checked where it is read: a negative seed, zero workers, a
  time-out that is not a finite positive number, a port outside 1–65535, a packet of no
  flits — each a one-line error naming the option, never a traceback from deep inside.
* An evaluator command that cannot be read (unbalanced quotes) is a one-line error.
* A run in which every evaluation fails still writes its history, each record with its
  reason, and its error names the first reasons.
* Hostile files and specs: a FIFO or /dev/zero named as a file, an archive or a header that
  declares more than the limits, documents nested deeper than Python's parsers go, CSV
  fields longer than the csv module reads, specs asking for astronomical sizes or a
  negative seed — each one line, at once, before anything that large is allocated.
"""

from __future__ import annotations

import json
import os
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from explorer.cli import main, origin

NET = "mlp:widths=256-512-256-10"


def run_cli(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def run_error(capsys, *args) -> str:
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    return err


BAD_NUMBERS = [
    (["evaluate", "--placement", "random", "--seed", "-3"], "--seed: must be ≥ 0, not -3"),
    (["map", "--seed", "x"], "--seed: 'x' is not a whole number"),
    (["evolve", "--seed", "-1"], "--seed: must be ≥ 0"),
    (["evolve", "--workers", "0"], "--workers: must be from 1 to 256, not 0"),
    (["evolve", "--budget", "0"], "--budget: must be from 1 to"),
    (["evolve", "--lambda-part", "-2"], "--lambda-part: must be from 1 to"),
    (["evolve", "--init-k", "-1"], "--init-k: must be ≥ 0"),
    (["evolve", "--eval-timeout", "0"], "--eval-timeout: must be a positive number of seconds"),
    (["evolve", "--eval-timeout", "nan"], "--eval-timeout: must be a positive number"),
    (["evolve", "--eval-timeout", "inf"], "--eval-timeout: must be a positive number"),
    (["evolve", "--eval-timeout", "soon"], "--eval-timeout: 'soon' is not a number of seconds"),
    (["simulate", "--pattern", "uniform", "--packet", "0"], "--packet: must be from 1 to 255"),
    (["simulate", "--pattern", "uniform", "--packet", "256"], "--packet: must be from 1 to 255"),
    (["simulate", "--pattern", "uniform", "--window", "-1"], "--window: must be from 1 to"),
    (["simulate", "--pattern", "uniform", "--window", "0"], "--window: must be from 1 to"),
    (["simulate", "--pattern", "uniform", "--cycles", "0"], "--cycles: must be from 1 to"),
    (["simulate", "--pattern", "uniform", "--warmup", "-5"], "--warmup: must be from 0 to"),
    (["sweep", "--rates", "0.1", "--seed", "-1"], "--seed: must be ≥ 0"),
    (["sweep", "--rates", "0.1", "--workers", "0"], "--workers: must be from 1 to"),
    (["serve", "--port", "0"], "--port: must be from 1 to 65535, not 0"),
    (["serve", "--port", "70000"], "--port: must be from 1 to 65535"),
]


@pytest.mark.parametrize("args, words", BAD_NUMBERS, ids=[" ".join(a) for a, _ in BAD_NUMBERS])
def test_a_bad_number_is_one_line_naming_the_option(capsys, args, words):
    assert words in run_error(capsys, *args)


def test_an_unreadable_evaluator_command_is_one_line(capsys):
    code, _, err = run_cli(
        capsys, "evolve", "--network", NET, "--budget", "3", "--evaluator-cmd", "python 'x"
    )
    assert code == 2 and err.count("\n") == 1
    assert "cannot read the evaluator command" in err and "No closing quotation" in err


def test_every_evaluation_failing_still_writes_the_history_with_reasons(capsys, tmp_path):
    script = tmp_path / "fail.py"
    script.write_text("import sys\nsys.stdin.read()\nsys.exit('no board attached')\n")
    history = tmp_path / "h.jsonl"
    code, out, err = run_cli(
        capsys, "evolve", "--network", NET, "--budget", "6", "--history", str(history),
        "--evaluator-cmd", f"{sys.executable} {script}",
    )  # fmt: skip
    assert code == 2 and out == ""
    assert err.count("\n") == 1
    assert "every evaluation failed (6 of 6)" in err
    assert "'exit code 1: no board attached' (6×)" in err and str(history) in err
    run, *records, end = [json.loads(line) for line in history.read_text().splitlines()]
    assert run["run"] == "evolve" and end == {"end": "failed", "evaluations": 6, "failed": 6}
    assert len(records) == 6
    assert all(r["failed"] and r["note"] == "exit code 1: no board attached" for r in records)


def test_different_failure_reasons_are_named_first_ones_first(capsys, tmp_path):
    script = tmp_path / "fail.py"
    script.write_text(
        "import json, sys\nm = json.load(sys.stdin)\n"
        "sys.exit('board %d busy' % (len(m['placement']) % 2))\n"
    )
    code, _, err = run_cli(
        capsys, "evolve", "--network", NET, "--budget", "8", "--seed", "1",
        "--evaluator-cmd", f"{sys.executable} {script}",
    )  # fmt: skip
    assert code == 2
    reasons = [w for w in ("board 0 busy", "board 1 busy") if w in err]
    assert reasons and "every evaluation failed (8 of 8)" in err


# ------------------------------------------------------------------ hardware files
PRESET = (Path(__file__).parents[2] / "engine" / "presets" / "loihi2.toml").read_text()
BAD_TOML = [  # fmt: skip
    (
        "routers = { value = [4, 8]",
        "routers = { value = [100000, 100000]",
        "40,000,000,000 cores is more than",
    ),
    (
        "dendop_ns = { value = 1.1,",
        "dendop_ns = { value = nan,",
        "[model]: dendop_ns must be a finite number ≥ 0",
    ),
    (
        "synop_ns = { value = 0.2,",
        "synop_ns = { value = -0.2,",
        "synop_ns must be a finite number ≥ 0, not -0.2",
    ),
    (
        "cores_per_router = { value = 4,",
        'cores_per_router = { value = "4",',
        "must be a whole number, not '4'",
    ),
    (
        "cores_per_router = { value = 4,",
        "cores_per_router = { value = true,",
        "must be a whole number, not True",
    ),
    ("chips = { value = [1, 1]", "chips = { value = 2", "chips must be [x, y], not 2"),
    (
        "neurons = { value = 8192,",
        "neurons = { value = 8192.5,",
        "[limits]: neurons must be a whole number",
    ),
    ("[links]", "[links]\nspeed = 3", "[links]: unknown keys ['speed']"),
    (
        "barrier_us = { value = 2.0,",
        'barrier_us = { value = 2.0, unit = "us",',
        '[model]: barrier_us must be a value or { value = …, source = "…" }',
    ),
]


@pytest.mark.parametrize("old, new, words", BAD_TOML, ids=[n for _, n, _ in BAD_TOML])
def test_a_bad_hardware_file_is_one_line_naming_the_key(capsys, tmp_path, old, new, words):
    assert old in PRESET
    path = tmp_path / "hw.toml"
    path.write_text(PRESET.replace(old, new, 1))
    code, _, err = run_cli(capsys, "evaluate", "--network", NET, "--hardware", str(path))
    assert code == 2 and err.count("\n") == 1
    assert words in err and str(path) in err


def test_an_init_k_beyond_the_hardware_is_refused_naming_the_largest(capsys):
    args = ("evolve", "--network", NET, "--hardware", "mesh:2x2", "--budget", "3")
    code, _, err = run_cli(capsys, *args, "--init-k", "1000")
    assert code == 2 and err.count("\n") == 1
    largest = int(err.split("choose --init-k ")[1].split()[0])
    assert "--init-k 1000" in err and 0 <= largest < 1000
    code, out, _ = run_cli(capsys, *args, "--init-k", str(largest))
    assert code == 0 and "best:" in out
    code, _, _ = run_cli(capsys, *args, "--init-k", str(largest + 1))
    assert code == 2


# ------------------------------------------------------------------ outputs that destroy inputs
def run_any(capsys, *args) -> tuple[int, str, str]:
    """Exit code, stdout and stderr, an argparse error (SystemExit) included."""
    try:
        code = main([str(a) for a in args])
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


def with_network(argv: list[str]) -> list[str]:
    """``argv`` with ``--network NET`` when its command reads a network and names none."""
    reads = argv[0] not in ("sweep", "calibrate", "microbench") and argv[:2] != ["mosaic", "demo"]
    if not reads or "--network" in argv or "--pattern" in argv:
        return argv
    return [*argv, "--network", NET]


def contents(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


SAME_PATH = [  # (argv; "in" names an existing input file, "out" a fresh path; the words)
    (["evolve", "--history", "in.json", "--start", "in.json"], "would destroy it"),
    (["evolve", "--history", "out.jsonl", "--checkpoint", "out.jsonl"], "one would overwrite"),
    (["evolve", "--history", "out.jsonl", "--checkpoint", "./sub/../out.jsonl"], "one would"),
    (["evolve", "--out", "in.json", "--start", "in.json"], "would destroy it"),
    (["evolve", "--out", "link.json", "--start", "in.json"], "would destroy it"),  # hard link
    (["evolve", "--out", "sym.json", "--start", "in.json"], "would destroy it"),  # symlink
    (["evolve", "--history", "in.json", "--resume", "in.json"], "one would overwrite"),
    (["evolve", "--out", "in.json", "--rates", "in.json"], "would destroy it"),
    (["pareto", "--out", "in.json", "--start", "in.json"], "would destroy it"),
    (["pareto", "--history", "in.csv", "--rates", "in.csv"], "would destroy it"),
    (["pareto", "--out", "in.json", "--resume", "in.csv"], None),  # different files: runs on
    (["evaluate", "--save", "in.json", "--mapping", "in.json"], "would destroy it"),
    (["map", "--save", "in.json", "--partition", "file:in.json"], "would destroy it"),
    (["convert", "--network", "in.npz", "--out", "in.npz"], "would destroy it"),
    (["simulate", "--save", "in.json", "--mapping", "in.json"], "would destroy it"),
    (["simulate", "--save-trace", "in.npz", "--network", "in.npz"], "would destroy it"),
    (["simulate", "--export-noxim", "p.trace", "--export-booksim", "p"], "one would overwrite"),
    (["sweep", "--rates", "0.1", "--csv", "in.csv", "--pattern", "matrix:file=in.csv"],
     "would destroy it"),
    (["calibrate", "--measurements", "in.csv", "--hardware", "in.toml", "--out", "in.toml"],
     "would destroy it"),
    (["mosaic", "rewire", "--network", "in.npz", "--target", "1", "--out", "in.npz"],
     "would destroy it"),
]  # fmt: skip


@pytest.mark.parametrize(("argv", "words"), SAME_PATH, ids=[" ".join(a) for a, _ in SAME_PATH])
def test_an_output_that_is_an_input_or_another_output_is_refused_before_any_work(
    capsys, tmp_path, monkeypatch, argv, words
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    for name in ("in.json", "in.csv", "in.npz", "in.toml"):
        (tmp_path / name).write_text(f"the user's {name}, not to be lost\n")
    os.link(tmp_path / "in.json", tmp_path / "link.json")
    (tmp_path / "sym.json").symlink_to(tmp_path / "in.json")
    before = contents(tmp_path)
    code, out, err = run_any(capsys, *with_network(argv))
    if words is None:  # not the same file: refused for another reason (the bad input file)
        assert "would destroy" not in err and "one would overwrite" not in err
        return
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert words in err and "Traceback" not in err
    assert contents(tmp_path) == before  # nothing written, nothing lost


def test_a_measured_runs_hardware_file_is_not_overwritten_by_calibrate(capsys, tmp_path):
    preset = tmp_path / "board.toml"
    preset.write_text(PRESET)
    runs = tmp_path / "runs.csv"
    runs.write_text("network,hardware,partition,placement,measured_us\n"
                    "mb-dendop:N=512,board.toml,natural,packed-row,2.5\n")  # fmt: skip
    code, _, err = run_any(capsys, "calibrate", "--measurements", runs, "--out", preset,
                           "--no-simulator")  # fmt: skip
    assert code == 2 and "would destroy it" in err and "runs.csv:2" in err
    assert preset.read_text() == PRESET


# ------------------------------------------------------------------ resuming with other settings
@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    path = tmp_path_factory.mktemp("resume") / "run.ckpt"
    code = main(["evolve", "--network", NET, "--budget", "12", "--seed", "2", "--checkpoint",
                 str(path)])  # fmt: skip
    assert code == 0
    return path


RESUME_CONFLICTS = [
    (["--seed", "3"], "--seed 3: the checkpoint {ckpt} is a run of --seed 2"),
    (["--lambda-part", "8"], "--lambda-part 8: the checkpoint {ckpt} is a run of --lambda-part 4"),
    (["--lambda-place", "1"],
     "--lambda-place 1: the checkpoint {ckpt} is a run of --lambda-place 4"),
    (["--no-reorder"], "--no-reorder: the checkpoint {ckpt} is a run of reordering"),
    (["--no-elitism"], "--no-elitism: the checkpoint {ckpt} is a run of elitism"),
    (["--objective", "energy"],
     "--objective energy: the checkpoint {ckpt} is a run of --objective latency"),
    (["--init-k", "0"], "--init-k 0: the checkpoint {ckpt} is a run of --init-k 2"),
    (["--seed", "0", "--lambda-part", "2"],
     "--seed 0, --lambda-part 2: the checkpoint {ckpt} is a run of --seed 2, --lambda-part 4"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("extra", "words"), RESUME_CONFLICTS, ids=[" ".join(e) for e, _ in RESUME_CONFLICTS]
)
def test_resume_refuses_settings_other_than_its_checkpoints(capsys, checkpoint, extra, words):
    before = checkpoint.read_text()
    code, out, err = run_any(capsys, "evolve", "--network", NET, "--budget", "20", "--resume",
                             checkpoint, *extra)  # fmt: skip
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert words.format(ckpt=checkpoint) in err and "leave" in err
    assert checkpoint.read_text() == before


def test_resume_takes_the_settings_it_holds_given_again(capsys, checkpoint, tmp_path):
    copy = tmp_path / "run.ckpt"
    copy.write_text(checkpoint.read_text())
    same = ["--seed", "2", "--lambda-part", "4", "--objective", "latency"]
    code, _, err = run_any(capsys, "evolve", "--network", NET, "--budget", "20", "--resume", copy,
                           *same)  # fmt: skip
    assert code == 0, err


# ------------------------------------------------------------------ counts have upper bounds
RUNAWAYS = [
    (["sweep", "--rates", "0:1:1e-9"], "ask for 1,000,000,000 runs, more than 1,000"),
    (["sweep", "--rates", ",".join(["0.1"] * 1001)], "1,001 rates are more than 1,000 runs"),
    (["sweep", "--rates", "0.1", "--workers", "100000"], "--workers: must be from 1 to 256"),
    (["evolve", "--budget", "100000000"], "--budget: must be from 1 to 100000"),
    (["evolve", "--lambda-part", "1000000"], "--lambda-part: must be from 1 to 10000"),
    (["evolve", "--lambda-place", "1000000"], "--lambda-place: must be from 1 to 10000"),
    (["evolve", "--workers", "1000000"], "--workers: must be from 1 to 256"),
    (["pareto", "--budget", "100000000"], "--budget: must be from 1 to 100000"),
    (["pareto", "--population", "1000000"], "--population: must be from 2 to 10000"),
    (["pareto", "--offspring", "1000000"], "--offspring: must be from 1 to 10000"),
    (["pareto", "--workers", "1000000"], "--workers: must be from 1 to 256"),
    (["mosaic", "requirements", "--target", "1", "--networks", "10000000"],
     "--networks: must be from 2 to 10000"),
    (["simulate", "--pattern", "uniform", "--cycles", "10000000000"], "--cycles: must be from 1"),
    (["simulate", "--pattern", "uniform", "--warmup", "10000000000"], "--warmup: must be from 0"),
    (["simulate", "--pattern", "uniform", "--mesh", "256x256", "--rate", "1", "--walk",
      "slowest"], "more than the 5,000,000 a run may keep for a trace or a walk"),
    (["simulate", "--pattern", "uniform", "--mesh", "64x64", "--rate", "0.01", "--save-trace",
      "t.npz", "--window", "1"], "--window 1 records up to"),
    (["simulate", "--pattern", "uniform", "--mesh", "9" * 5000 + "x2"], "--mesh is WIDTHxHEIGHT"),
    (["simulate", "--pattern", "uniform", "--credit-delay", "1000000000"],
     "noc credit_delay must be at most 1,000"),
    (["simulate", "--pattern", "uniform", "--alloc-iters", "100000000"],
     "noc alloc_iters must be at most 64"),
]  # fmt: skip


@pytest.mark.parametrize(("argv", "words"), RUNAWAYS, ids=[" ".join(a)[:60] for a, _ in RUNAWAYS])
def test_a_count_beyond_its_bound_is_refused_before_any_work(capsys, tmp_path, monkeypatch,
                                                             argv, words):  # fmt: skip
    monkeypatch.chdir(tmp_path)
    code, out, err = run_any(capsys, *argv)
    assert code == 2 and out == "" and err.count("\n") == 1, err[:300]
    assert words in err
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------ nothing accepted silently
EMPTY = [
    ["info", "--network", ""],
    ["evaluate", "--network", " "],
    ["evaluate", "--hardware", ""],
    ["evaluate", "--partition", ""],
    ["evaluate", "--placement", "  "],
    ["evaluate", "--mapping", ""],
    ["evolve", "--evaluator-cmd", ""],
    ["pareto", "--evaluator-cmd", " "],
    ["pareto", "--objectives", ""],
    ["simulate", "--split", ""],
    ["sweep", "--rates", "0.1", "--pattern", ""],
    ["mosaic", "check", "--hardware", ""],
    ["serve", "--network", ""],
    ["serve", "--allow-files", ""],
]


@pytest.mark.parametrize("argv", EMPTY, ids=[" ".join(a) for a in EMPTY])
def test_an_empty_value_is_refused_not_taken_for_the_default(capsys, argv):
    code, out, err = run_any(capsys, *argv)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert f"argument {argv[-2]}" in err and "is empty" in err


@pytest.mark.parametrize("value", ["evil", "evil:", "evil:0", "evil:70000", "http://evil:5006",
                                   "*:5006", "evil:5006/x", ":5006"])  # fmt: skip
def test_an_allowed_origin_needs_host_and_port(capsys, value):
    err = run_error(capsys, "serve", "--allow-origin", value)
    assert "--allow-origin" in err and "is not HOST:PORT" in err


@pytest.mark.parametrize(("value", "taken"), [("Lecture-Room.example.org:5006",
                         "lecture-room.example.org:5006"), ("[::1]:8080", "[::1]:8080"),
                         ("10.0.0.7:5006", "10.0.0.7:5006")])  # fmt: skip
def test_an_allowed_origin_with_host_and_port_is_taken(value, taken):
    assert origin(value) == taken


WRONG_SUFFIX = [  # an output named for a format other than the one it is written in
    (["evolve", "--history", "h.txt"], "must end in .csv, .jsonl, .ndjson or .json"),
    (["evolve", "--checkpoint", "c.csv"], "must end in .ckpt, .jsonl or .json"),
    (["evolve", "--out", "best.npz"], "must end in .json"),
    (["pareto", "--out", "front.csv"], "must end in .json"),
    (["pareto", "--history", "h.txt"], "must end in .csv, .jsonl, .ndjson or .json"),
    (["evaluate", "--save", "m.toml"], "must end in .json"),
    (["simulate", "--pattern", "uniform", "--save-trace", "t.txt"], "must end in .npz"),
    (["simulate", "--export-noxim", "table.npz"], ".npz says another format"),
    (["sweep", "--rates", "0.1", "--csv", "s.txt"], "must end in .csv"),
    (["sweep", "--rates", "0.1", "--figure", "s.gif"], "must end in .png, .svg or .pdf"),
    (["microbench", "--out", "runs.json"], "must end in .csv"),
    (["convert", "--out", "net.txt"], "must end in .hgr or .npz"),
    (["mosaic", "demo", "--figure", "d.gif"], "must end in .png, .svg or .pdf"),
]


@pytest.mark.parametrize(
    ("argv", "words"), WRONG_SUFFIX, ids=[" ".join(a) for a, _ in WRONG_SUFFIX]
)
def test_an_output_named_for_another_format_is_refused(capsys, tmp_path, monkeypatch, argv,
                                                       words):  # fmt: skip
    monkeypatch.chdir(tmp_path)
    code, out, err = run_any(capsys, *with_network(argv))
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert words in err and argv[-1] in err
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------ hostile files and specs
SMALL = "mlp:widths=8-8"


def one_line(code, err) -> str:
    assert code == 2 and err.startswith("meshscope: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    return err


def test_a_partition_read_from_dev_zero_is_refused_at_once(capsys):
    """``file:/dev/zero`` was read without bound until memory ran out."""
    code, _, err = run_cli(capsys, "evaluate", "--network", SMALL, "--partition", "file:/dev/zero")
    assert "/dev/zero: it is a device, not a file" in one_line(code, err)


@pytest.mark.parametrize("command", ["evaluate", "map"])
def test_a_partition_read_from_a_fifo_is_refused_without_waiting(
    capsys, tmp_path, specials, command
):
    """``file:FIFO`` blocked for ever (and, sent to the server, froze it)."""
    fifo = specials.make(tmp_path / "blocks.part", "fifo")
    code, _, err = run_cli(capsys, command, "--network", SMALL, "--partition", f"file:{fifo}")
    assert f"{fifo}: it is a FIFO" in one_line(code, err)


def test_a_network_archive_that_inflates_beyond_the_limits_is_refused(capsys, tmp_path):
    arrays = {"indptr": np.zeros(3, np.int64), "indices": np.zeros(0, np.int64)}
    arrays |= {"population": np.zeros(2, np.int32), "rate": np.zeros(2)}
    path = tmp_path / "bomb.npz"
    np.savez_compressed(path, **arrays, meta=np.array("x" * 2**23))  # 32 MiB inflated
    assert path.stat().st_size < 2**20
    code, _, err = run_cli(capsys, "info", "--network", str(path))
    assert "array 'meta' inflates to 32.0 MiB" in one_line(code, err)


def test_an_hgr_header_declaring_more_vertices_than_memory_holds_is_refused(capsys, tmp_path):
    path = tmp_path / "lie.hgr"
    path.write_text("1 200000000\n1 2\n")  # 15 bytes (> 6 GB before it was refused)
    code, _, err = run_cli(capsys, "info", "--network", str(path))
    assert "declares 200,000,000 vertices; at most 50,000,000" in one_line(code, err)


def deep_json(tmp_path, name: str) -> Path:
    path = tmp_path / name
    path.write_text('{"format": ' + "[" * 50_000 + "]" * 50_000 + "}")
    return path


@pytest.mark.parametrize(
    "args",
    [
        ["evaluate", "--network", SMALL, "--mapping", "{deep}"],
        ["evolve", "--network", SMALL, "--budget", "3", "--start", "{deep}"],
        ["pareto", "--network", SMALL, "--budget", "3", "--start", "{deep}"],
    ],
    ids=["evaluate --mapping", "evolve --start", "pareto --start"],
)
def test_a_mapping_nested_deep_is_one_line(capsys, tmp_path, args):
    deep = deep_json(tmp_path, "m.json")
    code, _, err = run_cli(capsys, *[a.format(deep=deep) for a in args])
    assert f"{deep}: its values nest more than 100 levels deep" in one_line(code, err)


def test_a_checkpoint_nested_deep_is_one_line(capsys, tmp_path):
    deep = deep_json(tmp_path, "run.ckpt")
    code, _, err = run_cli(capsys, "evolve", "--network", SMALL, "--resume", str(deep))
    assert "line 1: its values nest more than 100 levels" in one_line(code, err)


def test_a_pareto_history_nested_deep_is_one_line(capsys, tmp_path):
    path = tmp_path / "h.csv"
    path.write_text("# pareto run " + "[" * 50_000 + "]" * 50_000 + "\nindex\n")
    code, _, err = run_cli(capsys, "pareto", "--network", SMALL, "--resume", str(path))
    assert "its first line (the run's settings) is damaged" in one_line(code, err)


def test_a_preset_nested_deep_is_one_line(capsys, tmp_path):
    path = tmp_path / "hw.toml"
    path.write_text("x = " + "[" * 50_000 + "]" * 50_000 + "\n" + PRESET)
    code, _, err = run_cli(capsys, "evaluate", "--network", SMALL, "--hardware", str(path))
    assert f"{path}: its values nest too deep to read" in one_line(code, err)


@pytest.mark.parametrize(
    ("option", "header"),
    [("--rates", "population,rate"), ("--measurements", "mapping,measured_us")],
)
def test_a_csv_field_longer_than_the_csv_module_reads_is_one_line(capsys, tmp_path, option, header):
    path = tmp_path / "t.csv"
    path.write_text(f"{header}\n" + "x" * 200_000 + ",1\n")
    command = ["info", "--network", SMALL] if option == "--rates" else ["validate"]
    code, _, err = run_cli(capsys, *command, option, str(path))
    assert f"{path}:2: a field of more than 131,072 characters" in one_line(code, err)


ASTRONOMICAL = [
    (["info", "--network", "rand:n=1000000000000"], "too many neurons (1,000,000,000,000;"),
    (["info", "--network", "qubo:n=10000000000,density=1e-15"], "too many neurons"),
    (["info", "--network", "mlp:widths=100000000000-1000000"], "too many neurons"),
    (["info", "--network", "linear-tiled-identity:M=100000,N=100000"], "too many neurons"),
    (["info", "--network", "mlp:widths=20000-20000,density=0.001"], "400,000,000 neuron pairs"),
    (["info", "--network", "mlp:widths=" + "-".join(["2"] * 2000)], "2000 layers; at most 1024"),
    (["evaluate", "--network", SMALL, "--hardware", "mesh:100000x100000"], "is more than"),
    (["info", "--network", "rand:n=100,seed=-1"], "rand: seed=-1 must be a whole number ≥ 0"),
    (["info", "--network", "qubo:seed=-5"], "qubo: seed=-5 must be a whole number ≥ 0"),
    (
        ["simulate", "--pattern", "randperm:seed=-1", "--mesh", "4x4", "--cycles", "100"],
        "randperm seed -1 must be a whole number ≥ 0",
    ),
]


@pytest.mark.parametrize(("args", "words"), ASTRONOMICAL, ids=[a[-1][:40] for a, _ in ASTRONOMICAL])
def test_a_spec_asking_for_too_much_or_a_negative_seed_is_refused_before_work(capsys, args, words):
    tracemalloc.start()
    try:
        code, _, err = run_cli(capsys, *args)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert words in one_line(code, err)
    assert peak < 64 * 2**20, f"{peak / 2**20:.0f} MiB before refusing"


# ------------------------------------------------------------------ files of another version
@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (lambda row: {"record": {**row["record"], "zzz": 1}} if "record" in row else row,
         "its record 0: a record has unknown field 'zzz'"),
        (lambda row: {**row, "config": {**row["config"], "speed": 3}} if "config" in row else row,
         "its configuration has unknown field 'speed'"),
        (lambda row: {"record": {k: v for k, v in row["record"].items() if k != "placement"}}
         if "record" in row else row, "its record 0: a record lacks the field 'placement'"),
    ],
    ids=["record", "configuration", "missing"],
)  # fmt: skip
def test_a_checkpoint_with_an_unknown_key_says_which_key_of_which_file(capsys, checkpoint, tmp_path,
                                                                       edit, words):  # fmt: skip
    """It said "TypeError: Record.__init__() got an unexpected keyword argument"."""
    path = tmp_path / "run.ckpt"
    rows = [edit(json.loads(line)) for line in checkpoint.read_text().splitlines()]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, out, err = run_any(capsys, "evolve", "--network", NET, "--resume", path)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert str(path) in err and words in err
    assert "TypeError" not in err and "__init__" not in err


def test_a_history_record_with_an_unknown_key_says_which_key(capsys, tmp_path):
    history = tmp_path / "h.jsonl"
    code = main(["pareto", "--network", NET, "--budget", "6", "--history", str(history)])
    assert code == 0
    lines = history.read_text().splitlines()
    lines[1] = json.dumps({**json.loads(lines[1]), "zzz": 1})
    history.write_text("\n".join(lines) + "\n")
    capsys.readouterr()
    code, _, err = run_any(capsys, "pareto", "--network", NET, "--budget", "12", "--resume",
                           history)  # fmt: skip
    assert code == 2 and err.count("\n") == 1
    assert f"{history}, line 2" in err and "unknown field 'zzz'" in err


# ------------------------------------------------------------------ sizes checked before building
HUGE = "rand:n=50000000,card=4"  # within the generators' bounds: 8.7 GB after 60 s of building

TOO_LARGE_FOR_THE_HARDWARE = [
    (["evaluate", "--network", HUGE], "need at least 6,104 cores of 8,192 neurons; loihi2 has 128"),
    (["evaluate", "--network", HUGE, "--rates", "{rates}"], "need at least 6,104 cores"),
    (["evaluate", "--network", HUGE, "--expand"], "need at least 6,104 cores"),
    (["map", "--network", HUGE], "need at least 6,104 cores"),
    (["simulate", "--network", HUGE], "need at least 6,104 cores"),
    (["evolve", "--network", HUGE, "--budget", "3"], "need at least 6,104 cores"),
    (["pareto", "--network", HUGE, "--budget", "3"], "need at least 6,104 cores"),
    (["spread", "--network", HUGE], "need at least 6,104 cores"),
    (["mosaic", "check", "--network", HUGE], "mosaic-8x8 has 64"),
    (["evaluate", "--network", "qubo:n=2000000,density=1e-9", "--hardware", "mesh:4x4"],
     "2,000,002 neurons on cores"),
    (["evaluate", "--mapping", "{mapping}"], "places 1 partition, which holds at most 8,192"),
    (["evaluate", "--mapping", "{mapping}", "--network", HUGE], "places 1 partition"),
    (["simulate", "--mapping", "{mapping}"], "places 1 partition"),
]  # fmt: skip


@pytest.mark.parametrize(("argv", "words"), TOO_LARGE_FOR_THE_HARDWARE,
                         ids=[" ".join(a[:3]) for a, _ in TOO_LARGE_FOR_THE_HARDWARE])  # fmt: skip
def test_a_network_too_large_for_its_hardware_or_mapping_is_refused_before_it_is_built(
    capsys, tmp_path, argv, words
):
    """A 1 KB mapping naming rand:n=50000000,card=4 took 8.7 GB within 60 s: the network
    was generated before anything checked it could be that mapping's, or fit the hardware."""
    small = tmp_path / "small.json"
    assert main(["evaluate", "--network", SMALL, "--save", str(small)]) == 0
    mapping = json.loads(small.read_text())
    mapping["network"]["name"] = HUGE
    path = tmp_path / "huge.json"
    path.write_text(json.dumps(mapping))
    assert path.stat().st_size < 1024
    rates = tmp_path / "rates.csv"
    rates.write_text("population,rate\ncortex,0.1\n")
    capsys.readouterr()
    tracemalloc.start()
    try:
        code, _, err = run_cli(capsys, *[a.format(mapping=path, rates=rates) for a in argv])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert words in one_line(code, err) and "nothing was generated" in err
    assert peak < 64 * 2**20, f"{peak / 2**20:.0f} MiB before refusing"

"""The command line against hostile or unlucky input: one line, exit 2, nothing lost.

* Every numeric option is checked where it is read: a negative seed, zero workers, a
  time-out that is not a finite positive number, a port outside 1–65535, a packet of no
  flits — each a one-line error naming the option, never a traceback from deep inside.
* An evaluator command that cannot be read (unbalanced quotes) is a one-line error.
* A run in which every evaluation fails still writes its history, each record with its
  reason, and its error names the first reasons.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from explorer.cli import main

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
    (["evolve", "--workers", "0"], "--workers: must be ≥ 1, not 0"),
    (["evolve", "--budget", "0"], "--budget: must be ≥ 1"),
    (["evolve", "--lambda-part", "-2"], "--lambda-part: must be ≥ 1"),
    (["evolve", "--init-k", "-1"], "--init-k: must be ≥ 0"),
    (["evolve", "--eval-timeout", "0"], "--eval-timeout: must be a positive number of seconds"),
    (["evolve", "--eval-timeout", "nan"], "--eval-timeout: must be a positive number"),
    (["evolve", "--eval-timeout", "inf"], "--eval-timeout: must be a positive number"),
    (["evolve", "--eval-timeout", "soon"], "--eval-timeout: 'soon' is not a number of seconds"),
    (["simulate", "--pattern", "uniform", "--packet", "0"], "--packet: must be from 1 to 255"),
    (["simulate", "--pattern", "uniform", "--packet", "256"], "--packet: must be from 1 to 255"),
    (["simulate", "--pattern", "uniform", "--window", "-1"], "--window: must be ≥ 0"),
    (["simulate", "--pattern", "uniform", "--cycles", "0"], "--cycles: must be ≥ 1"),
    (["simulate", "--pattern", "uniform", "--warmup", "-5"], "--warmup: must be ≥ 0"),
    (["sweep", "--rates", "0.1", "--seed", "-1"], "--seed: must be ≥ 0"),
    (["sweep", "--rates", "0.1", "--workers", "0"], "--workers: must be ≥ 1"),
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
    *records, end = [json.loads(line) for line in history.read_text().splitlines()]
    assert end == {"end": "failed", "evaluations": 6, "failed": 6}
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

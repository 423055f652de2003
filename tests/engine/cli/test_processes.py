"""The command line and the processes it starts: signals cancel a run cleanly, and nothing
it started outlives it.

Each case runs ``meshscope`` as a program (a subprocess, as a user runs it) with an
evaluator command that sleeps — and, in some cases, starts a sleeper of its own outside
its process group (``setsid``), even with an empty environment and after its own parent
exited. The evaluator records its pids; the test sends the signal, then looks through
``/proc`` for every recorded process and for any process carrying the run's mark.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.io.process import MARK
from tests.support.processes import alive, cpu_seconds, gone, recorded

ROOT = Path(__file__).parents[3]
NET = "mlp:widths=64-128-32"

# an evaluator that never answers: it records its pid (and its sleeper's), then sleeps
EVALUATOR = """
import os, subprocess, sys, time
record, how = sys.argv[1], sys.argv[2]
pids = [os.getpid()]
sleeper = [sys.executable, "-c", "import time; time.sleep(1000)"]
quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
if how == "setsid":  # a sleeper in a session of its own, sharing the evaluator's pipes
    pids.append(subprocess.Popen(sleeper, start_new_session=True).pid)
elif how == "orphan":  # … with an empty environment, whose parent has exited: no trace left
    middle = ("import subprocess, sys; print(subprocess.Popen(%r, start_new_session=True, "
              "env={}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).pid)" % sleeper)
    pids.append(int(subprocess.run([sys.executable, "-c", middle], capture_output=True,
                                   text=True).stdout))
with open(record, "a") as f:
    f.write(" ".join(map(str, pids)) + "\\n")
time.sleep(1000)
"""


def start(tmp_path, *argv) -> subprocess.Popen:
    """``meshscope ARGV`` as a program, its evaluator's records in ``tmp_path / "pids"``."""
    return subprocess.Popen(
        [sys.executable, "-m", "explorer.cli", *map(str, argv)],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        # Ctrl-C as on a terminal, even when the tests run in the background (SIGINT ignored)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # noqa: PLW1509
    )  # fmt: skip


def evaluator(tmp_path, how: str = "sleep") -> list[str]:
    script = tmp_path / "evaluator.py"
    script.write_text(EVALUATOR)
    return ["--evaluator-cmd", f"{sys.executable} {script} {tmp_path / 'pids'} {how}"]


def marked(pid: int) -> list[int]:
    """The live processes whose environment carries the mark of a run of process ``pid``."""
    needle = f"{MARK}={pid}.".encode()
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit() and alive(int(name)):
            try:
                env = Path(f"/proc/{name}/environ").read_bytes()
            except OSError:
                continue
            if any(e.startswith(needle) for e in env.split(b"\0")):
                found.append(int(name))
    return found


@pytest.fixture
def cleanup():
    """Pids to SIGKILL after the test, whatever it found (none should be alive)."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


def history_end(path: Path):
    last = path.read_text().splitlines()[-1]
    return json.loads(last) if path.suffix == ".jsonl" else last


# ------------------------------------------------------------------ cancelled before any result
@pytest.mark.parametrize("command", ["evolve", "pareto"])
def test_ctrl_c_before_the_first_evaluation_says_cancelled_and_marks_the_history(
    tmp_path, command, cleanup
):
    history = tmp_path / ("h.jsonl" if command == "evolve" else "h.csv")
    proc = start(tmp_path, command, "--network", NET, "--budget", "20", "--history", history,
                 *evaluator(tmp_path))  # fmt: skip
    cleanup += recorded(tmp_path / "pids")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert out == "" and err.count("\n") == 1, err
    assert err.startswith("meshscope: cancelled before any evaluation finished")
    assert "failed" not in err and str(history) in err
    if command == "evolve":
        assert history_end(history) == {"end": "cancelled", "evaluations": 0, "failed": 0}
    else:
        assert history_end(history) == "# end: cancelled, 0 evaluations, 0 failed"
    assert gone(cleanup)


# ------------------------------------------------------------------ nothing left behind
@pytest.mark.parametrize("how", ["sleep", "setsid", "orphan"])
def test_sigterm_cancels_the_run_and_leaves_no_process_behind(tmp_path, how, cleanup):
    history = tmp_path / "h.jsonl"
    proc = start(tmp_path, "evolve", "--network", NET, "--budget", "20", "--history", history,
                 *evaluator(tmp_path, how))  # fmt: skip
    cleanup += recorded(tmp_path / "pids")
    assert all(alive(p) for p in cleanup)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert err == (
        "meshscope: cancelled (SIGTERM) before any evaluation finished: no mapping to report; "
        f"the history {history} ends 'cancelled'\n"
    )
    assert history_end(history)["end"] == "cancelled"
    assert gone(cleanup), [p for p in cleanup if alive(p)]
    assert marked(proc.pid) == []


def test_sighup_is_a_cancel_too(tmp_path, cleanup):
    proc = start(tmp_path, "evolve", "--network", NET, "--budget", "20", *evaluator(tmp_path))
    cleanup += recorded(tmp_path / "pids")
    proc.send_signal(signal.SIGHUP)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGHUP and "cancelled (SIGHUP)" in err
    assert gone(cleanup)


def test_sigkill_of_meshscope_still_kills_the_evaluator_itself(tmp_path, cleanup):
    """SIGKILL cannot be caught: the kernel kills the evaluator (PR_SET_PDEATHSIG); the
    sleeper the evaluator started in a session of its own is beyond reach (documented in
    ``engine.io.process``), and the test ends it."""
    proc = start(tmp_path, "evolve", "--network", NET, "--budget", "20",
                 *evaluator(tmp_path, "setsid"))  # fmt: skip
    cleanup += recorded(tmp_path / "pids")
    proc.kill()
    proc.communicate(timeout=60)
    assert gone(cleanup[:1])


def test_ctrl_c_with_two_workers_does_not_wait_for_the_evaluations(tmp_path, cleanup):
    """Both evaluations sleep (the time-out is 60 s): Ctrl-C ends them at once."""
    proc = start(tmp_path, "evolve", "--network", NET, "--budget", "20", "--workers", "2",
                 *evaluator(tmp_path, "setsid"))  # fmt: skip
    cleanup += recorded(tmp_path / "pids", lines=2)
    began = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert time.monotonic() - began < 10, "Ctrl-C waited for the evaluations"
    assert proc.returncode == 130 and "cancelled before any evaluation finished" in err
    assert gone(cleanup)
    assert marked(proc.pid) == []


def test_sigterm_during_a_sweep_does_not_wait_for_its_runs(tmp_path):
    proc = start(tmp_path, "sweep", "--mesh", "4x4", "--rates", "0.01,0.02", "--warmup", "0",
                 "--cycles", "10000000", "--workers", "2")  # fmt: skip
    end = time.monotonic() + 60
    workers: list[int] = []
    while len(workers) < 2 and time.monotonic() < end:  # both runs started
        workers = [p for p in children(proc.pid) if alive(p)]
        time.sleep(0.05)
    assert len(workers) == 2
    while min(map(cpu_seconds, workers)) < 0.5 and time.monotonic() < end:  # both simulating
        time.sleep(0.05)
    assert all(alive(p) for p in workers)
    began = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)
    assert time.monotonic() - began < 10
    assert proc.returncode == 128 + signal.SIGTERM
    assert gone(workers)


def children(pid: int) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                stat = Path(f"/proc/{name}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(name))
    return found


# ------------------------------------------------------------------ cancelled after some results
def records_in(path: Path) -> int:
    return path.read_text().count("\n") - 1 if path.exists() else 0  # (its first line: the run)


@pytest.mark.parametrize(("command", "sig"), [("evolve", signal.SIGINT), ("pareto", signal.SIGINT),
                                              ("evolve", signal.SIGTERM)])  # fmt: skip
def test_a_run_cancelled_after_some_evaluations_does_not_exit_0(tmp_path, command, sig):
    """Ctrl-C after some evaluations printed the best so far and exited 0, as if complete."""
    history = tmp_path / "h.jsonl"
    proc = start(tmp_path, command, "--network", NET, "--budget", "100000", "--history", history)
    end = time.monotonic() + 120
    while records_in(history) < 5 and time.monotonic() < end and proc.poll() is None:
        time.sleep(0.02)
    assert records_in(history) >= 5, proc.communicate()[1] if proc.poll() is not None else ""
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + sig, err
    assert "cancelled" in out  # the best so far, saying it is not the run's result
    assert err.startswith("meshscope: cancelled after ") and "of 100000 evaluations" in err
    assert history_end(history)["end"] == "cancelled"


# ------------------------------------------------------------------ killed with SIGKILL
@pytest.mark.parametrize(
    "argv",
    [
        ["evolve", "--network", NET, "--budget", "100000", "--workers", "2"],
        ["pareto", "--network", NET, "--budget", "100000", "--workers", "2"],
        ["sweep", "--mesh", "4x4", "--rates", "0.01,0.02", "--warmup", "0", "--cycles",
         "10000000", "--workers", "2"],
    ],
    ids=["evolve", "pareto", "sweep"],
)  # fmt: skip
def test_worker_processes_die_with_a_meshscope_killed_by_sigkill(tmp_path, cleanup, argv):
    """SIGKILL of meshscope evolve --workers 4 left its four workers (~350 MB each) running
    for more than a minute: they now ask the kernel to kill them with their parent."""
    proc = start(tmp_path, *argv)
    end = time.monotonic() + 60
    workers: list[int] = []
    while len(workers) < 2 and time.monotonic() < end and proc.poll() is None:
        workers = [p for p in children(proc.pid) if alive(p)]
        time.sleep(0.05)
    cleanup += workers
    assert len(workers) == 2, proc.communicate()[1] if proc.poll() is not None else workers
    while min(map(cpu_seconds, workers)) < 0.2 and time.monotonic() < end:  # both at work
        time.sleep(0.05)
    proc.kill()
    proc.communicate(timeout=60)
    assert gone(workers, wait_s=5.0), [p for p in workers if alive(p)]

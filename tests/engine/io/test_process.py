"""External commands run bounded: no process left behind, no answer read past its cap.

Each case runs a small shell or Python program the way an evaluator command is run and
then looks, through ``/proc``, for every process the program started: after the run none
may be alive, however it ended (exit, time-out, too much output, cancelled from another
thread, a background child holding the pipes open).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from engine.errors import SpecError
from engine.hardware import load_hardware
from engine.io.process import ProcessGroups, run_bounded
from engine.pipeline import build_mapping
from engine.search import CommandEvaluator
from engine.search.evaluators import Candidate
from engine.specs import load_network_spec
from tests.support.processes import alive, gone, recorded

SHELL = "/bin/sh"


def pids_in(path) -> list[int]:
    return [int(x) for x in path.read_text().split()]


def test_a_timed_out_command_takes_its_children_with_it(tmp_path):
    pids = tmp_path / "pids"
    cmd = f"sleep 1000 & echo $! >> {pids}; sleep 1000 & echo $! >> {pids}; echo $$ >> {pids}; wait"
    start = time.monotonic()
    done = run_bounded([SHELL, "-c", cmd], "", timeout_s=0.5)
    assert done.failure == "timed out after 0.5 s"
    assert time.monotonic() - start < 5
    assert len(pids_in(pids)) == 3
    assert gone(pids_in(pids))


def test_a_child_left_behind_after_a_clean_exit_is_not_waited_for_and_is_ended(tmp_path):
    pids = tmp_path / "pids"
    cmd = f"sleep 1000 & echo $! > {pids}; echo '{{\"latency_us\": 1}}'"
    start = time.monotonic()
    done = run_bounded([SHELL, "-c", cmd], "", timeout_s=20)
    assert time.monotonic() - start < 5  # the child still holds stdout: not waited for
    assert done.failure == "" and done.returncode == 0
    assert done.stdout.strip() == '{"latency_us": 1}'
    assert gone(pids_in(pids))


@pytest.mark.parametrize("stream, cap", [("stdout", 1 << 20), ("stderr", 64 << 10)])
def test_output_past_its_cap_is_a_failure_not_a_memory_hog(stream, cap):
    code = f"import sys\nwhile True:\n    sys.{stream}.write('x' * 65536)\n"
    done = run_bounded([sys.executable, "-c", code], "", timeout_s=20)
    unit = "1 MB" if cap == 1 << 20 else "64 KB"
    assert done.failure == f"wrote more than {unit} to {stream}"
    assert len(getattr(done, stream)) <= cap + 65536


def test_an_answer_within_the_cap_is_read_whole():
    code = "import sys\nsys.stdout.write('y' * 900000 + '\\n')\nsys.stderr.write('warn\\n')\n"
    done = run_bounded([sys.executable, "-c", code], "", timeout_s=20)
    assert done.failure == "" and done.returncode == 0
    assert len(done.stdout) == 900001 and done.stderr == "warn\n"


def test_a_command_that_never_reads_its_large_input_does_not_hang():
    done = run_bounded([SHELL, "-c", "echo ok"], "z" * (8 << 20), timeout_s=20)
    assert done.failure == "" and done.stdout == "ok\n"


def test_the_input_reaches_the_command():
    done = run_bounded([sys.executable, "-c", "import sys; print(len(sys.stdin.read()))"],
                       "é" * 100_000, timeout_s=20)  # fmt: skip
    assert done.stdout.strip() == "100000"


def test_the_exit_code_and_stderr_come_back():
    done = run_bounded([SHELL, "-c", "echo first >&2; echo last >&2; exit 3"], "", timeout_s=20)
    assert done.failure == "" and done.returncode == 3
    assert done.stderr.splitlines() == ["first", "last"]


def test_kill_all_ends_running_commands_and_refuses_new_ones(tmp_path):
    groups = ProcessGroups()
    pids = tmp_path / "pids"
    results = []

    def one():
        cmd = f"sleep 1000 & echo $! >> {pids}; wait"
        results.append(run_bounded([SHELL, "-c", cmd], "", timeout_s=60, groups=groups))

    threads = [threading.Thread(target=one) for _ in range(3)]
    for t in threads:
        t.start()
    end = time.monotonic() + 10
    while (not pids.exists() or len(pids_in(pids)) < 3) and time.monotonic() < end:
        time.sleep(0.02)
    groups.kill_all()
    for t in threads:
        t.join(timeout=10)
    assert not any(t.is_alive() for t in threads)
    assert [r.failure for r in results] == ["cancelled"] * 3
    assert gone(pids_in(pids))
    late = run_bounded([SHELL, "-c", "echo never"], "", timeout_s=5, groups=groups)
    assert late.failure == "cancelled" and late.stdout == ""


def test_a_missing_program_is_an_os_error():
    with pytest.raises(OSError):
        run_bounded(["/nonexistent/evaluator"], "", timeout_s=1)


# ------------------------------------------------------------------ the evaluator command
@pytest.fixture(scope="module")
def mlp():
    return load_network_spec("mlp:widths=256-512-256-10"), load_hardware("loihi2")


@pytest.mark.parametrize(
    "command, timeout, workers, words",
    [
        ("python 'unclosed", 1.0, 1, "cannot read the evaluator command"),
        ("true", 0.0, 1, "positive number of seconds"),
        ("true", float("inf"), 1, "positive number of seconds"),
        ("true", float("nan"), 1, "positive number of seconds"),
        ("true", 1.0, 0, "at least 1"),
    ],
)
def test_evaluator_command_settings_are_checked(mlp, command, timeout, workers, words):
    net, hw = mlp
    with pytest.raises(SpecError, match=words):
        CommandEvaluator(net, hw, command, timeout_s=timeout, workers=workers)


def test_closing_the_evaluator_ends_its_running_evaluations(mlp, tmp_path):
    net, hw = mlp
    pids = tmp_path / "pids"
    script = tmp_path / "slow.sh"
    script.write_text(f"cat > /dev/null\nsleep 1000 & echo $! >> {pids}\nwait\n")
    evaluator = CommandEvaluator(net, hw, shlex.join([SHELL, str(script)]), timeout_s=60)
    mapping = build_mapping(net, hw, partition="min", placement="packed-row").mapping
    candidate = Candidate(mapping.partition.cores_per_population, mapping.placement.cores)
    out = []
    t = threading.Thread(target=lambda: out.append(evaluator.evaluate(candidate)))
    t.start()
    end = time.monotonic() + 10
    while not pids.exists() and time.monotonic() < end:
        time.sleep(0.02)
    evaluator.close()
    t.join(timeout=10)
    assert not t.is_alive()
    assert out[0].failed and out[0].error == "cancelled"
    assert gone(pids_in(pids))
    assert os.path.exists(pids)


# ------------------------------------------------------------------ escapees
SLEEPER = "import time; time.sleep(1000)"


def escapee(tmp_path, how: str) -> list[str]:
    """A command that starts a sleeper outside its process group (``setsid``) and records
    its own pid and the sleeper's; ``how`` says how far the sleeper runs:

    * ``setsid``: it keeps the environment, and its parent waits;
    * ``clean-env``: it also empties its environment (no mark), its parent waits;
    * ``orphan``: it keeps the environment, and its parent exits at once (the sleeper's
      ancestry is gone);
    """
    pids = tmp_path / "pids"
    env = "{}" if how == "clean-env" else "None"
    code = (
        "import os, subprocess, sys, time\n"
        f"p = subprocess.Popen([sys.executable, '-c', {SLEEPER!r}], start_new_session=True,\n"
        f"                     env={env}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        f"open({str(pids)!r}, 'a').write(f'{{os.getpid()}} {{p.pid}}\\n')\n"
        + ("" if how == "orphan" else "time.sleep(1000)\n")
    )
    return [sys.executable, "-c", code]


@pytest.mark.parametrize("how", ["setsid", "clean-env", "orphan"])
def test_a_process_that_left_the_group_is_ended_with_the_command(tmp_path, how):
    """On a time-out (``orphan``: after the command exited), the sleeper outside the
    group is found — by its mark, or while its parent lives by its ancestry — and killed."""
    timeout = 20.0 if how == "orphan" else 1.0
    done = run_bounded(escapee(tmp_path, how), "", timeout_s=timeout)
    pids = recorded(tmp_path / "pids")
    assert done.failure == ("" if how == "orphan" else "timed out after 1 s")
    assert gone(pids), [p for p in pids if alive(p)]


def test_kill_all_ends_the_escapees_of_every_running_command(tmp_path):
    groups = ProcessGroups()
    threads = [
        threading.Thread(
            target=run_bounded,
            args=(escapee(tmp_path, how), ""),
            kwargs={"timeout_s": 60, "groups": groups},
        )
        for how in ("setsid", "clean-env")
    ]
    for t in threads:
        t.start()
    pids = recorded(tmp_path / "pids", lines=2)
    groups.kill_all()
    for t in threads:
        t.join(timeout=10)
    assert not any(t.is_alive() for t in threads)
    assert gone(pids)


def test_the_command_dies_with_the_process_that_ran_it(tmp_path):
    """SIGKILL of the process running a command cannot be caught: the kernel then kills
    the command itself (PR_SET_PDEATHSIG); what the command started is beyond reach."""
    pids = tmp_path / "pids"
    command = [SHELL, "-c", f"echo $$ > {pids}; exec sleep 1000"]
    runner = subprocess.Popen(
        [sys.executable, "-c", "import sys\nfrom engine.io.process import run_bounded\n"
         f"run_bounded({command!r}, '', timeout_s=1000)"],
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[3])},
    )  # fmt: skip
    try:
        [command_pid] = recorded(pids)
        assert alive(command_pid)
        runner.kill()
        runner.wait(10)
        assert gone([command_pid])
    finally:
        runner.kill()
        runner.wait(10)


def test_end_descendants_ends_every_process_this_one_started(tmp_path):
    """What the command line does as it exits, run in a process of its own."""
    pids = tmp_path / "pids"
    code = (
        "import subprocess, sys\n"
        "from engine.io.process import become_subreaper, end_descendants\n"
        "assert become_subreaper()\n"
        f"subprocess.run({escapee(tmp_path, 'orphan')!r})\n"  # an orphan with a clean env
        f"subprocess.Popen({[SHELL, '-c', f'sleep 1000 & echo $! >> {pids}; wait']!r})\n"
        f"while len(open({str(pids)!r}).read().split()) < 3: pass\n"
        "end_descendants()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], timeout=60, capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[3])},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert len(pids_in(pids)) == 3
    assert gone(pids_in(pids))

"""Every subcommand against bad files: unwritable outputs, unreadable inputs, killed runs.

Whatever is wrong, the command prints one line, exits 2 and writes nothing; an output it
does write is whole, even when the process is killed while writing.
"""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from engine.cli import main
from engine.io.network_file import save_network
from engine.io.outputs import atomic_open
from engine.mapping.assignment import mapping_to_dict
from engine.pipeline import build_mapping

NET = "linear-dense:M=2,N=8"

# (subcommand and its options, output flag, output file name)
OUTPUTS = [
    (["evaluate", "--network", NET], "--save", "mapping.json"),
    (["map", "--network", NET, "--placement", "hilbert"], "--save", "mapping.json"),
    (["convert", "--network", NET], "--out", "net.hgr"),
    (["convert", "--network", NET], "--out", "net.npz"),
    (["evolve", "--network", NET, "--budget", "6"], "--out", "best.json"),
    (["evolve", "--network", NET, "--budget", "6"], "--history", "history.csv"),
    (["evolve", "--network", NET, "--budget", "6"], "--checkpoint", "run.ckpt"),
    (["simulate", "--network", NET], "--save-trace", "step.npz"),
    (["simulate", "--network", NET], "--save", "mapping.json"),
    (["simulate", "--network", NET], "--export-noxim", "step.noxim"),
    (["simulate", "--pattern", "uniform", "--mesh", "4x4", "--cycles", "300"], "--save-trace",
     "run.npz"),
    (["sweep", "--mesh", "4x4", "--rates", "0.1,0.2", "--cycles", "300", "--workers", "1"],
     "--csv", "sweep.csv"),
    (["sweep", "--mesh", "4x4", "--rates", "0.1,0.2", "--cycles", "300", "--workers", "1"],
     "--figure", "sweep.png"),
]  # fmt: skip


def run(capsys, argv) -> tuple[int, str, str]:
    try:
        code = main([str(a) for a in argv])
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_error(code, out, err, *words):
    assert code == 2, err
    assert out == ""
    assert err.startswith("meshscope: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for word in words:
        assert word in err


def files_in(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


# ------------------------------------------------------------------ unwritable outputs
def unwritable(tmp_path: Path, kind: str, name: str) -> tuple[Path, str]:
    """A path that cannot be written, and a word its error must contain."""
    if kind == "missing folder":
        return tmp_path / "nowhere" / name, "does not exist"
    if kind == "a folder":
        (tmp_path / name).mkdir()
        return tmp_path / name, "is a folder"
    (tmp_path / "plain").write_text("a file, not a folder")
    return tmp_path / "plain" / name, "not a folder"


@pytest.mark.parametrize("kind", ["missing folder", "a folder", "under a file"])
@pytest.mark.parametrize(
    ("argv", "flag", "name"), OUTPUTS, ids=[f"{a[0]} {f} {n}" for a, f, n in OUTPUTS]
)
def test_an_unwritable_output_fails_before_any_work(capsys, tmp_path, argv, flag, name, kind):
    target, word = unwritable(tmp_path, kind, name)
    before = files_in(tmp_path)
    code, out, err = run(capsys, [*argv, flag, target])
    assert_one_line_error(code, out, err, word, str(target))
    assert files_in(tmp_path) == before  # nothing written, not even a temporary file


@pytest.mark.parametrize(
    ("argv", "flag", "name"), OUTPUTS, ids=[f"{a[0]} {f} {n}" for a, f, n in OUTPUTS]
)
def test_a_writable_output_is_written_whole_and_only_it(capsys, tmp_path, argv, flag, name):
    target = tmp_path / name
    code, _, err = run(capsys, [*argv, flag, target])
    assert code == 0, err
    assert files_in(tmp_path) == {name}
    if name.endswith(".json"):
        assert json.loads(target.read_text())  # complete JSON
    if name.endswith(".ckpt"):  # JSON lines, the last a state
        assert "state" in json.loads(target.read_text().splitlines()[-1])


# ------------------------------------------------------------------ unreadable inputs
def write(path: Path, content: bytes | str | None) -> Path:
    """``content``: bytes or text to write; None: leave the path missing; "/": a folder."""
    if content == "/":
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    return path


BROKEN = {  # kind → content (see write)
    "missing": None,
    "a folder": "/",
    "empty": b"",
    "binary": b"\xff\xfe\x00\x81garbage\x00",
}

# (what is read, file name, option(s) naming it, contents that are the wrong format)
INPUTS = [
    ("network", "net.npz", ["--network"], "just text, not an npz archive"),
    ("network", "net.hgr", ["--network"], "2 3\n1 2\n"),
    ("hardware", "hw.toml", ["--hardware"], 'name = "x"\n[topology]\nchips = [1, 1]\n'),
    ("mapping", "m.json", ["--mapping"], '{"format": "meshscope-mapping", "version": 1}'),
    ("partition", "blocks.part", ["--partition", "file:"], "0\n1\n"),
    ("checkpoint", "run.ckpt", ["--resume"], '{"format": "meshscope-es-checkpoint"}'),
    ("traffic matrix", "m.csv", ["--pattern", "matrix:file="], "1,2\n3,x\n"),
]

COMMANDS = {  # which subcommands read each kind of input, with an output to watch
    "network": [["evaluate", "--save", "o.json"], ["map", "--save", "o.json"], ["convert"]],
    "hardware": [["evaluate", "--save", "o.json"], ["map", "--save", "o.json"], ["evolve"]],
    "mapping": [["evaluate", "--save", "o.json"]],
    "partition": [["evaluate", "--save", "o.json"], ["map", "--save", "o.json"]],
    "checkpoint": [["evolve", "--out", "o.json", "--budget", "6"]],
    "traffic matrix": [["simulate", "--mesh", "4x4", "--save-trace", "o.npz"]],
}
for kind in ("network", "hardware", "mapping", "partition"):
    COMMANDS[kind].append(["simulate", "--save-trace", "o.npz"])


def input_cases():
    for what, name, option, wrong in INPUTS:
        for command in COMMANDS[what]:
            for kind, content in [*BROKEN.items(), ("wrong format", wrong)]:
                yield pytest.param(
                    command, what, name, option, content, id=f"{command[0]} {what} {name} {kind}"
                )


@pytest.mark.parametrize(("command", "what", "name", "option", "content"), list(input_cases()))
def test_an_unreadable_input_is_one_line_and_writes_nothing(
    capsys, tmp_path, monkeypatch, command, what, name, option, content
):
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path / name, content)
    argv = [command[0]]
    if what == "traffic matrix":  # --pattern matrix:file=PATH
        argv += [*option[:-1], f"{option[-1]}{path}"]
    elif option[-1].endswith(":"):  # --partition file:PATH
        argv += [*option[:-1], f"{option[-1]}{path}", "--network", NET]
    else:
        argv += [*option, path]
        if what != "network" and command[0] != "evolve":
            argv += ["--network", NET]
        if what in ("hardware", "checkpoint") and command[0] == "evolve":
            argv += ["--network", NET, "--budget", "6"]
    if command[0] == "convert":
        argv += ["--out", tmp_path / "o.hgr"]
    argv += command[1:]
    before = files_in(tmp_path)
    code, out, err = run(capsys, argv)
    assert_one_line_error(code, out, err, name)
    assert files_in(tmp_path) == before


# ------------------------------------------------------------------ killed while writing
def test_atomic_open_keeps_the_old_file_when_the_writer_fails(tmp_path):
    target = tmp_path / "m.json"
    target.write_text('{"old": true}')
    with pytest.raises(RuntimeError), atomic_open(target) as f:
        f.write('{"new": tr')
        raise RuntimeError("killed halfway")
    assert json.loads(target.read_text()) == {"old": True}
    assert files_in(tmp_path) == {"m.json"}


def _records(path) -> list[dict]:
    """The records of a JSON-lines history, without its end line."""
    rows = [json.loads(line) for line in Path(path).read_text().splitlines()]
    return [row for row in rows if "end" not in row]


def test_a_killed_run_leaves_valid_files_and_resumes_to_the_uninterrupted_result(tmp_path):
    """SIGKILL an evolve run at several moments. Its history is valid up to the kill and has
    no end line; its checkpoint resumes; the resumed run's history is the uninterrupted
    run's, record for record."""
    script = Path(sys.executable).with_name("meshscope")
    budget = "1200"
    base = [script, "evolve", "--network", "mlp:widths=64-256-256-32", "--hardware", "loihi2",
            "--budget", budget, "--seed", "5"]  # fmt: skip
    done = subprocess.run([str(a) for a in [*base, "--history", "whole.jsonl"]],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    whole = _records(tmp_path / "whole.jsonl")
    lines = (tmp_path / "whole.jsonl").read_text().splitlines()
    assert json.loads(lines[-1]) == {"end": "complete", "evaluations": 1200, "failed": 0}
    ckpt, hist = tmp_path / "run.ckpt", tmp_path / "part.jsonl"
    argv = [*base, "--checkpoint", ckpt, "--history", hist]
    for delay in (0.0, 0.15, 0.4):
        proc = subprocess.Popen([str(a) for a in argv], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, cwd=tmp_path)  # fmt: skip
        deadline = time.monotonic() + 120
        while not ckpt.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.005)
        assert ckpt.exists(), proc.stderr.read().decode() if proc.poll() is not None else ""
        time.sleep(delay)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
        text = hist.read_text()
        kept = text[: text.rfind("\n") + 1]  # a kill mid-write may cut the last line only
        part = [json.loads(line) for line in kept.splitlines()]
        assert all("end" not in row for row in part), "a killed run's history says it ended"
        assert part == whole[: len(part)]
        assert len(part) < len(whole), "the run ended before the kill: the test proves nothing"
        # a kill while the first generation is written may leave that write's hidden
        # temporary file, never a partial checkpoint; the next write removes it
        left = files_in(tmp_path) - {"run.ckpt", "part.jsonl", "whole.jsonl"}
        assert len(left) <= 1 and all(f.startswith(".run.ckpt.") for f in left), left
    done = subprocess.run(
        [str(a) for a in [*base, "--resume", ckpt, "--history", "resumed.jsonl"]],
        capture_output=True, text=True, cwd=tmp_path, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert _records(tmp_path / "resumed.jsonl") == whole
    assert files_in(tmp_path) == {"run.ckpt", "part.jsonl", "whole.jsonl", "resumed.jsonl"}


def test_a_network_file_written_by_convert_loads_back(capsys, tmp_path):
    path = tmp_path / "net.npz"
    code, _, err = run(capsys, ["convert", "--network", NET, "--out", path])
    assert code == 0, err
    mapped = build_mapping(str(path), "loihi2")
    original = build_mapping(NET, "loihi2")
    assert mapped.network.fingerprint == original.network.fingerprint
    np.testing.assert_array_equal(mapped.mapping.placement.cores, original.mapping.placement.cores)
    assert mapping_to_dict(mapped.network, mapped.hardware, mapped.mapping)["network"]
    save_network(mapped.network, path)  # overwriting keeps one file
    assert files_in(tmp_path) == {"net.npz"}


# ------------------------------------------------------------ outputs that are no regular file
# every output option, with what the command needs to get as far as checking it (the files
# it reads are made by the test); the output is refused before any of them is read
EVERY_OUTPUT = [
    *OUTPUTS,
    (["simulate", "--network", NET], "--export-booksim", "step"),
    (["evolve", "--network", NET, "--budget", "6"], "--history", "history.jsonl"),
    (["pareto", "--network", NET, "--budget", "6"], "--out", "front.json"),
    (["pareto", "--network", NET, "--budget", "6"], "--history", "history.csv"),
    (["spread", "--network", NET, "--samples", "3"], "--figure", "spread.png"),
    (["microbench", "--suite", "microbench"], "--out", "runs.csv"),
    (["calibrate", "--measurements", "measured.csv"], "--out", "board.toml"),
    (["validate", "--measurements", "measured.csv"], "--figure", "fit.png"),
    (["mosaic", "rewire", "--network", NET, "--target", "1"], "--out", "rewired.npz"),
    (["mosaic", "demo", "--quick"], "--figure", "demo.png"),
]  # fmt: skip


def special(path: Path, kind: str, specials) -> Path:
    """``path`` made a special file of ``kind`` (for the BookSim2 prefix: its .trace)."""
    if kind == "fifo":
        specials.make(path, "fifo")
    elif kind == "device node":  # a node of its own (root may make one), else a link to one
        try:
            os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # what /dev/null is
        except PermissionError:
            path.symlink_to("/dev/null")
    elif kind == "link to a device":
        path.symlink_to("/dev/null")
    elif kind == "link to standard output":
        path.symlink_to("/proc/self/fd/1")
    elif kind == "socket":
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(path))
        server.close()
    elif kind == "link to nothing":
        path.symlink_to(path.parent / "nowhere.json")
    return path


def kind_of(path: Path) -> tuple:
    st = os.lstat(path)
    return stat.S_IFMT(st.st_mode), st.st_ino, os.readlink(path) if path.is_symlink() else None


SPECIAL_KINDS = ["fifo", "device node", "link to a device", "link to standard output", "socket",
                 "link to nothing"]  # fmt: skip


@pytest.mark.parametrize("kind", SPECIAL_KINDS)
@pytest.mark.parametrize(
    ("argv", "flag", "name"), EVERY_OUTPUT, ids=[f"{a[0]} {f} {n}" for a, f, n in EVERY_OUTPUT]
)
def test_an_output_that_is_no_regular_file_is_refused_and_left_as_it_was(
    capsys, tmp_path, monkeypatch, specials, argv, flag, name, kind
):
    """Outputs used to be renamed over whatever was there (a device node became a regular
    file, a FIFO too; a link to /proc/self/fd/1 wrote into the terminal), and a FIFO as
    --history blocked for ever in open()."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "measured.csv").write_text(
        "network,hardware,partition,placement,measured_us\nmb-dendop:N=512,loihi2,natural,"
        "packed-row,2.5\n"
    )
    target = tmp_path / (f"{name}.trace" if flag == "--export-booksim" else name)
    special(target, kind, specials)
    before = kind_of(target), files_in(tmp_path)
    code, out, err = run(capsys, [*argv, flag, tmp_path / name])
    words = "does not exist" if kind == "link to nothing" else "an output never"
    assert_one_line_error(code, out, err, words, str(target))
    assert (kind_of(target), files_in(tmp_path)) == before


def test_a_link_to_a_regular_file_is_written_through(capsys, tmp_path):
    (tmp_path / "real.json").write_text("{}")
    (tmp_path / "link.json").symlink_to("real.json")
    code, _, err = run(capsys, ["evaluate", "--network", NET, "--save", tmp_path / "link.json"])
    assert code == 0, err
    assert os.readlink(tmp_path / "link.json") == "real.json"  # the link kept …
    assert json.loads((tmp_path / "real.json").read_text())["format"] == "meshscope-mapping"
    assert files_in(tmp_path) == {"real.json", "link.json"}


STREAMED = [  # an output in one format, written to standard output: how to read it back whole
    (["evaluate", "--network", NET], "--save", lambda out: json.loads(out)["format"]),
    (["simulate", "--network", NET], "--export-noxim",
     lambda out: out.startswith("% Noxim traffic table") and out.endswith("\n")),
    (["sweep", "--mesh", "4x4", "--rates", "0.1,0.2", "--cycles", "300"], "--csv",
     lambda out: [r[0] for r in csv.reader(io.StringIO(out))] == ["rate", "0.1", "0.2"]),
    (["pareto", "--network", NET, "--budget", "6"], "--out", lambda out: json.loads(out)["front"]),
]  # fmt: skip


@pytest.mark.parametrize("name", ["-", "/dev/stdout"])
@pytest.mark.parametrize(("argv", "flag", "whole"), STREAMED, ids=[s[1] for s in STREAMED])
def test_dash_and_dev_stdout_write_the_output_to_standard_output_and_the_report_aside(
    capsys, tmp_path, monkeypatch, argv, flag, whole, name
):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, [*argv, flag, name])
    assert code == 0, err
    assert whole(out)  # the output alone on standard output …
    assert err.strip()  # … the command's report beside it, on standard error
    assert files_in(tmp_path) == set()


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["convert", "--network", NET, "--out", "-"], "ends in .hgr or .npz"),
        (["evolve", "--network", NET, "--history", "-"], "ends in .csv, .jsonl"),
        (["evolve", "--network", NET, "--checkpoint", "/dev/stdout"], "ends in .ckpt"),
        (["simulate", "--network", NET, "--save", "-", "--export-noxim", "/dev/stdout"],
         "both go to standard output"),
    ],
)  # fmt: skip
def test_an_output_that_cannot_be_a_stream_is_refused_as_one(capsys, tmp_path, monkeypatch,
                                                             argv, words):  # fmt: skip
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, argv)
    assert_one_line_error(code, out, err, words)
    assert files_in(tmp_path) == set()


# ------------------------------------------------------------------ names too long
LONG = "x" * 300  # a name longer than any file system takes (255 bytes)

TOO_LONG = [  # (argv with {long} for the long name, what is said of it)
    (["evaluate", "--network", NET, "--save", "{long}.json"], "mapping file"),
    (["evaluate", "--network", NET, "--save", "{long}/m.json"], "mapping file"),
    (["evolve", "--network", NET, "--budget", "6", "--history", "{long}.jsonl"], "history file"),
    (["simulate", "--network", NET, "--export-noxim", "{long}"], "Noxim traffic table"),
    (["info", "--network", "{long}.npz"], "network file"),
    (["info", "--network", "{long}/net.nir"], "NIR file"),
    (["info", "--network", NET, "--rates", "{long}.csv"], "rate table"),
    (["evaluate", "--network", NET, "--hardware", "{long}.toml"], "hardware file"),
    (["evaluate", "--network", NET, "--mapping", "{long}.json"], "mapping file"),
    (["evaluate", "--network", NET, "--partition", "file:{long}"], "partition file"),
    (["evolve", "--network", NET, "--resume", "{long}.ckpt"], "checkpoint"),
    (["serve", "--allow-files", "{long}", "--no-browser"], "--allow-files"),
]


@pytest.mark.parametrize(("argv", "what"), TOO_LONG, ids=[" ".join(a) for a, _ in TOO_LONG])
def test_a_name_too_long_is_one_line_and_not_echoed_whole(capsys, tmp_path, monkeypatch, argv,
                                                          what):  # fmt: skip
    """ENAMETOOLONG traced back from pathlib's probes and check_writable."""
    from explorer.cli import main as full_main  # (serve is the explorer's)

    monkeypatch.chdir(tmp_path)
    try:
        code = full_main([a.format(long=LONG) for a in argv])
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    assert_one_line_error(code, out, err, what)
    assert LONG not in err and "(30" in err  # cut, saying how long it was
    if argv[0] != "serve":
        assert "too long" in err
    assert files_in(tmp_path) == set()


# ------------------------------------------------------------------ a full disk
@pytest.mark.parametrize("name", ["history.jsonl", "history.csv"])
def test_a_full_disk_during_the_history_is_one_line_and_the_history_reads_back(tmp_path, name):
    """OSError 28 from close() re-flushing inside the run's history log was a traceback,
    and the file ended in half a line. The disk fills at 8,000 bytes here (RLIMIT_FSIZE:
    write() takes what fits, then fails, as on a full disk; Python ignores SIGXFSZ)."""
    import resource

    from engine.search.history import read_history

    history = tmp_path / name
    limit = 8000
    done = subprocess.run(
        [sys.executable, "-m", "explorer.cli", "evolve", "--network", "mlp:widths=64-128-32",
         "--budget", "200", "--history", str(history)],
        capture_output=True, text=True, cwd=tmp_path, timeout=120,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[3])},
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)),  # noqa: PLW1509
    )  # fmt: skip
    assert done.returncode == 2 and done.stdout == "", done.stderr
    said = f"meshscope: error: cannot write history file {history}: File too large\n"
    assert done.stderr == said
    assert history.read_text().endswith("\n") and 0 < history.stat().st_size <= limit
    got = read_history(history)  # every line whole: it reads back, its end line missing
    assert len(got.records) >= 2 and got.ended is None
    assert [r.index for r in got.records] == list(range(len(got.records)))


def test_a_reader_that_leaves_a_streamed_output_ends_the_command_quietly(tmp_path):
    """``meshscope simulate … --save-trace - | head -c 10``: the pipe breaks mid-write;
    the command stops as Unix tools do (exit 0, no message), writing no file."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "explorer.cli", "simulate", "--pattern", "uniform", "--mesh",
         "8x8", "--cycles", "3000", "--save-trace", "-"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[3])},
    )  # fmt: skip
    assert len(proc.stdout.read(10)) == 10  # the trace's first bytes (it is much larger) …
    proc.stdout.close()  # … and the reader leaves
    err = proc.stderr.read().decode()
    assert proc.wait(60) == 0, err
    assert "Traceback" not in err and "error" not in err
    assert files_in(tmp_path) == set()

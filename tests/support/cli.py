"""Running ``meshscope``: in-process (the usual way in tests) and as the installed console
script on a pseudo-terminal (what a user at a terminal sees)."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import struct
import subprocess
import sys
import termios
from pathlib import Path

from engine.cli import main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of ``meshscope argv…`` (argparse errors exit via SystemExit)."""
    try:
        code = main(list(argv))
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, *argv: str):
    """The JSON ``meshscope argv…`` prints, after checking it exited 0."""
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    return json.loads(out)


def run_on_a_terminal(argv, cwd) -> tuple[int, str]:
    """Run the console script with stderr on a pseudo-terminal (80 columns): its exit code
    and stderr."""
    script = Path(sys.executable).with_name("meshscope")
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    proc = subprocess.Popen([str(script), *argv], stdout=subprocess.DEVNULL,
                            stderr=follower, cwd=cwd)  # fmt: skip
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 4096)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    return proc.wait(120), b"".join(chunks).decode(errors="replace")

"""The ``meshscope`` command (the explorer adds ``serve``; see ``explorer.cli``).

    meshscope --version
    meshscope list [networks|hardware|partitioners|placers|objectives|strategies|algorithms]
                   [--json]
    meshscope evaluate [--network SPEC] [--hardware SPEC] [--partition SPEC]
                       [--placement NAME | --mapping FILE] [--links] [--simulate] [--multicast]
                       [--json] [--save FILE]
    meshscope suggest [--mapping FILE | mapping options] [--top K] [--budget S] [--json]
    meshscope map [--network SPEC] [--hardware SPEC] [--partition SPEC] [--placement NAME]
                  [--json] [--save FILE]
    meshscope convert --network SPEC --out FILE.hgr|FILE.npz
    meshscope mesh-shape --cores N [--scheme strict-area|loose-area|square] [--json]
    meshscope evolve [--network SPEC] [--hardware SPEC] [--budget N] [--seed S] [options]
    meshscope pareto [--network SPEC] [--hardware SPEC] [--objectives A,B[,C]] [--algorithm
                     NAME] [--budget N] [--codesign P,…] [--out FILE] [options]
    meshscope simulate [mapping options | --pattern NAME --mesh WxH --rate R] [options]
    meshscope sweep --pattern NAME --mesh WxH --rates START:STOP:STEP [options]
    meshscope microbench [--hardware SPEC] [--suite NAME] [--out runs.csv] [--mappings DIR]
    meshscope calibrate --measurements runs.csv [--hardware SPEC] --out FILE.toml
    meshscope validate --measurements runs.csv [--hardware SPEC] [--figure FILE]
    meshscope mosaic check|rewire|requirements|demo [options]   (engine.cli.mosaic)

One module per family of commands (``mapping``, ``evolve`` with ``pareto``, ``simulate``,
``fidelity``, ``mosaic``), each adding its subcommands to the parser; ``common`` holds what
they share.
Every command builds its mapping through ``engine.pipeline``. On bad input: one line on stderr
and exit code 2; output files are checked before any work starts (writable, named for their
format, none of them an input or another output: ``common.check_outputs``) and written whole
or not at all, to regular files only (or, named ``-`` or ``/dev/stdout``, to standard
output, the command's report then going to standard error); an empty option value and a
count past its bound are refused as they are read.
On a terminal, long work shows a progress bar (quiet when piped). Ctrl-C, SIGTERM and SIGHUP
cancel a command; nothing it started outlives it (``common.guard``, ``engine.io.process``).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import warnings
from collections.abc import Callable, Iterable

from engine.cli import evolve, fidelity, mapping, mosaic, simulate
from engine.cli.common import Parser, guard, message_line, printable_output
from engine.errors import Cancelled, MeshScopeError, MeshScopeWarning

__all__ = ["build_parser", "main", "version"]


def version() -> str:
    """The version of the installed ``meshscope`` distribution (its metadata: a wheel's or an
    editable install's)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("meshscope")
    except PackageNotFoundError:  # the sources on the path without an install
        return "(not installed: pip install -e . in the repository)"


def build_parser(
    extra_commands: Iterable[Callable[[argparse._SubParsersAction], None]] = (),
    argv: list[str] | None = None,
) -> argparse.ArgumentParser:
    """The ``meshscope`` parser; each of ``extra_commands`` adds a subcommand (``serve``).

    Given the ``argv`` it will parse, only the family of the command named there is built in
    full (its options need the engine's registries, which import numpy, scipy and numba);
    the others get their name and one line of help, all ``meshscope --help`` shows.
    """
    p = Parser(
        prog="meshscope",
        description="Map spiking neural networks onto mesh accelerators: evaluate, map, "
        "convert, evolve and simulate mappings, or serve the explorer.",
    )
    p.add_argument("--version", action="version", version=f"meshscope {version()}",
                   help="print the installed version and exit")  # fmt: skip
    sub = p.add_subparsers(dest="command", required=True, parser_class=Parser)
    wanted = _command(argv)
    for family in (mapping, evolve, simulate, fidelity, mosaic):
        if argv is None or wanted in family.COMMANDS:
            family.add_commands(sub)
        else:
            for name, text in family.COMMANDS.items():
                sub.add_parser(name, help=text)
    for add in extra_commands:
        add(sub)
    return p


def _command(argv: list[str] | None) -> str | None:
    """The subcommand ``argv`` names (its first word that is not an option)."""
    return next((a for a in argv or () if not a.startswith("-")), None)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """MeshScope's own warnings as one line on stderr; any other as Python shows it."""
    if issubclass(category, MeshScopeWarning):
        sys.stderr.write(f"meshscope: warning: {message_line(message)}\n")
    else:  # a line at a time (``Printable`` keeps a newline only at the end of a write)
        text = warnings.formatwarning(message, category, filename, lineno, line)
        for each in text.splitlines():
            sys.stderr.write(each + "\n")


def main(argv=None, extra_commands=()) -> int:
    """Run ``meshscope argv``; returns the exit code (2 on bad input, one line on stderr).

    Ctrl-C, SIGTERM and SIGHUP cancel a command (a search keeps what it found, its history
    marked cancelled, and shows it saying so); a cancelled command exits 130 — never 0, even
    when it printed the best it had —, and one ended by SIGTERM or SIGHUP 128 + the signal's
    number. What a command prints goes through ``common.Printable``: no character of a name
    read from a file controls the terminal, and a message repeats at most ``MAX_ECHOED``
    characters of one word of input. Without ``argv`` — ``meshscope`` run as a
    program — no process the command started outlives it (``engine.cli.common.guard``).
    A server (``serve``: ``args.server``) opts out of both: it keeps the default signals and
    the browser it opened.
    """
    own_process = argv is None
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(extra_commands, argv).parse_args(argv)
    if getattr(args, "no_cache", False):
        from engine.specs import set_network_cache

        set_network_cache(False)
    caught = None
    server = getattr(args, "server", False)
    # what a command prints may hold names read from files: nothing of it controls the
    # terminal (a server's log keeps its own lines)
    shown = contextlib.nullcontext() if server else printable_output()
    try:
        with shown, guard(own_process and not server, signals=not server) as caught:
            code = _run(args)
    except KeyboardInterrupt:  # a signal while the command was being cleaned up after
        code = 130
    if caught is not None and caught.signum:
        return 128 + caught.signum
    return code


def _run(args) -> int:
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            return args.func(args)
    except MeshScopeError as e:
        sys.stderr.write(f"meshscope: error: {message_line(e)}\n")
        return 2
    except Cancelled as e:  # stopped before it had anything to show
        sys.stderr.write(f"meshscope: {message_line(e)}\n")
        return 130
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader left (``… | head``): stop quietly, as Unix tools do
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())

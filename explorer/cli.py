"""The ``meshscope`` console script: the engine's commands plus ``serve``.

The engine's command line (``engine.cli``) knows nothing of the explorer; this module,
which sees both, adds the ``serve`` subcommand to it. Imports stay one-way.
"""

from __future__ import annotations

import argparse
import dataclasses
import errno
import re
import socket
import sys

from engine.cli import main as engine_main
from engine.cli.common import whole
from engine.defaults import DEFAULT_HARDWARE, DEFAULT_NETWORK
from engine.errors import SpecError
from explorer.admission import ServerBudget, parse_size

__all__ = ["DEFAULT_PORT", "PortInUseError", "add_serve", "check_can_listen", "main", "origin"]

DEFAULT_PORT = 5006


class PortInUseError(SpecError):
    """The ``--port`` (or ``--address``) given to ``serve`` cannot be listened on."""


def add_serve(sub) -> None:
    """Add ``meshscope serve`` to the engine's subcommands."""
    sv = sub.add_parser("serve", help="open the explorer in a browser")
    sv.add_argument(
        "--network", help=f"workload spec or network file to open (default {DEFAULT_NETWORK})"
    )
    sv.add_argument("--hardware", help=f"hardware preset or spec (default {DEFAULT_HARDWARE})")
    sv.add_argument(
        "--mapping", metavar="FILE", help="open this mapping file (network and hardware from it)"
    )
    sv.add_argument(
        "--port",
        type=whole(1, 65535),
        default=DEFAULT_PORT,
        help=f"port to listen on (default {DEFAULT_PORT})",
    )
    sv.add_argument(
        "--address",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1; 0.0.0.0 shows it to other machines)",
    )
    sv.add_argument(
        "--allow-files", action="append", default=[], metavar="DIR",
        help="let clients open the network, hardware and mapping files under DIR (repeatable; "
        "by default they name only built-in networks and hardware, and upload the rest)",
    )  # fmt: skip
    sv.add_argument(
        "--allow-origin", action="append", default=[], metavar="HOST:PORT", type=origin,
        help="also accept pages served as HOST:PORT (repeatable; needed with --address 0.0.0.0: "
        "the address other machines' browsers use)",
    )  # fmt: skip
    sv.add_argument(
        "--max-memory", type=_size, metavar="SIZE",
        help="the memory all pages together may use (e.g. 8G, 512M; default: half of this "
        "machine's): heavy work waits in a queue, the page shows its place in line, until it "
        "fits",
    )  # fmt: skip
    sv.add_argument(
        "--client-jobs", type=whole(1, 1000), default=ServerBudget.client_jobs, metavar="N",
        help=f"requests one computer may have waiting or running at once (default "
        f"{ServerBudget.client_jobs})",
    )  # fmt: skip
    sv.add_argument(
        "--secret-file", metavar="FILE",
        help="sign session ids with the key in FILE (32 bytes or more, readable by its owner "
        "only), for several servers behind one proxy; by default a new key at each start",
    )  # fmt: skip
    sv.add_argument(
        "--no-browser", action="store_true", help="do not open a browser tab, just serve"
    )
    # a server: the browser it opens lives on, and SIGTERM ends it as it always did
    sv.set_defaults(func=cmd_serve, server=True)


_ORIGIN = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?):(\d{1,5})$")


def origin(text: str) -> str:
    """An option's type: a page's origin as HOST:PORT (a browser's origin always has a port,
    and Bokeh would take a bare host for port 80: a name that never matches)."""
    m = _ORIGIN.match(text.strip())
    if not m or not 1 <= int(m.group(2)) <= 65535:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not HOST:PORT: name the host and the port the browsers' address "
            "shows, e.g. lecture-room.example.org:5006"
        )
    return text.strip().lower()


def check_can_listen(address: str, port: int) -> None:
    """Raise ``PortInUseError`` unless ``address:port`` can be listened on (before the server
    spends seconds warming up, only to fail at its bind)."""
    try:
        family, kind, proto, _, where = socket.getaddrinfo(
            address or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server does
            probe.bind(where)
    except OSError as e:
        raise _listen_error(e, address, port) from None


def _listen_error(e: OSError, address: str, port: int) -> PortInUseError:
    if e.errno == errno.EADDRINUSE:
        return PortInUseError(
            f"port {port} on {address} is in use (another meshscope serve, or make serve?): "
            f"choose another with --port, e.g. --port {port + 1}"
        )
    return PortInUseError(
        f"cannot listen on {address}:{port} ({e.strerror or e}): choose another --address or --port"
    )


def _size(text: str) -> int:
    try:
        return parse_size(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a size: write e.g. 8G, 512M or 2000000 (bytes)"
        ) from None


def cmd_serve(args) -> int:
    from explorer.access import ClientAccess
    from explorer.app import serve, websocket_origins
    from explorer.serving import read_secret

    websocket_origins(args.address, args.port, tuple(args.allow_origin))  # before any work
    ClientAccess.for_server(allow_files=args.allow_files)  # every folder exists
    secret = read_secret(args.secret_file)
    check_can_listen(args.address, args.port)
    try:
        serve(  # with --mapping, the network and hardware default to the file's
            network=args.network or (None if args.mapping else DEFAULT_NETWORK),
            hardware=args.hardware or (None if args.mapping else DEFAULT_HARDWARE),
            mapping=args.mapping,
            port=args.port,
            address=args.address,
            show=not args.no_browser,
            allow_files=tuple(args.allow_files),
            allow_origins=tuple(args.allow_origin),
            secret=secret,
            budget=dataclasses.replace(
                ServerBudget.default(),
                client_jobs=args.client_jobs,
                **({"memory_bytes": args.max_memory} if args.max_memory else {}),
            ),
        )
    except OSError as e:  # taken between the check and the server's own bind
        raise _listen_error(e, args.address, args.port) from None
    return 0


def main(argv=None) -> int:
    """``meshscope`` with every command, ``serve`` included."""
    return engine_main(argv, extra_commands=[add_serve])


if __name__ == "__main__":
    sys.exit(main())

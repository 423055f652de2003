"""``meshscope serve``: the explorer's subcommand of the console script."""

from __future__ import annotations

import socket

from explorer.cli import check_can_listen, main


def test_serve_on_a_port_in_use_is_one_line_and_exit_2(capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code = main(["serve", "--port", str(port), "--no-browser"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("meshscope: error: ")
    assert f"port {port}" in err and f"--port {port + 1}" in err


def test_serve_on_an_address_that_is_not_here_is_one_line_and_exit_2(capsys):
    code = main(["serve", "--address", "203.0.113.7", "--no-browser"])  # TEST-NET-3: not ours
    out, err = capsys.readouterr()
    assert code == 2 and err.count("\n") == 1 and "--address" in err


def test_a_free_port_passes_the_check():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    check_can_listen("127.0.0.1", port)  # raises if it could not listen


def test_the_engine_command_line_has_no_serve(capsys):
    from engine.cli import main as engine_main

    try:
        engine_main(["serve"])
    except SystemExit as e:
        assert e.code == 2
    assert "invalid choice: 'serve'" in capsys.readouterr().err


def test_serve_with_a_secret_file_others_may_read_is_one_line_and_exit_2(capsys, tmp_path):
    secret = tmp_path / "secret"
    secret.write_text("s" * 64)
    secret.chmod(0o644)
    code = main(["serve", "--secret-file", str(secret), "--no-browser"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "--secret-file" in err and "chmod 600" in err

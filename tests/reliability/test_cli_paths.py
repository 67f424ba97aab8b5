"""Regressions at the command line and in the file system: one line and a non-zero
exit for bad arguments, no directory chmodded that memls did not create, no token in the
process list, no project key made of invisible characters."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from lsp_helpers import free_port, wait_for_port
from reliability.wire import TOKEN, TcpPeer


def memls(*args, env: dict | None = None, cwd: Path | None = None, timeout: float = 120):
    return subprocess.run(
        [sys.executable, "-m", "memls", *args],
        capture_output=True,
        env={**os.environ, **(env or {})},
        cwd=cwd,
        timeout=timeout,
    )


def one_line(out: subprocess.CompletedProcess) -> str:
    err = out.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err, err
    assert err.count("\n") == 1 and err.startswith("memls: error: "), err
    return err


def test_a_port_out_of_range_is_one_line(tmp_path):
    out = memls("--data-dir", str(tmp_path / "d"), "serve", "--tcp", "127.0.0.1:99999")
    assert out.returncode == 2 and "--tcp" in one_line(out)


def test_a_port_in_use_is_one_line(tmp_path):
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        out = memls(
            "--data-dir",
            str(tmp_path / "d"),
            "serve",
            "--tcp",
            f"127.0.0.1:{port}",
            env={"MEMLS_TOKEN": TOKEN},
        )
    assert out.returncode == 1, out
    err = out.stderr.decode()
    assert "Traceback" not in err and "address already in use" in err.lower(), err


@pytest.mark.parametrize(
    "args,flag",
    [
        (["store", "-p", "proj", b"caf\xe9 latte"], "TEXT"),
        (["store", "-p", b"pro\xffj", "text"], "--project"),
        (["query", "-p", "proj", b"\xff\xfe"], "query"),
        (["get", "-p", "proj", b"\xc3\x28"], "ID"),
        (["store", "-p", "proj", "--type", b"n\xffte", "x"], "--type"),
    ],
)
def test_non_utf8_arguments_are_one_line_naming_the_argument(tmp_path, args, flag):
    out = memls("--data-dir", str(tmp_path / "d"), *args)
    err = one_line(out)
    assert out.returncode == 2 and flag in err and "not valid Unicode" in err, err


def test_an_empty_data_dir_is_refused_and_the_current_directory_untouched(tmp_path):
    cwd = tmp_path / "cwd"
    cwd.mkdir(mode=0o755)
    os.chmod(cwd, 0o755)
    out = memls("--data-dir", "", "store", "-p", "proj", "text", cwd=cwd)
    assert out.returncode == 2 and "--data-dir" in one_line(out)
    assert stat.S_IMODE(cwd.stat().st_mode) == 0o755 and list(cwd.iterdir()) == []


def test_an_existing_directory_keeps_its_mode_a_new_one_is_0700(tmp_path):
    shared = tmp_path / "readable"
    shared.mkdir()
    os.chmod(shared, 0o755)
    out = memls("--data-dir", str(shared), "store", "-p", "proj", "kept mode")
    assert out.returncode == 0, out.stderr
    assert stat.S_IMODE(shared.stat().st_mode) == 0o755
    fresh = tmp_path / "new" / "data"
    assert memls("--data-dir", str(fresh), "store", "-p", "proj", "x").returncode == 0
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o700
    assert stat.S_IMODE((fresh / "memls.sqlite3").stat().st_mode) == 0o600


@pytest.mark.parametrize("mode", [0o1777, 0o777, 0o775])
def test_a_directory_others_can_write_is_refused_and_left_as_it_was(tmp_path, mode):
    public = tmp_path / "public"
    public.mkdir()
    os.chmod(public, mode)
    out = memls("--data-dir", str(public), "store", "-p", "proj", "text")
    assert out.returncode == 1 and "writable by other users" in one_line(out)
    assert stat.S_IMODE(public.stat().st_mode) == mode and list(public.iterdir()) == []


def test_a_project_of_invisible_characters_is_refused(tmp_path):
    for key in ("\u200b", "\u200b\u200c\u200d", "\ufeff", "\u2060 \u00a0"):
        out = memls("--data-dir", str(tmp_path / "d"), "store", "-p", key, "text")
        assert out.returncode == 2 and "--project" in one_line(out)
    assert (
        memls("--data-dir", str(tmp_path / "d"), "store", "-p", "a\u200bb", "text").returncode == 0
    )


def test_the_token_is_not_on_the_command_line(tmp_path):
    out = memls(
        "--data-dir", str(tmp_path / "d"), "serve", "--tcp", "127.0.0.1:7999", "--token", TOKEN
    )
    assert out.returncode == 2 and "--token" in one_line(out)

    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    os.chmod(token_file, 0o600)
    port = free_port()
    root = tmp_path / "proj"
    root.mkdir()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "memls",
            "--data-dir",
            str(tmp_path / "d"),
            "serve",
            "--tcp",
            f"127.0.0.1:{port}",
            "--token-file",
            str(token_file),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        assert wait_for_port(port)
        cmdline = Path(f"/proc/{proc.pid}/cmdline").read_bytes()
        assert TOKEN.encode() not in cmdline
        peer = TcpPeer(port)
        assert "result" in peer.initialize(root, TOKEN)
        peer.close()
    finally:
        proc.terminate()
        assert proc.wait(timeout=60) == 0
        assert b"Traceback" not in proc.stderr.read()


def test_a_generated_token_file_is_never_readable_by_others(tmp_path):
    data = tmp_path / "d"
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "memls",
            "--data-dir",
            str(data),
            "serve",
            "--tcp",
            f"127.0.0.1:{port}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={k: v for k, v in os.environ.items() if k != "MEMLS_TOKEN"},
    )
    try:
        assert wait_for_port(port)
        token = (data / "tcp.token").read_text().strip()
        assert len(token) >= 24
        assert stat.S_IMODE((data / "tcp.token").stat().st_mode) == 0o600
    finally:
        proc.terminate()
        proc.wait(timeout=60)

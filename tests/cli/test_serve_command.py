"""`hudi-meta serve` as a user starts it: the URL it prints answers, a bad address or value is one line and
exit 2 (nothing served), and SIGTERM stops it."""

from __future__ import annotations

import socket
import urllib.request
from pathlib import Path

import pytest

from hudi_meta.index.migrate import upgrade
from tests.cli.helpers import cli
from tests.web.test_browser import start_server, stop_server


@pytest.fixture
def store(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    upgrade(url)
    return url


def test_serves_the_ui_read_only_and_stops_on_sigterm(store: str) -> None:
    url, process = start_server(store, {"HUDI_META_UI_TOKEN": ""})
    try:
        with urllib.request.urlopen(f"{url}/") as response:
            assert response.status == 200 and b"read-only" in response.read()
        with urllib.request.urlopen(f"{url}/metrics") as response:
            assert response.status == 200
    finally:
        stop_server(process)
    assert process.returncode is not None


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--port", "70000"], "argument --port: expected a whole number from 0 to 65535, got '70000'"),
        (["--port", "http"], "argument --port: expected a whole number from 0 to 65535, got 'http'"),
        (["--threads", "0"], "argument --threads: expected a whole number from 1 to 64, got '0'"),
        (["--host", "no-such-host.invalid"], "--host 'no-such-host.invalid'"),
        (["--host", "192.0.2.1"], "cannot listen on 192.0.2.1"),
        (["--sync-mode", "hms"], "--sync-mode and --sync-uri go together"),
        (["--sync-mode", "glue", "--sync-uri", "x"], "invalid choice"),
    ],
)
def test_bad_values_are_one_line(store: str, args: list[str], says: str) -> None:
    done = cli("--db", store, "serve", *args, timeout=60)
    assert done.returncode == 2
    assert says in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.stdout == ""


def test_a_port_in_use_is_one_line(store: str) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        done = cli("--db", store, "serve", "--port", str(port), timeout=60)
    assert done.returncode == 2 and f"cannot listen on 127.0.0.1:{port}" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_a_new_store_is_made_and_an_old_one_refused(tmp_path: Path) -> None:
    """A newcomer's store is created on first use; one at an older schema is never migrated silently."""
    url, process = start_server(f"sqlite:///{tmp_path / 'new.db'}", {})
    try:
        with urllib.request.urlopen(f"{url}/") as response:
            assert b"No table is registered yet" in response.read()
    finally:
        stop_server(process)
    old = f"sqlite:///{tmp_path / 'old.db'}"
    upgrade(old, "0003")
    done = cli("--db", old, "serve", "--port", "0", timeout=60)
    assert done.returncode == 2 and "init-db" in done.stderr and len(done.stderr.strip().splitlines()) == 1

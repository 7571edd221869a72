"""Issue 9 item 5: `hudi-meta read` aborted now and then after printing every row (SIGABRT, `terminate called
without an active exception`): a pyarrow IO thread releasing a Python-owned read buffer (parquet pre-buffering
of a Python file) after interpreter shutdown began is forced out by CPython, and the unwind through a noexcept
C++ destructor terminates the process (core dump: `PyBuffer::~PyBuffer` -> `PyGILState_Ensure` -> `take_gil`
-> `pthread_exit` -> `std::terminate`). The program now ends without interpreter shutdown.

Many reads run as subprocesses, several at once, beside busy processes that load every core. Before the fix
2 to 10 reads in 100 aborted here (9 of 84, 5 of 80 measured), so the default run catches it only sometimes:
the test below it is the deterministic half. HUDI_META_READ_STRESS sets how many reads (default 40); after
HUDI_META_READ_STRESS_SECONDS (default 45: each test took 2 minutes of a 40-minute CI run at 120) the run stops
starting reads once it has made MIN_READS (fewer would say little): the time bounds the run, it is never asserted.
Long runs set both higher."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.cli.helpers import TRIPS

READS = int(os.environ.get("HUDI_META_READ_STRESS", "40"))
SECONDS = float(os.environ.get("HUDI_META_READ_STRESS_SECONDS", "45"))
PARALLEL = 4
MIN_READS = 12  # reads made whatever the time: fewer would say little


@pytest.fixture
def busy_cores() -> Iterator[None]:
    """One spinning process per core for the test's duration."""
    spinners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
        for _ in range(os.cpu_count() or 2)
    ]
    try:
        yield
    finally:
        for p in spinners:
            p.send_signal(signal.SIGKILL)
            p.wait()


LIBRARY_READ = (  # the read command, called as a library: the interpreter shuts down at the end
    "import sys\nfrom hudi_meta.cli.main import main\nsys.exit(main(['read', sys.argv[1]]))\n"
)


def stress(command: list[str]) -> None:
    """Run `command` many times, PARALLEL at once: none may fail, each prints the whole snapshot (5 rows)."""
    results: list[tuple[int, str, int]] = []
    running: list[subprocess.Popen[str]] = []
    started, deadline = 0, time.monotonic() + SECONDS

    def reap(proc: subprocess.Popen[str]) -> None:
        stdout, stderr = proc.communicate(timeout=300)
        results.append((proc.returncode, stderr, len(stdout.splitlines())))

    while started < READS and (started < MIN_READS or time.monotonic() < deadline):
        while len(running) >= PARALLEL:
            reap(running.pop(0))
        running.append(subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        started += 1
    for proc in running:
        reap(proc)
    failed = [(code, err.strip()) for code, err, _ in results if code != 0 or err]
    assert not failed, f"{len(failed)} of {len(results)} reads failed: {failed[:3]}"
    assert {rows for _, _, rows in results} == {5}  # every read printed the whole snapshot


@pytest.mark.slow
@pytest.mark.usefixtures("busy_cores")
def test_many_reads_under_load_never_abort(fixture_table: Any) -> None:
    stress([sys.executable, "-m", "hudi_meta.cli.main", "read", str(fixture_table(TRIPS))])


@pytest.mark.slow
@pytest.mark.usefixtures("busy_cores")
def test_many_library_reads_that_end_with_interpreter_shutdown_never_abort(fixture_table: Any) -> None:
    """The library half of the fix: base files open as Arrow-native files (`Storage.open_arrow`), so no Arrow
    IO thread holds a Python buffer when the interpreter shuts down (the CLI's `os._exit` does not cover a
    program that imports the package). 100 such reads under load before that change did not abort here
    either, so this guards the library path rather than reproducing the CLI's measured aborts."""
    stress([sys.executable, "-c", LIBRARY_READ, str(fixture_table(TRIPS))])


def test_the_program_ends_without_interpreter_shutdown(fixture_table: Any) -> None:
    """Deterministic half of the fix: after a command, shutdown (where pool threads are forced out) never runs,
    so no atexit handler does; the output is flushed all the same."""
    program = (
        "import atexit, sys\n"
        "atexit.register(lambda: sys.stderr.write('interpreter shutdown ran\\n'))\n"
        f"sys.argv = ['hudi-meta', 'read', {str(fixture_table(TRIPS))!r}]\n"
        "from hudi_meta.cli.main import main\n"
        "sys.exit(main())\n"
    )
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stderr == ""
    assert len(out.stdout.splitlines()) == 5

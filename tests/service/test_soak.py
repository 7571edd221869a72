"""The soak of issue 36 item 10: a writer process committing about every second beside `hudi-meta serve` (rounds every
half second) on a version-9 table with the metadata table on. Our writer and our scheduler never cross
(docs/concurrency.md section 2, "instant times"), so no compaction run is refused for an older pending write and no
plan is taken back; at the end every written version is in the snapshot (ours and hudi-rs read the model) and
`hudi-meta check` finds nothing. HUDI_META_SOAK_SECONDS sets how long the writer writes (default 20: CI); the
numbers (writes, plans, compactions, take-backs) are printed, `pytest -s` shows them."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

from hudi_meta.index.db import make_engine
from hudi_meta.index.registry import table_id_of
from hudi_meta.metadata.init import create_metadata_table
from hudi_meta.service.records import StepOutcome, StepRecord, all_steps
from hudi_meta.storage.factory import normalize_uri
from hudi_meta.table.table import HudiTable
from tests.cli.helpers import cli
from tests.compaction.core import create_core_table
from tests.metadata.helpers import check_readers
from tests.service.helpers import Served, by_id, hudi_rs, wait_for

SOAK_SECONDS = float(os.environ.get("HUDI_META_SOAK_SECONDS", "20"))


def serve_config(root: Path, store: str, table: str) -> Path:
    """One table, T = now - 1 h, rounds every half second, scheduling each round, no catalog."""
    text = f'[store]\nurl = "{store}"\n[spark]\nengine = "local"\n[ui]\nport = 0\ntoken = "t0ken"\n'
    text += '[service]\ninterval = "500ms"\nlease = "20s"\nretry_backoff = "1s"\nmax_backoff = "2s"\n'
    text += "keep_steps = 10000000\n"
    text += f'[[tables]]\npath = "{table}"\ndata_latency = "1h"\nmode = "symlink"\nsync = false\n'
    text += 'clean_policy = "KEEP_LATEST_FILE_VERSIONS"\nclean_retained = 1\n'
    out = root / "hudi-meta.toml"
    out.write_text(text)
    return out


def steps(store: str, path: str) -> list[StepRecord]:
    engine = make_engine(store)
    try:
        table_id = table_id_of(engine, normalize_uri(path))
        return all_steps(engine, [table_id]) if table_id is not None else []
    finally:
        engine.dispose()


def test_a_writer_beside_the_service_never_crosses_its_scheduler(tmp_path: Path) -> None:
    path = str(tmp_path / "events")
    create_core_table(path, "soak", version=9)
    create_metadata_table(HudiTable.open(path))
    store = f"sqlite:///{tmp_path / 'store.db'}"
    served = Served(serve_config(tmp_path, store, path), tmp_path / "serve.log")
    out = tmp_path / "writer.json"
    try:
        writer = subprocess.run(
            [sys.executable, "-m", "tests.service.soak_writer", path, str(SOAK_SECONDS), str(out)],
            capture_output=True,
            text=True,
            timeout=SOAK_SECONDS + 300,
        )
        assert writer.returncode == 0, writer.stderr
        written = json.loads(out.read_text())
        mark = max((s.id for s in steps(store, path)), default=0)
        wait_for(lambda: _settled(store, path, mark), 120, "a round after the last write")
        assert served.stop(signal.SIGTERM) == 0
    finally:
        if served.process.poll() is None:
            served.stop(signal.SIGKILL)

    history = steps(store, path)
    counts = {
        "writes": len(written["instants"]),
        "conflicts": len(written["conflicts"]),
        "plans": sum(s.step == "schedule" and s.outcome == StepOutcome.SCHEDULED for s in history),
        "compactions": sum(s.step == "compaction" and s.outcome == StepOutcome.COMPLETED for s in history),
        "take-backs": sum(s.outcome == StepOutcome.TAKEN_BACK for s in history),
        "failed": sum(s.outcome == StepOutcome.FAILED for s in history),
    }
    print(f"\nsoak of {SOAK_SECONDS:g} s: " + ", ".join(f"{k}={v}" for k, v in counts.items()))
    skipped = Counter(
        re.sub(r"\d{14,17}", "<t>", str(s.detail.get("reason", ""))).split(" on ")[0]
        for s in history
        if s.step == "schedule" and s.outcome == StepOutcome.SKIPPED
    )
    print("schedule skipped: " + "; ".join(f"{n} x {why}" for why, n in skipped.most_common()))
    assert counts["plans"] > 0 and counts["compactions"] > 0, counts
    crossed = [s for s in history if s.outcome in (StepOutcome.TAKEN_BACK, StepOutcome.FAILED)]
    assert not crossed, crossed
    assert not written["conflicts"], written["conflicts"]
    log = served.output()
    assert "sorts before the links" not in log and "still pending and older than compaction" not in log

    model = {k: (v[0], v[1]) for k, v in written["model"].items()}
    assert by_id(HudiTable.open(path).read("snapshot")) == model
    assert hudi_rs(path, "snapshot") == model
    assert hudi_rs(path, "ro") == by_id(HudiTable.open(path).read("ro"))
    check_readers(path)  # the metadata table lists what storage holds
    check = cli("--db", store, "check", path)
    assert (check.returncode, check.stdout) == (0, ""), check.stdout + check.stderr


def _settled(store: str, path: str, mark: int) -> bool:
    """A round that scheduled after step `mark` (its index saw every write) has ended: its compaction, if it planned
    one, ran before its clean."""
    history = steps(store, path)
    scheduled = [s.id for s in history if s.step == "schedule" and s.id > mark and s.ended_at is not None]
    return bool(scheduled) and any(s.step == "clean" and s.id > scheduled[0] and s.ended_at for s in history)

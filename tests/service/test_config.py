"""The service configuration: a full file reads into settings, and each kind of mistake is one line naming the
file and the key, through `config check` and `serve --config` alike (exit 2, nothing started)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hudi_meta.compaction.triggers import Trigger
from hudi_meta.errors import ConfigError
from hudi_meta.service.config import load_config
from hudi_meta.sync.hive_schema import TableStrategy
from tests.cli.helpers import cli
from tests.compaction.core import CoreTable, rows

FULL = """
[store]
url = "sqlite:///{root}/store.db"

[spark]
engine = "spark-submit"
master = "spark://127.0.0.1:7077"
submit_args = ["--executor-memory", "1g"]

[catalog]
mode = "hiveserver2"
uri = "127.0.0.1:10000"
database = "lake"
timeout = "5s"

[ui]
host = "0.0.0.0"
port = 9000
token = "from-the-file"

[service]
interval = "10s"
lease = "2m"
retry_backoff = "5s"
max_backoff = "1h"
keep_steps = 50

[[tables]]
path = "{root}/a"
event_time_field = "ts"
data_latency = "30m"
trigger = "num-commits"
max_delta_commits = 3
mode = "copy"
exact = true
schedule_interval = "5m"
clean_policy = "keep_latest_file_versions"
clean_retained = 2
sync_database = "other"
sync_name = "events_a"

[[tables]]
path = "{root}/b"
data_latency = "1h"
clean = false
sync = false
"""


@pytest.fixture
def root(tmp_path: Path) -> Path:
    for name in ("a", "b"):
        CoreTable(tmp_path / name).write(rows(("k", 1, 1.0)))
    return tmp_path


def write(root: Path, text: str) -> Path:
    path = root / "hudi-meta.toml"
    path.write_text(text.format(root=root))
    return path


def test_a_full_file(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HUDI_META_UI_TOKEN", raising=False)
    c = load_config(write(root, FULL))
    assert c.store_url == f"sqlite:///{root}/store.db"
    assert (c.spark.engine, c.spark.master, c.spark.submit_args) == (
        "spark-submit",
        "spark://127.0.0.1:7077",
        ("--executor-memory", "1g"),
    )
    assert c.catalog is not None and (c.catalog.mode, c.catalog.database, c.catalog.timeout_s) == (
        "hiveserver2",
        "lake",
        5.0,
    )
    assert (c.ui.host, c.ui.port, c.ui.token) == ("0.0.0.0", 9000, "from-the-file")
    assert (c.loop.interval_s, c.loop.lease_s, c.loop.retry_backoff_s, c.loop.max_backoff_s) == (10, 120, 5, 3600)
    a, b = c.tables
    assert (a.path, a.data_latency_ms, a.trigger, a.max_delta_commits) == (
        str(root / "a"),
        1_800_000,
        Trigger.NUM_COMMITS,
        3,
    )
    assert (a.mode, a.exact, a.schedule_interval_s, a.clean_policy, a.clean_retained) == (
        "copy",
        True,
        300,
        "KEEP_LATEST_FILE_VERSIONS",
        2,
    )
    assert (a.sync_database, a.sync_name, b.clean, b.sync, b.trigger) == (
        "other",
        "events_a",
        False,
        False,
        Trigger.EVENT_TIME,
    )
    assert (a.skip_ro_suffix, a.sync_strategy, b.skip_ro_suffix, b.sync_strategy) == (None, None, None, None)
    layout = load_config(
        write(root, FULL.replace('sync_name = "events_a"', 'skip_ro_suffix = true\nsync_strategy = "RO"'))
    )
    assert (layout.tables[0].skip_ro_suffix, layout.tables[0].sync_strategy) == (True, TableStrategy.RO)
    monkeypatch.setenv("HUDI_META_UI_TOKEN", "from-the-environment")
    assert load_config(write(root, FULL)).ui.token == "from-the-environment"


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (("[spark]", "[spark]\nmaster_url = 'x'"), "spark.master_url: unknown key"),
        (("[[tables]]\npath", "[[tables]]\npaht = 1\npath"), "tables[0].paht: unknown key (did you mean path?)"),
        (("port = 9000", 'port = "9000"'), "ui.port: expected a whole number, got text '9000'"),
        (("port = 9000", "port = 70000"), "ui.port: expected a whole number from 0 to 65535, got 70000"),
        (('mode = "copy"', 'mode = "hard"'), "tables[0].mode: expected one of symlink, copy, got 'hard'"),
        (("exact = true", 'exact = "yes"'), "tables[0].exact: expected true or false, got text 'yes'"),
        (('data_latency = "30m"', 'data_latency = "soon"'), "tables[0].data_latency: not a duration: 'soon'"),
        (('interval = "10s"', "interval = 10"), "service.interval: expected text, got a number 10"),
        (('lease = "2m"', 'lease = "10ms"'), "service.lease: must be at least 1000 ms"),
        # issue 25: durations at most 100 years (a lease of 9999999d overflowed the clock), ASCII digits only
        (('lease = "2m"', 'lease = "9999999d"'), "service.lease: '9999999d' is more than 36500d (100 years)"),
        (('interval = "10s"', 'interval = "１s"'), "service.interval: not a duration: '１s'"),
        (
            ('data_latency = "30m"', 'data_latency = "9999999999999999d"'),
            "tables[0].data_latency: '9999999999999999d' is",
        ),
        (('timeout = "5s"', 'timeout = "2h"'), "catalog.timeout: must be at most 3600 s"),
        (('database = "lake"', 'database = "dé"'), "catalog.database: use letters, digits and underscores (ASCII)"),
        (("clean_retained = 2", "clean_retained = 2147483648"), "tables[0].clean_retained: expected a whole number"),
        (('engine = "spark-submit"', 'engine = "flink"'), "spark.engine: expected one of spark, spark-submit, local"),
        (('engine = "spark-submit"', 'engine = "spark"'), 'spark.submit_args: used by engine = "spark-submit" only'),
        (('submit_args = ["--executor-memory", "1g"]', "submit_args = [1]"), "spark.submit_args: expected a list"),
        (('trigger = "num-commits"', 'trigger = "daily"'), "tables[0].trigger: expected one of event-time"),
        (("max_delta_commits = 3", "max_delta_commits = 0"), "tables[0].max_delta_commits: expected a whole number"),
        (
            ('trigger = "num-commits"', 'trigger = "time-elapsed"'),
            "tables[0].max_delta_commits: used by the num-commits trigger only (the trigger is time-elapsed)",
        ),
        (('clean_policy = "keep_latest_file_versions"', 'clean_policy = "KEEP_ALL"'), "tables[0].clean_policy:"),
        (("clean_retained = 2", "clean_retained = -1"), "tables[0].clean_retained: expected a whole number from 0"),
        (('sync_name = "events_a"', 'sync_name = "a;b"'), "tables[0].sync_name: use letters, digits"),
        (('sync_name = "events_a"', 'sync_strategy = "BOTH"'), "tables[0].sync_strategy: expected one of ro, rt, all"),
        (('sync_name = "events_a"', 'skip_ro_suffix = "yes"'), "tables[0].skip_ro_suffix: expected true or false"),
        (('path = "{root}/b"', 'path = "{root}/a"'), "tables[1].path: the same table as tables[0]"),
        (('path = "{root}/b"', 'path = "{root}/nope"'), "tables[1].path: {root}/nope is not a Hudi table"),
        (('[[tables]]\npath = "{root}/b"\n', "[[tables]]\n"), "tables[1].path: required"),
        (('uri = "127.0.0.1:10000"\n', ""), "catalog.uri: required"),
        (('max_backoff = "1h"', 'max_backoff = "1s"'), "service.max_backoff: must be at least retry_backoff"),
        (('[store]\nurl = "sqlite:///{root}/store.db"', "store = 1"), "store: expected a table, got a number 1"),
        (("[store]", "[stor]"), "stor: unknown key (did you mean store?)"),
        (('data_latency = "30m"', 'data_latncy = "30m"'), "tables[0].data_latncy: unknown key (did you mean data_"),
        (("clean_retained = 2", "clean_retained = 2\nclean_hours = 3"), "tables[0].clean_hours: is for KEEP_LATEST_BY"),
        (
            ('engine = "spark-submit"\nmaster = "spark://127.0.0.1:7077"\nsubmit', 'engine = "local"\nmaster = "x"\n#'),
            'spark.master: engine = "local" runs without Spark',
        ),
        (("[store]", "[store"), "not valid TOML"),
    ],
)
def test_each_mistake_is_one_line_naming_the_key(root: Path, change: tuple[str, str], says: str) -> None:
    old, new = change
    assert old in FULL
    path = write(root, FULL.replace(old, new, 1))
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    message = str(caught.value)
    assert message.startswith(f"config {path}: ") and says.format(root=root) in message, message
    assert "\n" not in message


def test_sync_needs_a_catalog_and_a_table_needs_a_data_latency(root: Path) -> None:
    no_catalog = write(root, f'[[tables]]\npath = "{root}/a"\ndata_latency = "1h"\nsync = true\n')
    with pytest.raises(ConfigError, match=r"tables\[0\].sync: true needs a \[catalog\] \(catalog.uri\)"):
        load_config(no_catalog)
    no_latency = write(root, f'[[tables]]\npath = "{root}/a"\nsync = false\n')
    with pytest.raises(ConfigError, match=r"tables\[0\].data_latency: required"):
        load_config(no_latency)


def test_every_key_is_optional_but_path_and_the_defaults_hold(root: Path) -> None:
    """README: every key optional but a table's `path` (and `data_latency` where the table sets none): such a
    file is taken, with the documented defaults; sync is on exactly when a [catalog] is configured."""
    minimal = f'[[tables]]\npath = "{root}/a"\ndata_latency = "1h"\n'
    c = load_config(write(root, minimal))
    (t,) = c.tables
    assert (c.store_url, c.catalog, c.spark.engine, c.spark.master, c.spark.submit_args) == (
        None,
        None,
        "spark",
        "local[2]",
        (),
    )
    assert (c.ui.enabled, c.ui.host, c.ui.port) == (True, "127.0.0.1", 8080)
    assert (c.loop.interval_s, c.loop.lease_s, c.loop.retry_backoff_s, c.loop.max_backoff_s) == (30, 60, 30, 900)
    assert c.loop.keep_steps == 1000
    assert (t.trigger, t.max_delta_commits, t.max_delta_seconds, t.mode, t.exact) == (
        Trigger.EVENT_TIME,
        None,  # the table's hoodie.compact.inline.max.delta.commits, else 5 (tests/compaction/test_schedule_limits)
        None,
        "symlink",
        False,
    )
    assert (t.schedule_interval_s, t.clean, t.clean_policy, t.sync, t.event_time_field) == (0, True, None, False, None)
    with_catalog = load_config(write(root, '[catalog]\nuri = "thrift://h:9083"\n' + minimal))
    assert with_catalog.tables[0].sync is True
    off = load_config(write(root, '[catalog]\nuri = "thrift://h:9083"\n' + minimal + "sync = false\n"))
    assert off.tables[0].sync is False


def test_the_readme_example_is_taken_as_it_stands(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The TOML example in README.md, with a real table for its path (and without its S3 options), is a
    configuration `config check` takes: every documented key is known and every combination in it does
    something."""
    monkeypatch.delenv("HUDI_META_UI_TOKEN", raising=False)
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    example = readme.split("```toml\n", 1)[1].split("```", 1)[0]
    assert "[[tables]]" in example and 'path = "/data/events"' in example
    text = example.replace('path = "/data/events"', f'path = "{root}/a"')
    text = "\n".join(line for line in text.splitlines() if not line.startswith("storage_options"))
    c = load_config(write(root, text.replace("{", "{{").replace("}", "}}")))
    (t,) = c.tables
    assert (t.data_latency_ms, t.clean_policy, t.clean_retained, t.clean_hours, t.sync) == (
        1_800_000,
        "KEEP_LATEST_COMMITS",
        10,
        None,
        True,
    )
    assert t.trigger == Trigger.EVENT_TIME and c.catalog is not None and c.ui.token == "..."


def test_unknown_keys_come_first_in_one_line_each_with_the_closest_key(root: Path) -> None:
    """Misspelt keys in several parts of a file: one line naming each with the key it most likely meant, before
    anything else is checked (the misspelt data_latency is not reported as a missing data_latency, the bad port
    is not reached)."""
    text = f'[ui]\nport = "x"\nhots = "h"\n[[tables]]\npath = "{root}/a"\ndata_latncy = "1h"\nzzz = 1\n'
    with pytest.raises(ConfigError) as caught:
        load_config(write(root, text))
    message = str(caught.value)
    assert message == (
        f"config {root}/hudi-meta.toml: ui.hots: unknown key (did you mean host?); "
        "tables[0].data_latncy: unknown key (did you mean data_latency?); tables[0].zzz: unknown key"
    )
    out = cli("config", "check", str(root / "hudi-meta.toml"))
    assert out.returncode == 2 and out.stdout == "" and out.stderr.strip().endswith(message)
    assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr


def test_config_check_and_serve_refuse_a_bad_file_in_one_line(root: Path) -> None:
    good = write(root, FULL)
    out = cli("config", "check", str(good))
    assert out.returncode == 0 and out.stdout.startswith(f"config {good}: ok"), out.stderr
    assert "table " + str(root / "a") + ": compact, clean, sync (copy, exact)" in out.stdout
    bad = write(root, FULL.replace('mode = "copy"', 'mode = "hard"'))
    for args in (["config", "check", str(bad)], ["serve", "--config", str(bad)], ["config", "check", "nope.toml"]):
        done = cli(*args, timeout=120)
        assert done.returncode == 2 and done.stdout == "", (args, done.stdout)
        assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    env_bad = cli("serve", env={"HUDI_META_CONFIG": str(bad)}, timeout=120)
    assert env_bad.returncode == 2 and "tables[0].mode" in env_bad.stderr


def test_a_trigger_limit_left_to_the_table_must_be_a_number_there(tmp_path: Path) -> None:
    CoreTable(tmp_path / "t", props={"hoodie.compact.inline.max.delta.seconds": "an hour"}).write(rows(("k", 1, 1.0)))
    table = f'[[tables]]\npath = "{tmp_path}/t"\ndata_latency = "1h"\nsync = false\ntrigger = "time-elapsed"\n'
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, table))
    assert "tables[0].max_delta_seconds: not given, and hoodie.compact.inline.max.delta.seconds='an hour' in " in str(
        caught.value
    )
    assert load_config(write(tmp_path, table + "max_delta_seconds = 60\n")).tables[0].max_delta_seconds == 60

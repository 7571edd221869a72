"""The model test (issue 8): random sequences of ingest (inserts, updates, deletes, late data, two partitions,
Avro and Parquet blocks, each payload class), a second writer, failed writes and their rollback, event-time
compactions (random T, symlink or copy, exact or not; the event-time field in hoodie.properties or given to the
index only) killed at a random crash point and resumed, then a schedule at the same T (plans nothing), writers
that planned their files before a plan (their commit rolls them back) and writers that do not know a pending plan
(the run takes it back), unschedule, clean (each policy), rollback of the newest completed compaction, archival
and indexing, on tables with or without a metadata table (whose compaction another writer may leave half-done,
and whose files may be damaged: every write then refused, nothing written); after every step every read equals the model
(`model.py`), links stay intact, `hudi-meta check` finds nothing, the metadata table lists what storage holds, and
hudi-rs agrees wherever nothing is pending.

`HUDI_META_MODEL_EXAMPLES` sets the number of sequences (150 by default: about 7 of a CI run's 40 minutes),
`HUDI_META_MODEL_SEED` replays one run (the seed is printed in pytest's header and with a failure),
`HUDI_META_MODEL_PROGRESS` names a file that gets one line per finished sequence with its number of steps (for long
runs). Each sequence draws a table version and whether the table has a metadata table.
"""

from __future__ import annotations

import os
import random
import shutil
import tempfile
from collections.abc import Callable

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from pyspark.sql import SparkSession

from hudi_meta.compaction.run import CRASH_POINTS, run_compaction
from hudi_meta.sync.hive_schema import Layout, TableStrategy
from hudi_meta.table.table import HudiTable
from hudi_meta.write.clean_plan import POLICIES, Policy
from tests.model.harness import KEYS, ModelTable, Op, bucket_of, partition_of
from tests.model.model import PAYLOADS

# table versions drawn for each sequence (HUDI_META_MODEL_VERSIONS=8,9 to run only some)
VERSIONS = [int(v) for v in os.environ.get("HUDI_META_MODEL_VERSIONS", "6,8,9").split(",")]
SEED = int(os.environ.get("HUDI_META_MODEL_SEED") or random.SystemRandom().randrange(2**32))
EXAMPLES = int(os.environ.get("HUDI_META_MODEL_EXAMPLES", "150"))
PROGRESS = os.environ.get("HUDI_META_MODEL_PROGRESS")
SETTINGS = settings(
    max_examples=EXAMPLES,
    stateful_step_count=30,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    phases=[Phase.explicit, Phase.reuse, Phase.generate]
    + ([] if os.environ.get("HUDI_META_MODEL_NO_SHRINK") else [Phase.target, Phase.shrink, Phase.explain]),
)

seconds = st.integers(0, 100)
amounts = st.integers(0, 9).map(float)
upsert = st.builds(Op, st.sampled_from(KEYS), seconds, amounts)  # insert or update (late data: any event time)
natural_delete = st.builds(Op, st.sampled_from(KEYS), st.none(), st.none())  # a delete in natural order
ordered_delete = st.builds(Op, st.sampled_from(KEYS), seconds, st.none())  # a delete with an ordering value
# One kind of delete per write: hudi-rs refuses a delete block whose ordering values mix types (Java's natural
# order is an int 0, ours a long), which Java's writers do not produce either.
ops = st.one_of(
    st.lists(st.one_of(upsert, natural_delete), min_size=1, max_size=6, unique_by=lambda o: o.key),
    st.lists(st.one_of(upsert, ordered_delete), min_size=1, max_size=6, unique_by=lambda o: o.key),
)
block_formats = st.sampled_from(["avro", "parquet"])
# where a run is killed: a step of the compaction, or of the metadata table's deltacommit of it (tables with one)
KILL_POINTS = (*CRASH_POINTS, "mdt:after-log-file", "mdt:before-complete", "mdt:after-complete")
FIRST_OF_GROUP = sorted({(partition_of(k), bucket_of(k)): k for k in reversed(KEYS)}.values())


class ModelMachine(RuleBasedStateMachine):
    runner: Callable[[HudiTable, str], object] = staticmethod(run_compaction)

    def __init__(self) -> None:
        super().__init__()
        self.root = tempfile.mkdtemp(prefix="hudi-meta-model-")
        self.t: ModelTable | None = None
        self.last_threshold = 0
        self.steps = 0

    @initialize(
        version=st.sampled_from(VERSIONS),
        metadata_table=st.booleans(),
        payload=st.sampled_from(PAYLOADS),
        field_in_properties=st.booleans(),
        extra=st.lists(st.builds(Op, st.sampled_from(KEYS), seconds, amounts), max_size=6, unique_by=lambda o: o.key),
        first_seconds=st.lists(seconds, min_size=len(FIRST_OF_GROUP), max_size=len(FIRST_OF_GROUP)),
        rnd=st.randoms(use_true_random=False),
        writes=st.lists(st.tuples(ops, block_formats), max_size=3),
    )
    def bootstrap(
        self,
        version: int,
        metadata_table: bool,
        payload: str,
        field_in_properties: bool,
        extra: list[Op],
        first_seconds: list[int],
        rnd: random.Random,
        writes: list[tuple[list[Op], str]],
    ) -> None:
        """A table with base files and (mostly) a few log files already, so that compactions have work early."""
        self.t = ModelTable(
            self.root,
            payload,
            runner=type(self).runner,
            field_in_properties=field_in_properties,
            version=version,
            metadata_table=metadata_table,
        )
        self.rnd = rnd
        first = [Op(k, s, 1.0) for k, s in zip(FIRST_OF_GROUP, first_seconds, strict=True)]
        self.t.bootstrap(first + [o for o in extra if o.key not in FIRST_OF_GROUP])
        for data, block_format in writes:
            self.t.write(data, block_format)

    @property
    def table(self) -> ModelTable:
        assert self.t is not None
        return self.t

    @rule(data=ops, block_format=block_formats)
    def ingest(self, data: list[Op], block_format: str) -> None:
        self.table.write(data, block_format)

    @precondition(lambda self: not self.table.open_writers)
    @rule(data=ops, block_format=block_formats)
    def second_writer_begins(self, data: list[Op], block_format: str) -> None:
        self.table.open_writer(data, block_format)

    @precondition(lambda self: bool(self.table.open_writers))
    @rule()
    def second_writer_commits(self) -> None:
        self.table.commit_open_writer(next(iter(self.table.open_writers)))

    # one dead write at a time (a pending write makes `schedule` refuse: defect 1, with its own regression test)
    @precondition(lambda self: not self.table.failed)
    @rule(data=ops, block_format=block_formats, unwritten_file=st.booleans())
    def failed_write(self, data: list[Op], block_format: str, unwritten_file: bool) -> None:
        self.table.failed_write(data, block_format, unwritten_file)

    @precondition(lambda self: bool(self.table.failed))
    @rule()
    def roll_back_failed_writes(self) -> None:
        self.table.roll_back_failed()

    @precondition(lambda self: self.table.pending is None and not self.table.open_writers)
    @rule(step=st.integers(0, 60), mode=st.sampled_from(["symlink", "copy"]), exact=st.booleans())
    def schedule(self, step: int, mode: str, exact: bool) -> None:
        self._schedule(step, mode, exact)

    @precondition(lambda self: self.table.pending is None and not self.table.open_writers)
    @rule(step=st.integers(0, 60), mode=st.sampled_from(["symlink", "copy"]), exact=st.booleans())
    def schedule_and_run(self, step: int, mode: str, exact: bool) -> None:
        """The common path: a compaction run right after it is scheduled; a schedule at the same T then plans
        nothing."""
        if self._schedule(step, mode, exact):
            self.table.run()
            if self.table.pending is None:
                self.table.check_nothing_left_at(self.last_threshold, mode, exact)

    @precondition(lambda self: self.table.stale is None)
    @rule(data=ops, block_format=block_formats)
    def stale_writer_plans(self, data: list[Op], block_format: str) -> None:
        """A writer opens the table and plans its files; it begins, writes and commits in a later step."""
        self.table.open_stale_writer(data, block_format)

    @precondition(lambda self: self.table.stale is not None)
    @rule()
    def stale_writer_commits(self) -> None:
        self.table.stale_writer_commits()

    @precondition(lambda self: self.table.pending is not None)
    @rule(data=ops, into_compacted_slice=st.booleans())
    def foreign_write(self, data: list[Op], into_compacted_slice: bool) -> None:
        """A writer that does not know the pending plan (Java or Flink without a shared lock) writes into its
        file groups: the run takes the plan back."""
        self.table.foreign_write(data, into_compacted_slice)

    @precondition(lambda self: self.table.pending is None and not self.table.open_writers)
    @rule(
        step=st.integers(0, 60),
        mode=st.sampled_from(["symlink", "copy"]),
        exact=st.booleans(),
        policy=st.sampled_from(POLICIES),
        retained=st.integers(1, 3),
    )
    def compact_and_clean(self, step: int, mode: str, exact: bool, policy: Policy, retained: int) -> None:
        """Table services in one pass, as Hudi runs them inline: compact, then clean."""
        if self._schedule(step, mode, exact):
            self.table.run()
        self.table.clean(policy, retained)

    def _schedule(self, step: int, mode: str, exact: bool) -> bool:
        if self.table.failed:  # an operator rolls back dead writes first (a pending write makes schedule refuse)
            self.table.roll_back_failed()
        threshold = min(100, self.last_threshold + step)  # thresholds move forward, as freshness does
        if self.table.schedule(threshold, mode, exact) is None:
            return False
        self.last_threshold = threshold
        return True

    @precondition(lambda self: self.table.pending is not None)
    @rule(crash=st.one_of(st.none(), st.sampled_from(KILL_POINTS)), nth=st.integers(0, 2))
    def run(self, crash: str | None, nth: int) -> None:
        self.table.run(crash, nth)

    @precondition(lambda self: self.table.pending is not None)
    @rule(at_step=st.sampled_from(CRASH_POINTS), data=ops, block_format=block_formats, commit_open=st.booleans())
    def run_while_a_writer_commits(self, at_step: str, data: list[Op], block_format: str, commit_open: bool) -> None:
        """A write commits while the compaction runs: into slices already laid out, or not yet (the second
        writer, begun earlier, commits then if there is one)."""
        if commit_open and self.table.open_writers:
            instant = next(iter(self.table.open_writers))
            self.table.run_while_writing(at_step, lambda: self.table.commit_open_writer(instant))
        else:
            self.table.run_while_writing(at_step, lambda: self.table.write(data, block_format))

    @precondition(lambda self: self.table.pending is not None)
    @rule()
    def unschedule(self) -> None:
        self.table.unschedule()

    @rule(policy=st.sampled_from(POLICIES), retained=st.integers(1, 3))
    def clean(self, policy: Policy, retained: int) -> None:
        self.table.clean(policy, retained)

    @precondition(
        lambda self: (
            self.table.pending is None
            and not self.table.open_writers
            and not self.table.failed
            and bool(self.table.compaction_instants())
        )
    )
    @rule()
    def rollback_completed_compaction(self) -> None:
        self.table.rollback_completed()

    @rule(count=st.integers(1, 4))
    def archive(self, count: int) -> None:
        self.table.archive(count)

    @precondition(lambda self: self.table.metadata_table)
    @rule()
    def foreign_mdt_compaction_fails(self) -> None:
        """Another writer dies inside its metadata-table compaction; our next write rolls it back and redoes it."""
        self.table.leave_failed_mdt_compaction()

    @precondition(lambda self: self.table.metadata_table)
    @rule()
    def metadata_table_damaged(self) -> None:
        """A damaged metadata-table file: every write refused, nothing written; then repaired."""
        self.table.try_writes_on_damaged_mdt(self.rnd.randrange)

    @rule()
    def index(self) -> None:
        self.table.check_index()

    @rule(layout=st.sampled_from([None, Layout(skip_ro_suffix=True), Layout(strategy=TableStrategy.RO)]))
    def sync(self, layout: Layout | None) -> None:
        self.table.sync(layout)

    @invariant()
    def reads_equal_the_model(self) -> None:
        if self.t is not None:
            self.steps += 1
            self.t.check_reads(self.rnd.randrange)
            self.t.check_links()
            self.t.check_table()

    def teardown(self) -> None:
        if self.t is not None:
            self.t.close()
        shutil.rmtree(self.root, ignore_errors=True)
        if PROGRESS:
            with open(PROGRESS, "a") as f:
                f.write(f"{self.steps}\n")


ModelMachine._hypothesis_internal_use_seed = SEED


def test_model_sequences() -> None:
    print(f"HUDI_META_MODEL_SEED={SEED} HUDI_META_MODEL_EXAMPLES={EXAMPLES}")
    run_state_machine_as_test(ModelMachine, settings=SETTINGS)


@pytest.mark.slow
def test_model_sequences_with_compactions_on_spark(spark: SparkSession) -> None:
    """A few sequences whose compactions run as Spark tasks (hudi_meta.spark.compaction), crashes included."""
    from hudi_meta.spark import compaction

    class OnSpark(ModelMachine):
        runner = staticmethod(lambda table, instant: compaction.run(spark, table, instant))

    OnSpark._hypothesis_internal_use_seed = SEED
    examples = int(os.environ.get("HUDI_META_MODEL_SPARK_EXAMPLES", "3"))
    run_state_machine_as_test(OnSpark, settings=settings(SETTINGS, max_examples=examples))

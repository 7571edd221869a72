"""One rule for numeric times (typed thresholds and event-time values read a number the same way), one range for
every time (1970 to 9999) and every duration (0 to 100 years), and only ASCII digits: any text parses to an
in-range value or is one `BadValueError` line, never another exception."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hudi_meta.errors import BadValueError
from hudi_meta.table.event_time import to_epoch_ms
from hudi_meta.table.times import (
    MAX_DURATION_MS,
    MAX_TIME_MS,
    duration_ms,
    format_datetime,
    format_time_ms,
    parse_duration_ms,
    parse_instant,
    parse_point,
    parse_time_ms,
    time_ms,
)
from hudi_meta.values import INSTANT_TIME

# text that looks like what users type, and anything at all
TIMEISH = st.one_of(
    st.text(),
    st.text(alphabet="0123456789-+:.TZ ２１²", max_size=40),
    st.integers(-(10**30), 10**30).map(str),
    st.datetimes(timezones=st.just(dt.UTC)).map(lambda t: t.isoformat()),
)
DURATIONISH = st.one_of(
    st.text(),
    st.builds(
        lambda n, u: f"{n}{u}", st.integers(-(10**20), 10**20), st.sampled_from(["ms", "s", "m", "h", "d", "w", ""])
    ),
)
ZONES = st.sampled_from([dt.UTC, dt.timezone(dt.timedelta(hours=14)), dt.timezone(dt.timedelta(hours=-12))])


def one_line(e: BadValueError) -> bool:
    return bool(str(e)) and "\n" not in str(e)


@given(st.integers(-(10**16), 10**16))
def test_a_typed_number_means_what_an_event_time_number_means(n: int) -> None:
    expected = to_epoch_ms(n)
    assert expected is not None
    if 0 <= expected <= MAX_TIME_MS:
        assert parse_time_ms(str(n)) == expected == time_ms(n)
    else:
        with pytest.raises(BadValueError):
            parse_time_ms(str(n))
        with pytest.raises(BadValueError):
            time_ms(n)


def test_the_units_java_write_stats_use() -> None:
    # Java's WriteStatus reads a 10-digit event time as seconds and a 13-digit one as milliseconds
    assert parse_time_ms("1767225600") == 1_767_225_600_000
    assert parse_time_ms("1767225600000") == 1_767_225_600_000
    assert parse_time_ms("2026-01-01T00:00:00Z") == 1_767_225_600_000


@given(TIMEISH)
def test_any_text_is_a_time_in_range_or_one_line(text: str) -> None:
    try:
        ms = parse_time_ms(text)
    except BadValueError as e:
        assert one_line(e)
    else:
        assert 0 <= ms <= MAX_TIME_MS


@given(DURATIONISH)
def test_any_text_is_a_duration_in_range_or_one_line(text: str) -> None:
    try:
        ms = parse_duration_ms(text)
    except BadValueError as e:
        assert one_line(e)
    else:
        assert 0 <= ms <= MAX_DURATION_MS


@given(st.one_of(TIMEISH, st.text(alphabet="0123456789", min_size=14, max_size=17)), ZONES)
def test_any_text_is_an_instant_or_one_line(text: str, zone: dt.tzinfo) -> None:
    try:
        instant = parse_instant(text, zone)
    except BadValueError as e:
        assert one_line(e)
    else:
        assert INSTANT_TIME.fullmatch(instant)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("-5", "'-5' is 1969-12-31T23:59:55.000Z, before 1970"),
        ("", "not a time: ''"),
        ("１２３", "not a time: '１２３'"),  # fullwidth digits: int() takes them, we do not
        ("²", "not a time: '²'"),  # isdigit() takes it, int() does not
        ("1969-12-31T23:59:59.999Z", "before 1970"),
        ("99999999999999999999999", "is after 9999-12-31T23:59:59.999Z"),
        ("9" * 5000, "is after 9999-12-31"),  # past int()'s 4300-digit limit: still one line
        ("２０２６-01-01", "not a time"),
    ],
)
def test_bad_times(text: str, says: str) -> None:
    with pytest.raises(BadValueError, match=None) as e:
        parse_time_ms(text)
    assert says in str(e.value) and one_line(e.value)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("9999999999999999d", "is more than 36500d (100 years)"),
        ("36501d", "is more than 36500d"),
        ("１m", "not a duration"),
        ("5", "not a duration"),
        ("-5m", "not a duration"),
        ("", "not a duration"),
        ("5 weeks", "not a duration"),
        ("9" * 5000 + "s", "is more than"),
    ],
)
def test_bad_durations(text: str, says: str) -> None:
    with pytest.raises(BadValueError) as e:
        parse_duration_ms(text)
    assert says in str(e.value) and one_line(e.value)


def test_duration_edges() -> None:
    assert parse_duration_ms("0ms") == 0
    assert parse_duration_ms(" 36500d ") == MAX_DURATION_MS
    assert parse_duration_ms("5 m") == 300_000
    assert duration_ms(MAX_DURATION_MS) == MAX_DURATION_MS
    for bad in (-1, MAX_DURATION_MS + 1):
        with pytest.raises(BadValueError):
            duration_ms(bad)


def test_time_edges() -> None:
    assert parse_time_ms("0") == 0
    assert parse_time_ms("1970-01-01T00:00:00Z") == 0
    assert parse_time_ms("9999-12-31T23:59:59.999Z") == MAX_TIME_MS
    assert parse_time_ms("2026-01-01T00:00:00.123Z") == 1_767_225_600_123  # exact, no float rounding
    assert format_time_ms(MAX_TIME_MS) == "9999-12-31T23:59:59.999Z"
    with pytest.raises(BadValueError, match="after"):
        parse_time_ms("9999-12-31T23:59:59.999-01:00")


def test_points_are_checked_by_the_time_rule_or_as_instants() -> None:
    assert parse_point(" 20250618054711154 ") == "20250618054711154"
    assert parse_point("2026-01-01T00:00:00Z") == "2026-01-01T00:00:00Z"
    for bad, says in (("1900-01-01", "before 1970"), ("20250230000000", "not an instant time"), ("x", "not a time")):
        with pytest.raises(BadValueError, match=says):
            parse_point(bad)
    with pytest.raises(BadValueError, match="zone"):  # 9999-12-31T23:00Z is year 10000 at +14:00
        parse_instant("9999-12-31T23:00:00Z", dt.timezone(dt.timedelta(hours=14)))


def test_durations_read_as_people_read_them() -> None:
    from hudi_meta.table.times import format_duration_ms

    cases = {0: "0ms", 850: "850ms", 42_000: "42s", 252_000: "4m 12s", 11_100_000: "3h 05m", 198_000_000: "2d 07h"}
    assert {ms: format_duration_ms(ms) for ms in cases} == cases
    assert format_duration_ms(-61_000) == "-1m 01s"


@given(st.datetimes(min_value=dt.datetime(1970, 1, 1), max_value=dt.datetime(9999, 12, 31)))
def test_a_moment_prints_in_the_one_text_format(moment: dt.datetime) -> None:
    """The one output format (ISO-8601 UTC, milliseconds, `Z`): a naive moment is UTC, an aware one is shifted to
    UTC, and the text reads back (as `fromisoformat` reads it) as the moment truncated to the millisecond."""
    text = format_datetime(moment)
    assert text == format_datetime(moment.replace(tzinfo=dt.UTC).astimezone(dt.timezone(dt.timedelta(hours=-5))))
    back = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    assert text.endswith("Z") and len(text) == 24
    assert back == moment.replace(tzinfo=dt.UTC, microsecond=moment.microsecond // 1000 * 1000)

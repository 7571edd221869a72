"""The value parsers shared by the CLI, the web API and the configuration: only ASCII digits are digits, every
value is range-checked, and any text parses to an in-range value or is one `BadValueError` line, never another
exception."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hudi_meta.errors import BadValueError
from hudi_meta.values import (
    INSTANT_TIME,
    JAVA_INT_MAX,
    ascii_integer,
    parse_flag,
    parse_identifier,
    parse_instant_time,
    parse_seconds,
    parse_share,
    parse_text,
    parse_whole,
    whole_in_range,
)

NUMBERISH = st.one_of(
    st.text(),
    st.text(alphabet="0123456789-+.eE ２１²٣", max_size=30),
    st.integers(-(10**45), 10**45).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(str),
)


def answers(parse: Callable[[str], object], text: str) -> object:
    """What `parse` makes of `text`: its value, or the error (which must be one line)."""
    try:
        return parse(text)
    except BadValueError as e:
        assert str(e) and "\n" not in str(e), str(e)
        return e


@given(NUMBERISH, st.integers(-5, 5), st.integers(0, JAVA_INT_MAX))
def test_whole_numbers_are_in_range_or_one_line(text: str, low: int, high: int) -> None:
    got = answers(lambda t: parse_whole(t, low, high), text)
    assert isinstance(got, BadValueError) or (isinstance(got, int) and low <= got <= high)


@given(NUMBERISH)
def test_ascii_integer_reads_ascii_digits_only(text: str) -> None:
    value = ascii_integer(text)
    if value is not None:
        assert text.strip().isascii()
        assert abs(value) == 10**40 or value == int(text.strip())


@given(NUMBERISH)
def test_shares_are_from_0_to_1_or_one_line(text: str) -> None:
    got = answers(parse_share, text)
    assert isinstance(got, BadValueError) or (isinstance(got, float) and 0 <= got <= 1)


@given(NUMBERISH)
def test_seconds_are_in_range_or_one_line(text: str) -> None:
    got = answers(lambda t: parse_seconds(t, 0.001, 3600), text)
    assert isinstance(got, BadValueError) or (isinstance(got, float) and 0.001 <= got <= 3600)


@given(st.one_of(st.text(), st.text(alphabet="0123456789２", min_size=13, max_size=18)))
def test_instant_times_are_ascii_digits_or_one_line(text: str) -> None:
    got = answers(parse_instant_time, text)
    assert isinstance(got, BadValueError) or (isinstance(got, str) and INSTANT_TIME.fullmatch(got))


@given(st.text())
def test_texts_names_and_flags_are_values_or_one_line(text: str) -> None:
    for parse in (parse_text, parse_identifier, parse_flag):
        answers(parse, text)


@pytest.mark.parametrize(
    ("text", "low", "high", "value"),
    [
        ("１２３", 0, 1000, None),  # int() reads fullwidth digits: not a number here
        ("²", 0, 1000, None),  # str.isdigit() says yes, int() refuses
        ("٣", 0, 1000, None),  # Arabic-Indic three
        ("-1", 0, 10, None),
        ("11", 0, 10, None),
        ("", 0, 10, None),
        ("9" * 5000, 0, 10, None),  # int() refuses more than 4300 digits: still one line
        (" 7 ", 0, 10, 7),
        ("-3", -5, 5, -3),
        ("2147483647", 0, JAVA_INT_MAX, JAVA_INT_MAX),
        ("2147483648", 0, JAVA_INT_MAX, None),
    ],
)
def test_whole_number_cases(text: str, low: int, high: int, value: int | None) -> None:
    if value is None:
        with pytest.raises(BadValueError, match=f"expected a whole number from {low} to {high}"):
            parse_whole(text, low, high)
    else:
        assert parse_whole(text, low, high) == value


def test_a_boolean_is_no_whole_number() -> None:
    """JSON's `true` arrives as Python's True, an int: it is not 1."""
    with pytest.raises(BadValueError):
        whole_in_range(True, 0, 10)
    assert whole_in_range(3, 0, 10) == 3


@pytest.mark.parametrize("text", ["１", "nan", "inf", "-0.1", "1.0001", "1e400", "0x1", "1_0", ""])
def test_bad_shares(text: str) -> None:
    with pytest.raises(BadValueError, match="expected a share from 0 to 1"):
        parse_share(text)


def test_good_shares_and_seconds() -> None:
    assert [parse_share(t) for t in ("0", "1", ".25", "0.1", "1e-3", "1.")] == [0, 1, 0.25, 0.1, 0.001, 1]
    assert parse_seconds("0.001", 0.001, 3600) == 0.001
    for bad in ("0.0000001", "１", "nan", "3601", "-1"):
        with pytest.raises(BadValueError, match="expected seconds from 0.001 to 3600"):
            parse_seconds(bad, 0.001, 3600)


def test_instants_names_texts_and_flags() -> None:
    assert parse_instant_time(" 20250618054711154 ") == "20250618054711154"
    assert parse_instant_time("00000000000001") == "00000000000001"  # Hudi's bootstrap instant: the form is enough
    for bad in ("", "2025061805471", "２０２５０６１８０５４７１１", "banana", "202506180547111541"):
        with pytest.raises(BadValueError, match="not an instant time"):
            parse_instant_time(bad)
    assert parse_identifier("events_2") == "events_2"
    for bad in ("dé", "a;b", "", "１"):
        with pytest.raises(BadValueError, match="use letters, digits and underscores"):
            parse_identifier(bad)
    assert parse_text(" a ") == " a "
    for bad in ("", "  "):
        with pytest.raises(BadValueError, match="must not be empty"):
            parse_text(bad)
    assert [parse_flag(t) for t in ("on", "TRUE", "1", "off", "false", "0", "")] == [True] * 3 + [False] * 4
    with pytest.raises(BadValueError, match="expected true or false, got 'yes'"):
        parse_flag("yes")


def test_one_instant_parser_for_instants_and_points() -> None:
    """One rule (issue 37): a date, or Hudi's year-0000 sentinels; `--instant` and `--as-of` agree."""
    from hudi_meta.table.times import parse_point

    for sentinel in ("00000000000000", "00000000000001", "00000000000000000"):
        assert parse_instant_time(sentinel) == parse_point(sentinel) == sentinel
    for no_date in ("20250230000000", "20251301000000000", "20250101250000"):
        for parse in (parse_instant_time, parse_point):
            with pytest.raises(BadValueError, match="not an instant time.*yyyyMMddHHmmss"):
                parse(no_date)

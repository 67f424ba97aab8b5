"""Stored time stamps: text order is time order, and micro-seconds read back exactly."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from memls import timeutil

MOMENTS = st.datetimes(
    min_value=datetime(1000, 1, 1), max_value=datetime(9998, 12, 31), timezones=st.just(UTC)
)


@given(MOMENTS)
def test_micros_read_back_what_was_stored(moment):
    stamp = timeutil.format_ts(moment)
    expected = (moment - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1)
    assert timeutil.to_micros(stamp) == expected


@given(MOMENTS, MOMENTS)
def test_text_order_is_time_order(a, b):
    sa, sb = timeutil.format_ts(a), timeutil.format_ts(b)
    assert (sa < sb) == (a < b) == (timeutil.to_micros(sa) < timeutil.to_micros(sb))


def test_no_end_is_forever():
    assert (
        timeutil.to_micros(None)
        == timeutil.FOREVER
        > timeutil.to_micros("9998-12-31T23:59:59.999999Z")
    )

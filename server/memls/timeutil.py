"""Time stamps: one fixed UTC text form, so that SQLite compares them as text."""

from __future__ import annotations

from datetime import UTC, datetime

from memls.errors import InvalidInput


def now() -> str:
    return format_ts(datetime.now(UTC))


def format_ts(moment: datetime) -> str:
    """Always 27 characters (a four-digit year), so that text order is time order."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    m = moment.astimezone(UTC)
    return (
        f"{m.year:04d}-{m.month:02d}-{m.day:02d}T{m.hour:02d}:{m.minute:02d}:"
        f"{m.second:02d}.{m.microsecond:06d}Z"
    )


def parse_ts(text: str, *, field: str) -> str:
    """Parse ISO 8601 (a date, or a date and time; no zone means UTC) into the stored form."""
    value = text.strip() if isinstance(text, str) else text
    if not isinstance(value, str) or not value:
        raise InvalidInput("expected an ISO 8601 date or date-time", field=field)
    try:
        moment = datetime.fromisoformat(value)
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        moment = moment.astimezone(UTC)
        if not 1000 <= moment.year <= 9998:
            raise InvalidInput("a year from 1000 to 9998 is expected", field=field)
    except (ValueError, OverflowError):
        raise InvalidInput(
            f"{text!r} is not an ISO 8601 date or date-time (e.g. 2025-03-01 or "
            "2025-03-01T12:00:00Z)",
            field=field,
        ) from None
    return format_ts(moment)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
FOREVER = 2**62
"""Micro-seconds standing for 'no end' (valid_until / invalidated_at NULL) in numeric filters."""


def to_micros(stamp: str | None) -> int:
    """A stored time stamp as integer micro-seconds since the epoch (None -> FOREVER)."""
    if stamp is None:
        return FOREVER
    # fromisoformat reads the stored form ("...Z" included) ~30x faster than strptime
    moment = datetime.fromisoformat(stamp)
    delta = moment - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds

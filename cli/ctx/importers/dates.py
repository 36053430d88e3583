"""Turning the many ways sources write dates into epoch seconds.

A date and time is kept as its source wrote it: the wall clock read as UTC, any zone offset
dropped. A note's date is the day its author wrote down; converted to UTC, a note written at 07:30
on 28 May in Sydney (``+10:00``) would be shown as 27 May in every context, its own ``date:``
field contradicted. Times without a zone were always read this way, so a graph is the same
wherever it is imported; the cost is that two zoned times from different zones compare by their
wall clocks (hours apart at most), which no ranking or date filter here can tell at a day's grain.
"""

from __future__ import annotations

import datetime as dt
import math
import re

_DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_TZ_RE = re.compile(r"\s*(?:Z|UTC)$", re.IGNORECASE)
_EPOCH_TEXT = re.compile(r"\d{9,14}(\.\d+)?")


def parse_date(value: object) -> float | None:
    """Epoch seconds for an ISO 8601 string, a date, or an epoch number (s or ms); else None.

    The wall clock is kept, a zone dropped (see above): ``2024-05-28T07:30+10:00`` is 07:30 UTC
    that day, as ``2024-05-28T07:30`` without a zone always was.
    Never raises; a number comes back as it is (even ``inf`` or 1e22): the engine checks every
    record's dates with ``date_problem`` and drops those it cannot store, with a warning.
    """
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=dt.timezone.utc).timestamp()
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day, tzinfo=dt.timezone.utc).timestamp()
    if isinstance(value, (int, float)):
        try:
            number = float(value)
        except OverflowError:  # an integer beyond any float: out of range, as inf is
            number = float("inf") if value > 0 else float("-inf")
        # Epoch milliseconds (Dendron, Roam, Tana) are 1000x larger than any plausible seconds.
        return number / 1000.0 if number > 1e11 else number
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        if _EPOCH_TEXT.fullmatch(text):
            return parse_date(float(text))
        text = _TZ_RE.sub("", text)
        if _DATE_ONLY.match(text):
            text += "T00:00:00"
        text = text.replace(" ", "T", 1) if "T" not in text and " " in text else text
        try:
            return dt.datetime.fromisoformat(text).replace(tzinfo=dt.timezone.utc).timestamp()
        except (ValueError, OverflowError):
            return None
    return None


# A file named for its day: Obsidian's daily notes (``2024-05-28.md``, the core plugin's default),
# ``2024_05_28``, ``2024.05.28``, or the day and then a name (``2024-05-28 Standup``). A
# zettelkasten id (``202405281030 - Title``) has no separators and is not read as one.
_DAY_NAME = re.compile(r"(\d{4})([-_.])(\d{2})\2(\d{2})(?:$|[\s_-])")


def day_named(name: str) -> float | None:
    """Epoch seconds of the day a file or note ``name`` opens with (UTC midnight), or None when it
    does not open with a calendar day."""
    found = _DAY_NAME.match(name)
    if found is None:
        return None
    try:
        day = dt.date(int(found.group(1)), int(found.group(3)), int(found.group(4)))
    except ValueError:  # 2024-02-30: no such day
        return None
    return dt.datetime(day.year, day.month, day.day, tzinfo=dt.timezone.utc).timestamp()


# The dates every reader can print: ``datetime`` covers years 1 to 9999, and a day of margin on
# each side keeps any time zone's rendering inside it.
EPOCH_MIN = -62135510400.0  # 0001-01-02T00:00:00Z
EPOCH_MAX = 253402214400.0  # 9999-12-30T00:00:00Z


def date_problem(stamp: float) -> str | None:
    """Why an epoch cannot be stored as a date (not finite, or outside years 1..9999), else None."""
    if not math.isfinite(stamp):
        return "not a finite number"
    if not EPOCH_MIN <= stamp <= EPOCH_MAX:
        return "outside the years 1 to 9999"
    return None

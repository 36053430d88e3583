"""Turning the many ways sources write dates into epoch seconds (UTC)."""

from __future__ import annotations

import datetime as dt
import re

_DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_TZ_RE = re.compile(r"\s*(?:Z|UTC)$", re.IGNORECASE)


def parse_date(value: object) -> float | None:
    """Epoch seconds for an ISO 8601 string, a date, or an epoch number (s or ms); else None.

    Times without a zone are taken as UTC so that the same file imports the same everywhere.
    """
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, dt.datetime):
        stamp = value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)
        return stamp.timestamp()
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day, tzinfo=dt.timezone.utc).timestamp()
    if isinstance(value, (int, float)):
        number = float(value)
        # Epoch milliseconds (Dendron, Roam, Tana) are 1000x larger than any plausible seconds.
        return number / 1000.0 if number > 1e11 else number
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        if re.fullmatch(r"\d{9,14}(\.\d+)?", text):
            return parse_date(float(text))
        text = _TZ_RE.sub("+00:00", text)
        if _DATE_ONLY.match(text):
            text += "T00:00:00+00:00"
        text = text.replace(" ", "T", 1) if "T" not in text and " " in text else text
        try:
            stamp = dt.datetime.fromisoformat(text)
        except ValueError:
            return None
        if stamp.tzinfo is None:
            stamp = stamp.replace(tzinfo=dt.timezone.utc)
        return stamp.timestamp()
    return None

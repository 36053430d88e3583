"""The day a context shows for a node (``document._day``) is the text strftime("%Y-%m-%d") gives
for its UTC date: at midnight and a half microsecond either side of it (where rounding decides the
day), before 1970, in years below 1000 and near 9999, and None where no date exists."""

from __future__ import annotations

import math
import random
from datetime import datetime, timezone

from ctx.assemble.document import _day

day_of = _day.__wrapped__  # the function itself, not what its cache kept


def _strftime_day(stamp: float) -> str | None:
    try:
        return datetime.fromtimestamp(stamp, tz=timezone.utc).strftime("%Y-%m-%d")
    except (ValueError, OverflowError, OSError):
        return None


def _stamps() -> list[float]:
    rng = random.Random(21)
    first = datetime(1, 1, 2, tzinfo=timezone.utc).timestamp()
    last = datetime(9999, 12, 30, tzinfo=timezone.utc).timestamp()
    out = [0.0, -0.0, -1.0, 1.7e9, first, last, 1e20, -1e20, math.inf, -math.inf, math.nan]
    for year in (1, 99, 999, 1000, 1969, 1970, 2000, 2038, 9999):
        midnight = datetime(year, 6, 1, tzinfo=timezone.utc).timestamp()
        out += [midnight + d for d in (0.0, -5e-7, -4.9e-7, -5.1e-7, 5e-7, -1e-6, 86399.9999995, 86399.999999)]
    out += [rng.uniform(first, last) for _ in range(20_000)]
    out += [rng.uniform(-3e9, 4e9) for _ in range(20_000)]
    return out


def test_days_are_strftimes_text():
    for stamp in _stamps():
        assert day_of(stamp) == _strftime_day(stamp), stamp


def test_a_year_below_1000_is_as_strftime_writes_it():
    stamp = datetime(999, 3, 4, 12, tzinfo=timezone.utc).timestamp()
    assert day_of(stamp) == datetime(999, 3, 4, tzinfo=timezone.utc).strftime("%Y-%m-%d")
    assert day_of(datetime(2024, 2, 29, 23, 59, 59, 999999, tzinfo=timezone.utc).timestamp()) == "2024-02-29"

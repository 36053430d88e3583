"""JSON as ctx prints it: always strict JSON, never ``NaN`` or ``Infinity``.

Python's json writes non-finite floats as the bare words NaN and Infinity, which no strict parser
accepts. A score or a date can still turn non-finite (a graph imported before dates were checked,
arithmetic on an extreme value); such a number is printed as ``null``, and ``allow_nan=False``
makes any number that slips past this a loud error rather than invalid output.
"""

from __future__ import annotations

import json
import math
from typing import Any


def finite(value: Any) -> Any:
    """``value`` with every non-finite float replaced by None (dicts and lists walked)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(item) for item in value]
    return value


def dumps(value: Any, **options: Any) -> str:
    return json.dumps(finite(value), allow_nan=False, ensure_ascii=False, **options)

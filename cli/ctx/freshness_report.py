"""What a build or search says about how fresh its graph is: a value, with no reads of its own.

It sits below the assembler, which prints it; ``ctx.freshness`` (above the store and the
importers) works out the facts that fill it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Freshness:
    """How far the graph may lag behind its sources and its vectors behind its text.

    Facts of the graph (its version, its last sync, its vectors) and one of the files (sources
    with changes not imported yet: stat only, at most once per ``sync.interval`` per graph).
    """

    graph_version: int
    last_sync: float | None  # the newest import run of any source (changed or not)
    pending: tuple[str, ...] = ()  # roots of sources with files changed since their import
    vectors_model: str | None = None
    vectors_stale: int = 0  # nodes whose text changed since their vector
    vectors_missing: int = 0  # nodes without any vector of the model
    sync_skipped: str | None = None  # the before_build check did not run (why)

    @property
    def stale(self) -> bool:
        return bool(self.pending or self.vectors_stale or self.vectors_missing or self.sync_skipped)

    def as_meta(self) -> dict[str, object]:
        out: dict[str, object] = {
            "stale": self.stale,
            "graph_version": self.graph_version,
            "last_sync": utc(self.last_sync),
            "pending_sources": list(self.pending),
        }
        if self.vectors_model is not None:
            out["vectors"] = {"model": self.vectors_model, "stale": self.vectors_stale, "missing": self.vectors_missing}
        if self.sync_skipped:
            out["sync"] = self.sync_skipped
        return out

    def short(self) -> str:
        """The line in a few words, for the smallest headers."""
        if not self.stale:
            return ""
        kinds = [self.sync_skipped or ""] + (["sources pending"] if self.pending else [])
        if self.vectors_stale or self.vectors_missing:
            kinds.append(f"vectors {self.vectors_stale} stale, {self.vectors_missing} missing")
        return "stale: " + "; ".join(k for k in kinds if k)

    def line(self) -> str:
        """The one line a stale answer carries (stderr and the markdown header); '' when fresh."""
        if not self.stale:
            return ""
        parts = [f"graph v{self.graph_version}, last sync {utc(self.last_sync) or 'never'}"]
        if self.sync_skipped:
            parts.append(self.sync_skipped)
        if self.pending:
            names = ", ".join(self.pending[:3]) + (f" and {len(self.pending) - 3} more" if len(self.pending) > 3 else "")
            parts.append(f"pending changes in {names} (ctx sync)")
        if self.vectors_stale or self.vectors_missing:
            parts.append(f"vectors: {self.vectors_stale} stale, {self.vectors_missing} missing (ctx sync or ctx embed)")
        return "stale: " + "; ".join(parts)


def utc(epoch: float | None) -> str | None:
    if epoch is None:
        return None
    import datetime as dt

    try:
        return dt.datetime.fromtimestamp(epoch, tz=dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (ValueError, OverflowError, OSError):
        return None

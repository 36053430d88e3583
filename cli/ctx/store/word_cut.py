"""Which of a question's words a text holds, cut as the stemmed passage index cuts them.

The words go through FTS5's own tokenizer (``porter unicode61 remove_diacritics 2``, the
stemmed passage index's) in an in-memory table, so "wikilinks" holds "wikilink" here as it
matches there. It reads no graph, only the texts it is given: the answer is the same whichever
engine holds the graph (the PostgreSQL engine cuts its index's words the same way,
``ctx.store.postgres.tokens``).
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Sequence

from ctx.stopwords import STOPWORDS
from ctx.store.types import WordCover

TOKENIZE = "porter unicode61 remove_diacritics 2"
_WORD = re.compile(r"\w+", re.UNICODE)


def _name_words(title: str) -> str:
    """A title's content words (as a question's: function words and single letters left out)."""
    return " ".join(w for w in _WORD.findall(title.lower()) if w not in STOPWORDS and (len(w) > 1 or w.isdigit()))


class _Cutter:
    """Two in-memory FTS5 tables shared by the process (their use is serialised): the texts, which
    each word is matched in, and the names (the question and the titles, a few words each), whose
    tokens are compared; the vocabulary is read only for the names, which are short."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        # Transactions are this class's own (``cover``): every call's rows are rolled back.
        self.conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        self.conn.execute(f"CREATE VIRTUAL TABLE texts USING fts5(title, body, tokenize='{TOKENIZE}')")
        self.conn.execute(f"CREATE VIRTUAL TABLE names USING fts5(name, tokenize='{TOKENIZE}')")
        self.conn.execute("CREATE VIRTUAL TABLE names_v USING fts5vocab(names, 'instance')")

    def cover(self, words: Sequence[str], texts: Sequence[tuple[str, str]]) -> WordCover:
        held: list[set[str]] = [set() for _ in texts]
        said = [[0, 0] for _ in texts]
        titles = [_name_words(title) for title, _ in texts]
        with self.lock:
            conn = self.conn
            # The rows live only as long as this call: rolled back, not deleted. Deleting a row
            # from an FTS5 table tokenizes its text again to find its entries, which cost more
            # than the rest of the call (the shown notes of a question, ~0.6 -> ~0.25 ms a call).
            conn.execute("BEGIN")
            try:
                # Text n is row n + 1; in ``names`` row 0 is the question.
                conn.executemany(
                    "INSERT INTO texts (rowid, title, body) VALUES (?, ?, ?)",
                    ((n + 1, titles[n], body) for n, (_, body) in enumerate(texts)),
                )
                for word in words:
                    phrase = '"' + word.replace('"', '""') + '"'
                    try:
                        rows = conn.execute("SELECT rowid FROM texts WHERE texts MATCH ?", (phrase,)).fetchall()
                    except sqlite3.OperationalError:  # a word the tokenizer cuts to nothing
                        rows = []
                    for (row,) in rows:
                        held[row - 1].add(word)
                conn.executemany("INSERT INTO names (rowid, name) VALUES (?, ?)",
                                 [(0, " ".join(words)), *((n + 1, t) for n, t in enumerate(titles) if t)])
                asked: set[str] = set()
                for doc, term in conn.execute("SELECT doc, term FROM names_v ORDER BY doc"):
                    if doc == 0:
                        asked.add(term)
                    else:
                        said[doc - 1][0] += term in asked
                        said[doc - 1][1] += 1
            finally:
                conn.execute("ROLLBACK")
        return WordCover(tuple(frozenset(h) for h in held), tuple(n / total if total else 0.0 for n, total in said))


_CUTTER: _Cutter | None = None
_MADE = threading.Lock()


def cover(words: Sequence[str], texts: Sequence[tuple[str, str]]) -> WordCover:
    """Which of ``words`` each (title, body) of ``texts`` holds, and how much of its title they say."""
    global _CUTTER
    with _MADE:
        if _CUTTER is None:
            _CUTTER = _Cutter()
    return _CUTTER.cover(words, texts)

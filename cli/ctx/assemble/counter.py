"""The build's token counter: tiktoken in the chosen encoding, remembering what it counted.

One counter serves one build (``pipeline.Build.counter``): every block the packer prices, every
cut the shortening makes and every rendering the fitting loop checks goes through it, so a text
priced again (a block costed for each allowance tried, the document re-rendered with a new "used"
figure) is counted once.
"""

from __future__ import annotations

import string

LINE_SPLIT_ENCODINGS = frozenset({"cl100k_base"})

# Texts at least this long that hold a blank line are counted paragraph by paragraph
# (``paragraph_chunks``); a shorter text costs less to count whole than to split.
CHUNKED_FROM = 160
# Paragraph counts a counter keeps (the warm process's are shared, like its text counts) before
# they are forgotten all at once.
MAX_CHUNKS = 40_000
_ASCII_LETTERS = frozenset(string.ascii_letters)
_ASCII_NON_LETTERS = "".join(chr(i) for i in range(128) if chr(i) not in _ASCII_LETTERS)


def paragraph_chunks(text: str) -> list[str]:
    """``text`` cut where its count in ``cl100k_base`` is the sum of the parts' counts, so that a
    paragraph met again inside another text (a passage counted when it is attached, then shown
    in a block, cut to its core, or beside other passages) is counted once:

    - after a blank line ("\n\n") that a character other than white space follows: no piece of
      the encoding's split pattern holds a line break and the character after it
      (``count_chunks``);
    - before what follows a paragraph's last ASCII letter, where that is all ASCII: a piece that
      holds a letter is a run of letters (with one character before it, or an apostrophe's
      contraction) and ends at the first character that is no letter, and no piece looks back,
      so the pieces from there on are the same wherever the text is cut. The paragraph's words
      then count alike whether it ends its text ("... end.") or goes on (".\n\n" is one piece).

    The pattern has no look-behind, so each part scanned alone gives the pieces the whole text
    gives there. ``"".join(paragraph_chunks(text)) == text``."""
    parts = text.split("\n\n")
    if len(parts) == 1:
        return [text]
    out: list[str] = []
    last = len(parts) - 1
    seg = ""
    for k, part in enumerate(parts):
        seg += part
        if k < last:
            seg += "\n\n"
            after = parts[k + 1]
            if not after or after[0].isspace():
                continue  # white space follows the line break: no cut here
        body = seg.rstrip(_ASCII_NON_LETTERS)
        if body and len(body) < len(seg) and body[-1] in _ASCII_LETTERS:
            out.append(body)
            out.append(seg[len(body):])
        else:
            out.append(seg)
        seg = ""
    if seg:
        out.append(seg)
    return out


class Tally:
    """One text's exact count, counted only as far as a question about it needs. Packing asks
    whether a passage fits some room far more often than it needs its count (at 100k nodes 843 of
    1,427 whole passages tried for a new question did not fit where they were tried): ``within``
    tells that from a count that stops past the room (``TokenCounter.count_within``), remembers
    the most it learned either way, and a later question goes on from the paragraphs counted so
    far, so every answer is the one the exact count gives."""

    __slots__ = ("_text", "_counter", "_exact", "_over", "_parts", "_at", "_done")

    def __init__(self, text: str, counter: TokenCounter) -> None:
        self._text = text
        self._counter = counter
        self._exact: int | None = None
        self._over = -1  # the count is known to be more than this
        self._parts: list[str] | None = None  # its paragraphs (``paragraph_chunks``), once cut
        self._at = 0  # how many of them are counted,
        self._done = 0  # and their tokens

    def within(self, limit: int) -> int | None:
        """The exact count when it is at most ``limit``, else None."""
        exact = self._exact
        if exact is not None:
            return exact if exact <= limit else None
        if limit <= self._over:
            return None
        found = self._counter.count_within(self._text, limit, self)
        if found is None:
            self._over = limit
        else:
            self._exact = found
        return found

    def exact(self) -> int:
        if self._exact is None:
            self._exact = self._counter.count(self._text)
        return self._exact


class TokenCounter:
    """tiktoken, in the chosen encoding; the one way tokens are counted and cut."""

    def __init__(self, encoding: str) -> None:
        from ctx.tokens import get_encoding

        from ctx.assemble.warm import shared_chunk_counts, shared_counts

        self.encoding = encoding
        self._enc = get_encoding(encoding)
        # Whether a text may be counted line block by line block (``count_chunks``): checked for
        # this encoding's split pattern alone (o200k_base's, for one, lets a piece go on past a
        # line break with "/").
        self._splits_at_lines = encoding in LINE_SPLIT_ENCODINGS
        # A warm process keeps the counts between builds (the same text costs the same tokens).
        shared = shared_counts(encoding)
        self._cache: dict[str, int] = {} if shared is None else shared
        # The paragraphs' counts (``paragraph_chunks``), apart from the texts': a text's count is
        # one look-up, a paragraph's only serves texts not counted before.
        chunks = shared_chunk_counts(encoding)
        self._chunks: dict[str, int] = {} if chunks is None else chunks
        self._last: tuple[str, list[int]] = ("", [])

    def encode(self, text: str) -> list[int]:
        """The tokens of ``text``; callers only read the list (shortening cuts the same body at
        one allowance after another, and encoding it again each time was most of a build's
        tokenizer work)."""
        last_text, tokens = self._last
        if text != last_text:
            tokens = self._enc.encode_ordinary(text)
            self._last = (text, tokens)
            self._cache[text] = len(tokens)
        return tokens

    def decode(self, tokens: list[int]) -> str:
        return self._enc.decode(tokens)

    def count_chunks(self, chunks: list[str]) -> int:
        """``count("".join(chunks))``, each chunk counted (and kept) on its own where that is the
        same number: in ``cl100k_base`` no token spans a line break followed by a character that
        is not white space (its split pattern ends a piece at the last line break of a run of
        white space, and no other piece holds one), so where each chunk after the first starts
        such a line, the text's tokens are the chunks' tokens one after another. The fitting loop
        renders one document for one "used" figure after another: only the header is new."""
        if self._splits_at_lines and all(
            before.endswith("\n") and after[:1] and not after[0].isspace()
            for before, after in zip(chunks, chunks[1:])
        ):
            return sum(self.count(chunk) for chunk in chunks)
        return self.count("".join(chunks))

    def count(self, text: str) -> int:
        # Long texts too: a block is costed again for every allowance tried, and each text is
        # kept only for the one build this counter serves.
        hit = self._cache.get(text)
        if hit is None:
            if self._splits_at_lines and len(text) >= CHUNKED_FROM and "\n\n" in text:
                hit = self._count_paragraphs(text)
            else:
                hit = self._enc.count(text)
            self._cache[text] = hit
        return hit

    def count_within(self, text: str, limit: int, tally: Tally | None = None) -> int | None:
        """``count(text)`` when it is at most ``limit``, else None, counting no further than needed
        to tell: most passages and blocks a build prices never fit where they are tried. A count
        found is kept as ``count`` keeps it; one past the limit is not kept. ``tally``: where a
        text asked about again goes on from (its paragraphs, those counted so far)."""
        hit = self._cache.get(text)
        if hit is not None:
            return hit if hit <= limit else None
        if limit < 0:
            return None
        if self._splits_at_lines and len(text) >= CHUNKED_FROM and "\n\n" in text:
            found = self._count_paragraphs_within(text, limit, tally or Tally(text, self))
        else:
            found = self._enc.count_within(text, limit)
        if found is not None:
            self._cache[text] = found
        return found

    def _count_paragraphs_within(self, text: str, limit: int, tally: Tally) -> int | None:
        """``_count_paragraphs`` while the sum stays within ``limit``, from the paragraphs ``tally``
        has counted: a paragraph counted before costs a look-up, the first one unknown is counted
        only as far as the room left."""
        known = self._chunks
        if len(known) > MAX_CHUNKS:
            known.clear()
        parts = tally._parts
        if parts is None:
            parts = tally._parts = paragraph_chunks(text)
        within = self._enc.count_within
        at, total = tally._at, tally._done
        while at < len(parts):
            chunk = parts[at]
            n = known.get(chunk)
            if n is None:
                n = within(chunk, limit - total)
                if n is None:
                    break
                known[chunk] = n
            at += 1
            total += n
            if total > limit:
                break
        tally._at, tally._done = at, total
        return total if at == len(parts) and total <= limit else None

    def _count_paragraphs(self, text: str) -> int:
        """``text``'s count as its paragraphs' (``paragraph_chunks``), each counted once: a block
        shows passages whose paragraphs were counted when they were attached, and the blocks
        tried for one node at several sizes share most of theirs."""
        known = self._chunks
        if len(known) > MAX_CHUNKS:
            known.clear()
        count = self._enc.count
        total = 0
        for chunk in paragraph_chunks(text):
            n = known.get(chunk)
            if n is None:
                n = known[chunk] = count(chunk)
            total += n
        return total

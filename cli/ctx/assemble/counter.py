"""The build's token counter: tiktoken in the chosen encoding, remembering what it counted.

One counter serves one build (``pipeline.Build.counter``): every block the packer prices, every
cut the shortening makes and every rendering the fitting loop checks goes through it, so a text
priced again (a block costed for each allowance tried, the document re-rendered with a new "used"
figure) is counted once.
"""

from __future__ import annotations


LINE_SPLIT_ENCODINGS = frozenset({"cl100k_base"})


class TokenCounter:
    """tiktoken, in the chosen encoding; the one way tokens are counted and cut."""

    def __init__(self, encoding: str) -> None:
        from ctx.tokens import get_encoding

        from ctx.assemble.warm import shared_counts

        self.encoding = encoding
        self._enc = get_encoding(encoding)
        # Whether a text may be counted line block by line block (``count_chunks``): checked for
        # this encoding's split pattern alone (o200k_base's, for one, lets a piece go on past a
        # line break with "/").
        self._splits_at_lines = encoding in LINE_SPLIT_ENCODINGS
        # A warm process keeps the counts between builds (the same text costs the same tokens).
        shared = shared_counts(encoding)
        self._cache: dict[str, int] = {} if shared is None else shared
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
            hit = self._cache[text] = self._enc.count(text)
        return hit

"""The text that stands for a node when it is embedded.

Title, then body. The title names the subject (what a topic or question most often mentions) and
short notes are often little more than it; the body carries the meaning. Tags, fields and ids are
left out: they are filing, not content, and would pull unrelated notes of the same folder together.
The model only sees its window (256 word pieces for MiniLM, roughly the first 1,000 characters), so
the lead of a note, where notes usually state what they are about, is what counts; we cut the text
well before tokenizing so that a 1 MB note does not cost 1 MB of tokenization.
"""

from __future__ import annotations

# Comfortably more than any 512-piece window needs (word pieces average ~4 characters in English).
MAX_CHARS = 4000


def node_text(title: str, body: str) -> str:
    title = (title or "").strip()
    body = (body or "").strip()
    # Markdown notes often repeat the title as their first heading; say it once.
    first_line, _, rest = body.partition("\n")
    if first_line.lstrip("# ").strip().lower() == title.lower():
        body = rest.strip()
    text = f"{title}\n\n{body}" if body else title
    return text[:MAX_CHARS]

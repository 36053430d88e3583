"""English function words: what full-text search and title matching should not key on.

Kept free of heavy imports: the build path uses it before it knows whether numpy is needed.
"""

from __future__ import annotations

import re

STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further had
    has have having he her here hers herself him himself his how i if in into is it its itself just
    me more most my myself no nor not now of off on once only or other our ours ourselves out over
    own same she should so some such than that the their theirs them themselves then there these
    they this those through to too under until up very was we were what when where which while who
    whom why will with would you your yours yourself yourselves""".split()
)


def content_words(text: str) -> str:
    """``text`` without function words (all of it, if nothing else is left)."""
    words = text.split()
    kept = [w for w in words if w.strip("?!.,;:'\"()").lower() not in STOPWORDS]
    return " ".join(kept) if kept else text


# A word as full-text search reads one (``ctx.store.reads.fts_phrases``); a trailing ``*`` is a
# prefix search, which is no function word.
_WORD = re.compile(r"[\w][\w'’.-]*\*?", re.UNICODE)


# Function words run together with an apostrophe. Full-text search splits them there ("it's" is
# "it" and "s"), so "what's it?" ranked notes on their "it", "s" and "what" as "how do I" did on
# "do". Only the refusal reads these: ``STOPWORDS`` (dropped from queries, titles and passages by
# ranking) stays as it is, so no question that has a content word is read differently.
CONTRACTIONS = frozenset(
    """i'm i've i'd i'll you're you've you'd you'll he's he'd he'll she's she'd she'll it's it'd it'll
    we're we've we'd we'll they're they've they'd they'll that's that'd that'll there's there'd
    there'll here's what's what're what'd what'll who's who're who'd who'll where's where'd when's
    why's how's how'd let's isn't aren't wasn't weren't hasn't haven't hadn't doesn't don't didn't
    won't wouldn't can't cannot couldn't shouldn't mustn't mightn't needn't shan't ain't""".split()
)


def only_function_words(text: str) -> list[str]:
    """The words of ``text`` (lowercased, once each) when every one is a function word (or two run
    together: ``CONTRACTIONS``); else []."""
    words = [w.strip(".'’-").lower().replace("’", "'") for w in _WORD.findall(text)]
    words = [w for w in words if w]
    if not words or any(w not in STOPWORDS and w not in CONTRACTIONS for w in words):
        return []
    return list(dict.fromkeys(words))


def only_function_words_message(text: str, words: list[str]) -> str:
    """The one-line refusal of a search or a build whose text is only ``words``, function words
    (``only_function_words``): ranked on them, every note that holds a "do" or a "the" is a match."""
    return (f"{text!r} has only common words ({', '.join(words)}), which nearly every note holds;"
            " add a word that names what you are looking for")

"""Questions about time: when a topic asks when, before or after something, or names a period.

Such a question is answered by what happened in which order, so the context reads its notes oldest
first (each with its date) rather than best first. Only the words decide, never the clock.
"""

from __future__ import annotations

import re

_MONTHS = (
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec"
)
_WORDS = (
    "when before after since until till ago earlier later latest last previous first recently recent "
    "yesterday today tonight tomorrow week weeks weekend month months year years date dated dates day days "
    "timeline chronology history monday tuesday wednesday thursday friday saturday sunday "
    "spring summer autumn fall winter " + _MONTHS
)
# "may" and "march" are also a verb: they count only beside a day or a year ("May 3", "March 2024").
_AMBIGUOUS = {"may", "march", "first", "last", "fall", "date", "day", "days"}
_PLAIN = frozenset(_WORDS.split()) - _AMBIGUOUS
_WORD = re.compile(r"[a-z]+|\d+")
_YEAR = re.compile(r"^(1[6-9]|20)\d\d$")
# "when" before a subject opens a clause that sets a condition ("... when I open the app", "when a
# link points at a folder"), not a question about when something happened ("when did", "when was").
_SUBJECTS = frozenset({"i", "you", "we", "they", "he", "she", "it", "a", "an", "the", "my", "our", "your",
                       "their", "his", "her", "its", "this", "that", "these", "those", "someone", "somebody",
                       "something", "anyone", "anything", "everyone", "everything"})
_TIME_NEIGHBOURS = frozenset({"week", "weeks", "month", "months", "year", "years", "time", "night", "session",
                              "meeting", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday",
                              "sunday", "spring", "summer", "autumn", "winter"})


# A question asks "when" with an auxiliary or modal next ("when did", "when is", "when can");
# anywhere else but at the start, "when" opens a clause ("... when notes are created", "... when
# Fatima checked"): a condition or an event named to pick one moment, not a question about when.
_AUXILIARIES = frozenset({"do", "does", "did", "is", "are", "was", "were", "will", "would", "can", "could",
                          "should", "shall", "may", "might", "must", "has", "have", "had"})
# A time unit after these is a frequency ("every month", "each week", "per day", "every 2 weeks"):
# how often, not when.
_FREQUENCY = frozenset({"every", "each", "per"})


def about_time(topics: tuple[str, ...]) -> bool:
    """Whether the topics ask about time: a time word (when, before, ago, a weekday, a month), a
    year, or an ambiguous word beside a number or another time word ("last week", "May 2024").
    "when" opening a clause ("... when I use it", "... when notes are created") does not count,
    nor does a frequency ("every month"): such a question reads best first."""
    for topic in topics:
        words = _WORD.findall(topic.lower())
        for i, word in enumerate(words):
            after = words[i + 1: i + 2]
            if word == "when" and after and after[0] not in _AUXILIARIES and (i > 0 or after[0] in _SUBJECTS):
                continue
            if _frequency(words, i):
                continue
            if word in _PLAIN or _YEAR.match(word):
                return True
            if word in _AMBIGUOUS:
                around = words[max(0, i - 1): i] + words[i + 1: i + 2]
                if any(w.isdigit() or w in _TIME_NEIGHBOURS for w in around):
                    return True
    return False


def _frequency(words: list[str], i: int) -> bool:
    """Whether ``words[i]`` follows "every", "each" or "per", a number between allowed."""
    before = words[max(0, i - 2): i]
    if before and before[-1].isdigit():
        before = before[:-1]
    return bool(before) and before[-1] in _FREQUENCY

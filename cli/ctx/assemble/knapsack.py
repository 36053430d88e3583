"""The end of a budget: whether a part the packer reached should take room the next parts need.

The packer offers a section's passages best first and takes each that fits (``plan.win_passages``).
While the room is large next to the parts that is the most worth the room can hold: whatever
fits is taken, nothing waits. Near the end it is not: a part that fits takes room the next ones
needed, and "skip what does not fit" then decides by accident which of them is shown (a 286-token
page at 0.32 fitting where a 129-token answering passage at 0.28 and a 63-token one at 0.23 would
have, together worth more). So before a part is taken, the next few parts are looked at: it is
taken unless leaving it out lets those parts show more worth in the same room, found exactly over
every subset of them (a handful: the subsets stay few).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

# How many of the parts after the one offered are weighed against it: enough to see the two or
# three smaller parts a long one would crowd out, few enough that every subset is tried (2**8).
LOOKAHEAD = 8


@dataclass(frozen=True)
class Part:
    """A part the packer may show: what it is worth, what it costs beyond its node's header, and
    the header its node pays once, with its first part shown (0 when the node is shown already)."""

    node: str
    worth: float
    cost: int
    header: int


def most_worth(parts: Sequence[Part], room: int, paid: frozenset[str] = frozenset()) -> float:
    """The most worth a subset of ``parts`` shows within ``room``, each node's header paid once
    (those in ``paid`` are paid already). Exact: every subset that could still beat the best found
    (what is left of the parts' worth bounds what a branch can add)."""
    left = [0.0] * (len(parts) + 1)
    for j in range(len(parts) - 1, -1, -1):
        left[j] = left[j + 1] + parts[j].worth
    best = 0.0

    def walk(i: int, room: int, paid: frozenset[str], worth: float) -> None:
        nonlocal best
        if worth > best:
            best = worth
        for j in range(i, len(parts)):
            if worth + left[j] <= best:
                return  # the parts from j on cannot add enough
            part = parts[j]
            cost = part.cost + (0 if part.node in paid else part.header)
            if cost <= room:
                walk(j + 1, room - cost, paid | {part.node}, worth + part.worth)

    walk(0, room, paid, 0.0)
    return best


def worth_its_room(offered: Part, ahead: Sequence[Part], room: int) -> bool:
    """Whether to take ``offered`` (which fits ``room``) given the parts after it, ``ahead``: yes
    when all fit together, else when taking it leaves the most worth (a tie takes it, as the
    order of worth says)."""
    taken = offered.cost + offered.header
    headers = {p.node: p.header for p in ahead if p.node != offered.node}
    if taken + sum(p.cost for p in ahead) + sum(headers.values()) <= room:
        return True
    with_it = offered.worth + most_worth(ahead, room - taken, frozenset({offered.node}))
    # Sums of the same worths in another order may differ in their last bits: that is a tie.
    return with_it >= most_worth(ahead, room) - 1e-9

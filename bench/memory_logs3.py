"""A third kind of long dated log for bench_memory: Logseq daily journals (sets 10 and up).

    python bench/memory_logs3.py --seed 10 --out bench/out/memory/set10

The first two generators write markdown notes with frontmatter dates, one long text per session.
A personal knowledge base is as often an outliner's daily pages, and this generator writes one: a
Logseq graph (``logseq/config.edn``, ``journals/YYYY_MM_DD.md``, a few ``pages/``) in which every
day is an outline of many unrelated blocks -- errands, the house, money, the children's school,
the dog, the garden, a book club -- and each fact is one child block under a ``[[Page]]`` bullet,
among to-dos, time-stamped lines and small talk. Everything the others vary is varied again:

* **structure**: no paragraphs and no headings, only nested bullets; each block is its own node
  in ctx's graph (the day's page holds them), so a fact is found as a block, not a passage;
* **dates**: none in the text and no frontmatter: a journal's day is its file name;
* **wording**: facts, near-misses, fillers and questions share no template with the other two
  generators; the question kinds are theirs (``single``, ``when``, ``multi``, ``open``,
  ``latest``) so the tables line up.

Scoring is bench_memory's: the share of a question's evidence blocks present in a context (list
markers and link brackets are normalised away). Nothing is copied from anyone; the same seed writes
the same bytes.
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # beside bench_memory, or loaded by a test

from memory_sets import Distinct, write_set  # noqa: E402

GENERATOR_VERSION = 1

PEOPLE = ("Ana", "Bram", "Chiara", "Dev", "Elif", "Fergus", "Greta", "Hamid", "Ines", "Jonas", "Kemal",
          "Lotte", "Mirela", "Nikhil", "Olwen", "Pavel", "Rosa", "Sander", "Tamsin", "Ugo")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December")


@dataclass
class Thing:
    name: str  # how the journal names it
    page: str  # the [[page]] its blocks sit under
    alias: str  # the same thing in other words (no word of ``name``)
    measure: str
    unit: str
    choice: str
    options: tuple[str, ...]
    party: str


THINGS = (
    Thing("the boiler", "Home", "what keeps the radiators warm", "pressure", "bar", "heating schedule",
          ("6-8am and 5-10pm", "7-9am and 6-11pm", "all day at 19 degrees", "evenings only"), "the heating engineer"),
    Thing("the car", "Car", "what we drive to work in", "fuel use", "litres per 100 km", "tyre choice",
          ("all-season tyres", "winter tyres", "the cheaper summer tyres", "run-flat tyres"), "the garage on Mill Road"),
    Thing("the museum trip", "School", "the children's outing to see exhibits", "deposit", "pounds",
          "pick-up point", ("the school gate", "the leisure centre car park", "the church hall", "the bus stop on Elm Street"),
          "the school office"),
    Thing("the allotment", "Garden", "our vegetable plot", "tomato harvest", "kilos", "watering rota",
          ("Mondays and Thursdays", "every other day", "weekends only", "Tuesdays and Saturdays"),
          "the allotment committee"),
    Thing("the mortgage renewal", "Money", "the loan on the house", "offered rate", "percent", "term",
          ("a two-year fix", "a five-year fix", "a tracker", "a ten-year fix"), "the broker"),
    Thing("Pepper's diet", "Pepper", "what our terrier eats", "weight", "kg", "food brand",
          ("Oakfield kibble", "Harbour grain-free", "the vet's own mix", "raw food from the farm shop"), "the vet in town"),
    Thing("the roof repair", "Home", "keeping rain out of the attic", "quote", "pounds", "tile colour",
          ("slate grey", "terracotta", "charcoal", "weathered brown"), "the roofer"),
    Thing("the bike", "Commute", "my two-wheeler", "tyre pressure", "psi", "commute route",
          ("the canal path", "the high street", "the ring road cycle lane", "through the park"), "the bike shop"),
    Thing("the passport renewal", "Travel", "the travel document application", "processing estimate", "weeks",
          "delivery option", ("standard post", "courier", "collect in person", "tracked post"), "the passport office"),
    Thing("the book club", "Reading", "the monthly reading group", "turnout", "people", "meeting night",
          ("the first Tuesday", "the last Friday", "every second Wednesday", "the third Thursday"), "the library"),
)

FACTS = {
    "reading": (
        "Checked {thing} with {person}: {measure} was {value} {unit}.",
        "{person} noted the {measure} of {thing} as {value} {unit}.",
        "Reading for {thing} from {person} - {measure} {value} {unit}.",
    ),
    "choice": (
        "Decided with {person}: the {choice} for {thing} becomes {option}.",
        "Switched {thing} to {option} for the {choice}, {person}'s idea.",
    ),
    "reason": (
        "Figured out what was wrong with {thing}: {cause}. {person} spotted it.",
        "{person} explained the trouble with {thing} - {cause}.",
    ),
    "who": (
        "New person to call about {thing}: {contact} at {party}.",
        "{party} gave us {contact} as the one to ask about {thing}.",
    ),
    "due": (
        "{party} wants {thing} sorted by {due}.",
        "{thing} must be finished by {due}, says {party}.",
    ),
}
CAUSES = (
    "a blocked filter", "a loose connector behind the panel", "the wrong form ticked", "an old address on file",
    "a cracked seal", "a flat backup battery", "a missing signature", "a bent valve", "a misread meter",
    "a forgotten direct debit", "a bird's nest in the vent", "a glitch at their end", "a mix-up between two accounts",
)
NEAR_MISSES = (
    "Need to ask {person} about the {choice} for {thing} again.",
    "{thing}: still no idea what the {measure} is, {person} will look.",
    "Who do we even call about {thing}? Ask {person}.",
    "{person} mentioned {party} and {thing} but nothing concrete yet.",
    "Reminder: is there a date from {party} for {thing}?",
    "Talked about {thing} with {person} for ages, no decision.",
)
FILLER = (
    "Took the recycling out, the blue bin was full again.", "Called {p}, mostly catching up.",
    "Ran {n} minutes along the canal.", "Bought bread, milk and {n} eggs.",
    "Watched half a documentary about octopuses.", "Paid the window cleaner.",
    "Lunch with {p} at the noodle place.", "Ordered {p}'s birthday present.",
    "Slept badly, the neighbours had a party.", "Cleared {n} emails from the inbox.",
    "Fixed the squeaky hinge on the back door.", "Meal plan: lentil soup, pasta bake, fish tacos.",
    "Read {n} pages before bed.", "Rain all afternoon, stayed in.", "Drove {p} to the station.",
    "Booked a haircut for {m}.", "Sorted the sock drawer, finally.",
    "Podcast about city planning, worth a second listen.", "Tried the new bakery on the corner.",
    "Phone screen cracked a little more.", "{p} lent me a board game, we played {n} rounds.",
    "Long walk with {p}, saw a heron.",
)
TASKS = ("renew the parking permit", "return the library books", "defrost the freezer", "water the houseplants",
         "send the thank-you card to {p}", "book the dentist", "back up the laptop", "clean the oven",
         "reply to {p} about the weekend", "hang the picture in the hall")
QUESTIONS = {
    "single": {
        "reading": "What {measure} did {person} note for {thing}?",
        "reason": "What turned out to be wrong with {thing}?",
        "who": "Who should I contact at {party} about {thing}?",
        "due": "By what date does {party} want {thing} done?",
    },
    "when": {
        "reading": "Which day was the {measure} of {thing} {value} {unit}?",
        "reason": "When did we find out what was wrong with {thing}?",
        "who": "When did {contact} become our person for {thing}?",
        "due": "On which day did {party} set the {due} deadline for {thing}?",
    },
    "open": {
        "reading": "What figure did {person} get when looking at {alias}?",
        "reason": "What was the problem with {alias} in the end?",
        "who": "Whom do I talk to about {alias}?",
        "due": "What is the cut-off for {alias}?",
    },
    "latest": "Which {choice} are we on for {thing} now?",
}


@dataclass
class Fact:
    thing: Thing
    kind: str
    slots: dict[str, str]
    day: int
    text: str = ""


@dataclass
class Day:
    date: dt.date
    blocks: list[str] = field(default_factory=list)  # rendered top-level blocks (with children)


class Journal:
    def __init__(self, rng: random.Random):
        self.rng = rng
        self.cast = rng.sample(PEOPLE, 8)
        self.things = list(THINGS)
        start = dt.date(2020, 1, 6) + dt.timedelta(days=rng.randrange(0, 1200))
        self.days: list[Day] = []
        day = start
        for _ in range(rng.randrange(30, 40)):
            self.days.append(Day(day))
            day += dt.timedelta(days=rng.choice((1, 1, 2, 3, 4)))
        self.facts: list[Fact] = []
        self.fresh = Distinct(200)

    def person(self) -> str:
        return self.rng.choice(self.cast)

    def plan(self) -> None:
        rng, n = self.rng, len(self.days)
        for t in self.things:
            kinds = ["reading"] * rng.choice((3, 4)) + ["choice"] * rng.choice((2, 3))
            kinds += rng.sample(["reason", "who", "due"], 2)
            days = sorted(rng.sample(range(n), len(kinds)))
            options = rng.sample(t.options, kinds.count("choice"))
            rng.shuffle(kinds)
            for kind, d in zip(kinds, days):
                slots = {"thing": t.name, "measure": t.measure, "unit": t.unit, "choice": t.choice,
                         "party": t.party, "person": self.person(), "alias": t.alias}
                if kind == "reading":
                    slots["value"] = self.fresh(lambda: f"{rng.randrange(1, 400)}.{rng.randrange(0, 10)}")
                elif kind == "choice":
                    slots["option"] = options.pop()
                elif kind == "reason":
                    slots["cause"] = self.fresh(lambda: rng.choice(CAUSES))
                elif kind == "who":
                    first = rng.choice(PEOPLE)
                    slots["contact"] = self.fresh(lambda first=first: f"{first} {rng.choice('ABDEHKLMNRSTW')}. "
                                                  f"on 07{rng.randrange(100, 999)} {rng.randrange(100000, 999999)}")
                else:
                    slots["due"] = self.fresh(lambda d=d: _day_month(self.days[d].date + dt.timedelta(
                        days=rng.randrange(15, 90))))
                self.facts.append(Fact(t, kind, slots, d))

    def write(self) -> None:
        rng = self.rng
        by_day: dict[int, list[Fact]] = {}
        for f in self.facts:
            by_day.setdefault(f.day, []).append(f)
        for i, day in enumerate(self.days):
            blocks: list[str] = []
            for f in by_day.get(i, []):
                f.text = _cap(rng.choice(FACTS[f.kind]).format(**f.slots))
                children = [f.text, *self.fillers(rng.choice((0, 1, 1, 2)))]
                rng.shuffle(children)
                blocks.append(_block(f"[[{f.thing.page}]]", children))
            for t in rng.sample(self.things, rng.choice((1, 2, 3))):
                line = _cap(rng.choice(NEAR_MISSES).format(thing=t.name, choice=t.choice, measure=t.measure,
                                                           party=t.party, person=self.person()))
                blocks.append(_block(f"[[{t.page}]]", [line]) if rng.random() < 0.5 else _block(line, []))
            for _ in range(rng.randrange(45, 80)):
                roll = rng.random()
                if roll < 0.2:
                    task = rng.choice(TASKS).format(p=self.person())
                    blocks.append(_block(f"{rng.choice(('TODO', 'DONE'))} {task}", []))
                elif roll < 0.4:
                    hour, minute = rng.randrange(7, 22), rng.choice((0, 15, 30, 45))
                    blocks.append(_block(f"{hour:02d}:{minute:02d} {self.fillers(1)[0]}", []))
                elif roll < 0.55:
                    blocks.append(_block(self.fillers(1)[0], self.fillers(rng.choice((1, 2)))))
                else:
                    blocks.append(_block(" ".join(self.fillers(rng.choice((1, 2)))), []))
            rng.shuffle(blocks)
            day.blocks = blocks

    def fillers(self, k: int) -> list[str]:
        rng = self.rng
        return [t.format(p=self.person(), n=rng.randrange(2, 60), m=rng.choice(
            ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"))) for t in rng.sample(FILLER, k)]

    def file_name(self, i: int) -> str:
        return f"journals/{self.days[i].date.strftime('%Y_%m_%d')}.md"

    def questions(self) -> list[dict]:
        rng = self.rng
        out: list[dict] = []

        def ask(kind: str, text: str, facts: list[Fact]) -> None:
            out.append({
                "kind": kind, "question": _cap(text), "log": "journal",
                "evidence": [f.text for f in facts],
                "files": [self.file_name(f.day) for f in facts],
                "dates": [self.days[f.day].date.isoformat() for f in facts],
            })

        takers: dict[tuple[str, str], int] = {}
        for f in self.facts:
            if f.kind == "reading":
                takers[(f.thing.name, f.slots["person"])] = takers.get((f.thing.name, f.slots["person"]), 0) + 1
        asked = [f for f in self.facts if f.kind != "choice"
                 and (f.kind != "reading" or takers[(f.thing.name, f.slots["person"])] == 1)]
        for kind in ("single", "when", "open"):
            for f in rng.sample(asked, min(20, len(asked))):
                ask(kind, QUESTIONS[kind][f.kind].format(**f.slots), [f])
        for t in self.things:
            revisions = sorted((f for f in self.facts if f.thing is t and f.kind == "choice"), key=lambda f: f.day)
            if len(revisions) >= 2:
                ask("latest", QUESTIONS["latest"].format(choice=t.choice, thing=t.name), [revisions[-1]])
        for t in rng.sample(self.things, 5):
            readings = [f for f in self.facts if f.thing is t and f.kind == "reading"]
            ask("multi", f"What were all the {t.measure} readings for {t.name}?", readings)
        pairs = [f for f in self.facts if f.kind in ("who", "due")]
        rng.shuffle(pairs)
        what = {"who": "who is the contact for {thing}", "due": "when is {thing} due"}
        for a, b in zip(pairs[0::2], pairs[1::2]):
            if a.thing is b.thing or a.day == b.day:
                continue
            if sum(1 for q in out if q["kind"] == "multi") >= 12:
                break
            ask("multi", f"{what[a.kind].format(**a.slots)}, and {what[b.kind].format(**b.slots)}?", [a, b])
        return out


def _day_month(day: dt.date) -> str:
    return f"{day.day} {MONTHS[day.month - 1]}"


def _block(text: str, children: list[str]) -> str:
    return "\n".join([f"- {text}", *(f"\t- {c}" for c in children)])


def _cap(text: str) -> str:
    return text[0].upper() + text[1:]


def generate(seed: int, out: Path) -> dict:
    """Write one set under ``out`` (notes/ as a Logseq graph, and questions.jsonl); a summary."""
    rng = random.Random(f"memory_logs3 {seed}")
    journal = Journal(rng)
    journal.plan()
    journal.write()
    files = {journal.file_name(i): "\n".join(day.blocks) + "\n" for i, day in enumerate(journal.days)}
    for t in {t.page: t for t in journal.things}.values():
        names = ", ".join(x.name for x in journal.things if x.page == t.page)
        files[f"pages/{t.page}.md"] = f"- Everything about {names}.\n- See the journal for the running notes.\n"
    files["logseq/config.edn"] = '{:meta/version 1 :preferred-format "Markdown"}\n'
    questions = journal.questions()
    return write_set(seed, out, files, questions)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=10)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    print(generate(args.seed, args.out))


if __name__ == "__main__":
    main()

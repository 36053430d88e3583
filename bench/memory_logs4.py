"""A fourth kind of long dated note for bench_memory: exported chats with an AI assistant (sets 130 up).

    python bench/memory_logs4.py --seed 130 --out bench/out/memory/set130

The other three generators write logs people keep about their own days: meetings, stand-ups, lab
notebooks, digests, journals. Many people's longest notes now are conversations with an assistant,
exported one file per conversation, and they are multi-topic in their own way: each conversation is
about one task (a cover letter, a spreadsheet, a trip), and the facts worth remembering are said in
passing by the user ("before I forget: the plumber moved the boiler service to the 14th"), between
long assistant answers that share the task's words and say nothing about the user's life. This
generator writes such an export, and varies again what the others fix:

* **structure**: every turn is a ``#### User`` or ``#### Assistant`` heading, so one note holds
  dozens of sections with the same two headings; the assistant's turns are 2-5 paragraphs long, the
  user's one or two;
* **dates**: ``created:`` with a time and a UTC offset (``2025-03-04T18:22:10+01:00``), and the
  title names the conversation's task, never its date;
* **facts**: said by the user inside a turn about something else, and revised later (the current
  value is the last one said); near-misses where the user mentions the same thing without the fact,
  and assistant answers that talk about the same kind of thing in general;
* **questions**: ``single``, ``when``, ``multi`` (every value of one thing, or two things' facts
  together), ``open`` (the thing named by a paraphrase) and ``latest``, as the other generators'.

Scoring is bench_memory's: the share of a question's evidence paragraphs present in a context.
Nothing is copied from anyone; the same seed writes the same bytes.
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # beside bench_memory, or loaded by a test

from memory_sets import Distinct, write_set  # noqa: E402

GENERATOR_VERSION = 1

FRIENDS = ("Aoife", "Bartek", "Carmen", "Dmitri", "Esme", "Farid", "Gulnara", "Henrik", "Ilse", "Jaroslav",
           "Keziah", "Lorcan", "Maite", "Nnamdi", "Oona", "Piotr", "Quentin", "Rasmus", "Saoirse", "Teodor")


@dataclass
class Matter:
    """Something in the user's life that the conversations keep touching."""

    name: str  # how the user names it
    alias: str  # the same thing in other words (no content word of ``name``)
    figure: str  # what is measured or priced
    unit: str
    setting: str  # what is chosen, and changed later
    options: tuple[str, ...]
    helper: str  # who the user deals with about it
    span: tuple[int, int]  # the figure's plausible values


MATTERS = (
    Matter("my sourdough starter", "the jar of wild yeast I keep feeding", "rise after twelve hours", "percent",
           "feeding flour", ("rye", "wholemeal spelt", "strong white", "a rye and white mix"), "the baker at the market",
           (40, 260)),
    Matter("the aquarium", "the fish tank in the living room", "water temperature", "degrees", "lighting timer",
           ("8 hours a day", "10 hours a day", "6 hours plus a dusk hour", "off on Sundays"), "the aquatics shop",
           (22, 29)),
    Matter("my knee physio", "the rehab for my injured leg joint", "bend angle", "degrees", "exercise plan",
           ("wall sits and step-ups", "cycling only", "swimming twice a week", "balance board drills"),
           "the sports clinic", (60, 140)),
    Matter("the kayak trip", "our paddling holiday on the lakes", "deposit", "euros", "route",
           ("the northern loop", "the three-lakes crossing", "the river stretch", "the island circuit"),
           "the outfitter", (80, 600)),
    Matter("the home network", "the wifi setup in the flat", "download speed", "megabits", "router placement",
           ("the hallway shelf", "on top of the wardrobe", "beside the TV", "the study windowsill"),
           "the internet provider", (20, 900)),
    Matter("my Portuguese lessons", "learning the language for the move to Lisbon", "quiz score", "points",
           "lesson slot", ("Tuesday evenings", "Saturday mornings", "two lunchtimes a week", "Sunday afternoons"),
           "the language school", (30, 100)),
    Matter("the lease renewal", "keeping the flat for another year", "proposed rent", "euros a month",
           "contract length", ("twelve months", "eighteen months", "two years", "a rolling monthly contract"),
           "the letting agent", (700, 2400)),
    Matter("grandad's hearing aids", "the devices that help my grandfather hear", "battery life", "hours",
           "volume preset", ("the restaurant preset", "the quiet-room preset", "the outdoor preset", "the TV preset"),
           "the audiology clinic", (40, 200)),
    Matter("the wedding speech", "what I am saying at my brother's reception", "draft length", "minutes",
           "opening line", ("a story about the camping trip", "a quote from our mum", "a joke about his cooking",
                            "the day they met"), "the best man", (3, 12)),
    Matter("the electric bike", "the battery-assisted two-wheeler I ride to the office", "range on one charge",
           "kilometres", "assist level", ("eco", "tour", "sport", "eco uphill and tour on the flat"), "the repair shop",
           (40, 150)),
)

# What the user says in passing: one fact each. {matter} is the thing, {helper} who it is about.
FACT_LINES = {
    "figure": (
        "Before I forget, {friend} and I checked {matter} today and the {figure} came out at {value} {unit}.",
        "Unrelated, but the {figure} for {matter} was {value} {unit} when {friend} measured it this morning.",
        "Side note for my own records: {matter}, {figure} {value} {unit}, {friend} wrote it down.",
    ),
    "setting": (
        "Also, we changed the {setting} for {matter} to {option}; {friend} talked me into it.",
        "Quick update on {matter}: the {setting} is now {option}.",
    ),
    "contact": (
        "By the way, {helper} says the person to ask about {matter} from now on is {contact}.",
        "For {matter} I now deal with {contact} at {helper}, the old contact left.",
    ),
    "deadline": (
        "Oh, and {helper} needs everything for {matter} settled by {due}.",
        "Reminder to myself: {matter} has to be done by {due}, according to {helper}.",
    ),
    "cause": (
        "Turns out the trouble with {matter} was {cause}; {friend} figured it out.",
        "We finally know what went wrong with {matter}: {cause}.",
    ),
}
CAUSES = (
    "a kinked hose", "a firmware update that reset everything", "a typo in the form", "a cheap charger",
    "the wrong size seal", "a draught from the window", "a payment that bounced", "a loose cable in the wall box",
    "a mislabelled bag", "an expired card on the account", "the neighbour's interference", "a cracked housing",
    "a double booking", "water in the connector",
)
NEAR_MISSES = (
    "I keep meaning to sort out the {setting} for {matter}, maybe next week.",
    "{friend} asked me about {matter} again and I had nothing new to tell.",
    "Still waiting on {helper} about {matter}.",
    "I should really write down the {figure} of {matter} somewhere.",
    "Not sure who to call about {matter} any more.",
)
ASSISTANT_ASIDES = (
    "On {matter}: keeping a short dated log of the {figure} makes it much easier to spot a trend.",
    "It can help to agree the {setting} with {helper} in writing so nobody has to remember it.",
    "If {matter} keeps causing trouble, a checklist with the date of each change saves guesswork.",
)

# The conversations' own tasks; each has its opening request and the assistant's stock of sentences.
TASKS = {
    "Cover letter for a museum job": (
        "Can you help me tighten my cover letter for the collections assistant post?",
        ("Lead with the achievement closest to the job description rather than your whole history.",
         "A hiring panel reads the first two lines carefully and skims the rest.",
         "Mention the catalogue migration, because it shows you can handle records at scale.",
         "Cut adjectives that describe yourself and replace them with what you did.",
         "Keep the letter to one page; a museum panel often reads dozens in one sitting.",
         "Close with a sentence about why this collection, not museums in general.",
         "Your second paragraph repeats the CV; use it for one story instead.",
         "Check that the tone matches the posting, which is plain and practical.")),
    "Spreadsheet formula for the household budget": (
        "My budget spreadsheet keeps double counting transfers, what formula should I use?",
        ("A SUMIFS over the category column lets you exclude the transfer rows explicitly.",
         "Give transfers their own category so they never land in spending totals.",
         "A pivot table by month and category will show where the double count appears.",
         "Freeze the header row so the filters stay visible while you scroll.",
         "Rounding in the display can hide a mismatch; compare the raw totals.",
         "Keep one sheet as the untouched export and do all cleaning on a copy.",
         "Conditional formatting can flag any row whose category is blank.",
         "A running balance column makes a missing transaction obvious at a glance.")),
    "Planning a long weekend in Porto": (
        "I have three days in Porto, can you suggest a loose plan?",
        ("Start on the riverside in the morning before the tour groups arrive.",
         "The bookshop everyone queues for is quieter just before closing.",
         "Cross the upper deck of the bridge on foot for the view back over the old town.",
         "Set aside an afternoon for the port cellars across the river.",
         "The tram out to the coast is slow but pleasant if you are not in a hurry.",
         "Book dinner on the first evening; the small places fill up by eight.",
         "Comfortable shoes matter more than anything else; the hills are steep.",
         "Keep the last morning free for the market and for whatever you missed.")),
    "Debugging a Python script": (
        "My script that renames photos crashes on some files, can you look at the traceback?",
        ("The error means one of the files has no EXIF date, so the lookup returns None.",
         "Guard the lookup and fall back to the file's modified time.",
         "Print the file name before each rename so the failing one is obvious.",
         "Run it on a copy of the folder first; renames are hard to undo.",
         "Use pathlib rather than string concatenation for the new names.",
         "Two photos taken in the same second will collide; add a counter.",
         "A dry-run flag that only prints the plan is worth the few extra lines.",
         "Catch the specific exception, not every exception, or you will hide real bugs.")),
    "Meal prep for a busy week": (
        "Can you plan five dinners I can mostly cook on Sunday?",
        ("Roast a big tray of vegetables once and use them in three different dinners.",
         "Grains keep well for four days in the fridge if cooled quickly.",
         "Sauces freeze better than finished dishes, so batch those.",
         "Keep one evening as a fresh dish so the week does not feel repetitive.",
         "Label containers with the day you cooked them.",
         "A lentil stew improves on the second day.",
         "Cook the fish dish on the day, it does not reheat well.",
         "Write the shopping list by aisle to halve the time in the shop.")),
    "Writing a complaint to an airline": (
        "My bag arrived four days late, help me write a complaint that gets a refund.",
        ("State the flight number, date and the file reference in the first paragraph.",
         "List the essentials you had to buy, with receipts, as a separate table.",
         "Ask for a specific amount rather than compensation in general.",
         "Keep the tone factual; an angry letter is easier to set aside.",
         "Mention the regulation that covers delayed baggage by name.",
         "Give them a reasonable deadline to reply, such as fourteen days.",
         "Keep copies of everything you send and note the date.",
         "If they do not answer, the next step is the national enforcement body.")),
    "Learning to read sheet music": (
        "I am trying to learn to read sheet music as an adult, where do I start?",
        ("Learn the treble clef notes on the lines first, then the spaces.",
         "Clap rhythms before you try to play them.",
         "Ten minutes a day beats one long session a week.",
         "Simple hymn books are good practice because the rhythms are steady.",
         "Name the notes aloud as you play for the first few weeks.",
         "Flashcard apps help with recognition speed.",
         "Do not worry about the bass clef until the treble feels easy.",
         "Record yourself once a month to hear the progress.")),
    "Choosing a laptop for photo editing": (
        "Which laptop should I get for editing photos, my budget is limited?",
        ("Screen quality matters more than processor speed for photo work.",
         "Sixteen gigabytes of memory is the comfortable minimum for large raw files.",
         "A colour-accurate screen saves you from surprises when you print.",
         "An external drive for the archive is cheaper than a big internal one.",
         "Check the ports; a card reader saves a dongle.",
         "Refurbished business models are often the best value.",
         "Battery life matters less if you edit at a desk.",
         "Calibrate the screen once you have it.")),
    "Preparing for a salary conversation": (
        "I have a pay review next month, how do I ask for more without sounding pushy?",
        ("Bring three concrete results from the past year with numbers attached.",
         "Know the market range for the role before the meeting.",
         "Name a figure first; it anchors the conversation.",
         "Practise the opening sentence aloud so it sounds calm.",
         "If the answer is no, ask what would make it a yes in six months.",
         "Send a short written summary after the meeting.",
         "Separate the conversation about pay from the one about title.",
         "Silence after you state your number is fine; let them answer.")),
    "Tidying a cluttered garage": (
        "The garage is full of junk, how do I tackle it in one weekend?",
        ("Empty one wall at a time rather than the whole garage at once.",
         "Sort into keep, donate, sell and tip, and be strict about the keep pile.",
         "Book the tip run before you start so there is a deadline.",
         "Wall-mounted rails free up the floor faster than shelves.",
         "Label the boxes on two sides.",
         "Anything unused for two years is a candidate to go.",
         "Sweep and check for damp before putting things back.",
         "Keep a small box for things that belong in the house.")),
}
GENERAL = (
    "It is worth writing the plan down before you start.", "Do the part you are least sure about first.",
    "Small steps you can check are better than one big change.", "Ask someone else to read it once you are done.",
    "Give yourself a deadline that is a little earlier than the real one.", "Keep a copy of the original.",
    "A short list of priorities will stop the task sprawling.", "Try it once on a small scale before committing.",
    "There is no single right answer here; pick what fits your week.", "Most of the effort is in the first hour.",
    "Come back to it with fresh eyes tomorrow.", "Be specific; vague wording invites vague replies.",
    "Set a timer so it does not eat the whole evening.", "Note what worked so you can repeat it next time.",
    "If something feels off, it is usually the step you skipped.", "Simple beats clever when you are tired.",
)
SMALL_TALK = (
    "Thanks, that is really useful.", "Makes sense.", "Ok, I will try that tonight.",
    "Sorry, I got distracted, where were we?", "Great, one more thing on this.",
    "Good point, I had not thought of that.", "Right, let me rephrase my question.",
)
FOLLOW_UPS = (
    "Could you make that shorter?", "What would you change first?", "Can you give me an example?",
    "Is there a cheaper way to do it?", "What am I missing?", "Could you put that in a list?",
)
QUESTIONS = {
    "single": {
        "figure": "What {figure} did {friend} and I get for {matter}?",
        "contact": "Who is my contact for {matter} now?",
        "deadline": "What is the deadline {helper} gave for {matter}?",
        "cause": "What turned out to be the trouble with {matter}?",
    },
    "when": {
        "figure": "On what date was the {figure} of {matter} {value} {unit}?",
        "contact": "When did I start dealing with {contact} about {matter}?",
        "deadline": "When did {helper} tell me the deadline for {matter}?",
        "cause": "When did I find out what went wrong with {matter}?",
    },
    "open": {
        "figure": "What number did we measure for {alias}?",
        "contact": "Who do I ask now about {alias}?",
        "deadline": "By when must {alias} be sorted?",
        "cause": "Why was {alias} giving me trouble?",
    },
    "latest": "What {setting} do I use for {matter} now?",
}
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December")


@dataclass
class Fact:
    matter: Matter
    kind: str
    slots: dict[str, str]
    chat: int
    text: str = ""


class Export:
    def __init__(self, rng: random.Random):
        self.rng = rng
        self.friends = rng.sample(FRIENDS, 7)
        start = dt.datetime(2023, 1, 9, 8) + dt.timedelta(days=rng.randrange(0, 900))
        self.times: list[dt.datetime] = []
        moment = start
        for _ in range(rng.randrange(26, 36)):
            self.times.append(moment + dt.timedelta(minutes=rng.randrange(0, 14 * 60)))
            moment += dt.timedelta(days=rng.choice((1, 2, 3, 5, 8)))
        self.tasks = [rng.choice(sorted(TASKS)) for _ in self.times]
        self.facts: list[Fact] = []
        self.fresh = Distinct(200)
        self.values: dict[str, Distinct] = {}

    def plan(self) -> None:
        rng, n = self.rng, len(self.times)
        for m in MATTERS:
            kinds = ["figure"] * rng.choice((3, 4)) + ["setting"] * rng.choice((2, 3))
            kinds += rng.sample(["contact", "deadline", "cause"], 2)
            chats = sorted(rng.sample(range(n), len(kinds)))
            options = rng.sample(m.options, kinds.count("setting"))
            rng.shuffle(kinds)
            for kind, c in zip(kinds, chats):
                slots = {"matter": m.name, "figure": m.figure, "unit": m.unit, "setting": m.setting,
                         "helper": m.helper, "alias": m.alias, "friend": rng.choice(self.friends)}
                if kind == "figure":
                    values = self.values.setdefault(m.name, Distinct(200))  # a value is told apart by its matter
                    slots["value"] = values(lambda m=m: str(rng.randrange(*m.span)))
                elif kind == "setting":
                    slots["option"] = options.pop()
                elif kind == "contact":
                    slots["contact"] = self.fresh(lambda: f"{rng.choice(FRIENDS)} {rng.choice('BCDFGJKLMPRSTV')}., "
                                                  f"extension {rng.randrange(200, 999)}")
                elif kind == "deadline":
                    slots["due"] = self.fresh(lambda c=c: _month_day(self.times[c].date()
                                                                    + dt.timedelta(days=rng.randrange(20, 100))))
                else:
                    slots["cause"] = self.fresh(lambda: rng.choice(CAUSES))
                self.facts.append(Fact(m, kind, slots, c))

    def conversation(self, i: int) -> str:
        rng, task = self.rng, self.tasks[i]
        opening, stock = TASKS[task]
        said = [f for f in self.facts if f.chat == i]
        for f in said:
            f.text = _cap(rng.choice(FACT_LINES[f.kind]).format(**f.slots))
        asides = [_cap(rng.choice(NEAR_MISSES).format(**self._slots(m)))
                  for m in rng.sample(MATTERS, rng.choice((1, 2, 2, 3)))]
        user_turns = [opening] + [rng.choice(FOLLOW_UPS) for _ in range(rng.randrange(8, 16))]
        # Facts and near-misses ride on user turns after the first, each its own paragraph.
        extras: list[list[str]] = [[] for _ in user_turns]
        for line in said + asides:
            extras[rng.randrange(1, len(user_turns))].append(line.text if isinstance(line, Fact) else line)
        parts: list[str] = []
        for k, request in enumerate(user_turns):
            body = [request if k == 0 else f"{rng.choice(SMALL_TALK)} {request}", *extras[k]]
            if k and rng.random() < 0.4:
                rng.shuffle(body)
            parts.append("#### User\n\n" + "\n\n".join(body))
            parts.append("#### Assistant\n\n" + "\n\n".join(self.answer(stock)))
        return "\n\n".join(parts)

    def answer(self, stock: tuple[str, ...]) -> list[str]:
        """2-5 paragraphs of the task's sentences and general advice, no sentence twice in a turn."""
        rng = self.rng
        pool = list(stock) + rng.sample(GENERAL, 6)
        rng.shuffle(pool)
        paragraphs = []
        for _ in range(rng.choice((2, 3, 3, 4, 5))):
            take = rng.choice((2, 3, 4))
            if len(pool) < take:
                break
            paragraphs.append(" ".join(pool[:take]))
            del pool[:take]
        if rng.random() < 0.25:
            m = rng.choice(MATTERS)
            paragraphs.append(rng.choice(ASSISTANT_ASIDES).format(**self._slots(m)))
        return paragraphs

    def _slots(self, m: Matter) -> dict[str, str]:
        return {"matter": m.name, "setting": m.setting, "figure": m.figure, "helper": m.helper,
                "friend": self.rng.choice(self.friends)}

    def file_name(self, i: int) -> str:
        slug = "-".join(self.tasks[i].lower().split()[:4])
        return f"chats/{i + 1:03d}-{slug}.md"

    def note(self, i: int) -> str:
        created = self.times[i].strftime("%Y-%m-%dT%H:%M:%S") + "+01:00"
        return f'---\ntitle: "{self.tasks[i]}"\ncreated: {created}\nsource: assistant export\n---\n\n' \
               f"{self.conversation(i)}\n"

    def questions(self) -> list[dict]:
        rng = self.rng
        out: list[dict] = []

        def ask(kind: str, text: str, facts: list[Fact]) -> None:
            out.append({
                "kind": kind, "question": _cap(text), "log": "assistant",
                "evidence": [f.text for f in facts],
                "files": [self.file_name(f.chat) for f in facts],
                "dates": [self.times[f.chat].date().isoformat() for f in facts],
            })

        pairs: dict[tuple[str, str], int] = {}
        for f in self.facts:
            if f.kind == "figure":
                key = (f.matter.name, f.slots["friend"])
                pairs[key] = pairs.get(key, 0) + 1
        asked = [f for f in self.facts if f.kind != "setting"
                 and (f.kind != "figure" or pairs[(f.matter.name, f.slots["friend"])] == 1)]
        for kind in ("single", "when", "open"):
            for f in rng.sample(asked, min(20, len(asked))):
                ask(kind, QUESTIONS[kind][f.kind].format(**f.slots), [f])
        for m in MATTERS:
            revisions = sorted((f for f in self.facts if f.matter is m and f.kind == "setting"), key=lambda f: f.chat)
            if len(revisions) >= 2:
                ask("latest", QUESTIONS["latest"].format(setting=m.setting, matter=m.name), [revisions[-1]])
        for m in rng.sample(MATTERS, 5):
            figures = [f for f in self.facts if f.matter is m and f.kind == "figure"]
            ask("multi", f"List every {m.figure} I noted for {m.name}.", figures)
        others = [f for f in self.facts if f.kind in ("contact", "deadline", "cause")]
        rng.shuffle(others)
        what = {"contact": "who handles {matter}", "deadline": "when {matter} is due",
                "cause": "what broke {matter}"}
        for a, b in zip(others[0::2], others[1::2]):
            if a.matter is b.matter or a.chat == b.chat:
                continue
            if sum(1 for q in out if q["kind"] == "multi") >= 12:
                break
            ask("multi", f"Remind me {what[a.kind].format(**a.slots)} and {what[b.kind].format(**b.slots)}.", [a, b])
        return out


def _month_day(day: dt.date) -> str:
    return f"{MONTHS[day.month - 1]} {day.day}"


def _cap(text: str) -> str:
    return text[0].upper() + text[1:]


def generate(seed: int, out: Path) -> dict:
    """Write one set under ``out`` (notes/chats/*.md and questions.jsonl); a summary."""
    rng = random.Random(f"memory_logs4 {seed}")
    export = Export(rng)
    export.plan()
    files = {export.file_name(i): export.note(i) for i in range(len(export.times))}
    return write_set(seed, out, files, export.questions())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=130)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    print(generate(args.seed, args.out))


if __name__ == "__main__":
    main()

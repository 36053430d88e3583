"""Long dated multi-topic logs with questions whose evidence is one or a few paragraphs.

    python bench/memory_logs.py --seed 1 --out bench/out/memory/set1     # one generated set

The benchmark of ``bench_memory.py`` needs notes of the kind that defeat note-level retrieval: one
note per session (``date:`` in the frontmatter, a title without the date), 20-30 sessions per log,
each session a few thousand tokens about many unrelated things, and questions answered by a
paragraph or two anywhere in them. Nothing here is copied from anyone: the text is generated from
the small lexicons below, seeded and deterministic (the same seed writes the same bytes).

Three styles, each with its own vocabulary, so that no set is one style's:

* ``meeting`` — a product team's weekly meeting notes: an attendee line, one ``##`` heading per
  agenda item, paragraphs and ``Action:`` lines;
* ``chat`` — a household group chat exported by day: ``**Name** (hh:mm): message`` lines, one
  paragraph per exchange, no headings at all;
* ``journal`` — a personal journal in the first person: prose paragraphs, no headings.

Each log follows recurring *threads* (a renovation, an audit, a race...) through *events* that
state one fact each (a quote, a choice, an owner, a place, a delay, a number), surrounded by
paragraphs about the thread that state nothing new and by unrelated small talk. Questions come
from the events, in four kinds:

* ``single`` — one fact, asked with the thread's own words;
* ``when`` — when an event happened (the answer is the session's date, so the evidence only
  answers it with its note's date beside it);
* ``multi`` — evidence in two or three sessions (every quote for a thread, or two threads' facts
  asked together);
* ``open`` — a fact asked in other words (the thread's paraphrase, not its name, and not the
  fact's key words): what meaning must find.

A question's evidence is the exact text of its paragraphs (``evidence``), each of which occurs in
exactly one note (checked when generating).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import re
from dataclasses import dataclass, field
from pathlib import Path

GENERATOR_VERSION = 1
SHARED = Path(os.environ.get("CTX_SHARED_DIR", Path(__file__).resolve().parent.parent.parent / "shared"))
MUSIQUE = SHARED / "eval" / "musique"

FIRST_NAMES = (
    "Ana Bram Chloe Dev Elif Farid Greta Hugo Ines Jonas Kemal Lena Malik Nora Oskar Priya Quentin Rosa "
    "Sami Tessa Umar Vera Wes Yara Zoltan Aiko Bela Carmen Dario Edda Femi Gio Hana Ivo Jana Kofi Luz Mei "
    "Niko Olga Pavel Rhea Soren Tomas Ulla Viggo Wanda Xavi Yusuf Zora"
).split()


@dataclass
class Thread:
    """A recurring subject of one log."""

    name: str  # how the notes name it
    alias: str  # how an open question names it (words the notes never use for it)
    option_kind: str
    options: list[str]
    task: str
    unit: str
    owner: str = ""


@dataclass
class Domain:
    style: str
    series: list[str]  # title stems of the log
    threads: list[Thread]
    vendors: list[str]
    places: list[str]
    causes: list[str]
    extras: list[str]  # what a quote includes
    filler: dict[str, list[str]]  # topic -> sentences (slots: {p} {q} {n} {day} {month})


TEAM = Domain(
    style="meeting",
    series=["Platform weekly", "Product sync", "Ops review"],
    threads=[
        Thread("the billing migration", "moving our customers onto the new invoicing setup", "payment provider",
               ["Adyen", "Mollie", "Braintree", "Paddle"], "the cut-over runbook", "engineers"),
        Thread("the autumn offsite", "the trip away the whole team takes later this year", "venue",
               ["a converted mill near Ghent", "a lakeside lodge in Bled", "a vineyard hotel outside Porto",
                "a mountain hut above Innsbruck"], "the travel bookings", "rooms"),
        Thread("the search reindex", "rebuilding how the product catalogue gets looked up", "cluster layout",
               ["three large nodes", "six small nodes", "two regions with four nodes each", "a single beefy box"],
               "the backfill script", "shards"),
        Thread("the mobile redesign", "the new look of the phone app", "design agency",
               ["Studio Kettle", "Fernweh Design", "Blue Orchard", "Parallax & Pine"], "the usability sessions",
               "screens"),
        Thread("the SOC 2 audit", "the security certification customers keep asking about", "audit firm",
               ["Brightline Assurance", "Keel & Marsh", "Northgate Audit", "Hollis Partners"],
               "the evidence collection", "controls"),
        Thread("the support hiring plan", "growing the team that answers customer tickets", "hiring channel",
               ["a recruiting agency in Lisbon", "the referral bonus", "a bootcamp partnership", "the careers fair"],
               "the interview loop", "hires"),
        Thread("the office move", "where we will all work from next spring", "building",
               ["the old printworks on Kanal Street", "the glass tower by the station",
                "the co-working floor above the market", "the former school on Birch Lane"],
               "the floor plan", "desks"),
        Thread("the customer conference", "our yearly event for the people who buy from us", "keynote speaker",
               ["a former astronaut", "the founder of a robotics startup", "a well-known data journalist",
                "a chess grandmaster"], "the speaker schedule", "tickets"),
        Thread("the data warehouse renewal", "the contract for where our analytics numbers live", "vendor",
               ["Snowdrift", "Quarry Analytics", "Lakehouse One", "Columnar Co"], "the usage forecast", "terabytes"),
        Thread("the on-call rotation", "who gets woken up when things break at night", "paging tool",
               ["PagerTree", "Opsbell", "Nightwatch", "Alertly"], "the escalation policy", "people per week"),
    ],
    vendors=["Halvorsen & Vey", "Northwind Consulting", "Tallis Systems", "Orchard IT", "Brindle Labs",
             "Copperfield Group", "Mistral Partners", "Vantage Works", "Greyhound Digital", "Ostrava Soft"],
    places=["the Rotterdam office", "the Lisbon hub", "the big meeting room on the fourth floor",
            "the partner space in Leeds", "the Tallinn co-working space", "the warehouse loft in Antwerp"],
    causes=["legal has not signed off on the data processing terms", "two of the contractors are out sick",
            "the vendor shipped the wrong hardware", "finance froze new spending until the quarter closes",
            "the staging environment was wiped by mistake", "the main contact at the vendor left the company",
            "the fire inspection failed on the emergency exits", "procurement wants a third quote first"],
    extras=["a year of support", "training for the whole team", "the migration tooling", "on-site setup",
            "a dedicated account manager", "two days of workshops"],
    filler={
        "incident review": [
            "{p} walked through last {day}'s outage: the queue backed up for {n} minutes before anyone noticed.",
            "The alert fired but went to a channel nobody watches after six.",
            "{q} proposed a short checklist for the first ten minutes of any incident.",
            "We agreed the postmortem template is too long and nobody reads the timeline section.",
            "Customer impact was limited to the export feature, according to {p}.",
            "{q} will add a dashboard panel for queue depth so it is visible at a glance.",
        ],
        "sprint progress": [
            "The sprint is roughly on track; {n} of the planned tickets are done.",
            "{p} said the flaky integration tests cost everyone an hour a day again this week.",
            "{q} pulled two tickets forward because the API work finished early.",
            "Carry-over is mostly the reporting screens, which keep growing in scope.",
            "We should stop starting new work on {day} afternoons, said {p}, half joking.",
            "The burndown looks flat because tickets were closed in a batch on {day}.",
        ],
        "tooling": [
            "{p} tried the new code review bot and found it noisy but occasionally useful.",
            "The CI bill went up again; {q} thinks caching the dependency layer would save a lot.",
            "Nobody is attached to the old deploy script, so it can go once the new pipeline is stable.",
            "{q} asked whether anyone still uses the shared staging database; nobody admitted to it.",
            "Build times are down to about {n} minutes after the cache fix.",
            "The linter upgrade produced hundreds of warnings, most of them about import order.",
        ],
        "team news": [
            "{p} is back from parental leave on {day} and will ease in with small tickets.",
            "Welcome to {q}, who joined the analytics team this week.",
            "There is cake in the kitchen on {day} for {p}'s five years at the company.",
            "{q} is giving a lunch talk about accessibility testing in {month}.",
            "The team photo is finally up on the wiki, with {p} blinking as usual.",
            "Reminder that the quarterly feedback forms close at the end of the month.",
        ],
        "customer feedback": [
            "Support saw {n} tickets about the new export format, mostly confusion about column names.",
            "{p} shared a long email from a customer who loves the keyboard shortcuts.",
            "Two enterprise accounts asked for single sign-on again; {q} is collecting the details.",
            "The satisfaction score dipped slightly, which {p} attributes to the slow dashboards.",
            "One customer found a typo in the invoice footer that has been there for two years.",
            "{q} suggested a short in-app survey after people use the new filters.",
        ],
        "metrics": [
            "Weekly active accounts are up about {n} percent since the spring release.",
            "{p} cautioned that the signup numbers include a spike from a conference.",
            "Churn is flat, and the dashboards finally agree with finance's spreadsheet.",
            "The funnel shows most people drop off at the integration step.",
            "{q} wants the metrics review to move to the first {day} of each month.",
            "Median page load is around {n} hundred milliseconds on the reports page.",
        ],
        "security": [
            "{p} rotated the remaining long-lived access keys; only the backup job still needs one.",
            "The phishing test caught {n} people, fewer than last time.",
            "Laptops without disk encryption must be fixed before {month}, said {q}.",
            "A dependency advisory came in for the image library; the patch is already merged.",
            "{q} reminded everyone not to paste customer data into chat threads.",
            "Password manager adoption is close to complete across the company.",
        ],
        "documentation": [
            "The onboarding guide still describes the old VPN; {p} will rewrite that page.",
            "{q} moved the architecture diagrams into the repository so they stop going stale.",
            "Nobody owns the API changelog, which is why it lags behind releases.",
            "We agreed that every new service gets a one-page readme with an on-call section.",
            "{p} found {n} broken links in the public docs with a crawler.",
            "The glossary page is surprisingly popular with new hires.",
        ],
    },
)

HOME = Domain(
    style="chat",
    series=["Family chat", "Flat group", "The Kowalski-Reyes household"],
    threads=[
        Thread("the bathroom renovation", "redoing the washroom upstairs", "tile colour",
               ["sage green", "terracotta", "charcoal slate", "plain white with a blue border"], "the plumbing",
               "square metres"),
        Thread("the summer trip", "where we all go when school is out", "destination",
               ["the Dolomites", "a campsite in Brittany", "the Croatian islands", "a farm stay in Wales"],
               "the ferry tickets", "nights"),
        Thread("Mia's birthday party", "the celebration for our youngest turning eight", "theme",
               ["pirates", "outer space", "dinosaurs", "a circus"], "the cake", "guests"),
        Thread("the new car", "replacing the old hatchback", "model",
               ["a used Skoda estate", "a small electric Renault", "a hybrid Toyota", "a Volvo with a tow bar"],
               "the insurance", "kilometres"),
        Thread("the garden fence", "the boundary with next door that keeps falling over", "material",
               ["larch boards", "woven willow panels", "galvanised mesh", "recycled plastic planks"],
               "the permission from the neighbours", "metres"),
        Thread("Grandma's move", "getting Nana settled somewhere closer", "flat",
               ["the ground-floor flat on Elm Road", "the sheltered housing by the park", "the annexe at uncle Tom's",
                "the small house near the church"], "the removal van", "boxes"),
        Thread("the kitchen boiler", "the hot water that keeps cutting out", "replacement",
               ["a heat pump", "a combi boiler", "an electric flow heater", "a second-hand boiler from a friend"],
               "the gas safety check", "hours"),
        Thread("the dog's training", "teaching Biscuit to behave on walks", "trainer",
               ["a trainer called Dagny", "the club at the rec ground", "an online course", "the vet's puppy class"],
               "the morning walks", "sessions"),
        Thread("the school play", "Leo's big night on stage this term", "role",
               ["the narrator", "the wolf", "a tree with two lines", "the lighting crew"], "the costume", "rehearsals"),
        Thread("the solar panels", "putting power generation on the roof", "installer",
               ["SunRoof North", "Brightwatt", "Helio Homes", "Panel Pals"], "the grant application", "panels"),
    ],
    vendors=["Harlow & Sons", "Kaminski Building", "FixIt Frank", "Greenway Trades", "Baker Brothers",
             "Oakridge Services", "the Polish guys from Mum's street", "Dunmore Home Repair"],
    places=["the community hall on Mill Lane", "Aunt Ruth's garden", "the bowling alley in town",
            "the back room of the Red Lion", "the beach car park", "the sports centre"],
    causes=["the plumber found rot under the floor", "the bank transfer bounced", "Dad's back went again",
            "the parts are stuck at customs", "it rained for nine days straight", "the council lost the form",
            "Nana caught the flu", "the quote had the wrong measurements"],
    extras=["taking the old one away", "the labour", "a two-year guarantee", "the delivery",
            "all the materials", "clearing up afterwards"],
    filler={
        "dinner plans": [
            "anyone want curry on {day}?",
            "I can do pasta bake if someone buys cheese",
            "{p} is out for dinner on {day}, so just three of us",
            "we still have half a lasagne in the freezer",
            "who ate the last of the hummus, honestly",
            "ordering pizza, speak now or forever hold your peace",
        ],
        "school runs": [
            "can someone do pickup on {day}? I have a late meeting",
            "{q} forgot the PE kit again",
            "the bus was {n} minutes late this morning",
            "parents evening is in {month}, put it in the calendar",
            "reminder: non-uniform day on {day}, bring a pound",
            "lost another water bottle, that is four this term",
        ],
        "shopping": [
            "we're out of milk and dishwasher tablets",
            "the big shop is {day} unless someone objects",
            "{p} found cheap toilet roll at the discount place",
            "do we need more bin bags or did you get some",
            "added oat milk to the list, {q} asked for it",
            "the bread maker is making weird noises again",
        ],
        "weekend": [
            "park run on {day} morning, who is in?",
            "{p} wants to see the new animated film",
            "it's supposed to rain all weekend, board games it is",
            "the car boot sale is back at the school field",
            "{q} is at a sleepover {day} night",
            "shall we finally clear out the shed",
        ],
        "money": [
            "the electricity bill went up by {n} quid a month",
            "I moved the savings into the easy access account",
            "council tax is due on the first, don't forget",
            "{p} owes me for the cinema tickets, just saying",
            "we should cancel one of the streaming things",
            "pocket money day is {day}, {q} already reminded me three times",
        ],
        "pets": [
            "the cat has been sleeping in the laundry basket again",
            "{p} says the hamster escaped but was found behind the sofa",
            "vet appointment for Biscuit's jabs next {day}",
            "who let the dog eat a sock",
            "the fish tank filter needs cleaning",
            "cat food delivery comes {day}, someone be in",
        ],
        "phones and wifi": [
            "wifi is down again, I restarted the router",
            "{q} used all the mobile data watching videos",
            "can someone help Nana with her phone update",
            "new password for the wifi is on the fridge",
            "the printer only works if you stand next to it",
            "{p} cracked their screen, third time this year",
        ],
        "chores": [
            "bins go out {day} night, it's {p}'s turn",
            "whoever left the towels on the floor, please",
            "I hoovered the stairs, you're welcome",
            "the washing machine ate another sock",
            "rota for the dishes is on the fridge now",
            "{q} promised to clean the car on {day}",
        ],
    },
)

LIFE = Domain(
    style="journal",
    series=["Journal", "Notebook", "Diary"],
    threads=[
        Thread("the marathon training", "getting ready for the long race in the spring", "race",
               ["the Rotterdam marathon", "the Seville marathon", "a trail marathon in the Peak District",
                "the Vienna city run"], "the long runs", "kilometres a week"),
        Thread("the allotment", "my patch of vegetables at the edge of town", "crop",
               ["purple sprouting broccoli", "three kinds of beans", "heritage tomatoes", "a bed of garlic"],
               "the watering rota", "beds"),
        Thread("the book club", "the monthly reading evenings at Lotte's", "book",
               ["a Norwegian crime novel", "a memoir about lighthouse keepers", "a fat Russian classic",
                "a short book about octopuses"], "the hosting", "members"),
        Thread("my knee", "the joint that hurts on the stairs", "treatment",
               ["physiotherapy twice a week", "a brace and rest", "an injection", "swimming instead of running"],
               "the appointments", "weeks"),
        Thread("the pottery course", "learning to make bowls on a wheel", "glaze",
               ["a speckled oatmeal glaze", "a deep cobalt blue", "a celadon green", "a matte black"],
               "firing the pieces", "pieces"),
        Thread("the savings plan", "putting money aside for a place of my own", "account",
               ["a fixed-rate bond", "an index fund", "the building society saver", "premium bonds"],
               "the monthly transfer", "pounds"),
        Thread("learning Portuguese", "finally speaking the language of my grandmother", "teacher",
               ["a tutor called Joana", "an evening class at the college", "a language exchange with Rui",
                "an app and a podcast"], "the vocabulary cards", "lessons"),
        Thread("the job application", "the role at the museum I really want", "position",
               ["assistant curator", "education officer", "collections manager", "exhibitions coordinator"],
               "the cover letter", "interviews"),
        Thread("the choir concert", "singing in public in December", "piece",
               ["a Bach cantata", "a set of folk songs", "a Fauré requiem", "a modern piece by a local composer"],
               "learning the alto part", "singers"),
        Thread("the bike repair", "getting my old bicycle back on the road", "part",
               ["a new rear wheel", "a chain and cassette", "hydraulic brakes", "a dynamo light"],
               "the gears", "euros"),
    ],
    vendors=["the shop on Quay Street", "Marek's workshop", "the garden centre", "the sports clinic",
             "a man on the classifieds site", "the place Hattie recommended", "the co-op", "Tallis & Daughter"],
    places=["the church hall on Fenwick Road", "the arts centre", "Lotte's flat", "the library's upstairs room",
            "the old fire station", "the riverside cafe"],
    causes=["I caught a cold that would not go away", "the weather turned", "work swallowed every evening",
            "the teacher moved to another town", "my bank card was cloned", "the landlord started repairs",
            "a storm took the shed roof off", "my sister needed help with the baby"],
    extras=["the fitting", "a spare set", "the first session free", "postage", "a lesson on looking after it",
            "a year's guarantee"],
    filler={
        "weather": [
            "It rained all morning and I stayed in with tea.",
            "The light at dusk was extraordinary, all orange over the rooftops.",
            "Cold enough on {day} to see my breath on the way to the station.",
            "The first warm day in weeks; half the town was in the park.",
            "Fog so thick this morning that the bridge vanished halfway across.",
            "A strange muggy heat, thunder that never quite arrived.",
        ],
        "work": [
            "Another long meeting about the spreadsheet migration; nothing decided.",
            "{p} took credit for my slides again and I said nothing, which I regret.",
            "Lunch with {q}, who is thinking of leaving for a startup.",
            "I finished the quarterly report {n} hours before the deadline for once.",
            "The new manager seems kind but overwhelmed.",
            "Spent the afternoon untangling someone else's filing system.",
        ],
        "family": [
            "Phoned Mum; she is worried about her garden in the frost.",
            "{p} sent photos of the baby, who now has two teeth.",
            "Dad's birthday is in {month} and I have no idea what to get him.",
            "My brother and I argued about politics again, then laughed about it.",
            "Wrote a long letter to my aunt in Coimbra.",
            "{q} came round with soup when I mentioned I was tired.",
        ],
        "cooking": [
            "Tried a new dal recipe; too much cumin but I will make it again.",
            "Bread finally rose properly after {n} failed attempts.",
            "Made a huge pot of minestrone to last the week.",
            "{p} taught me how to fold dumplings; mine looked like little cushions.",
            "Burnt the onions while reading, which tells you how good the book is.",
            "The farmers market had the first asparagus.",
        ],
        "sleep and mood": [
            "Slept badly, woke at four thinking about nothing in particular.",
            "Felt oddly light all day, maybe the sun.",
            "A flat, grey mood; a walk helped a bit.",
            "Eight hours of sleep, which feels like a luxury now.",
            "Anxious before the call with {p}, which turned out fine.",
            "I notice I am happier on days I leave the phone in another room.",
        ],
        "reading": [
            "Reading a history of maps; did not know how many were wrong on purpose.",
            "Abandoned a thriller after {n} pages; too many twins.",
            "{q} lent me a poetry collection that I keep rereading.",
            "Finished the essays on walking and immediately wanted to go for one.",
            "The library fine was larger than I expected.",
            "Started rereading a favourite from school; it is stranger than I remembered.",
        ],
        "town": [
            "The bakery on the corner closed; a phone shop is moving in.",
            "Roadworks on the high street again, the third time this year.",
            "{p} and I walked along the canal to the old lock.",
            "The market square had a brass band on {day}, badly out of tune and wonderful.",
            "A new cafe opened by the station and it is always full.",
            "The bus timetable changed and nobody told anyone.",
        ],
        "flat": [
            "The radiator in the bedroom clanks all night.",
            "I rearranged the furniture and the room feels twice the size.",
            "The upstairs neighbour practises the trumpet on {day} evenings.",
            "Found mould behind the wardrobe; bleach and an open window.",
            "Bought a second-hand armchair for {n} pounds; it smells of someone's pipe.",
            "The landlord promised to fix the window by {month}.",
        ],
    },
)

DOMAINS = {"meeting": TEAM, "chat": HOME, "journal": LIFE}
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

# Event templates: one fact each. Slots: {subject} {vendor} {amount} {extra} {option} {kind} {person}
# {task} {place} {cause} {count} {unit} {month}.
EVENTS = {
    "quote": [
        "{vendor} sent their quote for {subject}: {amount}, including {extra}.",
        "The price from {vendor} for {subject} came in at {amount}, and that covers {extra}.",
        "{person} got a figure from {vendor} for {subject} — {amount} with {extra}.",
    ],
    "choice": [
        "For {subject} we settled on {option} as the {kind}.",
        "{person} made the call on the {kind} for {subject}: {option}.",
        "After going back and forth, the {kind} for {subject} is going to be {option}.",
    ],
    "owner": [
        "{person} is taking over {task} for {subject} from now on.",
        "From this week {person} owns {task} on {subject}.",
        "{task} for {subject} moves to {person}, who volunteered.",
    ],
    "place": [
        "{subject} will now happen at {place} instead of the original plan.",
        "{person} booked {place} for {subject}.",
        "The venue question for {subject} is settled: {place}.",
    ],
    "delay": [
        "{subject} is pushed back to {month} because {cause}.",
        "Bad news on {subject}: nothing moves until {month}, since {cause}.",
        "{person} says {subject} slips to {month} — {cause}.",
    ],
    "number": [
        "{person} worked it out: {subject} needs {count} {unit}.",
        "The count for {subject} is {count} {unit}, according to {person}.",
        "We will need {count} {unit} for {subject}, {person} reckons.",
    ],
}
# Paragraphs about a thread that state nothing new (they share its words: the distractors).
STATUS = [
    "No real news on {subject}; {person} is still chasing people about it.",
    "{person} asked where we are with {subject}. Nobody had a clear answer.",
    "We talked about {subject} for a while without deciding anything.",
    "{subject} came up again. Still waiting to hear back from a couple of people.",
    "{person} wants a proper plan for {subject} before anything else happens.",
    "A long tangent about {subject} and whether it was ever a good idea.",
]
QUESTIONS = {
    "single": {
        "quote": "How much did {vendor} quote for {subject}?",
        "choice": "Which {kind} was chosen for {subject}?",
        "owner": "Who took over {task} for {subject}?",
        "place": "Where is {subject} going to be held?",
        "delay": "Why was {subject} postponed?",
        "number": "How many {unit} does {subject} need?",
    },
    "when": {
        "quote": "When did {vendor} send the quote for {subject}?",
        "choice": "When was the {kind} for {subject} decided?",
        "owner": "When did {person} take over {task}?",
        "place": "When was {place} booked for {subject}?",
        "delay": "When did we learn that {subject} would slip to {month}?",
        "number": "When did {person} work out the number of {unit} for {subject}?",
    },
    "open": {
        "quote": "Roughly what would {alias} cost us, and what is part of the price?",
        "choice": "What did we end up going with for {alias}?",
        "owner": "Who should I talk to about {alias} these days?",
        "place": "Where do I need to turn up for {alias}?",
        "delay": "What is holding up {alias}?",
        "number": "How big is {alias} going to be, in numbers?",
    },
}


def money(rng: random.Random, style: str) -> str:
    value = rng.randrange(8, 480) * 25
    sign = {"meeting": "€", "chat": "£", "journal": "£"}[style]
    return f"{sign}{value:,}"


@dataclass
class Event:
    thread: Thread
    kind: str
    slots: dict[str, str]
    text: str = ""  # the paragraph, once rendered
    session: int = 0


@dataclass
class Segment:
    heading: str
    sentences: list[str]
    event: Event | None = None
    paste: bool = False


@dataclass
class Session:
    date: dt.date
    segments: list[Segment] = field(default_factory=list)


PASTE_LEAD = {
    "meeting": "{p} shared something from the reading list, on {title}:",
    "chat": "{p} forwarded this, about {title}",
    "journal": "Read about {title} this evening.",
}


def _fill(template: str, slots: dict[str, str]) -> str:
    text = template.format(**slots)
    return text[0].upper() + text[1:]


class LogWriter:
    """One log: its cast, threads, sessions and the questions they answer."""

    def __init__(self, rng: random.Random, domain: Domain, index: int, n_sessions: int):
        self.rng, self.domain = rng, domain
        self.cast = rng.sample(FIRST_NAMES, 6)
        self.threads = [Thread(**{**t.__dict__}) for t in rng.sample(domain.threads, 8)]
        for t in self.threads:
            t.owner = rng.choice(self.cast)
        self.series = rng.choice(domain.series)
        self.slug = f"{domain.style}-{index}"
        start = dt.date(2023, 1, 2) + dt.timedelta(days=rng.randrange(0, 700))
        self.sessions: list[Session] = []
        day = start
        for _ in range(n_sessions):
            self.sessions.append(Session(day))
            day += dt.timedelta(days=rng.choice((3, 4, 6, 7, 7, 8, 10, 13)))
        self.events: list[Event] = []
        self.used_values: set[str] = set()

    def person(self) -> str:
        return self.rng.choice(self.cast)

    def unique(self, make) -> str:
        for _ in range(50):
            value = make()
            if value not in self.used_values:
                self.used_values.add(value)
                return value
        raise RuntimeError("ran out of unique values")

    def plan_events(self) -> None:
        rng, d = self.rng, self.domain
        n = len(self.sessions)
        for t in self.threads:
            kinds = ["quote", "quote", "choice", "owner", rng.choice(["place", "delay", "number"]),
                     rng.choice(["place", "delay", "number"])]
            sessions = sorted(rng.sample(range(n), len(kinds)))
            rng.shuffle(kinds)
            for kind, s in zip(kinds, sessions, strict=True):
                slots = {
                    "subject": t.name, "kind": t.option_kind, "task": t.task, "unit": t.unit,
                    "person": self.person(), "extra": rng.choice(d.extras),
                    "month": MONTHS[(self.sessions[s].date.month + rng.randrange(1, 4)) % 12],
                }
                if kind == "quote":
                    slots["vendor"] = self.unique(lambda name=t.name: rng.choice(d.vendors) + "|" + name).split("|")[0]
                    slots["amount"] = self.unique(lambda: money(rng, d.style))
                elif kind == "choice":
                    slots["option"] = rng.choice(t.options)
                elif kind == "place":
                    slots["place"] = rng.choice(d.places)
                elif kind == "delay":
                    slots["cause"] = rng.choice(d.causes)
                elif kind == "number":
                    slots["count"] = str(rng.randrange(3, 60))
                event = Event(t, kind, slots, session=s)
                self.events.append(event)
        # One event of a kind per thread, except quotes (those are what "compare" questions ask).
        seen: set[tuple[str, str]] = set()
        kept = []
        for e in self.events:
            key = (e.thread.name, e.kind)
            if e.kind != "quote" and key in seen:
                continue
            seen.add(key)
            kept.append(e)
        self.events = kept

    def filler_sentences(self, topic: str, k: int) -> list[str]:
        rng = self.rng
        pool = self.domain.filler[topic]
        out = []
        for template in rng.sample(pool, min(k, len(pool))):
            out.append(_fill(template, {
                "p": self.person(), "q": self.person(), "n": str(rng.randrange(2, 40)),
                "day": rng.choice(DAYS), "month": rng.choice(MONTHS),
            }))
        return out

    def thread_sentences(self, t: Thread, k: int) -> list[str]:
        """Context sentences about a thread (no fact): what an event paragraph is padded with."""
        picks = self.rng.sample(STATUS, k)
        return [_fill(s, {"subject": t.name, "person": self.person()}) for s in picks]

    def write_sessions(self, pastes: list[tuple[str, str]]) -> None:
        rng, d = self.rng, self.domain
        by_session: dict[int, list[Event]] = {}
        for e in self.events:
            by_session.setdefault(e.session, []).append(e)
        topics = sorted(d.filler)
        for i, session in enumerate(self.sessions):
            segments: list[Segment] = []
            for e in by_session.get(i, []):
                fact = _fill(rng.choice(EVENTS[e.kind]), e.slots)
                before = self.thread_sentences(e.thread, 1)
                after = self.filler_sentences(rng.choice(topics), 1) if d.style != "chat" else []
                segments.append(Segment(e.thread.name, [*before, fact, *after], e))
            # Paragraphs that name a thread but state nothing new (one to three per session).
            for t in rng.sample(self.threads, rng.choice((1, 2, 3))):
                segments.append(Segment(t.name, self.thread_sentences(t, 2)))
            # Something someone read or pasted: real prose on anything at all (MuSiQue paragraphs).
            for _ in range(rng.randrange(5, 10) if pastes else 0):
                title, text = pastes.pop()
                segments.append(Segment(title, [PASTE_LEAD[d.style].format(title=title, p=self.person()), text],
                                        paste=True))
            # Small talk and unrelated topics fill the rest: a few thousand tokens a session.
            # Each topic at most twice a session.
            for topic in rng.sample(topics * 2, rng.randrange(10, 15)):
                segments.append(Segment(topic, self.filler_sentences(topic, rng.randrange(3, 6))))
            rng.shuffle(segments)
            session.segments = segments

    # -- rendering -------------------------------------------------------------------------------

    def title(self, i: int) -> str:
        s = self.sessions[i]
        style = self.domain.style
        if style == "meeting":
            return f"{self.series} #{i + 1}"
        if style == "chat":
            return f"{self.series}, {DAYS[s.date.weekday()]} {s.date.day} {MONTHS[s.date.month - 1]}"
        weather = ["rain", "sun", "wind", "fog", "cold", "mild"][(s.date.toordinal() * 7) % 6]
        return f"{self.series}: {DAYS[s.date.weekday()]}, {weather}"

    def render(self, i: int) -> str:
        s = self.sessions[i]
        style = self.domain.style
        lines = ["---", f"title: \"{self.title(i)}\"", f"date: {s.date.isoformat()}", "---", ""]
        if style == "meeting":
            lines += [f"Attendees: {', '.join(sorted(self.cast))}", ""]
        minute = 8 * 60 + self.rng.randrange(0, 90)
        for seg in s.segments:
            if style == "chat":
                block = []
                for m in seg.sentences:
                    minute += self.rng.randrange(1, 25)
                    block.append(f"**{self.person()}** ({(minute // 60) % 24:02d}:{minute % 60:02d}): {m}")
                text = "\n".join(block)
            elif seg.paste:
                text = "\n\n".join(seg.sentences)
            else:
                text = " ".join(seg.sentences)
            if style == "meeting":
                heading = "Reading" if seg.paste else seg.heading[0].upper() + seg.heading[1:]
                lines += [f"## {heading}", ""]
            lines += [text, ""]
            if seg.event is not None:
                seg.event.text = text
            if style == "meeting" and seg.event is None and not seg.paste and self.rng.random() < 0.3:
                lines += [f"Action: {self.person()} to follow up.", ""]
        return "\n".join(lines).rstrip() + "\n"

    def file_name(self, i: int) -> str:
        return f"{self.slug}/{self.slug}-{i + 1:02d}.md"

    # -- questions -------------------------------------------------------------------------------

    def questions(self) -> list[dict]:
        rng = self.rng
        out: list[dict] = []
        events = [e for e in self.events if e.text]

        def q(kind: str, text: str, evidence: list[Event]) -> None:
            out.append({
                "kind": kind, "question": text[0].upper() + text[1:], "log": self.slug,
                "evidence": [e.text for e in evidence],
                "files": [self.file_name(e.session) for e in evidence],
                "dates": [self.sessions[e.session].date.isoformat() for e in evidence],
            })

        for kind in ("single", "when", "open"):
            for e in rng.sample(events, min(10, len(events))):
                slots = {**e.slots, "alias": e.thread.alias}
                q(kind, QUESTIONS[kind][e.kind].format(**slots), [e])
        # Several sessions: every quote one thread got; two threads' facts asked together.
        quoted: dict[str, list[Event]] = {}
        for e in events:
            if e.kind == "quote":
                quoted.setdefault(e.thread.name, []).append(e)
        for name, group in sorted(quoted.items())[:3]:
            if len(group) >= 2:
                q("multi", f"What quotes did we get for {name}, and from whom?", group)
        owners = [e for e in events if e.kind == "owner"]
        choices = [e for e in events if e.kind == "choice"]
        for a, b in zip(owners[0::2], owners[1::2]):
            if len(out) and sum(1 for x in out if x["kind"] == "multi") >= 6:
                break
            q("multi", f"Who took over {a.slots['task']} for {a.thread.name}, and who took over "
                       f"{b.slots['task']} for {b.thread.name}?", [a, b])
        for a, b in zip(choices[0::2], choices[1::2]):
            if sum(1 for x in out if x["kind"] == "multi") >= 8:
                break
            q("multi", f"What did we pick as the {a.slots['kind']} for {a.thread.name} and as the "
                       f"{b.slots['kind']} for {b.thread.name}?", [a, b])
        return out


READING_SERIES = ["Reading log", "Commonplace book", "Notes from the library"]


def musique_paragraphs(root: Path) -> dict[str, tuple[str, str]]:
    """file name -> (title, paragraph) for every MuSiQue note."""
    out = {}
    for path in sorted((root / "notes").glob("*.md")):
        raw = path.read_text(encoding="utf-8")
        title = re.search(r'^title: "?(.*?)"?$', raw, re.M)
        body = re.sub(r"\A---\n.*?\n---\n", "", raw, count=1, flags=re.S).strip()
        first, _, rest = body.partition("\n")
        if first.startswith("# "):
            body = rest.strip()
        out[path.name] = (title.group(1) if title else path.stem, body)
    return out


def reading_log(rng: random.Random, paragraphs: dict[str, tuple[str, str]], picked: list[dict],
                filler: list[str], n_sessions: int) -> tuple[dict[str, str], list[dict]]:
    """A log of what someone read, session by session: MuSiQue paragraphs under their titles, the
    chosen questions' gold paragraphs in different sessions. Questions: the full multi-hop question
    (``multi``), its first hop where the question names the paragraph's title (``single``), and for
    two-hop questions the second hop with the first answer filled in (``open``: the paragraph that
    answers it is not named)."""
    series = rng.choice(READING_SERIES)
    start = dt.date(2022, 9, 5) + dt.timedelta(days=rng.randrange(0, 600))
    dates = [start + dt.timedelta(days=sum(rng.choice((2, 3, 5, 7)) for _ in range(k))) for k in range(n_sessions)]
    dates = sorted(set(dates))
    sessions: list[list[str]] = [[] for _ in dates]  # file names
    placed: set[str] = set()
    for q in picked:
        for name, s in zip(q["gold_files"], rng.sample(range(len(dates)), len(q["gold_files"])), strict=True):
            # Two picked questions can share a gold paragraph: it is read once, in the first
            # session drawn for it (the draws stay the same, so earlier sets are unchanged).
            if name not in placed:
                placed.add(name)
                sessions[s].append(name)
    for s in sessions:
        while len(s) < rng.randrange(16, 22):
            s.append(filler.pop())
        rng.shuffle(s)
    slug = "reading-1"
    session_of = {name: i for i, names in enumerate(sessions) for name in names}
    files: dict[str, str] = {}
    for i, names in enumerate(sessions):
        lines = ["---", f'title: "{series}, part {i + 1}"', f"date: {dates[i].isoformat()}", "---", ""]
        for name in names:
            title, text = paragraphs[name]
            lines += [f"### {title}", "", text, ""]
        files[f"{slug}/{slug}-{i + 1:02d}.md"] = "\n".join(lines).rstrip() + "\n"
    questions: list[dict] = []

    def ask(kind: str, text: str, names: list[str]) -> None:
        questions.append({
            "kind": kind, "question": text, "log": slug, "evidence": [paragraphs[n][1] for n in names],
            "files": [f"{slug}/{slug}-{session_of[n] + 1:02d}.md" for n in names],
            "dates": [dates[session_of[n]].isoformat() for n in names],
        })

    for q in picked:
        ask("multi", q["question"], q["gold_files"])
        steps = q["question_decomposition"]
        first = steps[0]["question"]
        if "#" in first:
            continue
        if ">>" in first:
            subject, _, relation = first.partition(">>")
            first = f"What is the {relation.strip()} of {subject.strip()}?"
        named = [n for n in q["gold_files"] if paragraphs[n][0].lower() in first.lower()]
        if len(named) != 1:
            continue
        ask("single", first, named)
        if len(steps) == 2 and len(q["gold_files"]) == 2 and "#1" in steps[1]["question"]:
            other = [n for n in q["gold_files"] if n != named[0]]
            second = steps[1]["question"].replace("#1", steps[0]["answer"]).replace(" ?", "?")
            if ">>" in second:
                subject, _, relation = second.partition(">>")
                second = f"What is the {relation.strip()} of {subject.strip()}?"
            ask("open", second, other)
    return files, questions


def generate(seed: int, out: Path, musique: Path | None = None,
             styles: tuple[str, ...] = ("meeting", "chat", "journal")) -> dict:
    """Write one set under ``out`` (notes/ and questions.jsonl); returns a summary.

    With ``musique`` (the shared MuSiQue folder) the set also has a reading log of its paragraphs
    with questions from MuSiQue, and the other logs carry pasted paragraphs (real prose on
    anything) between their own topics."""
    rng = random.Random(seed)
    notes = out / "notes"
    questions: list[dict] = []
    files: dict[str, str] = {}
    pastes: list[tuple[str, str]] = []
    if musique is not None and (musique / "questions.jsonl").exists():
        paragraphs = musique_paragraphs(musique)
        all_q = [json.loads(line) for line in (musique / "questions.jsonl").read_text().splitlines() if line]
        gold = {n for q in all_q for n in q["gold_files"]}
        picked = rng.sample(all_q, 24)
        filler = sorted(n for n in paragraphs if n not in gold)
        rng.shuffle(filler)
        reading, asked = reading_log(rng, paragraphs, picked, filler, rng.randrange(20, 26))
        files.update(reading)
        questions.extend(asked)
        pastes = [paragraphs[n] for n in filler]
    for style in styles:
        writer = LogWriter(rng, DOMAINS[style], 1, rng.randrange(20, 31))
        writer.plan_events()
        writer.write_sessions(pastes)
        for i in range(len(writer.sessions)):
            files[writer.file_name(i)] = writer.render(i)
        questions.extend(writer.questions())
    for i, qn in enumerate(questions):
        qn["id"] = f"s{seed}-{i:03d}"
    _check(files, questions)
    for rel, text in sorted(files.items()):
        path = notes / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (out / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions), encoding="utf-8")
    (out / "VERSION").write_text(f"{GENERATOR_VERSION} {seed}\n")
    kinds: dict[str, int] = {}
    for q in questions:
        kinds[q["kind"]] = kinds.get(q["kind"], 0) + 1
    return {"notes": len(files), "questions": len(questions), "kinds": kinds}


def _check(files: dict[str, str], questions: list[dict]) -> None:
    """Every evidence paragraph is in its note, and in no other."""
    for q in questions:
        for text, rel in zip(q["evidence"], q["files"], strict=True):
            holders = [name for name, body in files.items() if text in body]
            if holders != [rel]:
                raise AssertionError(f"evidence of {q['id']} is in {holders}, expected {rel}: {text[:80]!r}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--musique", type=Path, default=MUSIQUE, help="the shared MuSiQue folder (optional)")
    args = parser.parse_args()
    print(generate(args.seed, args.out, args.musique if args.musique.exists() else None))


if __name__ == "__main__":
    main()

"""A seeded generator of large knowledge graphs with the shape of real ones, for bench_scale.py.

    python bench/scale_graph.py 100000 bench/out/data/100k --formats markdown,json,jsonl

Shape (what makes a build or an import expensive in a real vault, scaled up):

* power-law in-degree: a share of every note's links goes to notes drawn by a Zipf law over a
  fixed popularity order, so the top notes have thousands of backlinks (hubs); the rest go to
  notes written around the same time (local) or anywhere (uniform);
* typed edges: wikilinks, embeds, frontmatter field links (project, owner, attendees), tags
  (tag nodes are hubs too), and in the JSON graph outline parents, ``supports`` and ``ref`` edges;
* bodies of 50-400 words in one to four sections under ``##`` headings, paragraphs of sentences,
  some bullet lists, inline tags; words drawn by a Zipf law from English words of the cl100k
  vocabulary, so tokens per word are close to real prose;
* three years of created/updated dates, aliases on some notes, note types (note, meeting, person,
  project, task).

The same seed and size always give the same files (numpy's PCG64 and a fixed vocabulary). A
``manifest.json`` beside the files names the topics bench_scale.py builds for: a typical node (the
median degree), the biggest hub, and a free-text topic.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import re
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

START = dt.datetime(2022, 1, 1, tzinfo=dt.timezone.utc).timestamp()
END = dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc).timestamp()
TYPES = ("note", "meeting", "person", "project", "task")
TYPE_SHARE = (0.70, 0.10, 0.08, 0.05, 0.07)
TAG_COUNT = 400
HUB_SHARE, LOCAL_SHARE = 0.35, 0.40  # of each note's links; the rest are uniform
LOCAL_WINDOW = 300
MEAN_LINKS = 6.0
CHUNK = 20_000
FORMATS = ("markdown", "json", "jsonl")


def vocabulary() -> list[str]:
    """English-looking words in cl100k merge order (roughly by frequency): 1 token each."""
    from ctx.tokens import DEFAULT_ENCODING, _load_tiktoken

    # The tiktoken Encoding itself: ctx's own encoder keeps only the core, without the ranks.
    enc = _load_tiktoken(DEFAULT_ENCODING)
    word = re.compile(rb"^ [a-z]{3,12}$")
    ranked = sorted(enc._mergeable_ranks.items(), key=lambda item: item[1])
    return [token[1:].decode() for token, _ in ranked if word.match(token)]


def zipf_sampler(rng: np.random.Generator, n: int, exponent: float, offset: float = 1.0):
    """A function size -> ranks in [0, n) drawn with P(r) proportional to 1/(r + offset)^exponent."""
    weights = 1.0 / np.power(np.arange(n, dtype=np.float64) + offset, exponent)
    cdf = np.cumsum(weights)
    cdf /= cdf[-1]

    def draw(size: int) -> np.ndarray:
        return np.minimum(np.searchsorted(cdf, rng.random(size), side="right"), n - 1)

    return draw


@dataclass
class Plan:
    """Everything about the graph except the words of the bodies (drawn while writing)."""

    n: int
    titles: list[str]
    slugs: list[str]
    folders: list[str]
    types: np.ndarray  # index into TYPES
    created: np.ndarray
    updated: np.ndarray
    tags: list[list[str]]
    aliases: dict[int, str]
    links: list[np.ndarray]  # out-link targets per node (ids are indices)
    link_kind: list[np.ndarray]  # 0 link, 1 embed, 2 field (frontmatter / typed edge)
    parent: np.ndarray  # -1 or an earlier node (JSON outline parent)
    free_text: str
    typical: int
    hub: int


def _title_words(rng: np.random.Generator, vocab: list[str], n: int) -> tuple[list[str], list[str]]:
    lo, hi = 150, min(len(vocab), 12_000)
    pool = vocab[lo:hi]
    counts = rng.integers(2, 5, size=n)
    picks = rng.integers(0, len(pool), size=int(counts.sum()))
    titles, slugs, seen = [], [], set()
    at = 0
    for i in range(n):
        words = [pool[j] for j in picks[at : at + counts[i]]]
        at += counts[i]
        title = " ".join(w.capitalize() if k == 0 else w for k, w in enumerate(words))
        key, suffix = title.lower(), 2
        while key in seen:
            title = f"{' '.join(words).capitalize()} {suffix}"
            key, suffix = title.lower(), suffix + 1
        seen.add(key)
        titles.append(title)
        slugs.append(key.replace(" ", "-"))
    return titles, slugs


def plan_graph(n: int, seed: int, vocab: list[str]) -> Plan:
    rng = np.random.default_rng(seed)
    titles, slugs = _title_words(rng, vocab, n)
    areas = [vocab[400 + i] for i in range(12)]
    subs = max(4, int(n ** 0.5) // 6)
    area_of = zipf_sampler(rng, len(areas), 1.0)(n)
    sub_of = zipf_sampler(rng, subs, 0.8)(n)
    folders = [f"{areas[a]}/{vocab[1000 + s]}" for a, s in zip(area_of.tolist(), sub_of.tolist())]
    types = rng.choice(len(TYPES), size=n, p=TYPE_SHARE)
    # Notes are numbered in the order they were written, so "local" links are also recent ones.
    created = np.sort(rng.uniform(START, END, size=n))
    updated = np.minimum(END - 60, created + rng.exponential(45 * 86400.0, size=n))
    tag_names = [
        (f"{vocab[300 + i % 40]}/{vocab[2000 + i]}" if i % 5 == 4 else vocab[2000 + i]) for i in range(TAG_COUNT)
    ]
    tag_draw = zipf_sampler(rng, TAG_COUNT, 1.1)
    tag_counts = rng.integers(1, 5, size=n)
    tag_picks = tag_draw(int(tag_counts.sum()))
    tags, at = [], 0
    for i in range(n):
        tags.append(sorted({tag_names[t] for t in tag_picks[at : at + tag_counts[i]].tolist()}))
        at += tag_counts[i]
    aliases = {
        int(i): f"{vocab[200 + int(i) % 5000].capitalize()} {i}"
        for i in np.flatnonzero(rng.random(n) < 0.1)
    }

    popularity = rng.permutation(n)  # popularity[0] is the biggest hub
    hub_draw = zipf_sampler(rng, n, 1.0, offset=1.0)
    counts = np.minimum(rng.geometric(1.0 / MEAN_LINKS, size=n) - 1, 60)
    total = int(counts.sum())
    mix = rng.random(total)
    targets = np.empty(total, dtype=np.int64)
    owners = np.repeat(np.arange(n), counts)
    hub_mask = mix < HUB_SHARE
    targets[hub_mask] = popularity[hub_draw(int(hub_mask.sum()))]
    local_mask = (mix >= HUB_SHARE) & (mix < HUB_SHARE + LOCAL_SHARE)
    offsets = rng.integers(-LOCAL_WINDOW, LOCAL_WINDOW + 1, size=int(local_mask.sum()))
    targets[local_mask] = np.clip(owners[local_mask] + offsets, 0, n - 1)
    uniform_mask = mix >= HUB_SHARE + LOCAL_SHARE
    targets[uniform_mask] = rng.integers(0, n, size=int(uniform_mask.sum()))
    kinds = rng.choice(3, size=total, p=(0.85, 0.05, 0.10))
    links, link_kind = [], []
    bounds = np.concatenate(([0], np.cumsum(counts)))
    for i in range(n):
        t = targets[bounds[i] : bounds[i + 1]]
        k = kinds[bounds[i] : bounds[i + 1]]
        t, first = np.unique(t, return_index=True)  # one edge per target, as the importers keep
        keep = t != i
        links.append(t[keep])
        link_kind.append(k[first][keep])
    parent = np.full(n, -1, dtype=np.int64)
    children = np.flatnonzero(rng.random(n) < 0.2)
    children = children[children > 0]
    parent[children] = np.maximum(0, children - rng.integers(1, 50, size=len(children)))

    degree = np.bincount(np.concatenate(links), minlength=n) + np.array([len(x) for x in links])
    median = int(np.median(degree))
    typical_notes = np.flatnonzero((degree == median) & (types == 0))
    typical = int(typical_notes[0]) if len(typical_notes) else int(np.argmin(np.abs(degree - median)))
    hub = int(popularity[0])
    free_text = " ".join(vocab[r] for r in (1400, 2600, 3900))
    return Plan(n, titles, slugs, folders, types, created, updated, tags, aliases, links, link_kind,
                parent, free_text, typical, hub)


class Prose:
    """Sections, paragraphs and sentences of Zipf-drawn words, with links woven in.

    Words come from numpy in bulk; the many small choices (lengths, places) from ``random``,
    whose scalar draws are far cheaper than numpy's one at a time.
    """

    def __init__(self, seed: int, vocab: list[str]) -> None:
        self.rng = np.random.default_rng(seed)
        self.small = random.Random(seed)
        self.vocab = vocab
        self.draw = zipf_sampler(self.rng, len(vocab), 1.05, offset=3.0)
        self.buffer: list[int] = []
        self.at = 0

    def words(self, count: int) -> list[str]:
        if self.at + count > len(self.buffer):
            self.buffer = self.draw(max(count, 2_000_000)).tolist()
            self.at = 0
        vocab = self.vocab
        picked = [vocab[i] for i in self.buffer[self.at : self.at + count]]
        self.at += count
        return picked

    def body(self, mentions: list[str], inline_tag: str | None) -> str:
        small = self.small
        total = int(min(400, max(50, small.lognormvariate(5.2, 0.55))))
        words = self.words(total)
        # Links sit at random places in the text, as a writer puts them.
        for mention in mentions:
            words.insert(int(small.random() * (len(words) + 1)), mention)
        sections = 1 + min(3, total // 90)
        size = -(-len(words) // sections)
        out: list[str] = []
        for s in range(sections):
            if s > 0 or small.random() < 0.3:
                out.append(f"## {' '.join(self.words(1 + int(small.random() * 3))).capitalize()}")
            out.extend(self._paragraphs(words[s * size : (s + 1) * size]))
        if inline_tag:
            out.append(f"#{inline_tag}")
        return "\n\n".join(out) + "\n"

    def _paragraphs(self, words: list[str]) -> list[str]:
        small = self.small
        paragraphs, sentences, i = [], [], 0
        as_list = small.random() < 0.2
        wanted = 2 + int(small.random() * 4)
        while i < len(words):
            length = 6 + int(small.random() * 14)
            text = " ".join(words[i : i + length])
            i += length
            sentences.append(text[:1].upper() + text[1:] + ".")
            if len(sentences) >= wanted or i >= len(words):
                if as_list:
                    paragraphs.append("\n".join(f"- {s}" for s in sentences))
                    as_list = False
                else:
                    paragraphs.append(" ".join(sentences))
                sentences = []
                wanted = 2 + int(small.random() * 4)
        return paragraphs


def _iso(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch, tz=dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")


FIELD_NAMES = {"project": 3, "owner": 2}  # frontmatter key -> the node type it prefers


def write_markdown(plan: Plan, vocab: list[str], out: Path, seed: int) -> int:
    """One .md file per node; returns the bytes written."""
    prose = Prose(seed + 1, vocab)
    rng = prose.small
    written = 0
    made: set[str] = set()
    for i in range(plan.n):
        folder = plan.folders[i]
        if folder not in made:
            (out / folder).mkdir(parents=True, exist_ok=True)
            made.add(folder)
        mentions, fields = [], []
        for target, kind in zip(plan.links[i].tolist(), plan.link_kind[i].tolist()):
            title = plan.titles[target]
            if kind == 2:
                fields.append(title)
            elif kind == 1:
                mentions.append(f"![[{title}]]")
            elif rng.random() < 0.1:
                mentions.append(f"[[{title}|{prose.words(1)[0]}]]")
            else:
                mentions.append(f"[[{title}]]")
        lines = ["---", f"title: {plan.titles[i]}"]
        kind_name = TYPES[int(plan.types[i])]
        if kind_name != "note":
            lines.append(f"type: {kind_name}")
        tags = plan.tags[i]
        inline = tags[-1] if len(tags) > 1 and rng.random() < 0.3 else None
        front_tags = tags[:-1] if inline else tags
        lines.append(f"tags: [{', '.join(front_tags)}]")
        if i in plan.aliases:
            lines.append(f"aliases: [{plan.aliases[i]}]")
        lines.append(f"created: {_iso(plan.created[i])}")
        lines.append(f"updated: {_iso(plan.updated[i])}")
        if fields:
            key = "attendees" if kind_name == "meeting" else ("project" if len(fields) == 1 else "related")
            if len(fields) == 1:
                lines.append(f'{key}: "[[{fields[0]}]]"')
            else:
                lines.append(f"{key}:")
                lines.extend(f'  - "[[{f}]]"' for f in fields)
        if kind_name == "task":
            lines.append(f"status: {('open', 'doing', 'done')[i % 3]}")
        lines.append("---")
        text = "\n".join(lines) + "\n" + prose.body(mentions, inline)
        data = text.encode("utf-8")
        (out / folder / f"{plan.slugs[i]}.md").write_bytes(data)
        written += len(data)
    return written


def _json_records(plan: Plan, vocab: list[str], seed: int):
    """(node records, then edge records) of the JSON graph, one dict at a time."""
    prose = Prose(seed + 2, vocab)
    extra_edges = []
    for i in range(plan.n):
        links, typed = [], []
        mentions = []
        for target, kind in zip(plan.links[i].tolist(), plan.link_kind[i].tolist()):
            if kind == 2:
                typed.append(target)
            else:
                links.append(target)
            mentions.append(plan.titles[target])
        record = {
            "id": f"n{i:07d}",
            "title": plan.titles[i],
            "type": TYPES[int(plan.types[i])],
            "tags": plan.tags[i],
            "created": _iso(plan.created[i]) + "Z",
            "updated": _iso(plan.updated[i]) + "Z",
        }
        if i in plan.aliases:
            record["aliases"] = [plan.aliases[i]]
        if plan.parent[i] >= 0:
            record["parent"] = f"n{int(plan.parent[i]):07d}"
        if links:
            record["links"] = [f"n{t:07d}" for t in links]
        record["body"] = prose.body(mentions, None)
        extra_edges.extend((i, target) for target in typed)
        yield "node", record
    for source, target in extra_edges:
        kind = ("supports", "ref", "field:owner")[(source + target) % 3]
        yield "edge", {"source": f"n{source:07d}", "target": f"n{target:07d}", "type": kind}


def write_json(plan: Plan, vocab: list[str], out_json: Path | None, out_jsonl: Path | None, seed: int) -> dict[str, int]:
    """The same graph as one ``{"nodes": [...], "edges": [...]}`` document and as JSONL."""
    handles = {}
    if out_json is not None:
        handles["json"] = out_json.open("w", encoding="utf-8")
        handles["json"].write('{"nodes": [\n')
    if out_jsonl is not None:
        handles["jsonl"] = out_jsonl.open("w", encoding="utf-8")
    first = {"node": True, "edge": True}
    section = "node"
    for kind, record in _json_records(plan, vocab, seed):
        line = json.dumps(record, ensure_ascii=False)
        if "jsonl" in handles:
            handles["jsonl"].write(line + "\n")
        if "json" in handles:
            doc = handles["json"]
            if kind != section:
                doc.write('\n],\n"edges": [\n')
                section = kind
            doc.write(("" if first[kind] else ",\n") + "  " + line)
            first[kind] = False
    if "json" in handles:
        if section == "node":
            handles["json"].write('\n],\n"edges": [\n')
        handles["json"].write("\n]}\n")
    for handle in handles.values():
        handle.close()
    return {name: (out_json if name == "json" else out_jsonl).stat().st_size for name in handles}


def generate(n: int, out: Path, seed: int = 7, formats: tuple[str, ...] = FORMATS) -> dict:
    """Write the graph under ``out`` (reusing what an earlier run with the same inputs wrote)."""
    out = out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    manifest_path = out / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    if manifest.get("nodes") != n or manifest.get("seed") != seed:
        manifest = {"nodes": n, "seed": seed, "files": {}}
    wanted = [f for f in formats if f not in manifest["files"]]
    if not wanted:
        return manifest
    started = time.perf_counter()
    vocab = vocabulary()
    plan = plan_graph(n, seed, vocab)
    manifest.update(
        {
            "typical": {"markdown": f"{plan.folders[plan.typical]}/{plan.slugs[plan.typical]}",
                        "json": f"n{plan.typical:07d}", "title": plan.titles[plan.typical]},
            "hub": {"markdown": f"{plan.folders[plan.hub]}/{plan.slugs[plan.hub]}",
                    "json": f"n{plan.hub:07d}", "title": plan.titles[plan.hub]},
            "free_text": plan.free_text,
            "common_word": vocab[60],
            "rare_word": vocab[9000],
            "links": int(sum(len(x) for x in plan.links)),
        }
    )
    if "markdown" in wanted:
        vault = out / "vault"
        size = write_markdown(plan, vocab, vault, seed)
        manifest["files"]["markdown"] = {"path": str(vault), "bytes": size}
    json_wanted = [f for f in ("json", "jsonl") if f in wanted]
    if json_wanted:
        paths = {f: out / f"graph.{f}" for f in json_wanted}
        sizes = write_json(plan, vocab, paths.get("json"), paths.get("jsonl"), seed)
        for f in json_wanted:
            manifest["files"][f] = {"path": str(paths[f]), "bytes": sizes[f]}
    manifest["generated_seconds"] = round(time.perf_counter() - started, 1)
    manifest_path.write_text(json.dumps(manifest, indent=2))
    return manifest


def parse_size(text: str) -> int:
    text = text.strip().lower().replace("_", "")
    factor = 1
    if text.endswith("k"):
        factor, text = 1_000, text[:-1]
    elif text.endswith("m"):
        factor, text = 1_000_000, text[:-1]
    return int(float(text) * factor)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("nodes", type=parse_size, help="number of nodes, e.g. 10k, 100k, 1M")
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--formats", default=",".join(FORMATS))
    args = parser.parse_args()
    formats = tuple(f for f in args.formats.split(",") if f)
    print(json.dumps(generate(args.nodes, args.out, args.seed, formats), indent=2))


if __name__ == "__main__":
    main()

"""An independent, deliberately plain count of notes and links in a markdown vault.

The importer tests compare the graph against these numbers. This is a second implementation of
the rules in the README (regexes over the files), not a call into ``ctx.importers``: a bug in
the importer has to be made twice, in two different ways, to go unnoticed.
"""

from __future__ import annotations

import os
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

import yaml

ATTACHMENTS = {"png", "jpg", "jpeg", "gif", "svg", "webp", "pdf", "mp4", "mp3", "canvas", "excalidraw"}
# A fence closes on a run of at least its length of its character, with no info string after it.
FENCE = re.compile(r"^[ \t]*((`|~)\2{2,})[^\n]*\n.*?(^[ \t]*\1\2*(?:[ \t][^\n]*)?$|\Z)", re.S | re.M)
INLINE_CODE = re.compile(r"`[^`\n]+`")
WIKILINK = re.compile(r"(!?)\[\[([^\[\]\n]+?)\]\]")
MD_LINK = re.compile(r"(!?)\[[^\]\n]*\]\(([^()\s]+?\.md)(#[^()\s]*)?(?:\s+\"[^\"\n]*\")?\)", re.I)
DEFINITION = re.compile(r"^\[([^\]\n]+)\]:\s*(\S+)")


def norm(text: str) -> str:
    return unicodedata.normalize("NFC", text.strip()).lower()


@dataclass
class VaultCounts:
    notes: int = 0
    keys: set[str] = field(default_factory=set)
    links: set[tuple[str, str, str, str]] = field(default_factory=set)  # (note, kind, key, anchor)

    @property
    def resolved(self) -> int:
        return sum(1 for link in self.links if link[2] in self.keys)

    @property
    def unresolved(self) -> int:
        return len(self.links) - self.resolved


def markdown_files(root: Path) -> list[str]:
    out = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "node_modules"]
        for name in files:
            if name.endswith(".md"):
                out.append(Path(folder, name).relative_to(root).as_posix())
    return out


def split_meta(text: str) -> tuple[dict, str]:
    if text.startswith("---\n"):
        end = text.find("\n---", 4)
        if end > 0:
            try:
                meta = yaml.safe_load(text[4:end]) or {}
            except yaml.YAMLError:
                return {}, text
            if isinstance(meta, dict):
                return meta, text[text.find("\n", end + 1) + 1 :]
    return {}, text


def as_list(value) -> list[str]:
    if value is None:
        return []
    if isinstance(value, list):
        return [str(v) for v in value]
    return [s.strip() for s in str(value).split(",")]


def count_vault(root: Path, *, dendron: bool = False, foam: bool = False) -> VaultCounts:
    counts = VaultCounts()
    for rel in markdown_files(root):
        text = (root / rel).read_text(encoding="utf-8")
        meta, body = split_meta(text)
        stem_path = rel[:-3]
        counts.notes += 1
        if dendron:
            name = stem_path.split("/")[-1]
            counts.keys.add(norm(name))
            if isinstance(meta.get("id"), str):
                counts.keys.add(norm(meta["id"]))
        else:
            parts = norm(stem_path).split("/")
            counts.keys.update("/".join(parts[i:]) for i in range(len(parts)))
        if meta.get("title"):
            counts.keys.add(norm(str(meta["title"])))
        counts.keys.update(norm(a) for a in as_list(meta.get("aliases")))

        note = stem_path.split("/")[-1] if dendron else stem_path
        code_free = INLINE_CODE.sub(" ", FENCE.sub("\n", body))
        wikilinked = set()
        for bang, inner in WIKILINK.findall(code_free):
            inner = inner.replace("\\|", "|")
            if dendron:
                target = inner.split("|", 1)[1] if "|" in inner else inner
            else:
                target = inner.split("|", 1)[0]
            target = target.strip()
            if target.startswith("dendron://"):
                target = target.split("/", 3)[3]
            if re.match(r"^[a-z][a-z0-9+.-]*://", target, re.I):
                continue  # a web address in brackets is not a note
            name, _, anchor = target.partition("#")
            name = name.strip().rstrip("\\").strip()
            if not dendron:
                name = name[2:] if name.startswith("./") else name
                name = name.lstrip("/")
            if name.lower().endswith(".md"):
                name = name[:-3]
            elif not dendron and name.rsplit(".", 1)[-1].lower() in ATTACHMENTS and "." in name:
                continue
            if not name:
                continue
            wikilinked.add(norm(name))
            counts.links.add((note, "embed" if bang else "link", norm(name), anchor.strip()))
        if not dendron:
            folder = os.path.dirname(rel)
            for bang, href, anchor in MD_LINK.findall(code_free):
                if re.match(r"^[a-z]+:", href, re.I):
                    continue
                path = os.path.normpath(os.path.join(folder, unquote(href))).replace(os.sep, "/")
                counts.links.add((note, "embed" if bang else "link", norm(path[:-3]), unquote(anchor[1:])))
        if foam:
            # Only the block of definitions that ends the note counts (Foam writes it there).
            trailing = []
            for line in reversed(code_free.rstrip().splitlines()):
                if not line.strip():
                    continue
                if not DEFINITION.match(line):
                    break
                trailing.append(line)
            for line in trailing:
                match = DEFINITION.match(line)
                if match and norm(match.group(1)) not in wikilinked and match.group(2).endswith(".md"):
                    path = os.path.normpath(os.path.join(os.path.dirname(rel), match.group(2)))
                    counts.links.add((note, "link", norm(path[:-3]), ""))
    return counts

"""Pages as outlines: outliner pages show their child blocks, blocks show where they sit.

Outliner importers (Logseq, Roam, Tana, Notion databases) make every block a node joined to its
parent by a ``child`` edge. Shown one by one, such blocks read as scattered fragments, so:

* a candidate whose ``child`` edges lead to nodes of its own source file (a page's blocks, a
  block's sub-blocks, a database's rows) carries its outline: up to ``output.outline_max_nodes``
  descendants, rendered as indented bullets under its text and fields. The packer counts the
  outline as part of the node's block and cuts it (fewest blocks kept last) before its text;
* a block carries its breadcrumb (page > ancestor > ...) on its meta line, and its page as its
  document, so blocks of one page group together (packing, ``order: grouped``, citations);
* a (non-seed) block that another candidate's outline holds is folded into it: counted once, the
  holder ranks where its best block did, and the audit says where the block was shown.

Children in another file (Dendron hierarchies, Notion sub-pages) are documents of their own and
stay separate candidates; only same-file descendants form an outline.
"""

from __future__ import annotations

from dataclasses import replace
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ctx.assemble.candidate import Candidate
from ctx.passages import collapse_attachments
from ctx.store.types import Outline, OutlineEntry

if TYPE_CHECKING:
    from ctx.store.protocols import GraphReader

CRUMB_CHARS = 40  # a block's title can be a whole paragraph; a breadcrumb names, it does not quote
IN_OUTLINE = "outline"  # the decision recorded for a folded block shown inside its page's outline


def _references_shown(graph: GraphReader, outline: Outline) -> Outline:
    """The outline's blocks with their block references shown as the text they name."""
    from ctx.assemble.block_refs import has_refs, resolve

    referring = [i for i, e in enumerate(outline.entries) if has_refs(e.body) or has_refs(e.title)]
    if not referring:
        return outline
    entries = list(outline.entries)
    bodies = resolve([entries[i].body for i in referring], graph.block_texts)
    titles = resolve([entries[i].title for i in referring], graph.block_texts)
    for i, body, title in zip(referring, bodies, titles):
        entries[i] = replace(entries[i], body=body, title=title)
    return replace(outline, entries=entries)


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= CRUMB_CHARS else text[: CRUMB_CHARS - 1].rstrip() + "…"


def prepare(graph: GraphReader, ranked: list[Candidate], max_nodes: int, budget: int, formats: tuple[str, ...]) -> int:
    """Give outlines, breadcrumbs and pages to the candidates the budget may show; fold blocks
    into the outline that holds them. Returns how many were folded.

    Only a prefix of the ranking is worth the reads (seeds, then store-time sizes up to about
    twice the budget, the same prefix the packer loads bodies for): the rest can at most be a
    one-line summary, which shows neither outline nor breadcrumb.
    """
    prefix = _worth_reading(ranked, budget)
    ids = [c.id for c in prefix]
    _give_breadcrumbs(graph, prefix, graph.with_outline_link(ids, formats, "dst"))  # blocks, rows
    if max_nodes <= 0:
        return 0
    parents = graph.with_outline_link(ids, formats, "src")  # pages, blocks with sub-blocks
    folded = _fold(prefix, _give_outlines(graph, prefix, parents, max_nodes))
    if folded:
        ranked.sort(key=lambda c: (c.rank, c.in_outline_of is not None))
        for i, c in enumerate(ranked, 1):
            c.rank = i
    return folded


def _worth_reading(ranked: list[Candidate], budget: int) -> list[Candidate]:
    prefix: list[Candidate] = []
    running = 0
    for c in ranked:
        if c.section is None:
            continue
        if c.seed or running < 2 * budget + 200:
            prefix.append(c)
            running += 0 if c.seed else min(c.store_tokens, budget)
    return prefix


def _give_breadcrumbs(graph: GraphReader, prefix: list[Candidate], children: set[str]) -> None:
    """A block (a node some page or block holds) names where it sits, and its page is its document."""
    for c in prefix:
        if c.id in children:
            crumbs = graph.breadcrumb(c.id)
            if crumbs:
                c.breadcrumb = tuple(_clip(k.title) for k in crumbs)
                c.page = crumbs[0].id


def _give_outlines(
    graph: GraphReader, prefix: list[Candidate], parents: set[str], max_nodes: int,
) -> dict[str, Candidate]:
    """Each page's (and parent block's) outline; block id -> the best-ranked outline holding it."""
    folded_into: dict[str, Candidate] = {}
    for c in prefix:  # best first: a block folds into the best-ranked outline that holds it
        if c.id not in parents or (c.id in folded_into and not c.seed):
            continue
        outline = _references_shown(graph, graph.outline(c.id, max_nodes))
        if not outline.entries:
            continue
        c.outline = outline
        c.page = c.page or c.id  # a page and its blocks are one document
        for entry in outline.entries:
            folded_into.setdefault(entry.id, c)
    return folded_into


def _fold(prefix: list[Candidate], folded_into: dict[str, Candidate]) -> int:
    """Take each (non-seed) block an outline holds out of the pool; how many."""
    folded = 0
    for c in prefix:
        holder = folded_into.get(c.id)
        if holder is None or c.seed or holder.section is None:
            continue
        c.section = None  # out of the pool: its text is printed inside the holder's outline
        c.in_outline_of = holder.id
        c.reason = f"shown within the outline of {holder.id}"
        # The page stands in for its blocks, so it ranks where its best block did: a page
        # found through one of its blocks is shown there, with that block in its outline.
        holder.rank = min(holder.rank, c.rank)
        folded += 1
    return folded


# ---------------------------------------------------------------------------------------------
# What an item shows, and how it reads.


def shown_count(c: Candidate, variant: str, outline_n: int | None, full: str) -> int:
    """How many outline entries an item shows: all of them whole, else what the packer chose."""
    if c.outline is None:
        return 0
    if outline_n is None:
        return len(c.outline.entries) if variant == full else 0
    return min(outline_n, len(c.outline.entries))


def cut(c: Candidate, n: int) -> Outline:
    entries = c.outline.entries if c.outline is not None else []
    return Outline(entries[:n], truncated=(c.outline is not None and c.outline.truncated) or n < len(entries))


# What an outline shows is worked out once per outline (and once per cut for the markdown), not
# on every costing and rendering of its block: the fitting loop prices and prints the same cut
# many times. Keyed by the outline object's identity, which each entry holds on to; bounded.
_SHOWN_ENTRIES: dict[int, tuple[Outline, list[OutlineEntry]]] = {}
_SHOWN_MARKDOWN: dict[tuple[int, int], tuple[Outline, str]] = {}
MEMO_SIZE = 4096


def markdown(c: Candidate, n: int) -> str:
    if n <= 0 or c.outline is None:
        return ""
    outline = c.outline
    hit = _SHOWN_MARKDOWN.get((id(outline), n))
    if hit is not None and hit[0] is outline:
        return hit[1]
    text = render_outline(_shown_cut(outline, n))
    if len(_SHOWN_MARKDOWN) >= MEMO_SIZE:
        _SHOWN_MARKDOWN.clear()
    _SHOWN_MARKDOWN[(id(outline), n)] = (outline, text)
    return text


def _shown_entries(outline: Outline) -> list[OutlineEntry]:
    """Blocks' image and attachment links as short placeholders, as in every note's text."""
    hit = _SHOWN_ENTRIES.get(id(outline))
    if hit is not None and hit[0] is outline:
        return hit[1]
    entries = [replace(e, body=collapse_attachments(e.body)) if e.body else e for e in outline.entries]
    if len(_SHOWN_ENTRIES) >= MEMO_SIZE:
        _SHOWN_ENTRIES.clear()
    _SHOWN_ENTRIES[id(outline)] = (outline, entries)
    return entries


def _shown_cut(outline: Outline, n: int) -> Outline:
    """``cut`` of the outline as shown."""
    entries = _shown_entries(outline)
    return Outline(entries[:n], truncated=outline.truncated or n < len(entries))


def json_entries(c: Candidate, n: int) -> list[dict[str, Any]]:
    if c.outline is None or n <= 0:
        return []
    return [{"id": e.id, "depth": e.depth, "text": (e.body or e.title).strip()} for e in _shown_cut(c.outline, n).entries]


def meta_part(c: Candidate) -> str | None:
    return "in: " + " > ".join(c.breadcrumb) if c.breadcrumb else None


def largest_fitting(total: int, fits: Callable[[int], bool]) -> int | None:
    """The most outline entries (0..total) for which ``fits`` holds; None if not even 0 does.
    Costs grow with the count, so a binary search finds it in a handful of renders."""
    if not fits(0):
        return None
    low, high = 0, total
    while low < high:
        mid = (low + high + 1) // 2
        if fits(mid):
            low = mid
        else:
            high = mid - 1
    return low


def cluster_by_page(items: list[Any]) -> list[Any]:
    """Keep the section's order, but pull blocks of one page up behind the first of them."""
    pages = [i.cand.page for i in items if i.cand.page]
    if len(pages) == len(set(pages)):
        return items
    out: list[Any] = []
    done: set[str] = set()
    for item in items:
        page = item.cand.page
        if page is None:
            out.append(item)
        elif page not in done:
            done.add(page)
            out.extend(i for i in items if i.cand.page == page)
    return out


def record(ranked: list[Candidate], placed: dict[str, Any], full: str) -> None:
    """After packing: a folded block is in the output if a shown outline holds it; say so or why not."""
    shown_in: dict[str, str] = {}
    for item in placed.values():
        c = item.cand
        if c.outline is not None:
            for e in c.outline.entries[: shown_count(c, item.variant, item.outline_n, full)]:
                shown_in.setdefault(e.id, c.id)
    for c in ranked:
        if c.in_outline_of is None:
            continue
        c.tokens = 0
        if c.id in shown_in:
            c.decision = IN_OUTLINE
            c.reason = f"shown within the outline of {shown_in[c.id]}"
        else:
            c.decision = "dropped"
            c.reason = f"folded into the outline of {c.in_outline_of}, which was cut before it"


def render_outline(outline: Outline, indent: str = "  ") -> str:
    """Markdown bullets, one per block, its first line only; continuation lines indented under it."""
    lines = []
    for entry in outline.entries:
        pad = indent * (entry.depth - 1)
        text = (entry.body or entry.title).strip().splitlines() or [entry.title]
        lines.append(f"{pad}- {text[0]}")
        lines.extend(f"{pad}{indent}{more}" for more in text[1:] if more.strip())
    if outline.truncated:
        lines.append("- …")
    return "\n".join(lines)

"""Render: turn a packed selection into the exact text printed on stdout (markdown or JSON).

Everything a reader or an agent receives is produced here, so the CLI and the MCP server print
byte-identical text. Rendering is deterministic: no clock, no dict-order surprises, ties by id.
"""

from __future__ import annotations

from typing import Any

from ctx.assemble import outline_view
from ctx.assemble import render_extras as extras
from ctx.assemble.candidate import Candidate
from ctx.assemble.citations import Citation, citation_map
from ctx.assemble.document import FULL, SHORTENED, SUMMARY, Document, Item, SectionOut
from ctx.schema import SCHEMA_VERSION

def _group_label(item: Item, group_by: str) -> str | None:
    if group_by == "depth":
        return "Seed" if item.cand.seed else f"Depth {item.cand.hops}"
    if group_by == "document":
        return item.cand.document
    return None


# ---------------------------------------------------------------------------------------------
# Markdown


def _path_text(c: Candidate) -> str:
    return " > ".join(c.path_names)


def markdown_meta_line(c: Candidate, variant: str, show_scores: bool) -> str:
    parts = [f"id: {c.id}", f"type: {c.type}"]
    if c.tags:
        parts.append("tags: " + " ".join(f"#{t}" for t in c.tags))
    if c.seed:
        parts.append("distance: 0 (topic)")
    elif c.semantic:
        parts.append("distance: - (similar)")
    elif c.recent:
        parts.append("distance: - (recently edited)")
    else:
        parts.append(f"distance: {c.hops} ({_path_text(c)})")
    if show_scores:
        parts.append(f"score: {c.score:.3f}")
    crumb = outline_view.meta_part(c)
    if crumb:
        parts.append(crumb)
    if variant == SHORTENED:
        parts.append("truncated")
    return " · ".join(parts)


def strip_title_heading(body: str, title: str) -> str:
    """Drop a first line that only repeats the title as a heading (``# Title``): it costs tokens
    and says nothing the block's own heading does not."""
    if body.strip() == title.strip():
        return ""  # a body that is only its title (a claim whose title is its sentence)
    first, _, rest = body.lstrip("\n").partition("\n")
    if first.startswith("#") and first.lstrip("#").strip().lower() == title.strip().lower():
        return rest.lstrip("\n")
    return body


def markdown_block(
    c: Candidate, variant: str, text: str, show_scores: bool = True, compact: int = 0,
    layout: str = "list", cite: int | None = None, metadata: bool = True, outline_n: int = 0,
    date: str | None = None,
) -> str:
    # A cited heading names the source file too; at the tiniest budgets its number and title must do.
    title = c.title if cite is None else f"[{cite}] {c.title}" if compact >= 2 else extras.cited_heading(c, cite)
    if c.breadcrumb and (compact or not metadata):
        # A block is never a source without its page: the meta line that would name it is not shown.
        title = f"{title} (in {c.breadcrumb[0]})"
    if date and compact < 2:
        # The day anchors what the text says ("last week", "the new plan"): a few tokens, always.
        title = f"{title} ({date})"
    heading = f"### {extras.tree_prefix(c) if layout == 'tree' else ''}{title}"
    if compact >= 2 or not metadata:
        lines = [heading]
    elif compact:
        lines = [heading, f"id: {c.id}" + (" · truncated" if variant == SHORTENED else "")]
    else:
        lines = [heading, markdown_meta_line(c, variant, show_scores)]
        relation = extras.relation_line(c) if layout == "tree" else None
        if relation:
            lines.append(relation)
        if c.source_path and cite is None:
            lines.append(f"source: {c.source_path}")
        for name in sorted(c.fields):
            values = c.fields[name]
            lines.append(f"- {name}: {', '.join(values)}")
        lines.extend(extras.neighbour_lines(c))
    body = text.strip("\n")
    if body:
        lines.append("")
        lines.append(body)
    if outline_n:
        lines.append("")
        lines.append(outline_view.markdown(c, outline_n))
    return "\n".join(lines)


def summary_where(c: Candidate) -> str:
    return "topic" if c.seed else ("similar" if c.semantic else "recent" if c.recent else f"distance {c.hops}")


def markdown_summary_line(c: Candidate, show_scores: bool = True, date: str | None = None) -> str:
    where = summary_where(c)
    score = f"; score {c.score:.3f}" if show_scores else ""
    day = f"; {date}" if date else ""
    return f"- {c.title} ({c.type}; id: {c.id}{day}; {where}{score})"


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def markdown_header(doc: Document, used: int) -> str:
    if doc.header_level >= 3:
        return f"({used}/{doc.budget} tokens)"  # last resort before the seed itself would go
    day = f"all {doc.common_date}; " if doc.common_date and doc.show_dates else ""
    if doc.header_level == 2:
        line = f"# {clip(doc.label, 40)} ({day}{used}/{doc.budget} tokens)"
        return f"{line}\n{doc.freshness_short}" if doc.freshness_short else line
    lines = [f"# Context: {clip(doc.label, 120 if doc.header_level == 0 else 60)}"]
    if day:
        lines.append(f"every note dated {doc.common_date}")
    ident = f" · context: {doc.context_id}" if doc.context_id else ""
    if doc.header_level == 1:
        lines.append(f"lens: {doc.lens} · tokens: {used}/{doc.budget}{ident}")
        if doc.freshness:
            lines.append(doc.freshness)
        return "\n".join(lines)
    shown = doc.shown()
    n_full = sum(1 for i in shown if i.variant == FULL)
    n_short = sum(1 for i in shown if i.variant == SHORTENED)
    counts = f"nodes: {n_full} full, {n_short} shortened, {len(doc.also)} summarized, {doc.omitted_total} omitted"
    lines.append(f"lens: {doc.lens} · tokens: {used}/{doc.budget} · {counts}{ident}")
    if doc.freshness:
        lines.append(doc.freshness)
    lines.extend(doc.notes)
    return "\n".join(lines)


def render_markdown(doc: Document, used: int) -> str:
    return "".join(markdown_chunks(doc, used, markdown_body(doc)))


def markdown_body(doc: Document) -> list[str]:
    """The parts of a markdown rendering between its header and its closing summary, which alone
    say the "used" figure: the same parts whatever that figure is (headings, blocks, lists)."""
    if not doc.found:
        return [not_found_line(doc)]
    parts: list[str] = []
    layout = doc.layout()
    for section, items in layout.sections:
        parts.extend(markdown_section(doc, section, items, layout.cites))
    if doc.also:
        title = "Related (summary only)" if doc.summary_only else "Also related"
        lines = [f"## {title}"]
        lines.extend(markdown_summary_line(i.cand, doc.show_scores, doc.date_of(i.cand))
                     for i in sorted(doc.also, key=lambda i: i.cand.rank))
        parts.append("\n".join(lines))
    return parts


def markdown_chunks(doc: Document, used: int, body: list[str]) -> list[str]:
    """The markdown rendering with ``body`` (``markdown_body``) as consecutive chunks: the header,
    each part of the body, the closing summary, each with the blank line (or the final newline)
    after it. Most chunks start a line with a character other than white space, where a text may
    be counted chunk by chunk (``TokenCounter.count_chunks``)."""
    parts = [markdown_header(doc, used), *body]
    if doc.found and doc.summary and doc.header_level < 2:
        parts.append(extras.closing_summary_markdown(doc.sections, len(doc.also), used, doc.budget))
    last = len(parts) - 1
    return [part + ("\n" if i == last else "\n\n") for i, part in enumerate(parts)]


class Rendering:
    """One state of a document rendered for one "used" figure after another (the fitting loop's
    fixed point): in markdown the body between header and closing summary is made once (its
    blocks, the openings' word covers), and only the frame is made again."""

    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self._body: list[str] | None = None

    def chunks(self, used: int) -> list[str]:
        """``render(doc, used)`` as consecutive chunks whose join is that text."""
        doc = self.doc
        if doc.fmt == "json":
            return [render_json(doc, used)]
        if self._body is None:
            self._body = markdown_body(doc)
        return markdown_chunks(doc, used, self._body)


def not_found_line(doc: Document) -> str:
    """The topics are the user's input, of any length: clip them like the header's label, and
    at the last-resort level drop them (stderr names them) so the budget always holds."""
    if doc.header_level >= 3:
        return "No matching nodes found."
    limit = (120, 60, 40)[doc.header_level]
    line = f"No matching nodes found for {' + '.join(repr(clip(t, limit)) for t in doc.topics)}."
    meant = [t for titles in doc.meta.get("suggestions", {}).values() for t in titles]
    if meant:
        line += " Did you mean " + " or ".join(repr(clip(t, limit)) for t in meant) + "?"
    return line


def markdown_section(doc: Document, section: SectionOut, items: list[Item], cites: dict[str, Citation]) -> list[str]:
    """A section's parts: its heading, group labels and blocks (or why it is empty)."""
    if not items:
        if doc.empty_sections:
            return [extras.empty_section_text(section.name, doc.empty_notes.get(section.name))]
        return []
    parts = [f"## {section.name}"]
    current_group: str | None = None
    for item in items:
        label = _group_label(item, section.group_by)
        if label is not None and label != current_group:
            parts.append(f"**{label}**")
            current_group = label
        cite = extras.citation_number(cites, item.cand) if doc.citations else None
        parts.append(markdown_block(item.cand, item.variant, item.text, doc.show_scores, item.compact,
                                    section.layout, cite, doc.show_metadata, item.outline_shown(),
                                    doc.date_of(item.cand)))
    return parts


# ---------------------------------------------------------------------------------------------
# JSON: compact (no indentation) because every byte of it is paid for in tokens.


def dumps(value: Any) -> str:
    from ctx.jsonout import dumps as strict_dumps

    return strict_dumps(value, separators=(",", ":"))


def json_node(
    c: Candidate, variant: str, text: str, tokens: int, compact: int = 0, outline_n: int = 0,
    passages: tuple[int, ...] | None = None, date: str | None = None, cores: tuple[int, ...] = (),
) -> dict[str, Any]:
    if compact:
        # Tiny budgets: the keys every node carries (docs/context.schema.json), nothing more (not
        # even the date, which the markdown heading keeps down to the title-only form); at
        # the tiniest the title's value goes too (after the content): a script reading the JSON
        # finds the same keys at every budget.
        return {
            "id": c.id,
            "title": c.title if compact < 2 else "",
            "type": c.type,
            "distance": c.hops,
            "score": c.score,
            "tokens": tokens,
            "truncated": variant == SHORTENED,
            "source_path": c.source_path,
            "content": text,
        }
    return {
        "id": c.id,
        "title": c.title,
        "type": c.type,
        **({"date": date} if date else {}),
        "tags": c.tags,
        "source_path": c.source_path,
        "section": c.section,
        "distance": c.hops,
        "cost": round(c.cost, 4),
        "path": [{"edge": h.edge, "from": h.src, "to": h.dst} for h in c.path],
        "score": c.score,
        "score_parts": c.parts,
        "rank": c.rank,
        "tokens": tokens,
        "truncated": variant == SHORTENED,
        "fields": c.fields,
        **({"neighbours": c.neighbours} if c.neighbours else {}),
        **({"breadcrumb": list(c.breadcrumb)} if c.breadcrumb else {}),
        "content": text,
        # Which of the node's passages (0-based, in reading order) a shortened node shows, and
        # which of those only as their matching paragraphs (the rest of them left out, marked).
        **({"passages": {"shown": list(passages), "total": len(c.pieces or ()), **({"cores": list(cores)} if cores else {})}}
           if passages is not None else {}),
        **({"outline": outline_view.json_entries(c, outline_n)} if outline_n else {}),
        **({"outline_truncated": outline_view.cut(c, outline_n).truncated} if c.outline is not None else {}),
    }


def json_summary(c: Candidate, date: str | None = None) -> dict[str, Any]:
    return {"id": c.id, "title": c.title, "type": c.type, **({"date": date} if date else {}), "distance": c.hops,
            "score": c.score, "source_path": c.source_path}


def json_omitted(c: Candidate) -> dict[str, Any]:
    return {"id": c.id, "title": c.title, "score": c.score, "reason": c.reason}


def json_document(doc: Document, used: int) -> dict[str, Any]:
    layout = doc.layout()
    shown = layout.ordered()
    nodes = [json_node(item.cand, item.variant, item.text, item.tokens, item.compact, item.outline_shown(),
                       item.passages, doc.date_of(item.cand), item.cores) for item in shown]
    out: dict[str, Any] = {"meta": json_meta(doc, used), "nodes": nodes}
    if doc.header_level == 0:
        out["sections"] = [{"name": s.name, "ids": [i.cand.id for i in items]} for s, items in layout.sections if items]
    if doc.header_level < 2 or doc.also:
        out["also_related"] = [json_summary(i.cand, doc.date_of(i.cand)) for i in sorted(doc.also, key=lambda i: i.cand.rank)]
    if doc.header_level < 2 or doc.omitted:
        out["omitted"] = [json_omitted(c) for c in doc.omitted]
        out["omitted_count"] = doc.omitted_total
    if doc.citations:
        # Seed 002's research contract: numbered sources, whether anything was cut, the token total.
        for node, item in zip(nodes, shown):
            node["citation"] = extras.citation_number(layout.cites, item.cand)
        out["citations"] = citation_map(layout.cites, compact=doc.header_level >= 3)
        out["truncated"] = any(i.variant != FULL for i in shown) or bool(doc.also) or doc.omitted_total > 0
        out["total_tokens"] = used
    if doc.summary and doc.header_level < 2:
        out["summary"] = extras.closing_summary_json(doc.sections, len(doc.also), used, doc.budget)
    return out


def json_meta(doc: Document, used: int) -> dict[str, Any]:
    """``meta``: all of it under the full header; smaller headers drop what a script can do
    without, never the keys the schema requires."""
    if doc.header_level >= 2:
        meta: dict[str, Any] = {"schema": SCHEMA_VERSION, "lens": doc.lens, "tokens": {"used": used, "budget": doc.budget}}
    else:
        meta = {"schema": SCHEMA_VERSION, "topic": list(doc.topics), "lens": doc.lens,
                "tokens": {"used": used, "budget": doc.budget}, "found": doc.found}
    if doc.header_level == 0:
        shown = doc.shown()
        meta["counts"] = {
            "full": sum(1 for i in shown if i.variant == FULL),
            "shortened": sum(1 for i in shown if i.variant == SHORTENED),
            "summarized": len(doc.also),
            "omitted": doc.omitted_total,
        }
        meta["summary_only"] = doc.summary_only
        meta.update(doc.meta)
    if 0 < doc.header_level < 3 and doc.context_id:
        # A script's handle for ``--since``: kept by the lean header too (the answer lens's, at
        # every budget), so every JSON build but the bare last resort names itself (~9 tokens).
        meta["context"] = doc.context_id
    if doc.header_level == 1 and "freshness" in doc.meta:
        meta["freshness"] = doc.meta["freshness"]
    elif doc.header_level == 2 and doc.freshness:
        meta["freshness"] = {"stale": True}  # the details are on stderr
    if doc.header_level < 3 and "lens_choice" in doc.meta:
        # Which lens and why stays in lean headers (the answer lens's): only the bare one drops it.
        meta["lens_choice"] = doc.meta["lens_choice"]
        if doc.header_level == 2 and not doc.found:
            # A lean header still says when nothing matched, and what was probably meant.
            meta["found"] = False
            if doc.meta.get("suggestions"):
                meta["suggestions"] = doc.meta["suggestions"]
    return meta


def render_json(doc: Document, used: int) -> str:
    return dumps(json_document(doc, used)) + "\n"


def render(doc: Document, used: int) -> str:
    return render_json(doc, used) if doc.fmt == "json" else render_markdown(doc, used)


def block_text(doc: Document, item: Item) -> str:
    """The part of the output one shown node accounts for (for per-node token counts)."""
    if doc.fmt == "json":
        if item.variant == SUMMARY:
            return dumps(json_summary(item.cand, doc.date_of(item.cand))) + ","
        node = json_node(item.cand, item.variant, item.text, 0, item.compact, item.outline_shown(), item.passages,
                         doc.date_of(item.cand), item.cores)
        if doc.citations:
            node["citation"] = 99
        return dumps(node) + ","
    if item.variant == SUMMARY:
        return markdown_summary_line(item.cand, doc.show_scores, doc.date_of(item.cand)) + "\n"
    layout = next((s.layout for s in doc.sections if s.name == item.cand.section), "list")
    cite = extras.citation_number(doc.layout().cites, item.cand) if doc.citations else None
    return markdown_block(
        item.cand, item.variant, item.text, doc.show_scores, item.compact, layout, cite, doc.show_metadata,
        item.outline_shown(), doc.date_of(item.cand),
    ) + "\n\n"


def omitted_text(c: Candidate) -> str:
    return dumps(json_omitted(c)) + ","

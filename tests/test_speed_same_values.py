"""Cheaper ways to the same values (pure speed, no answer changes), each checked against the way it
replaced: a lens's key and digest made once per lens object, a "rest" section's own selector made
once, nodes' facts made without their frozen ``__init__``, and attachments collapsed only where a
text can hold one. Real files and real SQLite."""

from __future__ import annotations

import dataclasses
import random
import re
from pathlib import Path

import pytest
from conftest import CORPORA

from ctx.assemble import manifest, score
from ctx.digest import sha256
from ctx.importers.engine import import_path
from ctx.lenses import load_lens
from ctx.lenses.lookup import builtin_lens_names
from ctx.passages import collapse_attachments, outside_code, _collapse
from ctx.store import connect
from ctx.store.sqlite_store import SqliteStore
from ctx.store.types import NodeFacts



pytestmark = pytest.mark.usefixtures("ctx_home")


def test_a_lens_key_is_its_repr_and_each_lens_its_own() -> None:
    lenses = [load_lens(name) for name in builtin_lens_names()]
    assert len(lenses) >= 5
    keys = set()
    for lens in lenses:
        assert lens.as_key() == repr(lens)
        assert lens.as_key() is lens.as_key()  # made once
        # Kept beside the fields, never one of them: equality and repr are the lens's own.
        assert "_as_key" not in {f.name for f in dataclasses.fields(lens)}
        assert repr(lens) == lens.as_key() and lens == dataclasses.replace(lens)
        changed = dataclasses.replace(lens, depth=lens.depth + 1)
        assert changed.as_key() == repr(changed) != lens.as_key()
        keys.add(lens.as_key())
        # The manifest's digest: what the lens does, wherever its file lives.
        expected = sha256(repr(dataclasses.replace(lens, path="", source="")).encode("utf-8")).hexdigest()
        assert manifest._lens_digest(lens) == expected
        moved = dataclasses.replace(lens, path="/elsewhere/x.yaml", source="user")
        assert manifest._lens_digest(moved) == expected
        assert manifest._lens_digest(changed) != expected
    assert len(keys) == len(lenses)


def test_a_rest_selector_narrowed_once_is_the_same_selector() -> None:
    for name in builtin_lens_names():
        for section in load_lens(name).sections:
            if section.select.rest:
                narrowed = score._narrowing(section.select)
                assert narrowed == dataclasses.replace(section.select, rest=False)
                assert score._narrowing(section.select) is narrowed
    # A selector made by hand with a list (unhashable) is narrowed all the same.
    from ctx.lenses.model import Selector

    by_hand = Selector(types=["note"], rest=True)  # type: ignore[arg-type]
    assert score._narrowing(by_hand) == Selector(types=["note"], rest=False)  # type: ignore[arg-type]


def test_node_facts_are_the_dataclass_values(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "A.md").write_text("---\ntags: [alpha, beta]\nstatus: draft\nowner: [Ada, Bo]\n---\n# A\n\nSee [[B]].\n")
    (vault / "B.md").write_text("# B\n\nPlain.\n")
    (vault / "C.md").write_text("---\ntags: []\n---\n# C\n\n- one\n  - two\n")
    conn = connect(tmp_path / "g.db", create=True)
    import_path(conn, vault)
    reader = SqliteStore(conn).reader()
    ids = [r[0] for r in conn.execute("SELECT id FROM nodes")]
    assert len(ids) >= 3
    names = [f.name for f in dataclasses.fields(NodeFacts)]
    for with_fields in (True, False):
        facts = reader.node_facts(ids, with_fields=with_fields)
        assert [f.id for f in facts] == sorted(ids)
        for f in facts:
            assert type(f) is NodeFacts
            made = NodeFacts(**{name: getattr(f, name) for name in names})
            assert f == made and repr(f) == repr(made) and list(vars(f)) == names
            with pytest.raises(dataclasses.FrozenInstanceError):
                f.title = "changed"  # type: ignore[misc]
        by_title = {f.title: f for f in facts}
        assert sorted(by_title["A"].tags) == ["alpha", "beta"]
        assert by_title["A"].fields.get("status") == (["draft"] if with_fields else None)
        assert by_title["B"].tags == [] and by_title["C"].tags == []


def _collapse_before(text: str) -> str:
    """``collapse_attachments`` as it was: the lowercased text asked for "<img" first."""
    if "![" not in text and "<img" not in text.lower() and "](" not in text:
        return text
    return outside_code(text, _collapse)


def test_attachments_collapse_as_before() -> None:
    texts = [
        "plain text", "a < b and c > d", "<IMG src='x.png' alt='Cat'>", "<Img src=x>", "x <iMg alt=\"y\" src=z> w",
        "![alt](pic.png)", "[file](doc.pdf)", "`<img src=x>` in code", "```\n<img src=x>\n```\n<img src=y>",
        "İmg <İMG src=x>", "<\u0130mg src=x>", "text with ](half", "",
    ]
    rng = random.Random(7)
    parts = ["<", "img", "IMG", "İ", "![", "](", "a", " ", "\n", "`", "```", "alt='q'", ">", "src=x", "K", "ß"]
    texts += ["".join(rng.choice(parts) for _ in range(rng.randint(1, 12))) for _ in range(20_000)]
    for corpus in ("foam-docs", "logseq-docs", "dendron-site"):
        root = CORPORA / corpus
        if root.is_dir():
            texts += [p.read_text(errors="replace") for p in sorted(root.rglob("*.md"))[:400]]
    changed = 0
    for text in texts:
        assert collapse_attachments(text) == _collapse_before(text), text[:80]
        changed += collapse_attachments(text) != text
    assert changed > 100
    assert re.search(r"\[image", collapse_attachments("<IMG src='x.png' alt='Cat'>"))


def _fold_before(word: str) -> str:
    """``matching_lines.fold`` as it was: every word normalized and its combining marks dropped."""
    import unicodedata

    word = unicodedata.normalize("NFKD", word.lower())
    word = "".join(ch for ch in word if not unicodedata.combining(ch))
    if word.endswith("'s"):
        word = word[:-2]
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def test_words_fold_as_before() -> None:
    from ctx.assemble.matching_lines import _WORD, fold

    words = ["Guests", "guest's", "Café", "naïve", "ÉCOLE", "ﬁles", "Straße", "İstanbul", "x", "ﬀ", "ＡＢＣ", "e\u0301t\u00e9s",
             "running", "SPED", "boxes", "ß", "Ǆemal", "K", "Ω", "123s", "a_b", "ǅ"]
    rng = random.Random(11)
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789'éÉüßİıﬁＡ\u0301\u0308ǅΩ"
    words += ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 9))) for _ in range(20_000)]
    for corpus in ("foam-docs", "logseq-docs"):
        root = CORPORA / corpus
        if root.is_dir():
            for path in sorted(root.rglob("*.md"))[:200]:
                words += _WORD.findall(path.read_text(errors="replace"))
    fold.cache_clear()
    for word in words:
        assert fold(word) == _fold_before(word), word

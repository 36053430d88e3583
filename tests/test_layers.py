"""The import contract (docs/development.md, "Layers"): read from the source with ``ast``, every
``import`` counted, at module level and inside functions alike.

* every module of ``ctx`` is in exactly one layer, and imports nothing from a higher one (imports
  under ``if TYPE_CHECKING:`` count here too: a type is a dependency);
* no import circle among modules (imports a program runs: ``TYPE_CHECKING`` blocks left out; a
  package's ``__init__`` run implicitly for its submodules is not an import);
* the store has one face: outside ``ctx.store`` only ``ctx.store`` itself and its ``protocols``,
  ``types``, ``records`` and ``errors`` are imported; no ``sqlite3``, no ``.conn`` and no SQL text.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "cli" / "ctx"

# Lowest first. A module's layer is that of its longest listed prefix.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("foundation", (
        "ctx.errors", "ctx.speedups", "ctx.paths", "ctx.defaults", "ctx.edges", "ctx.stopwords",
        "ctx.code_spans", "ctx.yaml_safe", "ctx.yaml_cache", "ctx.dataclass_code", "ctx.files",
        "ctx.schema", "ctx.jsonout", "ctx.tokens", "ctx.passages", "ctx.freshness_report", "ctx.digest",
        "ctx.long_waits",
    )),
    ("settings", ("ctx.config", "ctx.options", "ctx.lenses")),
    ("store", ("ctx.store",)),
    ("graph readers and writers", ("ctx.importers", "ctx.semantic")),
    ("assembly", ("ctx.assemble",)),
    ("library", (
        "ctx", "ctx.graph", "ctx.sync", "ctx.freshness", "ctx.inspection", "ctx.watch", "ctx.fragment",
        "ctx.llm_plugin", "ctx.trust",
    )),
    ("interfaces", ("ctx.mcp_server", "ctx.mcp_wire", "ctx.mcp_session", "ctx.agent_setup", "ctx.commands", "ctx.app", "ctx.entry", "ctx.__main__")),
]
STORE_FACE = {"ctx.store", "ctx.store.protocols", "ctx.store.types", "ctx.store.records", "ctx.store.errors"}
# SQL a program sends, as opposed to prose that mentions a word of it.
SQL = re.compile(
    r"\b(SELECT\b.+\bFROM|INSERT\s+(OR\s+\w+\s+)?INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|CREATE\s+(TEMP\s+)?(TABLE|INDEX|TRIGGER)|PRAGMA\s+\w+)\b",
    re.S,
)


@dataclass
class Module:
    name: str
    path: Path
    imports: set[str] = field(default_factory=set)  # every import, TYPE_CHECKING ones included
    runtime: set[str] = field(default_factory=set)  # the imports a program runs
    foreign: set[str] = field(default_factory=set)  # top-level names of non-ctx modules imported
    conn_uses: list[int] = field(default_factory=list)
    sql: list[int] = field(default_factory=list)


def _type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
    )


def _modules() -> dict[str, Module]:
    found: dict[str, Module] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = Module(".".join(parts), path)
    for module in found.values():
        _read(module, found)
    return found


def _read(module: Module, every: dict[str, Module]) -> None:
    tree = ast.parse(module.path.read_text(encoding="utf-8"))
    package = module.name if module.path.name == "__init__.py" else module.name.rpartition(".")[0]
    type_only: set[int] = set()
    for node in ast.walk(tree):
        if _type_checking(node):
            type_only.update(id(inner) for stmt in node.body for inner in ast.walk(stmt))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)
    }
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            targets = [f"{origin}.{a.name}" if f"{origin}.{a.name}" in every else origin for a in node.names]
        elif isinstance(node, ast.Attribute) and node.attr == "conn":
            module.conn_uses.append(node.lineno)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            if SQL.search(node.value):
                module.sql.append(node.lineno)
        elif isinstance(node, ast.JoinedStr):
            text = "".join(v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str))
            if SQL.search(text):
                module.sql.append(node.lineno)
        for target in targets:
            if target == "ctx" or target.startswith("ctx."):
                while target not in every and "." in target:
                    target = target.rpartition(".")[0]
                if target != module.name:
                    module.imports.add(target)
                    if id(node) not in type_only:
                        module.runtime.add(target)
            else:
                module.foreign.add(target.split(".")[0])


MODULES = _modules()


def layer_of(name: str) -> int:
    best: tuple[int, int] | None = None  # (prefix length, layer)
    for rank, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if name == prefix or name.startswith(prefix + ".") and prefix != "ctx":
                if best is None or len(prefix) > best[0]:
                    best = (len(prefix), rank)
    assert best is not None, f"{name} is in no layer: add it to LAYERS here and to docs/development.md"
    return best[1]


def test_every_module_is_in_a_layer() -> None:
    assert len(MODULES) > 100  # the walk found the package
    for name in MODULES:
        layer_of(name)


def _upward() -> list[str]:
    return sorted(
        f"{m.name} ({LAYERS[layer_of(m.name)][0]}) imports {target} ({LAYERS[layer_of(target)][0]})"
        for m in MODULES.values()
        for target in m.imports
        if layer_of(target) > layer_of(m.name)
    )


def test_no_module_imports_from_a_higher_layer() -> None:
    assert _upward() == []


def _circles() -> list[list[str]]:
    """Strongly connected components of two or more modules over runtime imports (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(name: str) -> None:
        index[name] = low[name] = len(index)
        stack.append(name)
        on_stack.add(name)
        for target in sorted(MODULES[name].runtime):
            if target not in index:
                visit(target)
                low[name] = min(low[name], low[target])
            elif target in on_stack:
                low[name] = min(low[name], index[target])
        if low[name] == index[name]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == name:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for name in sorted(MODULES):
        if name not in index:
            visit(name)
    return found


def test_no_import_circle() -> None:
    assert _circles() == []


def test_the_contract_sees_a_circle_and_an_upward_import() -> None:
    # The checks above must be able to fail: the same walks with one made-up import added.
    saved = {name: (set(MODULES[name].runtime), set(MODULES[name].imports)) for name in ("ctx.paths",)}
    try:
        MODULES["ctx.paths"].runtime.add("ctx.config")  # what paths -> config was before this test
        MODULES["ctx.paths"].imports.add("ctx.config")
        assert any({"ctx.config", "ctx.paths"} <= set(circle) for circle in _circles())
        assert _upward() == ["ctx.paths (foundation) imports ctx.config (settings)"]
    finally:
        for name, (runtime, imports) in saved.items():
            MODULES[name].runtime, MODULES[name].imports = runtime, imports


def _outside_store() -> list[Module]:
    return [m for m in MODULES.values() if m.name != "ctx.store" and not m.name.startswith("ctx.store.")]


def test_outside_the_store_only_its_face_is_imported() -> None:
    behind = sorted(
        f"{m.name} imports {target}"
        for m in _outside_store()
        for target in m.imports
        if (target == "ctx.store" or target.startswith("ctx.store.")) and target not in STORE_FACE
    )
    assert behind == []


def test_no_sqlite3_no_conn_and_no_sql_outside_the_store() -> None:
    outside = _outside_store()
    assert sorted(m.name for m in outside if "sqlite3" in m.foreign) == []
    assert sorted(f"{m.name}:{line}" for m in outside for line in m.conn_uses) == []
    assert sorted(f"{m.name}:{line}" for m in outside for line in m.sql) == []
    # ... while the store itself is seen to hold both (the checks can find what they look for).
    assert any(m.sql for m in MODULES.values() if m.name.startswith("ctx.store."))
    assert "sqlite3" in MODULES["ctx.store.db"].foreign

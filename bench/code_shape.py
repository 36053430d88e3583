"""How much a next engineer must hold in their head: long functions, branchy functions, long modules,
how many places spell a command's option, and the README's length.

    python bench/code_shape.py            # the figures for the working tree
    python bench/code_shape.py --list     # and every function/module over the limits

Cyclomatic complexity is ruff's C901 (mccabe) figure, so it agrees with the lint in pyproject.toml.
A function's length counts its lines from ``def`` to its last statement, decorators excluded.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "cli" / "ctx"
MAX_FUNCTION_LINES = 60
MAX_COMPLEXITY = 20
MAX_MODULE_LINES = 500

# Where a command's options are spelled: the CLI and MCP faces, the fast path, the request type
# and the defaults. The packer and the stages that consume an option's value are not counted.
OPTION_FILES = (
    "entry.py", "app.py", "commands/*.py", "mcp_server.py", "graph.py", "assemble/__init__.py",
    "assemble/options.py", "options.py", "fragment.py", "config.py", "defaults.py",
)
OPTIONS = {
    "build": ("lens", "depth", "max_tokens", "format", "include_fields", "encoding", "explain"),
    "search": ("limit",),
}


def functions(path: Path) -> list[tuple[str, int, int]]:
    """(qualified name, first line, line count) of every function in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[tuple[str, int, int]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                found.append((name, child.lineno, (child.end_lineno or child.lineno) - child.lineno + 1))
                visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return found


def complexities() -> list[tuple[int, str]]:
    """(complexity, 'file:line name') of every function, from ruff's mccabe check."""
    out = subprocess.run(
        [sys.executable, "-m", "ruff", "check", str(PACKAGE), "--select", "C901", "--no-cache", "--exit-zero",
         "--config", "lint.mccabe.max-complexity = 0", "--output-format", "json"],
        capture_output=True, text=True, check=True,
    ).stdout
    rows = []
    for item in json.loads(out):
        match = re.match(r"`(.+)` is too complex \((\d+) > 0\)", item["message"])
        if match:
            where = f"{Path(item['filename']).relative_to(PACKAGE)}:{item['location']['row']} {match.group(1)}"
            rows.append((int(match.group(2)), where))
    return sorted(rows, reverse=True)


def radon_complexities() -> list[tuple[int, str]] | None:
    """The same figure as radon computes it (boolean operators count too; the issue's figures are
    radon's), or None when radon is not installed (`pip install radon`)."""
    try:
        from radon.complexity import cc_visit
    except ImportError:
        return None
    rows = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for block in cc_visit(path.read_text(encoding="utf-8")):
            for item in [block, *getattr(block, "methods", [])]:
                if getattr(item, "is_method", None) is not None or hasattr(item, "closures"):
                    name = f"{item.classname}.{item.name}" if getattr(item, "classname", None) else item.name
                    rows.append((item.complexity, f"{path.relative_to(PACKAGE)}:{item.lineno} {name}"))
    return sorted(set(rows), reverse=True)


def option_spellings() -> dict[str, tuple[int, int]]:
    """For each option: (lines, files) in the option layer that name it (snake or --kebab case)."""
    files = sorted({p for pattern in OPTION_FILES for p in PACKAGE.glob(pattern)})
    counts = {}
    for command, names in OPTIONS.items():
        for name in names:
            pattern = re.compile(rf"\b{name}\b|--{name.replace('_', '-')}\b")
            lines = 0
            where = 0
            for path in files:
                hits = sum(1 for line in path.read_text(encoding="utf-8").splitlines() if pattern.search(line))
                lines += hits
                where += bool(hits)
            counts[f"{command} {name}"] = (lines, where)
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--list", action="store_true", help="list every function and module over the limits")
    args = parser.parse_args()
    modules = sorted(PACKAGE.rglob("*.py"))
    long_functions = []
    long_modules = []
    for path in modules:
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_MODULE_LINES:
            long_modules.append((lines, str(path.relative_to(PACKAGE))))
        for name, first, count in functions(path):
            if count > MAX_FUNCTION_LINES:
                long_functions.append((count, f"{path.relative_to(PACKAGE)}:{first} {name}"))
    complex_rows = complexities()
    readme = len((REPO / "README.md").read_text(encoding="utf-8").splitlines())
    print(f"modules in cli/ctx: {len(modules)}")
    print(f"functions over {MAX_FUNCTION_LINES} lines: {len(long_functions)}")
    print(f"max cyclomatic complexity: {complex_rows[0][0]} ({complex_rows[0][1]})")
    print(f"functions over complexity {MAX_COMPLEXITY}: {sum(1 for c, _ in complex_rows if c > MAX_COMPLEXITY)}")
    radon_rows = radon_complexities()
    if radon_rows is not None:
        print(f"max cyclomatic complexity, radon: {radon_rows[0][0]} ({radon_rows[0][1]})")
        print(f"functions over complexity {MAX_COMPLEXITY}, radon: {sum(1 for c, _ in radon_rows if c > MAX_COMPLEXITY)}")
    print(f"modules over {MAX_MODULE_LINES} lines: {len(long_modules)}")
    print(f"README lines: {readme}")
    print("option spelled in the option layer (lines / files):")
    for option, (lines, files) in option_spellings().items():
        print(f"  {option}: {lines} / {files}")
    if args.list:
        print("\nlong functions:")
        for count, where in sorted(long_functions, reverse=True):
            print(f"  {count:4d}  {where}")
        print("complex functions:")
        for complexity, where in complex_rows:
            if complexity > MAX_COMPLEXITY:
                print(f"  {complexity:4d}  {where}")
        for complexity, where in radon_rows or []:
            if complexity > MAX_COMPLEXITY:
                print(f"  {complexity:4d}  {where}  (radon)")
        print("long modules:")
        for count, where in sorted(long_modules, reverse=True):
            print(f"  {count:4d}  {where}")


if __name__ == "__main__":
    main()

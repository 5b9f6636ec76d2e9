"""The shape of the house: how `fowlplay`'s modules may import each other, and how big a room gets.

Read from the source with `ast`, so an import inside a function counts as much as one at the top
(a function-level import is still an arrow between two rooms; a circle drawn that way only moves
the failure to run time). Layers, from the bottom: `envs.runtime` (host plumbing, no games),
`envs` (the games), `training`, `evaluation`. An arrow may point down or sideways inside a layer,
never up, and the whole graph has no circle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import fowlplay.envs
import fowlplay.evaluation
import fowlplay.training
import pytest

TOPS = {"envs": fowlplay.envs, "training": fowlplay.training, "evaluation": fowlplay.evaluation}

#: A module of training/ or evaluation/ over this many lines is a room of several concerns.
MAX_MODULE_LINES = 700

#: A function over this many lines needs a comment at its top saying why it stays whole.
MAX_FUNCTION_LINES = 80


def _modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its `__init__.py`)."""
    found = {}
    for top, package in TOPS.items():
        root = Path(package.__file__).parent
        for path in root.rglob("*.py"):
            parts = path.relative_to(root).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(("fowlplay", top, *parts))] = path
    return found


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """The fowlplay modules that `name` imports anywhere in its file (a package counts as its `__init__`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            candidates = [base] + [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        targets.update(c for c in candidates if c in MODULES and c != name)
    return targets


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _layer(name: str) -> int:
    if name.startswith("fowlplay.envs.runtime"):
        return 0
    return {"envs": 1, "training": 2, "evaluation": 3}[name.split(".")[1]]


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    circles.append(sorted(component))
    return circles


def test_the_circle_finder_finds_a_circle():
    """The checker itself: a drawn circle is found, a line is not."""
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circles():
    assert _circles(GRAPH) == []


def test_no_arrow_points_up():
    upward = sorted(
        f"{source} imports {target}"
        for source, targets in GRAPH.items()
        for target in targets
        if _layer(target) > _layer(source)
    )
    assert upward == []


@pytest.mark.parametrize("top", ["training", "evaluation"])
def test_rooms_stay_small(top):
    large = sorted(
        f"{name}: {len(path.read_text(encoding='utf-8').splitlines())} lines"
        for name, path in MODULES.items()
        if name.split(".")[1] == top and len(path.read_text(encoding="utf-8").splitlines()) > MAX_MODULE_LINES
    )
    assert large == []


def _says_why(path: Path, node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether a long function opens with a comment that says why it stays whole."""
    lines = path.read_text(encoding="utf-8").splitlines()
    body_start = node.body[0].lineno - 1
    if isinstance(node.body[0], ast.Expr) and isinstance(getattr(node.body[0], "value", None), ast.Constant):
        body_start = node.body[0].end_lineno  # after the docstring
    opening = lines[node.lineno - 1 : body_start + 3]
    return any(line.strip().startswith("#") for line in opening)


def test_long_functions_say_why():
    long = []
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > MAX_FUNCTION_LINES and not _says_why(path, node):
                    long.append(f"{name}.{node.name}: {length} lines")
    assert sorted(long) == []

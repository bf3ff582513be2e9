"""The layer rules of docs/architecture.md, read from the source itself.

Every module under ``src/skilldeck`` is parsed with :mod:`ast` (nothing is imported);
each ``import`` of a skilldeck module — at module level or inside a function, but not
under ``if TYPE_CHECKING:`` — is an edge of the import graph. On that graph:

* ``skills/`` never imports ``agent/``, ``tools/``, ``llm/`` or an interface
  (``cli/``, ``mcp/``, ``integrations/``);
* ``tools/`` and ``llm/`` never import ``agent/`` or an interface;
* ``agent/`` never imports ``service/`` or an interface; ``service/`` never imports an
  interface (``cli/``, ``mcp/``, ``integrations/``, ``web/``);
* the bottom layer (``config``, ``errors``, ``trust``, ``sandbox``, the ``_*`` helper
  modules, the ``settings`` package) imports none of the layers above it;
* there is no import cycle (a strongly connected component of more than one module);
* function-level imports of skilldeck's own modules are rare (at most
  :data:`MAX_FUNCTION_IMPORTS`) and each says why with a ``# lazy:`` comment on its
  first line: optional extras, heavy SDKs, the CLI's lazy command loading;
* no folder holds more than :data:`MAX_FOLDER_MODULES` modules.

Run this file with ``-s`` to print the current counts.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = "skilldeck"
MAX_FUNCTION_IMPORTS = 25
MAX_FOLDER_MODULES = 12
#: the house sizes ("a module ~400 lines; a function ~50"); a function's body is
#: counted without its docstring, with a little slack for a long SQL or table
MAX_MODULE_LINES = 400
MAX_FUNCTION_BODY_LINES = 60
INTERFACES = ("cli", "mcp", "integrations", "web")
#: layer → the layers it must never import
FORBIDDEN: dict[str, tuple[str, ...]] = {
    "skills": ("agent", "tools", "llm", "service", *INTERFACES),
    "tools": ("agent", "service", *INTERFACES),
    "llm": ("agent", "service", *INTERFACES),
    "agent": ("service", *INTERFACES),
    "service": INTERFACES,
    "bottom": ("skills", "agent", "tools", "llm", "service", *INTERFACES),
}
BOTTOM_MODULES = {"config", "errors", "trust", "sandbox", "settings"}


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    line: int
    function_level: bool
    marked: bool  # a ``# lazy:`` comment on the import's first line


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted((SRC / PACKAGE).rglob("*.py"))}


def layer(module: str) -> str | None:
    """The layer of a skilldeck module (None: the package root, compat, bundled…)."""
    parts = module.split(".")
    if len(parts) < 2:
        return None
    top = parts[1]
    if top in FORBIDDEN or top in ("agent", *INTERFACES):
        return top
    if top in BOTTOM_MODULES or top.startswith("_"):
        return "bottom"
    return None


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST, in_function: bool = False) -> Iterator[tuple[ast.stmt, bool]]:
    """Every import statement with whether it is inside a function; the bodies of
    ``if TYPE_CHECKING:`` are skipped (their ``else`` is not)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node, in_function
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                yield from _imports(ast.Module(body=[child], type_ignores=[]), in_function)
        else:
            nested = in_function or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            yield from _imports(node, nested)


def _targets(node: ast.stmt, source: str, is_package: bool) -> list[str]:
    """The skilldeck modules one import statement loads (a ``from`` import of a
    submodule counts as that submodule)."""
    known = modules()
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == PACKAGE]
    assert isinstance(node, ast.ImportFrom)
    base = node.module or ""
    if node.level:
        anchor = source.split(".")
        anchor = anchor if is_package else anchor[:-1]
        anchor = anchor[: len(anchor) - (node.level - 1)]
        base = ".".join([*anchor, base] if base else anchor)
    if base.split(".")[0] != PACKAGE:
        return []
    found = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in known]
    return found if len(found) == len(node.names) else [*found, base]


@cache
def edges() -> tuple[Edge, ...]:
    out: list[Edge] = []
    for source, path in modules().items():
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        tree = ast.parse(text, filename=str(path))
        for node, in_function in _imports(tree):
            marked = "# lazy:" in lines[node.lineno - 1]
            for target in _targets(node, source, path.name == "__init__.py"):
                if target != source:
                    out.append(Edge(source, target, node.lineno, in_function, marked))
    return tuple(out)


def cycles() -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    graph: dict[str, set[str]] = defaultdict(set)
    for e in edges():
        graph[e.source].add(e.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
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
                    found.append(sorted(component))
    return sorted(found)


def function_level() -> list[Edge]:
    return [e for e in edges() if e.function_level]


def folder_sizes() -> dict[str, int]:
    """Folder → how many modules it holds (``__init__`` not counted)."""
    sizes: dict[str, int] = defaultdict(int)
    for path in modules().values():
        if path.name != "__init__.py":
            sizes[str(path.parent.relative_to(SRC))] += 1
    return dict(sizes)


def _where(e: Edge) -> str:
    return f"{e.source}:{e.line} -> {e.target}"


def test_the_graph_sees_the_package() -> None:
    """Guards the test itself: the parser finds modules and both kinds of imports."""
    assert len(modules()) > 50
    assert any(not e.function_level for e in edges())
    assert {layer(m) for m in modules()} >= {"skills", "agent", "tools", "llm", "cli", "bottom"}


@pytest.mark.parametrize("lower", sorted(FORBIDDEN))
def test_lower_layers_never_import_upper_ones(lower: str) -> None:
    bad = [
        _where(e)
        for e in edges()
        if layer(e.source) == lower and layer(e.target) in FORBIDDEN[lower]
    ]
    assert not bad, f"{lower} imports a layer above it:\n" + "\n".join(bad)


def test_no_import_cycles() -> None:
    found = cycles()
    assert not found, f"{len(found)} import cycle(s):\n" + "\n".join(" <-> ".join(c) for c in found)


def test_function_level_imports_are_few() -> None:
    found = function_level()
    assert len(found) <= MAX_FUNCTION_IMPORTS, (
        f"{len(found)} function-level imports of skilldeck modules "
        f"(at most {MAX_FUNCTION_IMPORTS}):\n" + "\n".join(map(_where, found))
    )


def test_function_level_imports_say_why() -> None:
    unmarked = [_where(e) for e in function_level() if not e.marked]
    assert not unmarked, "function-level imports without a `# lazy:` comment:\n" + "\n".join(
        unmarked
    )


def test_no_folder_holds_more_than_twelve_modules() -> None:
    big = {k: v for k, v in folder_sizes().items() if v > MAX_FOLDER_MODULES}
    assert not big, f"folders over {MAX_FOLDER_MODULES} modules: {big}"


def test_no_module_is_over_the_house_size() -> None:
    long = {
        name: n
        for name, path in modules().items()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert not long, f"modules over {MAX_MODULE_LINES} lines (split by responsibility): {long}"


def _body_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    body = node.body
    if len(body) > 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    return (node.end_lineno or node.lineno) - body[0].lineno + 1


def test_no_function_is_over_the_house_size() -> None:
    long = [
        f"{name}:{node.lineno} {node.name} ({_body_lines(node)} lines)"
        for name, path in modules().items()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and _body_lines(node) > MAX_FUNCTION_BODY_LINES
    ]
    assert not long, "functions over the house size:\n" + "\n".join(long)


def test_print_counts() -> None:
    """The figures the issue's closing note asks for (``pytest -s`` shows them)."""
    sizes = folder_sizes()
    biggest = max(sizes, key=lambda k: sizes[k])
    print(
        f"\ncycles: {len(cycles())}; function-level imports: {len(function_level())} "
        f"({sum(not e.marked for e in function_level())} unmarked); "
        f"biggest folder: {biggest} ({sizes[biggest]} modules)"
    )
    for component in cycles():
        print("  cycle: " + " <-> ".join(component))

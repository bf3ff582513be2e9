"""docs/architecture.md is the map a newcomer reads first, so it must match the tree.

Checked mechanically, on the text (nothing is rendered):

* every source path the page cites (`` `skills/code/codeskill.py` ``, `` `agent/store/` ``,
  `` `tests/many_sessions.py` ``…, relative to ``src/skilldeck`` unless it starts with
  ``tests/``, ``bench/`` or ``docs/``) exists — a moved module cannot leave a stale row;
* every subpackage folder (one with an ``__init__.py``) is cited as `` `folder/` ``, and
  every module is cited by its path — a new one cannot stay off the map;
* the other docs and the README cite only ``.py`` files that exist, and their dotted
  ``skilldeck.…`` paths import without a DeprecationWarning (documented paths are the
  new ones; the old ones only keep working, through ``skilldeck/_moved.py``).
"""

from __future__ import annotations

import ast
import importlib
import re
import warnings
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src" / "skilldeck"
DOCS = REPO / "docs"
ARCHITECTURE = DOCS / "architecture.md"
#: folders cited relative to the repository, not to src/skilldeck
REPO_DIRS = ("tests", "bench", "docs")
#: backticked names that are not skilldeck modules (the file a code skill is written in)
NOT_SOURCE = {"skill.py"}

BACKTICKED = re.compile(r"`([^`\s]+)`")
DOTTED = re.compile(r"\bskilldeck(?:\.[A-Za-z_]\w*)+")


def source_tops() -> set[str]:
    """The names directly under src/skilldeck: a cited path starting with one is ours."""
    return {p.name for p in SRC.iterdir() if p.name != "__pycache__"}


def resolve(token: str) -> Path | None:
    """The file or folder a cited token names, or None when it is not a source path."""
    token = token.removeprefix("src/skilldeck/")
    first = token.split("/", 1)[0]
    if first in REPO_DIRS and "/" in token:
        return REPO / token
    if "/" in token and first in source_tops():
        return SRC / token
    if "/" not in token and token.endswith(".py") and token not in NOT_SOURCE:
        return SRC / token
    return None


@cache
def architecture() -> str:
    return ARCHITECTURE.read_text(encoding="utf-8")


def cited(text: str) -> set[str]:
    return set(BACKTICKED.findall(text))


def layer_picture(text: str) -> str:
    """The first fenced block: the layer diagram, whose names are not backticked."""
    match = re.search(r"```\n(.*?)```", text, flags=re.DOTALL)
    assert match, "docs/architecture.md has lost its layer picture"
    return match.group(1)


def test_every_path_the_page_cites_exists() -> None:
    stale = sorted(
        token
        for token in cited(architecture())
        if (path := resolve(token)) is not None and not path.exists()
    )
    assert not stale, f"docs/architecture.md cites paths that do not exist: {stale}"


def test_the_layer_picture_names_existing_folders_and_modules() -> None:
    picture = layer_picture(architecture())
    names = re.findall(r"(?<![\w.])(\w+/|\w+\.py|_\w+)", picture)
    missing = [n for n in names if not (SRC / n).exists() and not (SRC / f"{n}.py").exists()]
    assert not missing, f"the layer picture names what is not in src/skilldeck: {missing}"


def subpackages() -> list[str]:
    return sorted(
        p.parent.relative_to(SRC).as_posix() + "/"
        for p in SRC.rglob("__init__.py")
        if p.parent != SRC and "__pycache__" not in p.parts
    )


def test_every_subpackage_folder_is_on_the_map() -> None:
    tokens = cited(architecture())
    missing = [folder for folder in subpackages() if folder not in tokens]
    assert not missing, (
        f"docs/architecture.md does not mention these subpackages (cite them as `folder/` "
        f"with what they are for): {missing}"
    )


def test_every_module_is_on_the_map() -> None:
    tokens = cited(architecture())
    picture = layer_picture(architecture())
    missing = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC)
        if rel.parts[0] == "bundled" or (path.name == "__init__.py" and len(rel.parts) > 1):
            continue
        in_picture = len(rel.parts) == 1 and re.search(rf"\b{path.stem}\b", picture)
        if rel.as_posix() not in tokens and not in_picture:
            missing.append(rel.as_posix())
    assert not missing, f"docs/architecture.md has no row for these modules: {missing}"


def test_every_subpackage_facade_says_what_it_is_for() -> None:
    silent = []
    for folder in subpackages():
        init = SRC / folder / "__init__.py"
        if not ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))):
            silent.append(folder)
    assert not silent, f"these subpackages' __init__ has no docstring: {silent}"


def other_docs() -> list[Path]:
    return [REPO / "README.md", *sorted(p for p in DOCS.glob("*.md") if p != ARCHITECTURE)]


@pytest.mark.parametrize("doc", other_docs(), ids=lambda p: p.name)
def test_other_docs_cite_existing_modules(doc: Path) -> None:
    stale = sorted(
        token
        for token in cited(doc.read_text(encoding="utf-8"))
        if "/" in token  # a bare name (`fizzbuzz.py`) may be an example's file
        and token.endswith(".py")
        and (path := resolve(token)) is not None
        and not path.exists()
    )
    assert not stale, f"{doc.name} cites modules that do not exist: {stale}"


def import_state(dotted: str) -> str:
    """``ok`` (a module, or an attribute of one, at its current path), ``deprecated``
    (an old path that still imports through ``_moved.py``), ``optional`` (needs an
    extra that is not installed) or ``missing``."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        try:
            importlib.import_module(dotted)
            return "ok"
        except DeprecationWarning:
            return "deprecated"
        except ModuleNotFoundError as exc:
            if exc.name is not None and not exc.name.startswith("skilldeck"):
                return "optional"
        module, _, attribute = dotted.rpartition(".")
        try:
            found = hasattr(importlib.import_module(module), attribute)
        except DeprecationWarning:
            return "deprecated"
        except ImportError:
            return "missing"
        return "ok" if found else "missing"


def dotted_paths(text: str) -> set[str]:
    # a format tag such as "skilldeck.manifest/1" is not a module path
    return {m for m in DOTTED.findall(text) if not text.split(m, 1)[1].startswith("/")}


@pytest.mark.parametrize("doc", other_docs(), ids=lambda p: p.name)
def test_documented_dotted_paths_are_the_new_ones(doc: Path) -> None:
    names = dotted_paths(doc.read_text(encoding="utf-8"))
    stale = {n: s for n in sorted(names) if (s := import_state(n)) in ("deprecated", "missing")}
    assert not stale, f"{doc.name}: these paths are old or do not import: {stale}"


def test_architecture_dotted_paths_import() -> None:
    """The page cites some old paths on purpose (what ``_moved.py`` keeps working):
    they must still import, with their DeprecationWarning."""
    names = dotted_paths(architecture())
    missing = sorted(n for n in names if import_state(n) == "missing")
    assert not missing, f"docs/architecture.md: these paths do not import: {missing}"

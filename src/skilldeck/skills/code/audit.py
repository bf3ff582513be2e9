"""A static (AST) audit of a code skill before skilldeck imports it.

Importing ``skill.py`` runs its code with skilldeck's own rights, so the audit looks
for the calls that turn a skill into something other than "orchestrate tools":

======  ==================  ==============================================================
code    rule                flagged
======  ==================  ==============================================================
SDX00   syntax-error        the file does not parse (it cannot be audited)
SDX01   os-exec             ``os.system``, ``os.popen``, ``os.exec*``, ``os.spawn*``,
                            ``os.fork``, ``os.posix_spawn*`` (also via ``from os import``)
SDX02   subprocess          ``import subprocess``/``multiprocessing``, ``pty``,
                            ``asyncio.create_subprocess_*``
SDX03   socket              ``import socket`` (raw network access)
SDX04   eval-exec           ``eval``, ``exec``, ``compile`` of source text
SDX05   ctypes              ``import ctypes`` / ``cffi`` (native code)
SDX06   dynamic-import      ``importlib``, ``__import__`` (hides what is imported)
SDX07   open-outside        ``open``/``io.open``/``os.open``/``Path(…).read_text()``… on a
                            literal absolute path or one climbing out with ``..``, or
                            ``open`` of a computed path
SDX08   encoding-cookie     a ``# coding:`` other than UTF-8 (``utf-7`` hides code from
                            readers; the audit decodes as Python does)
SDX09   bytecode            ``.pyc``/``.pyo`` without its source (never loaded; refused)
SDX10   deserialize         ``pickle``, ``marshal``, ``shelve``, ``dill`` (run code on load)
======  ==================  ==============================================================

Dangerous names are flagged where they are *referenced*, not only called, so
``f = os.system``, ``functools.partial(os.system, …)`` and ``map(exec, …)`` count;
``posix``/``nt`` count as ``os``, ``builtins.exec`` as ``exec``, ``sys.modules`` and
``runpy`` as dynamic imports. Every ``.py`` file is read, hidden folders, ``.venv``
and ``__pycache__`` included; ``scripts/`` too when the folder is a code skill
(``skill.py``: its scripts are importable).

The audit is **advice, not a control**: no AST audit sees through code built at run
time. What contains an untrusted code skill is that it runs out of process in the
sandbox (``skills/code/codehost.py``); the findings are shown to help a human decide
whether to trust it by content (``skilldeck skills trust``). A skill that needs a
shell or files should go through ``ctx.tools`` (``Bash``, ``Read``…), where the
permission layer and the sandbox apply.
"""

from __future__ import annotations

import ast
import io
import os
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "RULES",
    "Finding",
    "audit_file",
    "audit_path",
    "audit_skill",
    "audit_source",
    "python_files",
]

RULES: dict[str, str] = {
    "SDX00": "syntax-error",
    "SDX01": "os-exec",
    "SDX02": "subprocess",
    "SDX03": "socket",
    "SDX04": "eval-exec",
    "SDX05": "ctypes",
    "SDX06": "dynamic-import",
    "SDX07": "open-outside",
    "SDX08": "encoding-cookie",
    "SDX09": "bytecode",
    "SDX10": "deserialize",
}

_MODULE_RULES = {
    "subprocess": "SDX02",
    "multiprocessing": "SDX02",
    "pty": "SDX02",
    "socket": "SDX03",
    "ctypes": "SDX05",
    "cffi": "SDX05",
    "importlib": "SDX06",
    "runpy": "SDX06",
    "pickle": "SDX10",
    "marshal": "SDX10",
    "shelve": "SDX10",
    "dill": "SDX10",
    "cloudpickle": "SDX10",
}
_OS_NAMES = frozenset({"os", "posix", "nt"})
_OS_EXEC_PREFIXES = ("system", "popen", "exec", "spawn", "fork", "posix_spawn")
_BUILTIN_RULES = {"eval": "SDX04", "exec": "SDX04", "compile": "SDX04", "__import__": "SDX06"}
_OPENERS = {"open", "io.open", "os.open", "codecs.open", "builtins.open"}
_PATH_METHODS = frozenset(
    {"open", "read_text", "read_bytes", "write_text", "write_bytes", "unlink", "touch"}
)
_SKIP_DIRS = frozenset({".git"})


@dataclass(frozen=True)
class Finding:
    """One audit finding: what, where (1-based line), and its stable code."""

    code: str
    message: str
    path: Path
    line: int
    col: int = 0

    @property
    def rule(self) -> str:
        return RULES[self.code]

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "rule": self.rule,
            "message": self.message,
            "path": str(self.path),
            "line": self.line,
            "col": self.col,
        }

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col}: {self.code} {self.rule}: {self.message}"


def _dotted(node: ast.AST) -> str | None:
    """``os.path.join`` for an Attribute/Name chain, else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _literal_prefix(node: ast.AST) -> str | None:
    """The literal text of a str constant, or the leading literal of an f-string."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr) and node.values:
        first = node.values[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            return first.value
    return None


def _escapes(path_text: str) -> bool:
    """A literal path that points outside the skill folder: absolute, home, or ``..``."""
    if not path_text:
        return False
    if path_text.startswith(("/", "\\", "~")) or (len(path_text) > 1 and path_text[1] == ":"):
        return True
    normalised = os.path.normpath(path_text.replace("\\", "/"))
    return normalised == ".." or normalised.startswith("../")


class _Auditor(ast.NodeVisitor):
    def __init__(self, path: Path) -> None:
        self.path = path
        self.findings: list[Finding] = []
        #: local names bound to modules or names (``import os as o`` → o: os,
        #: ``from os import system as s`` → s: os.system)
        self.aliases: dict[str, str] = {}
        #: nodes already reported (a call's function is not reported again as a use)
        self.seen: set[int] = set()

    def flag(self, node: ast.AST, code: str, message: str) -> None:
        line = getattr(node, "lineno", 0)
        col = getattr(node, "col_offset", 0)
        self.findings.append(Finding(code, message, self.path, line, col))

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            root = alias.name.split(".")[0]
            self.aliases[(alias.asname or alias.name).split(".")[0]] = root
            if root in _MODULE_RULES:
                self.flag(node, _MODULE_RULES[root], f"imports `{alias.name}`")

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        root = module.split(".")[0]
        if node.level == 0 and root in _MODULE_RULES:
            self.flag(node, _MODULE_RULES[root], f"imports from `{module}`")
        for alias in node.names:
            dotted = self._danger(f"{root}.{alias.name}") if node.level == 0 else None
            if dotted is not None:
                self.flag(node, dotted[0], f"imports `{root}.{alias.name}`")
            self.aliases[alias.asname or alias.name] = f"{module}.{alias.name}"
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        name = _dotted(node.func)
        if name is not None:
            self.seen.add(id(node.func))
            self._check_named_call(node, self._canonical(name))
        self._check_path_method(node)
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self._check_reference(node)
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        self._check_reference(node)

    def _check_reference(self, node: ast.Attribute | ast.Name) -> None:
        """A dangerous name used as a value: ``f = os.system``, ``map(exec, …)``."""
        if id(node) in self.seen or not isinstance(node.ctx, ast.Load):
            return
        name = _dotted(node)
        found = self._danger(self._canonical(name)) if name else None
        if found is not None:
            self.seen.add(id(node))
            self.flag(node, found[0], f"refers to `{found[1]}` (not only by calling it)")

    def _canonical(self, name: str) -> str:
        head, _, rest = name.partition(".")
        real = self.aliases.get(head, head)
        full = f"{real}.{rest}" if rest else real
        return full.removeprefix("builtins.")

    @staticmethod
    def _danger(name: str) -> tuple[str, str] | None:
        """(code, canonical name) when ``name`` is a dangerous callable or table."""
        head, _, attr = name.rpartition(".")
        if name in _BUILTIN_RULES:
            return _BUILTIN_RULES[name], name
        if head in _OS_NAMES and attr.startswith(_OS_EXEC_PREFIXES):
            return "SDX01", name
        if head.startswith("asyncio") and "subprocess" in attr:
            return "SDX02", name
        if name == "sys.modules":
            return "SDX06", name
        return None

    def _check_named_call(self, node: ast.Call, name: str) -> None:
        found = self._danger(name)
        if found is not None:
            verb = "runs programs" if found[0] == "SDX01" else RULES[found[0]]
            self.flag(node, found[0], f"calls `{name}()` ({verb})")
        elif name == "getattr" and len(node.args) >= 2:
            attr = _literal_prefix(node.args[1])
            if attr and (attr in _BUILTIN_RULES or attr.startswith(_OS_EXEC_PREFIXES)):
                code = _BUILTIN_RULES.get(attr, "SDX01")
                self.flag(node, code, f"looks up `{attr}` dynamically with getattr()")
        elif name in _OPENERS and node.args:
            self._check_path_literal(node, node.args[0], name)

    def _check_path_method(self, node: ast.Call) -> None:
        func = node.func
        if not (isinstance(func, ast.Attribute) and func.attr in _PATH_METHODS):
            return
        target = func.value
        if isinstance(target, ast.Call) and target.args:
            ctor = _dotted(target.func) or ""
            if ctor.split(".")[-1] in {"Path", "PurePath", "PosixPath"}:
                self._check_path_literal(node, target.args[0], f"Path(…).{func.attr}")

    def _check_path_literal(self, node: ast.Call, arg: ast.AST, how: str) -> None:
        text = _literal_prefix(arg)
        if text is not None and _escapes(text):
            self.flag(node, "SDX07", f"`{how}` on {text!r}, outside the skill folder")
        elif text is None and how in _OPENERS:
            self.flag(node, "SDX07", f"`{how}` on a computed path (use ctx.tools Read/Write)")


def audit_source(source: str, *, path: Path) -> list[Finding]:
    """Audit Python ``source`` (reported as ``path``); findings sorted by line."""
    try:
        tree = ast.parse(source, filename=str(path))
    except SyntaxError as e:
        return [Finding("SDX00", f"does not parse: {e.msg}", path, e.lineno or 0, e.offset or 0)]
    auditor = _Auditor(path)
    auditor.visit(tree)
    return sorted(auditor.findings, key=lambda f: (f.line, f.col, f.code))


def _decode(data: bytes) -> tuple[str, str]:
    """Source text as Python decodes it (PEP 263 cookie or BOM), and the encoding."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode(encoding, errors="replace"), encoding
    except (SyntaxError, LookupError):
        return data.decode("utf-8", errors="replace"), "utf-8"


def audit_file(path: Path) -> list[Finding]:
    """Audit one ``.py`` file, decoded the way the interpreter would decode it."""
    try:
        data = path.read_bytes()
    except OSError as e:  # a read error after open (/proc/self/mem) names no file
        raise OSError(e.errno, e.strerror or str(e), str(path)) from e
    source, encoding = _decode(data)
    findings = audit_source(source, path=path)
    if encoding not in ("utf-8", "utf-8-sig"):
        message = f"declares `coding: {encoding}`; readers and tools see other text than Python"
        findings.insert(0, Finding("SDX08", message, path, 1))
    return findings


def _walk(folder: Path, include_scripts: bool) -> Iterator[tuple[Path, str]]:
    """(folder, file name) for every file below ``folder``, iteratively, no symlinks."""
    code_skill = (folder / "skill.py").is_file()
    stack = [folder]
    while stack:
        here = stack.pop()
        try:
            with os.scandir(here) as listing:  # closed even when reading fails
                entries = sorted(listing, key=lambda e: e.name, reverse=True)
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                skip_scripts = entry.name == "scripts" and (here / "SKILL.md").exists()
                if entry.name not in _SKIP_DIRS and (
                    include_scripts or code_skill or not skip_scripts
                ):
                    stack.append(Path(entry.path))
            elif entry.is_file(follow_symlinks=False):
                yield here, entry.name


def python_files(folder: Path, *, include_scripts: bool = False) -> Iterator[Path]:
    """The ``.py`` files an audit of ``folder`` reads: all of them, hidden folders,
    ``.venv`` and ``__pycache__`` included; ``scripts/`` of a prompt or script skill
    only with ``include_scripts`` (a code skill's scripts are importable: always)."""
    found = [here / name for here, name in _walk(folder, include_scripts) if name.endswith(".py")]
    yield from sorted(found)


def _cached(here: Path, name: str) -> bool:
    """A ``__pycache__`` entry whose source exists (ignored by skilldeck's importer)."""
    return here.name == "__pycache__" and (here.parent / f"{name.split('.')[0]}.py").is_file()


def audit_skill(folder: Path, *, include_scripts: bool = False) -> list[Finding]:
    """Audit every Python file of a skill, and report any bytecode it ships."""
    findings: list[Finding] = []
    for here, name in sorted(_walk(folder, include_scripts)):
        file = here / name
        if name.endswith(".py"):
            findings.extend(audit_file(file))
        elif name.endswith((".pyc", ".pyo")) and not _cached(here, name):
            message = "Python bytecode without its source (refused when run as a code skill)"
            findings.append(Finding("SDX09", message, file, 0))
    return findings


def audit_path(path: Path, *, include_scripts: bool = False) -> list[Finding]:
    """Audit one ``.py`` file, a skill folder, or a whole tree of them."""
    if path.is_file():
        return audit_file(path)
    return audit_skill(path, include_scripts=include_scripts)

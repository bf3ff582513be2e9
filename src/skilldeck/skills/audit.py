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
                            literal absolute path or one climbing out with ``..``
======  ==================  ==============================================================

A finding is not proof of malice — ``getattr`` tricks evade any AST audit — it is a
reason for a human to look before trusting the skill (``skills.trusted``). A skill
that needs a shell or files should go through ``ctx.tools`` (``Bash``, ``Read``…),
where the permission layer and the sandbox apply.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["RULES", "Finding", "audit_path", "audit_skill", "audit_source", "python_files"]

RULES: dict[str, str] = {
    "SDX00": "syntax-error",
    "SDX01": "os-exec",
    "SDX02": "subprocess",
    "SDX03": "socket",
    "SDX04": "eval-exec",
    "SDX05": "ctypes",
    "SDX06": "dynamic-import",
    "SDX07": "open-outside",
}

_MODULE_RULES = {
    "subprocess": "SDX02",
    "multiprocessing": "SDX02",
    "pty": "SDX02",
    "socket": "SDX03",
    "ctypes": "SDX05",
    "cffi": "SDX05",
    "importlib": "SDX06",
}
_OS_EXEC_PREFIXES = ("system", "popen", "exec", "spawn", "fork", "posix_spawn")
_BUILTIN_RULES = {"eval": "SDX04", "exec": "SDX04", "compile": "SDX04", "__import__": "SDX06"}
_OPENERS = {"open", "io.open", "os.open", "codecs.open", "builtins.open"}
_PATH_METHODS = frozenset(
    {"open", "read_text", "read_bytes", "write_text", "write_bytes", "unlink", "touch"}
)
_SKIP_DIRS = frozenset({"__pycache__", ".git", "node_modules", ".venv", "venv"})


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
        #: local names bound to modules we care about (``import os as o`` → o: os)
        self.aliases: dict[str, str] = {}

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
            if root == "os" and alias.name.startswith(_OS_EXEC_PREFIXES):
                self.flag(node, "SDX01", f"imports `os.{alias.name}` (runs programs)")
            if root == "builtins" and alias.name in _BUILTIN_RULES:
                self.flag(node, _BUILTIN_RULES[alias.name], f"imports `builtins.{alias.name}`")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        name = _dotted(node.func)
        if name is not None:
            self._check_named_call(node, self._canonical(name))
        self._check_path_method(node)
        self.generic_visit(node)

    def _canonical(self, name: str) -> str:
        head, _, rest = name.partition(".")
        real = self.aliases.get(head, head)
        return f"{real}.{rest}" if rest else real

    def _check_named_call(self, node: ast.Call, name: str) -> None:
        if name in _BUILTIN_RULES:
            self.flag(node, _BUILTIN_RULES[name], f"calls `{name}()`")
        elif name.startswith("os.") and name[3:].startswith(_OS_EXEC_PREFIXES):
            self.flag(node, "SDX01", f"calls `{name}()` (runs programs)")
        elif name.startswith("asyncio.") and "subprocess" in name:
            self.flag(node, "SDX02", f"calls `{name}()`")
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


def audit_source(source: str, *, path: Path) -> list[Finding]:
    """Audit Python ``source`` (reported as ``path``); findings sorted by line."""
    try:
        tree = ast.parse(source, filename=str(path))
    except SyntaxError as e:
        return [Finding("SDX00", f"does not parse: {e.msg}", path, e.lineno or 0, e.offset or 0)]
    auditor = _Auditor(path)
    auditor.visit(tree)
    return sorted(auditor.findings, key=lambda f: (f.line, f.col, f.code))


def python_files(folder: Path, *, include_scripts: bool = False) -> Iterator[Path]:
    """The ``.py`` files an audit of ``folder`` reads, in a stable order."""
    for dirpath, dirnames, filenames in os.walk(folder):
        here = Path(dirpath)
        dirnames[:] = sorted(
            d
            for d in dirnames
            if d not in _SKIP_DIRS
            and not d.startswith(".")
            and (include_scripts or not (d == "scripts" and (here / "SKILL.md").exists()))
        )
        for name in sorted(filenames):
            if name.endswith(".py"):
                yield here / name


def audit_skill(folder: Path, *, include_scripts: bool = False) -> list[Finding]:
    """Audit the Python files a code skill imports: every ``.py`` under ``folder``
    except its ``scripts/`` (scripts run as sandboxed subprocesses, never imported)."""
    findings: list[Finding] = []
    for file in python_files(folder, include_scripts=include_scripts):
        source = file.read_text(encoding="utf-8", errors="replace")
        findings.extend(audit_source(source, path=file))
    return findings


def audit_path(path: Path, *, include_scripts: bool = False) -> list[Finding]:
    """Audit one ``.py`` file, a skill folder, or a whole tree of them."""
    if path.is_file():
        return audit_source(path.read_text(encoding="utf-8", errors="replace"), path=path)
    return audit_skill(path, include_scripts=include_scripts)

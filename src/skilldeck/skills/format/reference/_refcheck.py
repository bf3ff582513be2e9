"""Strict mode's last step: would the spec's reference validator even read this file?

skills-ref reads a SKILL.md differently from skilldeck's parser: it needs ``---`` as
the very first characters (a BOM defeats it), it ends the frontmatter at the first
``---`` *anywhere* (even inside a description), it decodes the whole file as UTF-8,
and its YAML parser (strictyaml) refuses flow collections, tags, anchors, duplicate
keys and inconsistently indented sibling mappings. Lenient skilldeck accepts all of
that; strict mode reports each as an error (SD19x) with the line, so "valid under
--strict" means "valid for skills-ref too".
"""

from __future__ import annotations

from pathlib import Path

from skilldeck.skills.format._rules import RULES
from skilldeck.skills.format.parse import ParsedFrontmatter
from skilldeck.skills.format.reference._refmarks import ReferenceYAMLError
from skilldeck.skills.format.reference._refyaml import load_reference_yaml
from skilldeck.skills.model.diagnostics import Diagnostic

__all__ = ["reference_diagnostics"]

_HINTS = {
    "flow mapping": "write lists as indented `- item` lines and quote values that start "
    "with `[` or `{`",
    "tag tokens": "remove the `!tag`, or quote the value",
    "anchor token": "remove the `&anchor`/`*alias`, or quote the value",
    "indentation inconsistent": "indent every nested mapping under this key by the same "
    "number of spaces",
}


def reference_diagnostics(parsed: ParsedFrontmatter) -> list[Diagnostic]:
    """Errors for what skills-ref cannot read in ``parsed.path`` (empty when none)."""
    path = parsed.path
    raw = path.read_bytes()
    try:
        content = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw.count(b"\n", 0, e.start) + 1
        return [_error("SD193", f"byte {e.start} is not valid UTF-8 ({e.reason}); the "
                       "reference validator cannot read the file. Save it as UTF-8.",
                       path, line)]  # fmt: skip
    content = content.replace("\r\n", "\n").replace("\r", "\n")  # as read_text() does
    if not content.startswith("---"):
        return [_error("SD191", "the file starts with a byte-order mark; the reference "
                       "validator needs `---` as the very first characters. Save it as "
                       "UTF-8 without BOM.", path, 1)]  # fmt: skip
    cut = content.find("---", 3)
    cut_line = content.count("\n", 0, cut) + 1
    head = raw[: parsed.body_offset]
    closing_line = head.count(b"\n") + (0 if head.endswith(b"\n") else 1)
    if cut_line < closing_line:
        return [_error("SD192", "this line contains `---`, which the reference validator "
                       "takes as the end of the frontmatter; reword it (e.g. use an em "
                       "dash).", path, cut_line)]  # fmt: skip
    try:
        load_reference_yaml(content[3:cut])
    except ReferenceYAMLError as e:
        message = str(e)
        if "Duplicate key" in message and parsed.duplicate_keys:
            return []  # already reported as SD152 with a clearer message
        line = 1 + (e.line or 0)
        return [_error("SD190", _summary(message), path, line)]
    except AttributeError:  # strictyaml 1.7 crashes on control characters
        return [_error("SD190", "the frontmatter contains control characters the reference "
                       "validator cannot read; remove them.", path, 1)]  # fmt: skip
    return []


def _summary(message: str) -> str:
    """strictyaml's multi-line message → its problem sentence plus how to fix it."""
    problems = [ln for ln in message.splitlines() if ln and not ln.startswith(" ")]
    problem = problems[-1] if problems else message
    hint = next((h for k, h in _HINTS.items() if k in problem), None)
    text = f"the reference validator's YAML parser (strictyaml) rejects this: {problem}"
    return f"{text}; {hint}." if hint else f"{text}."


def _error(code: str, message: str, path: Path, line: int) -> Diagnostic:
    return Diagnostic(code, RULES[code], message, path=path, line=line)

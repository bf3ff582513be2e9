"""Shared by the hardening tests (unit and stress): hostile SKILL.md builders and the
one property every parse must satisfy."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from skilldeck.errors import SkilldeckError, SkillParseError
from skilldeck.skills.format import ParsedFrontmatter, load_skill, parse_skill_md

GOOD_FRONTMATTER = "name: {name}\ndescription: A well-formed skill used as a control.\n"


def write_skill(folder: Path, content: bytes | str, *, name: str = "SKILL.md") -> Path:
    """Write ``content`` as ``folder/SKILL.md`` (creating the folder); returns the file."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    data = content.encode("utf-8") if isinstance(content, str) else content
    path.write_bytes(data)
    return path


def good_skill(root: Path, name: str) -> Path:
    body = f"---\n{GOOD_FRONTMATTER.format(name=name)}---\n\n# {name}\n\nDo the thing.\n"
    return write_skill(root / name, body)


def check_parse(path: Path, *, tolerate_known: bool = True) -> ParsedFrontmatter | None:
    """The parser contract on any file: a ParsedFrontmatter, or a SkillParseError with a
    stable SD0xx code and the path; ``load_skill`` then never raises at all.

    A crash matching :data:`KNOWN_BUGS` is counted in :data:`KNOWN_BUG_HITS` instead of
    failing (each has its own strict xfail test); any other exception fails.
    """
    try:
        return _check_parse(path)
    except Exception as e:
        key = known_bug(e) if tolerate_known else None
        if key is None:
            raise
        KNOWN_BUG_HITS[key] = KNOWN_BUG_HITS.get(key, 0) + 1
        return None


def _check_parse(path: Path) -> ParsedFrontmatter | None:
    parsed: ParsedFrontmatter | None
    try:
        parsed = parse_skill_md(path)
    except SkillParseError as e:
        assert e.code.startswith("SD0"), e.code
        assert e.path == path
        parsed = None
    else:
        assert isinstance(parsed.data, dict)
        assert all(isinstance(k, str) for k in parsed.data)
        assert 0 <= parsed.body_offset <= path.stat().st_size
    for strict in (False, True):
        skill, diagnostics = load_skill(path, strict=strict)
        if skill is None:
            assert any(d.is_error for d in diagnostics), diagnostics
        else:
            assert skill.name and skill.description
            assert isinstance(skill.body, str)  # the lazily read body never raises either
    return parsed


#: exceptions that escape the parser today, by signature. Each has a strict xfail
#: regression test in tests/unit/hardening; delete an entry when its bug is fixed.
#: crash signatures the fuzzers tolerate while a fix is pending (each with a strict
#: xfail test); empty now: the last ones (G1–G6 in docs/security.md) were fixed.
KNOWN_BUGS: dict[str, str] = {}
KNOWN_BUG_HITS: dict[str, int] = {}


def known_bug(error: BaseException) -> str | None:
    """The known bug ``error`` is an instance of, or None (a new bug: fail)."""
    text = f"{type(error).__name__}: {error}"
    return next((key for key in KNOWN_BUGS if key in text), None)


def only_skilldeck_errors(fn: Callable[[], Any]) -> Any:
    """Run ``fn``; anything raised must be a SkilldeckError (re-raised for pytest)."""
    try:
        return fn()
    except SkilldeckError:
        return None


def run_with_deadline(fn: Callable[[], Any], seconds: float) -> tuple[bool, Any]:
    """Run ``fn`` in a daemon thread; (finished, result). A hang is reported, not waited
    for, so a test can fail with a message instead of freezing the suite."""
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["value"] = fn()
        except BaseException as e:  # handed back to the caller
            box["error"] = e

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        return False, None
    if "error" in box:
        raise box["error"]
    return True, box.get("value")


def unblock_fifo(path: Path) -> None:
    """Open a FIFO for writing and close it, so a reader blocked on it gets EOF."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    except OSError:
        return
    os.close(fd)


def billion_laughs(levels: int = 9, width: int = 9) -> str:
    """YAML whose aliases expand to ``width ** levels`` scalars."""
    lines = ["a0: &a0 [" + ", ".join(['"lol"'] * width) + "]"]
    for i in range(1, levels + 1):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


#: frontmatter texts that must each be refused or bounded, by name
HOSTILE_FRONTMATTER: dict[str, str] = {
    "billion-laughs": "name: x\ndescription: y\n" + billion_laughs(),
    "recursive-alias": "name: x\ndescription: &d [*d]\n",
    "deep-flow-list": "name: x\ndescription: y\nz: " + "[" * 50_000 + "]" * 50_000 + "\n",
    "deep-flow-map": "name: x\ndescription: y\nz: " + "{a: " * 3_000 + "1" + "}" * 3_000 + "\n",
    "deep-block-map": "name: x\ndescription: y\n" + "".join(" " * i + "k:\n" for i in range(600)),
    "python-tag": "name: x\ndescription: !!python/object/apply:os.system ['touch PWNED']\n",
    "python-name": "name: !!python/name:os.system\ndescription: y\n",
    "huge-int": "name: x\ndescription: y\nversion: 1" + "0" * 6_000 + "\n",
    "nul-byte": "name: x\x00y\ndescription: y\n",
    "tab-indent": "name: x\ndescription:\n\t- y\n",
    "not-a-mapping": "- name: x\n- description: y\n",
    "scalar-doc": "just a string\n",
    "undefined-alias": "name: *nope\ndescription: y\n",
    "multi-doc": "name: x\ndescription: y\n---\nname: z\n",
    "surrogate-escape": 'name: x\ndescription: "\\ud800"\n',
    "name-list": "name: [a, b]\ndescription: y\n",
    "description-map": "name: x\ndescription: {a: b}\n",
    "unicode-controls": "name: x\u202e\u200b\ndescription: y\u0085z\u2028w\n",
}

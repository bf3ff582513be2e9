"""Frontmatter field names and skill-name rules: plain data and functions, no pydantic.

What validation needs about the *names* of things — which fields the Agent Skills
spec, Claude Code and skilldeck define, how a field's spellings fold into one, and
which skill names a path could misread — lives here, apart from the typed model
(:class:`~skilldeck.skills.model.spec.SkillMetadata`). ``skills validate`` checks a
frontmatter with these and the rule table of :mod:`skilldeck.skills.format` without
importing pydantic (``python -m bench startup``, row ``validate``); packaging,
permissions and installs check names without it too.
"""

from __future__ import annotations

import unicodedata

__all__ = [
    "CLAUDE_CODE_FIELDS",
    "KNOWN_FIELDS",
    "MAX_SAFE_NAME_BYTES",
    "SKILLDECK_FIELDS",
    "SPEC_FIELDS",
    "attribute_name",
    "call_name",
    "canonical_field",
    "is_safe_name",
    "unsafe_name_reason",
]

#: The six fields of the Agent Skills spec: the only ones strict mode allows.
SPEC_FIELDS: frozenset[str] = frozenset(
    {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
)

#: Fields Claude Code reads from SKILL.md.
CLAUDE_CODE_FIELDS: frozenset[str] = frozenset(
    {
        "when_to_use",
        "argument-hint",
        "arguments",
        "disable-model-invocation",
        "user-invocable",
        "disallowed-tools",
        "model",
        "context",
        "agent",
        "paths",
    }
)

#: skilldeck's own fields.
SKILLDECK_FIELDS: frozenset[str] = frozenset(
    {
        "version",
        "tags",
        "requires-tools",
        "forbidden-tools",
        "execution-protocol",
        "preconditions",
        "postconditions",
        "output-contract",
        "requires",
        "conflicts",
        "before",
        "after",
        "entrypoint",
        "timeout",
        "max-turns",
        "requires-bins",
        "requires-env",
        "credentials",
        "dependencies",
    }
)

KNOWN_FIELDS: frozenset[str] = SPEC_FIELDS | CLAUDE_CODE_FIELDS | SKILLDECK_FIELDS


def canonical_field(key: str) -> str:
    """``allowed_tools`` → ``allowed-tools``; ``when-to-use`` → ``when_to_use``.

    Every field is canonically kebab-case except ``when_to_use``, which Claude Code
    spells with underscores.
    """
    kebab = key.strip().replace("_", "-")
    return "when_to_use" if kebab == "when-to-use" else kebab


def attribute_name(field: str) -> str:
    """Canonical field name → python attribute (``allowed-tools`` → ``allowed_tools``)."""
    return field.replace("-", "_")


# ---- names -------------------------------------------------------------------------

#: longest skill name usable as a folder or file name (a path component is 255 bytes
#: on every common filesystem; ``.bak-<stamp>`` and ``.skill`` suffixes need room)
MAX_SAFE_NAME_BYTES = 200
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def unsafe_name_reason(name: str) -> str | None:
    """Why ``name`` cannot be a skill's name, or None when it can.

    A skill's name becomes a folder (installs), a file (``pack``), a scratch-folder
    prefix and a lock-file key, so anything a path would read as structure is refused:
    separators, ``.``/``..``, a leading dot, NUL and other control or invisible
    characters — also after NFKC, which folds ``／`` into ``/`` and ``‥`` into ``..``.
    Spec deviations that are harmless in a path (capitals, spaces) are other rules'
    warnings, not this one's.
    """
    if not name or not name.strip():
        return "it is empty"
    for form in dict.fromkeys((name, unicodedata.normalize("NFKC", name))):
        if "/" in form or "\\" in form:
            return "it contains a path separator (`/` or `\\`)"
        if form.startswith("."):
            return "it starts with `.` (`..` would leave the folder; `.x` is hidden)"
        bad = [ch for ch in form if unicodedata.category(ch) in _UNSAFE_CATEGORIES]
        if bad:
            return f"it contains the control or invisible character {bad[0]!r}"
    if name != name.strip():
        return "it starts or ends with whitespace"
    if len(name.encode("utf-8")) > MAX_SAFE_NAME_BYTES:
        return f"it is longer than {MAX_SAFE_NAME_BYTES} bytes"
    return None


def is_safe_name(name: str) -> bool:
    """Whether ``name`` may be used as a skill name, and so in a path."""
    return unsafe_name_reason(name) is None


def call_name(raw: str) -> str:
    """The skill name a ``Skill`` call means: ``"/deploy "`` → ``"deploy"``.

    The ``Skill`` tool looks skills up by this, and ``Skill(...)`` permission rules
    match it, so a rule always sees the name that is loaded.
    """
    name = raw
    while True:
        stripped = name.strip().lstrip("/")
        if stripped == name:
            return name
        name = stripped

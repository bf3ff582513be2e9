"""The frontmatter schema: Agent Skills spec fields, Claude Code fields, skilldeck's own.

``SkillMetadata`` is the normalised, typed view of a SKILL.md frontmatter that the rest
of skilldeck reads. It is deliberately lenient about *types* (YAML 1.1 turns
``version: 1.0`` into a float and ``argument-hint: [x]`` into a list; both are
normalised back to strings) because a real skill must not be dropped for that. The
*rules* (name format, lengths, unknown fields, strict mode) live in ``validate.py`` and
produce :class:`~skilldeck.skills.model.diagnostics.Diagnostic` objects with stable codes.

Both ``kebab-case`` and ``snake_case`` spellings are accepted for every field;
``FIELD_ALIASES`` maps each accepted spelling to the attribute name.
"""

from __future__ import annotations

import functools
import unicodedata
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field

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


class SkillMetadata(BaseModel):
    """Typed, normalised frontmatter. Lists are always lists of strings, strings are
    always strings; absent optional fields are ``None`` or empty."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # Agent Skills spec
    name: str
    description: str
    license: str | None = None
    compatibility: str | None = None
    metadata: dict[str, str] = Field(default_factory=dict)
    allowed_tools: list[str] = Field(default_factory=list)
    # Claude Code
    when_to_use: str | None = None
    argument_hint: str | None = None
    arguments: list[str] = Field(default_factory=list)
    disable_model_invocation: bool = False
    user_invocable: bool = True
    disallowed_tools: list[str] = Field(default_factory=list)
    model: str | None = None
    context: str | None = None
    agent: str | None = None
    paths: list[str] = Field(default_factory=list)
    # skilldeck
    version: str | None = None
    tags: list[str] = Field(default_factory=list)
    requires_tools: list[str] = Field(default_factory=list)
    forbidden_tools: list[str] = Field(default_factory=list)
    execution_protocol: list[str] = Field(default_factory=list)
    preconditions: list[str] = Field(default_factory=list)
    postconditions: list[str] = Field(default_factory=list)
    output_contract: dict[str, Any] | None = None
    requires: list[str] = Field(default_factory=list)
    conflicts: list[str] = Field(default_factory=list)
    before: list[str] = Field(default_factory=list)
    after: list[str] = Field(default_factory=list)
    entrypoint: str | None = None
    timeout: float | None = None
    max_turns: int | None = None
    requires_bins: list[str] = Field(default_factory=list)
    requires_env: list[str] = Field(default_factory=list)
    #: declared secrets: ``{"name": "GITHUB_TOKEN", "description": "…", "required": True}``
    #: each (plain dicts, so the discovery snapshot stores them as they are)
    credentials: list[dict[str, Any]] = Field(default_factory=list)
    #: packages the skill's scripts import: ``{"python": ["requests>=2"]}``
    dependencies: dict[str, list[str]] = Field(default_factory=dict)
    #: fields nobody knows, kept verbatim (canonical key → raw value) for tools and
    #: for round-tripping; their presence is a warning in lenient mode.
    extra: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def model_construct(  # type: ignore[override]  # the plugin's per-field signature
        cls, _fields_set: set[str] | None = None, **values: Any
    ) -> Self:
        """Build without validation (for data that was validated before, e.g. a cache).

        pydantic 2.14 inspects the signature of every ``default_factory`` on each
        ``model_construct`` call, about 1 ms for this model; filling the collection
        defaults here first makes rebuilding thousands of skills from a cache cheap.
        """
        if _fields_set is None:
            _fields_set = set(values)
        for name, factory in _collection_defaults(cls):
            if name not in values:
                values[name] = factory()
        return super().model_construct(_fields_set, **values)

    @property
    def forbidden(self) -> list[str]:
        """Every tool this skill forbids, from both spellings of the idea."""
        return [*self.forbidden_tools, *self.disallowed_tools]


@functools.cache
def _collection_defaults(model: type[BaseModel]) -> tuple[tuple[str, Any], ...]:
    return tuple(
        (name, info.default_factory)
        for name, info in model.model_fields.items()
        if info.default_factory is not None
    )


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

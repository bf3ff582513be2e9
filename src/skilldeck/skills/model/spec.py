"""The frontmatter schema: Agent Skills spec fields, Claude Code fields, skilldeck's own.

``SkillMetadata`` is the normalised, typed view of a SKILL.md frontmatter that the rest
of skilldeck reads. It is deliberately lenient about *types* (YAML 1.1 turns
``version: 1.0`` into a float and ``argument-hint: [x]`` into a list; both are
normalised back to strings) because a real skill must not be dropped for that. The
*rules* (name format, lengths, unknown fields, strict mode) live in ``validate.py`` and
produce :class:`~skilldeck.skills.model.diagnostics.Diagnostic` objects with stable codes.

Both ``kebab-case`` and ``snake_case`` spellings are accepted for every field
(:func:`~skilldeck.skills.model.names.canonical_field`). The field names and the
skill-name rules are in :mod:`.names`, which needs no pydantic: validation reads
them there and builds this model only for callers that read ``Skill.metadata``.
"""

from __future__ import annotations

import functools
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field

from skilldeck.skills.model.names import (
    CLAUDE_CODE_FIELDS,
    KNOWN_FIELDS,
    MAX_SAFE_NAME_BYTES,
    SKILLDECK_FIELDS,
    SPEC_FIELDS,
    attribute_name,
    call_name,
    canonical_field,
    is_safe_name,
    unsafe_name_reason,
)

#: The field-name sets and name rules live in :mod:`.names` (no pydantic); they are
#: re-exported here, where they were first defined.
__all__ = [
    "CLAUDE_CODE_FIELDS",
    "KNOWN_FIELDS",
    "MAX_SAFE_NAME_BYTES",
    "SKILLDECK_FIELDS",
    "SPEC_FIELDS",
    "SkillMetadata",
    "attribute_name",
    "call_name",
    "canonical_field",
    "is_safe_name",
    "unsafe_name_reason",
]


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

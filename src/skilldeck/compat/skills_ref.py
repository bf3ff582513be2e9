"""Drop-in replacement for the Agent Skills reference library ``skills-ref`` 0.1.1.

Switch with one import::

    from skilldeck.compat import skills_ref   # instead of: import skills_ref

Every public name behaves like the original: same results, same messages, same
exception types (as classes of this module, which also derive from skilldeck's
:class:`~skilldeck.errors.SkillError`). The logic below follows skills-ref's
``parser.py``, ``validator.py`` and ``prompt.py`` (Apache-2.0) line by line; what
changes is the YAML reader: skills-ref calls ``strictyaml.load``, a pure-Python
parser, while this module uses :func:`skilldeck.skills.format.reference.load_reference_yaml`,
which reads the same documents with libyaml and reproduces strictyaml's values and
error messages (handing genuinely malformed YAML to strictyaml when it is installed,
so even ruamel.yaml's error wording matches). Quirks are kept on purpose: the
frontmatter ends at the first ``---`` anywhere in the file, a BOM makes a file
unreadable, invalid UTF-8 raises ``UnicodeDecodeError``.
"""

from __future__ import annotations

import html
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skilldeck import errors as _errors
from skilldeck.skills.format.reference import ReferenceYAMLError, load_reference_yaml

__all__ = [
    "ParseError",
    "SkillError",
    "SkillProperties",
    "ValidationError",
    "find_skill_md",
    "parse_frontmatter",
    "read_properties",
    "to_prompt",
    "validate",
    "validate_metadata",
]

#: The skills-ref release whose behaviour this module reproduces.
REFERENCE_VERSION = "0.1.1"

MAX_SKILL_NAME_LENGTH = 64
MAX_DESCRIPTION_LENGTH = 1024
MAX_COMPATIBILITY_LENGTH = 500

ALLOWED_FIELDS = {
    "name",
    "description",
    "license",
    "allowed-tools",
    "metadata",
    "compatibility",
}


class SkillError(_errors.SkillError):
    """Base exception for all skill-related errors."""


class ParseError(SkillError):
    """Raised when SKILL.md parsing fails."""


class ValidationError(SkillError):
    """Raised when skill properties are invalid; ``errors`` lists every message."""

    def __init__(self, message: str, errors: list[str] | None = None) -> None:
        super().__init__(message)
        self.errors = errors if errors is not None else [message]


@dataclass
class SkillProperties:
    """Properties parsed from a skill's SKILL.md frontmatter."""

    name: str
    description: str
    license: str | None = None
    compatibility: str | None = None
    allowed_tools: str | None = None
    metadata: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Convert to dictionary, excluding None values (and empty metadata)."""
        result: dict[str, Any] = {"name": self.name, "description": self.description}
        if self.license is not None:
            result["license"] = self.license
        if self.compatibility is not None:
            result["compatibility"] = self.compatibility
        if self.allowed_tools is not None:
            result["allowed-tools"] = self.allowed_tools
        if self.metadata:
            result["metadata"] = self.metadata
        return result


def find_skill_md(skill_dir: Path) -> Path | None:
    """``SKILL.md`` (preferred) or ``skill.md`` in ``skill_dir``, or None."""
    for name in ("SKILL.md", "skill.md"):
        path = skill_dir / name
        if path.exists():
            return path
    return None


def parse_frontmatter(content: str) -> tuple[dict[str, Any], str]:
    """Split SKILL.md ``content`` into (frontmatter mapping, stripped body).

    Raises ParseError when the frontmatter is missing, unclosed, invalid YAML (under
    strictyaml's rules) or not a mapping.
    """
    if not content.startswith("---"):
        raise ParseError("SKILL.md must start with YAML frontmatter (---)")

    parts = content.split("---", 2)
    if len(parts) < 3:
        raise ParseError("SKILL.md frontmatter not properly closed with ---")

    frontmatter_str = parts[1]
    body = parts[2].strip()

    try:
        metadata = load_reference_yaml(frontmatter_str)
    except ReferenceYAMLError as e:
        raise ParseError(f"Invalid YAML in frontmatter: {e}") from e

    if not isinstance(metadata, dict):
        raise ParseError("SKILL.md frontmatter must be a YAML mapping")

    if "metadata" in metadata and isinstance(metadata["metadata"], dict):
        metadata["metadata"] = {str(k): str(v) for k, v in metadata["metadata"].items()}

    return metadata, body


def read_properties(skill_dir: Path) -> SkillProperties:
    """Read (not validate) the properties in ``skill_dir``'s SKILL.md frontmatter.

    Raises ParseError if SKILL.md is missing or unparseable, ValidationError if
    ``name`` or ``description`` is missing or empty.
    """
    skill_dir = Path(skill_dir)
    skill_md = find_skill_md(skill_dir)

    if skill_md is None:
        raise ParseError(f"SKILL.md not found in {skill_dir}")

    content = skill_md.read_text(encoding="utf-8")
    metadata, _ = parse_frontmatter(content)

    if "name" not in metadata:
        raise ValidationError("Missing required field in frontmatter: name")
    if "description" not in metadata:
        raise ValidationError("Missing required field in frontmatter: description")

    name = metadata["name"]
    description = metadata["description"]

    if not isinstance(name, str) or not name.strip():
        raise ValidationError("Field 'name' must be a non-empty string")
    if not isinstance(description, str) or not description.strip():
        raise ValidationError("Field 'description' must be a non-empty string")

    return SkillProperties(
        name=name.strip(),
        description=description.strip(),
        license=metadata.get("license"),
        compatibility=metadata.get("compatibility"),
        allowed_tools=metadata.get("allowed-tools"),
        metadata=metadata.get("metadata"),  # type: ignore[arg-type]  # as skills-ref
    )


def _validate_name(name: Any, skill_dir: Path | None) -> list[str]:
    errors: list[str] = []

    if not name or not isinstance(name, str) or not name.strip():
        errors.append("Field 'name' must be a non-empty string")
        return errors

    name = unicodedata.normalize("NFKC", name.strip())

    if len(name) > MAX_SKILL_NAME_LENGTH:
        errors.append(
            f"Skill name '{name}' exceeds {MAX_SKILL_NAME_LENGTH} character limit "
            f"({len(name)} chars)"
        )

    if name != name.lower():
        errors.append(f"Skill name '{name}' must be lowercase")

    if name.startswith("-") or name.endswith("-"):
        errors.append("Skill name cannot start or end with a hyphen")

    if "--" in name:
        errors.append("Skill name cannot contain consecutive hyphens")

    if not all(c.isalnum() or c == "-" for c in name):
        errors.append(
            f"Skill name '{name}' contains invalid characters. "
            "Only letters, digits, and hyphens are allowed."
        )

    if skill_dir:
        dir_name = unicodedata.normalize("NFKC", skill_dir.name)
        if dir_name != name:
            errors.append(f"Directory name '{skill_dir.name}' must match skill name '{name}'")

    return errors


def _validate_description(description: Any) -> list[str]:
    if not description or not isinstance(description, str) or not description.strip():
        return ["Field 'description' must be a non-empty string"]
    if len(description) > MAX_DESCRIPTION_LENGTH:
        return [
            f"Description exceeds {MAX_DESCRIPTION_LENGTH} character limit "
            f"({len(description)} chars)"
        ]
    return []


def _validate_compatibility(compatibility: Any) -> list[str]:
    if not isinstance(compatibility, str):
        return ["Field 'compatibility' must be a string"]
    if len(compatibility) > MAX_COMPATIBILITY_LENGTH:
        return [
            f"Compatibility exceeds {MAX_COMPATIBILITY_LENGTH} character limit "
            f"({len(compatibility)} chars)"
        ]
    return []


def _validate_metadata_fields(metadata: dict[str, Any]) -> list[str]:
    extra_fields = set(metadata.keys()) - ALLOWED_FIELDS
    if extra_fields:
        return [
            f"Unexpected fields in frontmatter: {', '.join(sorted(extra_fields))}. "
            f"Only {sorted(ALLOWED_FIELDS)} are allowed."
        ]
    return []


def validate_metadata(metadata: dict[str, Any], skill_dir: Path | None = None) -> list[str]:
    """Every rule violation in already-parsed ``metadata``; empty means valid."""
    errors: list[str] = []
    errors.extend(_validate_metadata_fields(metadata))

    if "name" not in metadata:
        errors.append("Missing required field in frontmatter: name")
    else:
        errors.extend(_validate_name(metadata["name"], skill_dir))

    if "description" not in metadata:
        errors.append("Missing required field in frontmatter: description")
    else:
        errors.extend(_validate_description(metadata["description"]))

    if "compatibility" in metadata:
        errors.extend(_validate_compatibility(metadata["compatibility"]))

    return errors


def validate(skill_dir: Path) -> list[str]:
    """Every problem with the skill in ``skill_dir``; an empty list means valid."""
    skill_dir = Path(skill_dir)

    if not skill_dir.exists():
        return [f"Path does not exist: {skill_dir}"]

    if not skill_dir.is_dir():
        return [f"Not a directory: {skill_dir}"]

    skill_md = find_skill_md(skill_dir)
    if skill_md is None:
        return ["Missing required file: SKILL.md"]

    try:
        content = skill_md.read_text(encoding="utf-8")
        metadata, _ = parse_frontmatter(content)
    except ParseError as e:
        return [str(e)]

    return validate_metadata(metadata, skill_dir)


def to_prompt(skill_dirs: list[Path]) -> str:
    """The ``<available_skills>`` XML block for ``skill_dirs``, as skills-ref renders it."""
    if not skill_dirs:
        return "<available_skills>\n</available_skills>"

    lines = ["<available_skills>"]

    for skill_dir in skill_dirs:
        skill_dir = Path(skill_dir).resolve()
        props = read_properties(skill_dir)

        lines.append("<skill>")
        lines.append("<name>")
        lines.append(html.escape(props.name))
        lines.append("</name>")
        lines.append("<description>")
        lines.append(html.escape(props.description))
        lines.append("</description>")

        skill_md_path = find_skill_md(skill_dir)
        lines.append("<location>")
        lines.append(str(skill_md_path))
        lines.append("</location>")

        lines.append("</skill>")

    lines.append("</available_skills>")

    return "\n".join(lines)

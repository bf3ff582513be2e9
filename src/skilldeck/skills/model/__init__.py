"""The skill as a domain object: ``Skill`` (facts, lazy body, confined resources in
``resources``, stored fields decoded on first use in ``stored``), its
frontmatter schema (``SkillMetadata``; its field names and the skill-name rules, which
need no pydantic, in ``names``) and ``Diagnostic``.

Other packages import these names from here; the modules behind them are this
package's own business. Names load lazily (an import of the facade costs nothing).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skilldeck._moved import load_attribute

if TYPE_CHECKING:
    from skilldeck.skills.model.diagnostics import (
        Diagnostic,
        Severity,
        diagnostic_from_row,
        diagnostic_to_row,
        errors_of,
        warnings_of,
    )
    from skilldeck.skills.model.names import (
        MAX_SAFE_NAME_BYTES,
        attribute_name,
        call_name,
        canonical_field,
        is_safe_name,
        unsafe_name_reason,
    )
    from skilldeck.skills.model.resources import MAX_LISTED_RESOURCES
    from skilldeck.skills.model.skill import (
        GATING_FIELDS,
        GatingFields,
        Skill,
        SkillKind,
        SkillSource,
        declared_entrypoint,
        declared_kind,
        declared_kind_of,
        detect_kind,
        sets_gating_field,
    )
    from skilldeck.skills.model.spec import SkillMetadata

_HOME: dict[str, str] = {
    "MAX_LISTED_RESOURCES": "resources",
    "GATING_FIELDS": "skill",
    "GatingFields": "skill",
    "Skill": "skill",
    "SkillKind": "skill",
    "SkillSource": "skill",
    "declared_entrypoint": "skill",
    "declared_kind": "skill",
    "declared_kind_of": "skill",
    "detect_kind": "skill",
    "sets_gating_field": "skill",
    "MAX_SAFE_NAME_BYTES": "names",
    "SkillMetadata": "spec",
    "attribute_name": "names",
    "call_name": "names",
    "canonical_field": "names",
    "is_safe_name": "names",
    "unsafe_name_reason": "names",
    "Diagnostic": "diagnostics",
    "Severity": "diagnostics",
    "diagnostic_from_row": "diagnostics",
    "diagnostic_to_row": "diagnostics",
    "errors_of": "diagnostics",
    "warnings_of": "diagnostics",
}

__all__ = [
    "GATING_FIELDS",
    "MAX_LISTED_RESOURCES",
    "MAX_SAFE_NAME_BYTES",
    "Diagnostic",
    "GatingFields",
    "Severity",
    "Skill",
    "SkillKind",
    "SkillMetadata",
    "SkillSource",
    "attribute_name",
    "call_name",
    "canonical_field",
    "declared_entrypoint",
    "declared_kind",
    "declared_kind_of",
    "detect_kind",
    "diagnostic_from_row",
    "diagnostic_to_row",
    "errors_of",
    "is_safe_name",
    "sets_gating_field",
    "unsafe_name_reason",
    "warnings_of",
]


def __getattr__(name: str) -> Any:
    return load_attribute(__name__, _HOME, name, globals())

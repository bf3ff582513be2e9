"""Reading SKILL.md: frontmatter parsing (the fast line parser, libyaml with limits,
skills-ref compatible YAML), field normalisation, validation rules and strict checks,
``skills new`` templates.

Other packages import these names from here; the modules behind them are this
package's own business. Names load lazily (an import of the facade costs nothing).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skilldeck._moved import load_attribute

if TYPE_CHECKING:
    from skilldeck.skills.format._rules import RULES
    from skilldeck.skills.format.metadata import build_metadata
    from skilldeck.skills.format.parse import (
        MAX_FRONTMATTER_BYTES,
        ParsedFrontmatter,
        find_skill_md,
        parse_skill_md,
        parse_yaml_text,
    )
    from skilldeck.skills.format.templates import (
        KINDS,
        TemplateKind,
        check_new_name,
        new_skill,
    )
    from skilldeck.skills.format.validate import (
        Discovered,
        ValidationReport,
        load_for_discovery,
        load_skill,
        validate_path,
    )

_HOME: dict[str, str] = {
    "MAX_FRONTMATTER_BYTES": "parse",
    "ParsedFrontmatter": "parse",
    "find_skill_md": "parse",
    "parse_skill_md": "parse",
    "parse_yaml_text": "parse",
    "RULES": "_rules",
    "Discovered": "validate",
    "ValidationReport": "validate",
    "build_metadata": "metadata",
    "load_for_discovery": "validate",
    "load_skill": "validate",
    "validate_path": "validate",
    "KINDS": "templates",
    "TemplateKind": "templates",
    "check_new_name": "templates",
    "new_skill": "templates",
}

__all__ = [
    "KINDS",
    "MAX_FRONTMATTER_BYTES",
    "RULES",
    "Discovered",
    "ParsedFrontmatter",
    "TemplateKind",
    "ValidationReport",
    "build_metadata",
    "check_new_name",
    "find_skill_md",
    "load_for_discovery",
    "load_skill",
    "new_skill",
    "parse_skill_md",
    "parse_yaml_text",
    "validate_path",
]


def __getattr__(name: str) -> Any:
    return load_attribute(__name__, _HOME, name, globals())

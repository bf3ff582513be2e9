"""What the spec's reference validator (skills-ref) can read: its YAML, exactly.

skills-ref reads frontmatter with strictyaml, which refuses flow collections, tags,
anchors, duplicate keys and unevenly indented sibling mappings, with messages of its
own. :func:`load_reference_yaml` gives strictyaml's results and messages without the
dependency (for :mod:`skilldeck.compat.skills_ref`), and
:func:`reference_diagnostics` is strict validation's last step: everything
skills-ref would refuse, as diagnostics with lines. Only ``--strict`` and the compat
layer need it, so plain validation never imports it.

Other packages import these names from here; the modules behind them are this
package's own business. Names load lazily (an import of the facade costs nothing).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skilldeck._moved import load_attribute

if TYPE_CHECKING:
    from skilldeck.skills.format.reference._refcheck import reference_diagnostics
    from skilldeck.skills.format.reference._refmarks import DuplicateKeyError, ReferenceYAMLError
    from skilldeck.skills.format.reference._refyaml import load_reference_yaml

_HOME: dict[str, str] = {
    "DuplicateKeyError": "_refmarks",
    "ReferenceYAMLError": "_refmarks",
    "load_reference_yaml": "_refyaml",
    "reference_diagnostics": "_refcheck",
}

__all__ = [
    "DuplicateKeyError",
    "ReferenceYAMLError",
    "load_reference_yaml",
    "reference_diagnostics",
]


def __getattr__(name: str) -> Any:
    return load_attribute(__name__, _HOME, name, globals())

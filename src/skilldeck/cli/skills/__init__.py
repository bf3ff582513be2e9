"""The `skilldeck skills …` commands: list/show/enable/disable, validate, run/audit,
match, packaging, code-skill trust, and the fast paths that answer `skills list
--json`, `skills validate` and `skills match` before typer and pydantic are imported
(`fast/`: `fastpath`, `fast_validate`, `fast_match`, their shared output in `fastio`).

Other packages import these names from here; names load lazily, so importing the
facade costs nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skilldeck._moved import load_attribute

if TYPE_CHECKING:
    from skilldeck.cli.skills.fast.fastpath import (
        try_fast,
        write_scan_problems,
    )
    from skilldeck.cli.skills.skills_cmd import (
        KindChoice,
        disable,
        enable,
        list_skills,
        new,
        register,
    )
    from skilldeck.cli.skills.skills_exec_cmd import (
        audit,
        run,
    )
    from skilldeck.cli.skills.skills_match_cmd import (
        match,
    )
    from skilldeck.cli.skills.skills_pkg_cmd import (
        ScopeChoice,
        install_cmd,
        keygen_cmd,
        pack_cmd,
        uninstall_cmd,
        verify_cmd,
    )
    from skilldeck.cli.skills.skills_show_cmd import (
        invalid_lines,
        prompt,
        show,
    )
    from skilldeck.cli.skills.skills_trust_cmd import (
        trust,
    )
    from skilldeck.cli.skills.skills_validate_cmd import (
        validate,
    )

_HOME: dict[str, str] = {
    "KindChoice": "skills_cmd",
    "register": "skills_cmd",
    "list_skills": "skills_cmd",
    "validate": "skills_validate_cmd",
    "show": "skills_show_cmd",
    "invalid_lines": "skills_show_cmd",
    "prompt": "skills_show_cmd",
    "enable": "skills_cmd",
    "disable": "skills_cmd",
    "new": "skills_cmd",
    "run": "skills_exec_cmd",
    "audit": "skills_exec_cmd",
    "match": "skills_match_cmd",
    "ScopeChoice": "skills_pkg_cmd",
    "pack_cmd": "skills_pkg_cmd",
    "keygen_cmd": "skills_pkg_cmd",
    "install_cmd": "skills_pkg_cmd",
    "verify_cmd": "skills_pkg_cmd",
    "uninstall_cmd": "skills_pkg_cmd",
    "trust": "skills_trust_cmd",
    "try_fast": "fast.fastpath",
    "write_scan_problems": "fast.fastpath",
}

__all__ = [
    "KindChoice",
    "ScopeChoice",
    "audit",
    "disable",
    "enable",
    "install_cmd",
    "invalid_lines",
    "keygen_cmd",
    "list_skills",
    "match",
    "new",
    "pack_cmd",
    "prompt",
    "register",
    "run",
    "show",
    "trust",
    "try_fast",
    "uninstall_cmd",
    "validate",
    "verify_cmd",
    "write_scan_problems",
]


def __getattr__(name: str) -> Any:
    return load_attribute(__name__, _HOME, name, globals())

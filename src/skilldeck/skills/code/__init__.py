"""Code skills (``skill.py``): the author API, trust by content hash, source-only import,
the out-of-process host and its child, the AST audit (advice).

Other packages import these names from here; the modules behind them are this
package's own business. Names load lazily (an import of the facade costs nothing).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skilldeck._moved import load_attribute

if TYPE_CHECKING:
    from skilldeck.skills.code.audit import (
        RULES,
        Finding,
        audit_file,
        audit_path,
        audit_skill,
        audit_source,
        python_files,
    )
    from skilldeck.skills.code.codeapi import (
        CodeSkill,
        LLMClient,
        NoTools,
        SkillContext,
        SkillResult,
        ToolDispatcher,
        ToolOutcome,
        bind_code_skill,
        bound_code_skill,
        keyword_score,
        module_name_for,
        skill_class,
    )
    from skilldeck.skills.code.codehost import (
        PROTOCOL_VERSION,
        IsolatedCodeSkill,
        child_argv,
        run_isolated,
    )
    from skilldeck.skills.code.codeskill import (
        check_trust,
        load_code_skill,
        run_code_skill,
    )
    from skilldeck.skills.code.codetrust import (
        TRUST_FILENAME,
        Placement,
        TrustEntry,
        TrustStore,
        bundled_skills_dir,
        placement,
        trust_file,
    )

_HOME: dict[str, str] = {
    "CodeSkill": "codeapi",
    "LLMClient": "codeapi",
    "NoTools": "codeapi",
    "SkillContext": "codeapi",
    "SkillResult": "codeapi",
    "ToolDispatcher": "codeapi",
    "ToolOutcome": "codeapi",
    "bind_code_skill": "codeapi",
    "bound_code_skill": "codeapi",
    "keyword_score": "codeapi",
    "module_name_for": "codeapi",
    "skill_class": "codeapi",
    "check_trust": "codeskill",
    "load_code_skill": "codeskill",
    "run_code_skill": "codeskill",
    "TRUST_FILENAME": "codetrust",
    "Placement": "codetrust",
    "TrustEntry": "codetrust",
    "TrustStore": "codetrust",
    "bundled_skills_dir": "codetrust",
    "placement": "codetrust",
    "trust_file": "codetrust",
    "PROTOCOL_VERSION": "codehost",
    "IsolatedCodeSkill": "codehost",
    "child_argv": "codehost",
    "run_isolated": "codehost",
    "RULES": "audit",
    "Finding": "audit",
    "audit_file": "audit",
    "audit_path": "audit",
    "audit_skill": "audit",
    "audit_source": "audit",
    "python_files": "audit",
}

__all__ = [
    "PROTOCOL_VERSION",
    "RULES",
    "TRUST_FILENAME",
    "CodeSkill",
    "Finding",
    "IsolatedCodeSkill",
    "LLMClient",
    "NoTools",
    "Placement",
    "SkillContext",
    "SkillResult",
    "ToolDispatcher",
    "ToolOutcome",
    "TrustEntry",
    "TrustStore",
    "audit_file",
    "audit_path",
    "audit_skill",
    "audit_source",
    "bind_code_skill",
    "bound_code_skill",
    "bundled_skills_dir",
    "check_trust",
    "child_argv",
    "keyword_score",
    "load_code_skill",
    "module_name_for",
    "placement",
    "python_files",
    "run_code_skill",
    "run_isolated",
    "skill_class",
    "trust_file",
]


def __getattr__(name: str) -> Any:
    return load_attribute(__name__, _HOME, name, globals())

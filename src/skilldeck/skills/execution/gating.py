"""Gating: a skill this machine or agent cannot serve is *unavailable*, with a reason.

A skill that needs ``gh`` on a machine without it, or the ``WebFetch`` tool in an
agent that lacks it, should not be offered to the model and then fail halfway. It
stays known (``skills list --all`` shows it, with the reason) but is left out of the
``<available_skills>`` block and refused by the ``Skill`` tool with that reason.

What is checked, all from frontmatter:

* ``requires-tools`` — every tool must be in the agent's tool set (when known);
* ``requires-bins`` — every program must be on ``PATH`` (``shutil.which``);
* ``requires-env`` — every environment variable must be set and non-empty;
* ``credentials`` — every *required* declared credential must have a value in the
  secrets store (``skilldeck secrets set NAME``; see :mod:`.credentials`);
* ``dependencies`` / ``requirements.txt`` — the skill's own Python environment must
  not have failed to build for its current requirements (:mod:`.environments`), and
  a *code* skill cannot have requirements (its code runs in skilldeck's Python or a
  child importing skilldeck's own packages; ship the code as a script skill);
* ``compatibility`` — free text, so only unambiguous hints are acted on: an
  operating system restriction ("Linux only", "requires macOS", "Windows only") and
  a minimum Python version ("Python 3.12+", "python >= 3.11"). Anything else in it
  is informational and never gates.

Two scopes, never mixed (issue 16): bins, env and compatibility are facts of the
*machine*, the same for every agent, so the registry computes them once per refresh
(:func:`machine_gating`, whose answer the registry keeps as its own view).
``requires-tools`` is a fact of *one agent's* tool set, so it is computed per call
(:func:`unavailable_for`) and never written anywhere: the registry and its skills
are shared by a parent and its sub-agents (and, in a server, by many sessions), and
one agent's tool set must not change what another is offered. Neither is written
onto a ``Skill``.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

from skilldeck.settings.layers import skilldeck_home

# through the facade, loaded on first use: a listing gates a few skills by bins, env
# or compatibility and needs neither the environments (subprocess, threading) nor the
# secrets store (``python -m bench discovery``, figure ``cli_list_json_warm``)
from skilldeck.skills import execution as _execution
from skilldeck.skills.model.skill import Skill, SkillKind

if TYPE_CHECKING:
    from skilldeck.skills.execution.secrets import SecretStore

__all__ = [
    "compatibility_problem",
    "gating_reason",
    "machine_gating",
    "machine_reason",
    "tools_reason",
    "unavailable_for",
]

_OS_NAMES = {
    "linux": "linux",
    "macos": "darwin",
    "mac os": "darwin",
    "osx": "darwin",
    "os x": "darwin",
    "darwin": "darwin",
    "windows": "win32",
}
_DISPLAY = {"linux": "Linux", "darwin": "macOS", "win32": "Windows"}
_OS_WORDS = "|".join(sorted((re.escape(k) for k in _OS_NAMES), key=len, reverse=True))
_OS_ONLY = re.compile(
    rf"\b(?:(?P<a>{_OS_WORDS})\s+only|only\s+(?:on|for|runs on)\s+(?P<b>{_OS_WORDS})"
    rf"|requires\s+(?P<c>{_OS_WORDS}))\b",
    re.I,
)
_PYTHON_MIN = re.compile(
    r"\bpython\s*(?:(?:>=|≥|version\s+)?\s*(?P<v1>3\.\d+)\s*\+|>=\s*(?P<v2>3\.\d+)|≥\s*(?P<v3>3\.\d+))",
    re.I,
)


def _platform_family(platform: str) -> str:
    for prefix in ("linux", "darwin", "win32"):
        if platform.startswith(prefix):
            return prefix
    return platform


def compatibility_problem(
    text: str | None,
    *,
    platform: str = sys.platform,
    python: tuple[int, int] = (sys.version_info.major, sys.version_info.minor),
) -> str | None:
    """Why a ``compatibility`` string rules this machine out, or None."""
    if not text:
        return None
    wanted = {
        _OS_NAMES[(m.group("a") or m.group("b") or m.group("c")).lower()]
        for m in _OS_ONLY.finditer(text)
    }
    here = _platform_family(platform)
    if wanted and here not in wanted:
        names = " or ".join(sorted(_DISPLAY.get(w, w) for w in wanted))
        return f"compatibility says it needs {names} (this is {_DISPLAY.get(here, here)})"
    for m in _PYTHON_MIN.finditer(text):
        major, minor = (
            int(x) for x in (m.group("v1") or m.group("v2") or m.group("v3")).split(".")
        )
        if python < (major, minor):
            return (
                f"compatibility asks for Python {major}.{minor}+ (this is {python[0]}.{python[1]})"
            )
    return None


def tools_reason(skill: Skill, available_tools: set[str] | frozenset[str] | None) -> str | None:
    """Why one agent (whose tools are ``available_tools``) cannot use ``skill``, or
    None. ``None`` tools means the set is not known, so nothing is checked."""
    if available_tools is None:
        return None
    meta = skill.gating_fields()
    missing = [t for t in meta.requires_tools if t not in available_tools]
    return f"needs tool(s) this agent lacks: {', '.join(missing)}" if missing else None


def machine_reason(
    skill: Skill,
    *,
    which: Callable[[str], str | None] = shutil.which,
    environ: Mapping[str, str] | None = None,
    platform: str = sys.platform,
    store: SecretStore | None = None,
) -> str | None:
    """Why this machine cannot serve ``skill`` (bins, env, credentials, OS/Python),
    or None. ``store`` is the secrets store (default: skilldeck's home)."""
    meta = skill.gating_fields()
    env = os.environ if environ is None else environ
    reasons: list[str] = []
    missing_bins = [b for b in meta.requires_bins if which(b) is None]
    if missing_bins:
        reasons.append(f"needs program(s) not found on PATH: {', '.join(missing_bins)}")
    missing_env = [v for v in meta.requires_env if not env.get(v)]
    if missing_env:
        reasons.append(f"needs environment variable(s) not set: {', '.join(missing_env)}")
    compat = compatibility_problem(meta.compatibility, platform=platform)
    if compat:
        reasons.append(compat)
    credentials = _credentials_reason(skill, store)
    if credentials:
        reasons.append(credentials)
    environment = _environment_reason(skill)
    if environment:
        reasons.append(environment)
    return "; ".join(reasons) or None


def _declares_needs(skill: Skill) -> bool:
    """Whether ``skill`` declares credentials or dependencies (the model is built only
    for skills that set a gating field: ``may_be_gated`` is free on a snapshot skill)."""
    if not skill.may_be_gated():
        return False
    fields = skill.field_values()  # the stored values: no model built for a listing
    runs = skill.kind is not SkillKind.PROMPT
    return bool(fields.get("credentials") or (runs and fields.get("dependencies")))


def _environment_reason(skill: Skill) -> str | None:
    """Only script and code skills run anything with an environment: a prompt skill's
    ``dependencies`` list (183 skills of the corpus) informs its reader, never gates."""
    if skill.kind is SkillKind.PROMPT or not _declares_needs(skill):
        return None
    if not skill.field_values().get("dependencies"):
        return None
    if skill.kind is SkillKind.CODE:
        return (
            "a code skill cannot declare its own requirements (its code runs with "
            "skilldeck's Python); move the code that needs them into a script skill"
        )
    return _execution.Environments(skilldeck_home()).unavailable_reason(skill)


def _credentials_reason(skill: Skill, store: SecretStore | None) -> str | None:
    if not _declares_needs(skill) or not skill.field_values().get("credentials"):
        return None
    missing = _execution.missing_credentials(skill, store or _execution.secret_store())
    if not missing:
        return None
    how = " / ".join(f"skilldeck secrets set {name}" for name in missing)
    return f"needs credential(s) not set: {', '.join(missing)} (run: {how})"


def gating_reason(
    skill: Skill,
    *,
    available_tools: set[str] | frozenset[str] | None,
    which: Callable[[str], str | None] = shutil.which,
    environ: Mapping[str, str] | None = None,
    platform: str = sys.platform,
) -> str | None:
    """The reason ``skill`` cannot be used here, or None. ``available_tools=None``
    means the tool set is not known yet, so ``requires-tools`` is not checked."""
    reasons = [
        tools_reason(skill, available_tools),
        machine_reason(skill, which=which, environ=environ, platform=platform),
    ]
    return "; ".join(r for r in reasons if r) or None


def unavailable_for(
    skill: Skill,
    available_tools: set[str] | frozenset[str] | None,
    machine: str | None = None,
) -> str | None:
    """Why the agent with ``available_tools`` cannot use ``skill``: its own missing
    tools, then ``machine``, the machine-level reason the registry computed at its
    last refresh. Reads, never writes."""
    reasons = [tools_reason(skill, available_tools), machine]
    return "; ".join(r for r in reasons if r) or None


def machine_gating(skills: Iterable[Skill]) -> dict[Skill, str]:
    """The *machine-level* reason of each skill that cannot be used on this machine
    (skills that can are left out). The registry calls this once per refresh and
    keeps the answer as its own view; nothing is written onto the skills."""
    store: SecretStore | None = None
    reasons: dict[Skill, str] = {}
    for skill in skills:
        meta = skill.gating_fields()
        needs = _declares_needs(skill)
        if not (meta.requires_bins or meta.requires_env or meta.compatibility or needs):
            continue  # the common case, kept cheap: registries hold thousands of skills
        if store is None and needs:
            store = _execution.secret_store()
        reason = machine_reason(skill, store=store)
        if reason is not None:
            reasons[skill] = reason
    return reasons

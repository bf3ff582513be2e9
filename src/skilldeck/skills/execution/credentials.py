"""A skill's declared credentials: which it declares, which are missing, who gets them.

A skill declares its secrets in frontmatter (``credentials: [{name: GITHUB_TOKEN,
description: …, required: true}]``, or OpenClaw's ``metadata.openclaw.requires.env`` /
``primaryEnv``, read at parse time). The values come from the secrets store
(:class:`skilldeck.skills.execution.secrets.SecretStore`: the value stored for this skill, else the
global one) — never from skilldeck's own environment, whose secret-looking variables
stay scrubbed unless ``[skills.settings.<name>] env`` lists them.

Who receives them — exactly the processes that skill starts, nothing else:

* its entry script (:class:`~.runner.ScriptRunner`), also under ``skills run``;
* its dynamic-context commands (:func:`~.dynamic.expand_dynamic_context`);
* an out-of-process code skill's child, and the ``Bash`` calls that child makes
  through ``ctx.tools`` (the host marks them with :func:`started_by`; the ``Bash``
  tool reads :func:`active_credentials`).

The model's own ``Bash`` calls, other skills and sub-agents get none of them. Every
value handed out is remembered for redaction (:func:`skilldeck.skills.execution.secrets.remember`).
A missing *required* credential makes the skill unavailable (machine gating) with
the hint ``skilldeck secrets set NAME``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

from skilldeck.settings.layers import skilldeck_home
from skilldeck.skills.execution.secrets import SecretStore, remember
from skilldeck.skills.model.skill import Skill

__all__ = [
    "Credential",
    "active_credentials",
    "credential_env",
    "declared_credentials",
    "missing_credentials",
    "secret_store",
    "started_by",
]

#: the credentials of the skill whose process asked for the current tool call
_ACTIVE: ContextVar[Mapping[str, str] | None] = ContextVar("skilldeck_skill_env", default=None)


@dataclass(frozen=True)
class Credential:
    """One declared credential."""

    name: str
    description: str = ""
    required: bool = True


def declared_credentials(skill: Skill) -> list[Credential]:
    """The credentials ``skill`` declares (already checked at parse time)."""
    out = []
    for entry in skill.metadata.credentials:
        name = entry.get("name")
        if isinstance(name, str):
            out.append(
                Credential(name, str(entry.get("description") or ""), entry.get("required", True))
            )
    return out


def secret_store(home: Path | None = None) -> SecretStore:
    """The store of ``home`` (default: skilldeck's home, ``$SKILLDECK_HOME``)."""
    return SecretStore(home if home is not None else skilldeck_home())


def missing_credentials(skill: Skill, store: SecretStore) -> list[str]:
    """The *required* credentials of ``skill`` that have no stored value."""
    return [
        c.name
        for c in declared_credentials(skill)
        if c.required and not store.has(c.name, skill=skill.name)
    ]


def credential_env(skill: Skill, store: SecretStore | None = None) -> dict[str, str]:
    """``NAME → value`` of ``skill``'s declared credentials that have a value, each
    remembered for redaction. Empty (and the store untouched) when none is declared."""
    declared = declared_credentials(skill)
    if not declared:
        return {}
    store = store or secret_store()
    env: dict[str, str] = {}
    for credential in declared:
        value = store.get(credential.name, skill=skill.name)
        if value is not None:
            env[credential.name] = value
    remember(env)
    return env


@contextlib.contextmanager
def started_by(env: Mapping[str, str]) -> Iterator[None]:
    """Mark the tool calls made inside this block (this task and what it awaits) as
    started by a skill whose credentials are ``env``."""
    token = _ACTIVE.set(dict(env) if env else None)
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def active_credentials() -> dict[str, str]:
    """The credentials of the skill that started the current tool call ({} if none)."""
    return dict(_ACTIVE.get() or {})

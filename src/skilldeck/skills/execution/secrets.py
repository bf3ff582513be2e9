"""Declared credentials: where their values are kept, and keeping them from the model.

A skill declares the secrets it needs (``credentials: [{name: GITHUB_TOKEN, …}]``);
the user stores their values once (``skilldeck secrets set GITHUB_TOKEN``), globally or
for one skill (``--skill NAME``, which wins over a global value). Values live in the
OS keyring (the ``keyring`` package, service ``skilldeck``); on a machine without a
keyring backend (keyring's *fail* backend: a server, a container, CI) they live in
``<home>/secrets/values.json``, mode 0600, written atomically. An index of the stored
*names* (never values) is kept in ``<home>/secrets/index.json`` because keyrings
cannot list what they hold.

Redaction: every value this process hands to a skill's process is remembered
(:func:`remember`), and :func:`redact` replaces any of them in a text by
``[secret NAME]``. The agent runs every tool result and run error through it before
the model, the event stream or the session store sees it. The table is process-wide
on purpose: a secret value is a fact of the machine, not of one session, and
redacting it in a session that never used it is harmless. Values shorter than
:data:`MIN_REDACTED` characters are not stored in the table (they would mangle
ordinary text) — and :meth:`SecretStore.set` refuses them.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skilldeck._atomic import atomic_write_text
from skilldeck.errors import SecretsError
from skilldeck.skills.model.names import unsafe_name_reason

if TYPE_CHECKING:
    from keyring.backend import KeyringBackend

__all__ = [
    "KEYRING_SERVICE",
    "MIN_REDACTED",
    "SecretEntry",
    "SecretStore",
    "check_secret_name",
    "check_skill_name",
    "redact",
    "redact_data",
    "remember",
    "remember_stored",
]

KEYRING_SERVICE = "skilldeck"
#: shortest value that is accepted, and so redacted
MIN_REDACTED = 6
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}\Z")


def check_secret_name(name: str) -> str:
    """``name`` when it can be an environment variable's name, else a SecretsError."""
    if not _NAME.match(name):
        raise SecretsError(
            f"{name!r} cannot be a credential name: use letters, digits and `_`, not "
            "starting with a digit (an environment variable's name, e.g. GITHUB_TOKEN)."
        )
    return name


def check_skill_name(skill: str | None) -> str | None:
    """``skill`` when it names a skill (or is None: every skill), else a SecretsError.
    An empty name must not fall through to the global value: ``--skill "$SKILL"`` with
    ``SKILL`` unset would overwrite or delete the credential every skill shares."""
    why = unsafe_name_reason(skill) if skill is not None else None
    if why is not None:
        raise SecretsError(
            f"{skill!r} is not a skill name ({why}): use the name `skilldeck skills list` "
            "shows, or leave --skill out for every skill."
        )
    return skill


@dataclass(frozen=True)
class SecretEntry:
    """One stored secret: its name, the skill it is for (None: every skill that
    declares it) and where its value lives (``keyring`` or ``file``)."""

    name: str
    skill: str | None
    backend: str

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "skill": self.skill, "backend": self.backend}


def _keyring_errors() -> type[Exception]:
    import keyring.errors  # lazy: see SecretStore._keyring

    return keyring.errors.KeyringError


def _key(name: str, skill: str | None) -> str:
    return f"{skill}/{name}" if skill else name


class SecretStore:
    """The secrets of one skilldeck home. ``backend`` forces a keyring backend (tests;
    ``None`` asks ``keyring``); ``use_keyring=False`` always uses the 0600 file."""

    def __init__(
        self,
        home: Path,
        *,
        backend: KeyringBackend | None = None,
        use_keyring: bool = True,
    ) -> None:
        self.folder = Path(home) / "secrets"
        self._given = backend
        self._use_keyring = use_keyring

    # ---- where values live -------------------------------------------------------------

    def _keyring(self) -> KeyringBackend | None:
        if not self._use_keyring:
            return None
        # lazy: keyring costs ~40-130 ms to import; gating and most commands never need it
        import keyring
        import keyring.backends.fail

        backend = self._given if self._given is not None else keyring.get_keyring()
        if isinstance(backend, keyring.backends.fail.Keyring):
            return None
        return backend

    @property
    def backend_name(self) -> str:
        """``keyring`` or ``file``: where a value set now goes."""
        return "keyring" if self._keyring() is not None else "file"

    def _read_json(self, name: str) -> dict[str, Any]:
        path = self.folder / name
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as e:
            raise SecretsError(
                f"Cannot read {path}: {e}. Fix or remove the file; its secrets must be set again."
            ) from e
        if not isinstance(data, dict):  # read as empty, the next write would drop every entry
            raise SecretsError(
                f"Cannot read {path}: it holds a JSON {type(data).__name__}, not an object. "
                "Fix or remove the file; its secrets must be set again."
            )
        return data

    def _write_json(self, name: str, data: Mapping[str, Any]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        atomic_write_text(self.folder / name, json.dumps(data, indent=1, sort_keys=True))
        (self.folder / name).chmod(0o600)

    # ---- the API -----------------------------------------------------------------------

    def set(self, name: str, value: str, *, skill: str | None = None) -> SecretEntry:
        """Store ``value`` for ``name`` (for ``skill`` only, when given)."""
        check_secret_name(name)
        check_skill_name(skill)
        if len(value) < MIN_REDACTED or "\n" in value.strip("\n"):
            raise SecretsError(
                f"The value of {name} must be one line of at least {MIN_REDACTED} "
                "characters (shorter values could not be hidden from the model)."
            )
        value = value.strip("\n")
        backend = self._keyring()
        key = _key(name, skill)
        if backend is not None:
            try:
                backend.set_password(KEYRING_SERVICE, key, value)
            except _keyring_errors() as e:
                raise SecretsError(f"The keyring refused to store {name}: {e}") from e
        else:
            values = self._read_json("values.json")
            values[key] = value
            self._write_json("values.json", values)
        entry = SecretEntry(name, skill, "keyring" if backend is not None else "file")
        index = self._read_json("index.json")
        index[key] = entry.to_dict()
        self._write_json("index.json", index)
        return entry

    def _lookup(self, key: str, where: str) -> str | None:
        if where == "keyring":
            backend = self._keyring()
            if backend is None:
                return None
            try:
                return backend.get_password(KEYRING_SERVICE, key)
            except _keyring_errors():
                return None
        value = self._read_json("values.json").get(key)
        return value if isinstance(value, str) else None

    def get(self, name: str, *, skill: str | None = None) -> str | None:
        """The value for ``name``: the one stored for ``skill``, else the global one."""
        index = self._read_json("index.json")
        for key in ([_key(name, skill)] if skill else []) + [name]:
            entry = index.get(key)
            if isinstance(entry, dict):
                value = self._lookup(key, str(entry.get("backend")))
                if value is not None:
                    return value
        return None

    def remove(self, name: str, *, skill: str | None = None) -> bool:
        """Forget ``name`` (for ``skill``, when given); False when it was not stored."""
        key = _key(name, check_skill_name(skill))
        index = self._read_json("index.json")
        entry = index.pop(key, None)
        if not isinstance(entry, dict):
            return False
        if entry.get("backend") == "keyring" and (backend := self._keyring()) is not None:
            # already gone from the keyring: forgetting the name is enough
            with contextlib.suppress(_keyring_errors()):
                backend.delete_password(KEYRING_SERVICE, key)
        values = self._read_json("values.json")
        if values.pop(key, None) is not None:
            self._write_json("values.json", values)
        self._write_json("index.json", index)
        return True

    def entries(self) -> list[SecretEntry]:
        """What is stored (names and places, never values), sorted by name."""
        out = [
            SecretEntry(str(e.get("name")), e.get("skill") or None, str(e.get("backend")))
            for e in self._read_json("index.json").values()
            if isinstance(e, dict)
        ]
        return sorted(out, key=lambda e: (e.name, e.skill or ""))

    def has(self, name: str, *, skill: str | None = None) -> bool:
        """Whether a value is stored for ``name`` (cheap: the index only)."""
        index = self._read_json("index.json")
        return any(k in index for k in ([_key(name, skill)] if skill else []) + [name])


# ---- redaction ---------------------------------------------------------------------

_LOCK = threading.Lock()
_KNOWN: dict[str, str] = {}  # value → name
_PATTERN: list[re.Pattern[str] | None] = [None]


def remember(values: Mapping[str, str] | Iterable[tuple[str, str]]) -> None:
    """Add ``name → value`` pairs to the redaction table (values handed to a process)."""
    pairs = values.items() if isinstance(values, Mapping) else values
    with _LOCK:
        changed = False
        for name, value in pairs:
            if len(value) >= MIN_REDACTED and _KNOWN.get(value) != name:
                _KNOWN[value] = name
                changed = True
        if changed:
            ordered = sorted(_KNOWN, key=len, reverse=True)  # longest first
            _PATTERN[0] = re.compile("|".join(re.escape(v) for v in ordered))


def remember_stored(home: Path | None) -> None:
    """Remember every value of ``home``'s *file* store (a session's tools could read
    that file; keyring values need the keyring's own unlock). Never raises: a
    damaged file is the secrets commands' error, not a session's."""
    if home is None:
        return
    with contextlib.suppress(SecretsError, OSError):
        store = SecretStore(home, use_keyring=False)
        values = store._read_json("values.json")
        remember((key.rsplit("/", 1)[-1], v) for key, v in values.items() if isinstance(v, str))


def redact(text: str) -> str:
    """``text`` with every remembered secret value replaced by ``[secret NAME]``."""
    pattern = _PATTERN[0]
    if pattern is None or not text:
        return text
    return pattern.sub(lambda m: f"[secret {_KNOWN.get(m.group(0), '?')}]", text)


def redact_data(value: Any) -> Any:
    """:func:`redact` applied to every string inside ``value`` (dicts, lists, tuples)."""
    if _PATTERN[0] is None:
        return value
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact_data(k): redact_data(v) for k, v in value.items()}
    if type(value) in (list, tuple):
        return type(value)(redact_data(v) for v in value)
    return value

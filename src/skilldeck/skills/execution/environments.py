"""Per-skill Python environments: a skill's scripts run with their own dependencies.

A skill declares what its scripts import in ``requirements.txt`` (in its folder) or
in frontmatter (``dependencies: {python: [requests>=2]}``; both may be given, the
lists are joined). Requirement *options* (``-e``, ``-r``, ``--index-url``…) are
refused: they could point the installer anywhere.

skilldeck builds one virtual environment per distinct set of requirements with
``uv`` (``uv venv`` + ``uv pip install``; the PyPI wheel ships the binary), under
``<home>/envs/<key>``. The key is a hash of the sorted requirement lines and the
Python version, so skills with identical requirements share one environment and a
new Python gets a new one. An environment is built in a temporary folder and renamed
into place when complete, so a half-built one is never used. Each build — and each
failure, with uv's reason — is recorded in ``<home>/envs.lock`` (JSON, next to
skilldeck's home ``skills.lock``): which environment serves which skill folder,
from which requirements, with which Python.

It is built on first use (or by ``skilldeck skills deps NAME``), with a progress
callback, ``offline`` (uv's ``--offline``, plus ``--no-index`` when local wheel folders
are given) and ``find_links`` for air-gapped machines. A failed build makes the skill
unavailable with the reason (``skills list --all``; machine gating reads the record)
until its requirements change or ``skills deps NAME --rebuild`` succeeds; it never
raises out of a run as anything but that. Only wheels are installed (``--only-binary
:all:``): no package's build code runs at install time. Script skills run with the environment's
interpreter (``.py``) or with its ``bin/`` first on ``PATH``; the sandbox binds the
environment read-only and, as for every script, gives no network at run time.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

from skilldeck._atomic import atomic_write_text
from skilldeck.errors import EnvironmentBuildError
from skilldeck.settings.layers import skilldeck_home
from skilldeck.skills.model.skill import Skill, SkillKind

__all__ = [
    "ENVS_RECORD",
    "Environments",
    "SkillEnvironment",
    "build_at_install",
    "environment_key",
    "read_requirements",
]

ENVS_RECORD = "envs.lock"
#: seconds a build may take before it is abandoned
BUILD_TIMEOUT = 900.0
_REASON_TAIL = 1500
_LOCK = threading.Lock()

Progress = Callable[[str], None]
_SECRET_MARKERS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL")


def _installer_env(environ: Mapping[str, str]) -> dict[str, str]:
    """What uv runs with: skilldeck's environment without secret-looking variables
    (uv's and pip's own settings, e.g. a private index's credentials, are kept)."""
    return {
        k: v
        for k, v in environ.items()
        if k.startswith(("UV_", "PIP_")) or not any(m in k.upper() for m in _SECRET_MARKERS)
        if k != "VIRTUAL_ENV"
    }


def _requirement_problem(line: str) -> str | None:
    if line.startswith("-"):
        return f"the option {line.split()[0]!r} is not allowed; list package requirements only"
    return None


def read_requirements(skill: Skill) -> list[str]:
    """``skill``'s requirement lines: frontmatter ``dependencies.python``, then
    ``requirements.txt`` (read now, so an edit counts at once), comments dropped."""
    lines = list(skill.metadata.dependencies.get("python", []))
    path = skill.folder / "requirements.txt"
    if path.is_file() and not path.is_symlink():
        text = path.read_text(encoding="utf-8", errors="replace")
        for number, raw in enumerate(text.splitlines(), 1):
            line = raw.split(" #", 1)[0].strip()
            if line and not line.startswith("#"):
                problem = _requirement_problem(line)
                if problem:
                    # no rebuild can get past this: the file itself must change
                    raise EnvironmentBuildError(
                        f"requirements.txt of skill {skill.name!r}, line {number}: {problem}. "
                        f"Edit {path} (remove or replace that line), then run: "
                        f"skilldeck skills deps {skill.name}"
                    )
                lines.append(line)
    return list(dict.fromkeys(lines))


def _python_tag(python: str) -> str:
    if python == sys.executable:
        info = sys.version_info
        return f"{sys.implementation.name}-{info.major}.{info.minor}.{info.micro}"
    return python


def environment_key(requirements: Sequence[str], python: str = sys.executable) -> str:
    """The content address of an environment: requirements (sorted) + Python."""
    text = "\n".join(sorted(requirements)) + "\0" + _python_tag(python)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]


@dataclass
class SkillEnvironment:
    """One skill's environment: where it is, whether it is built, why not."""

    skill: str
    key: str
    path: Path
    requirements: list[str]
    status: str  # "ready", "missing" (not built yet) or "failed"
    reason: str | None = None
    shared_with: list[str] | None = None
    seconds: float | None = None

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"

    @property
    def bin(self) -> Path:
        return self.path / "bin"

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["path"], out["python"] = str(self.path), str(self.python)
        return out


class Environments:
    """The environments of one skilldeck home. ``uv`` is the binary (default: the
    one the ``uv`` wheel ships); ``python`` the interpreter environments are made of."""

    def __init__(self, home: Path, *, uv: str | None = None, python: str | None = None) -> None:
        self.home = Path(home)
        self.root = self.home / "envs"
        self._uv = uv
        self.python = python or sys.executable

    # ---- the record ----------------------------------------------------------------

    def _record(self) -> dict[str, Any]:
        try:
            data = json.loads((self.home / ENVS_RECORD).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {"environments": {}, "skills": {}}
        if not isinstance(data, dict):
            return {"environments": {}, "skills": {}}
        data.setdefault("environments", {})
        data.setdefault("skills", {})
        return data

    def _note(self, skill: Skill, env: SkillEnvironment) -> None:
        with _LOCK:
            data = self._record()
            folder = str(skill.folder.resolve())
            data["skills"][folder] = {
                "name": skill.name,
                "key": env.key,
                "status": env.status,
                "reason": env.reason,
            }
            if env.status == "ready":
                data["environments"][env.key] = {
                    "python": _python_tag(self.python),
                    "requirements": sorted(env.requirements),
                    "path": str(env.path),
                }
            self.home.mkdir(parents=True, exist_ok=True)
            atomic_write_text(self.home / ENVS_RECORD, json.dumps(data, indent=1, sort_keys=True))

    def _sharing(self, key: str, skill: Skill) -> list[str]:
        mine = str(skill.folder.resolve())
        skills = self._record()["skills"]
        return sorted({v["name"] for f, v in skills.items() if v.get("key") == key and f != mine})

    # ---- the API -------------------------------------------------------------------

    def for_skill(self, skill: Skill) -> SkillEnvironment | None:
        """``skill``'s environment as it stands (never builds); None when the skill
        has no requirements."""
        requirements = read_requirements(skill)
        if not requirements:
            return None
        key = environment_key(requirements, self.python)
        path = self.root / key
        noted = self._record()["skills"].get(str(skill.folder.resolve()), {})
        status, reason = "missing", None
        if (path / "bin" / "python").exists():
            status = "ready"
        elif noted.get("key") == key and noted.get("status") == "failed":
            status, reason = "failed", noted.get("reason")
        env = SkillEnvironment(skill.name, key, path, requirements, status, reason)
        env.shared_with = self._sharing(key, skill)
        return env

    def unavailable_reason(self, skill: Skill) -> str | None:
        """Why ``skill`` cannot run for want of its environment (a recorded failed
        build of its current requirements), or None."""
        try:
            env = self.for_skill(skill)
        except EnvironmentBuildError as e:
            return str(e)
        if env is None or env.status != "failed":
            return None
        return (
            f"its Python environment failed to build ({env.reason}); fix its requirements "
            f"and run: skilldeck skills deps {skill.name} --rebuild"
        )

    def ensure(
        self,
        skill: Skill,
        *,
        offline: bool = False,
        find_links: Sequence[Path] = (),
        rebuild: bool = False,
        progress: Progress | None = None,
    ) -> SkillEnvironment | None:
        """``skill``'s environment, built now when missing (or ``rebuild``). Raises
        :class:`EnvironmentBuildError` (recorded) when the build fails."""
        env = self.for_skill(skill)
        if env is None:
            return None
        if env.status == "ready" and not rebuild:
            self._note(skill, env)
            return env
        say = progress or (lambda _message: None)
        say(f"building the environment of {skill.name} ({len(env.requirements)} requirement(s))")
        started = time.monotonic()
        try:
            self._build(env, offline=offline, find_links=find_links, say=say)
        except EnvironmentBuildError as e:
            env.status, env.reason = "failed", str(e)
            self._note(skill, env)
            raise
        env.status, env.reason = "ready", None
        env.seconds = round(time.monotonic() - started, 3)
        self._note(skill, env)
        say(f"environment {env.key} ready in {env.seconds:.1f}s")
        return env

    # ---- building ------------------------------------------------------------------

    def uv(self) -> str:
        if self._uv:
            return self._uv
        try:
            from uv import find_uv_bin  # lazy: only a build needs it
        except ImportError as e:  # pragma: no cover - uv is a dependency
            raise EnvironmentBuildError("uv is not installed: pip install uv") from e
        return str(find_uv_bin())

    def _run(self, argv: list[str], what: str) -> None:
        env = _installer_env(os.environ)
        try:
            done = subprocess.run(
                argv, capture_output=True, text=True, env=env, timeout=BUILD_TIMEOUT, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as e:
            raise EnvironmentBuildError(f"{what} could not run: {e}") from e
        if done.returncode != 0:
            tail = " ".join((done.stderr or done.stdout).split())[-_REASON_TAIL:]
            raise EnvironmentBuildError(f"{what} failed: {tail or f'exit {done.returncode}'}")

    def _build(
        self,
        env: SkillEnvironment,
        *,
        offline: bool,
        find_links: Sequence[Path],
        say: Progress,
    ) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=f".{env.key}.", dir=self.root))
        try:
            uv = self.uv()
            net = ["--offline"] if offline else []
            say("creating the virtual environment (uv venv)")
            venv = [uv, "venv", "--quiet", "--no-config", "--relocatable", *net]
            self._run([*venv, "--python", self.python, str(work / "venv")], "uv venv")
            requirements = work / "requirements.txt"
            requirements.write_text("\n".join(env.requirements) + "\n", encoding="utf-8")
            links = [a for d in find_links for a in ("--find-links", str(Path(d).resolve()))]
            local = ["--no-index"] if offline and find_links else []
            say("installing " + ", ".join(env.requirements) + " (uv pip install)")
            install = [uv, "pip", "install", "--quiet", "--no-config", "--link-mode", "copy"]
            install += ["--only-binary", ":all:"]  # wheels only: nothing runs at install
            python = str(work / "venv" / "bin" / "python")
            self._run(
                [*install, *net, *local, *links, "--python", python, "-r", str(requirements)],
                "uv pip install",
            )
            self._publish(work / "venv", env.path)
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def prepare(self, skill: Skill, *, progress: Progress | None = None) -> SkillEnvironment | None:
        """Build ``skill``'s environment without recording which folder it serves (an
        install's staged copy is about to move; first use records the real one)."""
        env = self.for_skill(skill)
        if env is None or env.status == "ready":
            return env
        self._build(env, offline=False, find_links=(), say=progress or (lambda _m: None))
        env.status = "ready"
        return env

    @staticmethod
    def _publish(built: Path, final: Path) -> None:
        """Move a complete environment into place; a concurrent build of the same key
        that got there first wins (same content), and ``rebuild`` replaces the old."""
        if final.exists():
            old = final.with_name(f".{final.name}.old-{os.getpid()}")
            os.replace(final, old)
            shutil.rmtree(old, ignore_errors=True)
        try:
            os.replace(built, final)
        except OSError:
            if not (final / "bin" / "python").exists():
                raise


class _Staged(Protocol):
    """What :func:`build_at_install` reads of ``skills/packaging/hooks.StagedSkill``."""

    skill: Skill
    warnings: list[str]


def build_at_install(staged: _Staged, options: object) -> None:
    """A staged install check (``skills/packaging/hooks.py``): build the environment of
    a skill with requirements at install time, so its first use does not wait. A
    failure never refuses the install: it is a warning, and the skill stays
    unavailable at use until ``skilldeck skills deps NAME --rebuild`` succeeds. Only
    script skills: nothing else runs with the environment.
    ``SKILLDECK_ENVS_AT_INSTALL=0`` leaves the build to first use (air-gapped
    machines then build with ``skills deps NAME --offline --find-links DIR``)."""
    if os.environ.get("SKILLDECK_ENVS_AT_INSTALL", "1") == "0":
        return
    if staged.skill.kind is not SkillKind.SCRIPT:
        return  # only a script's entry point runs in it; a prompt skill's list informs
    name = staged.skill.name
    try:
        env = Environments(skilldeck_home()).prepare(staged.skill)
    except EnvironmentBuildError as e:
        staged.warnings.append(
            f"the Python environment of {name!r} could not be built ({e}); the skill is "
            f"unavailable until `skilldeck skills deps {name} --rebuild` succeeds"
        )
        return
    if env is not None:
        staged.warnings.append(f"built the Python environment of {name!r} ({env.key})")

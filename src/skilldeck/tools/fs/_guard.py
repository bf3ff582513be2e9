"""What file tools refuse whatever the permission mode, what the session's rules hide
from a search, and how long one search may run.

* **Control files.** ``.skilldeck/``, ``.claude/``, ``.agents/``, ``.git/config`` and
  ``.git/hooks/`` (at any depth under a root) and skilldeck's home decide what the
  *next* run trusts: its config, skills, agents and the commands git runs. A model that
  could write them could widen its own permissions, so no file tool writes them — in
  every mode, ``bypassPermissions`` included. The user edits them by hand.
* **System trees.** ``/proc``, ``/sys`` and ``/dev`` are refused as spellings: through
  ``/proc/self/root``, ``/proc/self/cwd`` or ``/proc/<pid>/fd`` the same file has many
  names, and none of them is needed to reach a workspace file.
* **Visibility.** :class:`Visibility` asks ``ctx.path_filter`` about every path a
  search walks; a denied directory is not descended into.
* **Budget.** :class:`Budget` is the wall clock of one call: the per-call budget,
  capped by the run's ``agent.max_wall_seconds``.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from skilldeck.tools.base import PathVerdict, ToolContext

#: directory names that control skilldeck or another agent runtime, at any depth
CONTROL_DIRS = frozenset({".skilldeck", ".claude", ".agents"})
#: entries of ``.git`` that make git run commands
GIT_CONTROL = frozenset({"config", "hooks"})
SYSTEM_TREES = ("/proc", "/sys", "/dev")


def _home_dirs(ctx: ToolContext) -> list[Path]:
    homes = {os.path.expanduser("~/.skilldeck")}
    env = os.environ.get("SKILLDECK_HOME")
    if env:
        homes.add(os.path.expanduser(env))
    home = getattr(ctx.settings, "home", None)
    if home is not None:
        homes.add(os.path.expanduser(str(home)))
    return [Path(os.path.realpath(h)) for h in homes]


def protected_reason(real: Path, roots: list[Path], ctx: ToolContext) -> str | None:
    """Why a write to the resolved path ``real`` is refused, or None when it is not a
    control file. ``roots`` are the resolved roots ``real`` may lie under."""
    for home in _home_dirs(ctx):
        if real == home or home in real.parents:
            return f"it lies in skilldeck's home {home}, which holds your config and skills"
    for root in roots:
        if not (real == root or root in real.parents):
            continue
        parts = [p.casefold() for p in real.relative_to(root).parts]
        for i, part in enumerate(parts):
            if part in CONTROL_DIRS:
                return f"{part}/ holds configuration, skills or agents that skilldeck trusts"
            if part == ".git" and i + 1 < len(parts) and parts[i + 1] in GIT_CONTROL:
                return f".git/{parts[i + 1]} decides which commands git runs"
    return None


def refusal_message(path: Path, reason: str) -> str:
    return (
        f"Refusing to write {path}: {reason}. Files that control skilldeck or git "
        "(.skilldeck/, .claude/, .agents/, .git/config, .git/hooks/, skilldeck's home) are "
        "never written by the agent, in any permission mode; the user must edit them "
        "themselves."
    )


def system_spelling(literal: str, roots: list[Path]) -> str | None:
    """The system tree (``/proc``…) a path is spelled through, unless that spelling is
    an allowed root's own (a workspace that really lives under ``/dev/shm``)."""
    norm = os.path.normpath(literal)
    for tree in SYSTEM_TREES:
        if norm == tree or norm.startswith(tree + "/"):
            inside = any(norm == str(r) or norm.startswith(str(r).rstrip("/") + "/") for r in roots)
            return None if inside else tree
    return None


class Visibility:
    """Which paths one Glob/Grep call may show: ``ctx.path_filter`` asked per path.

    An ``ask`` verdict hides a path unless it is the very rule the search itself
    asked about and a human approved (``ask = ["Grep"]`` must not hide everything).
    Anything that goes wrong hides the path: fail closed.
    """

    def __init__(self, ctx: ToolContext, tool: str, root: Path) -> None:
        self._filter = ctx.path_filter
        self._tool = tool
        self.hidden = 0
        self.root_verdict = self._ask(root) if self._filter is not None else PathVerdict("allow")

    def _ask(self, path: Path) -> PathVerdict:
        assert self._filter is not None
        try:
            return self._filter(self._tool, path)
        except Exception:  # a broken filter must not reveal a path
            return PathVerdict("deny", "the permission check failed")

    def visible(self, path: Path) -> bool:
        if self._filter is None:
            return True
        verdict = self._ask(path)
        ok = verdict.kind == "allow" or (verdict.kind == "ask" and verdict == self.root_verdict)
        if not ok:
            self.hidden += 1
        return ok

    def note(self) -> str:
        if not self.hidden:
            return ""
        return f"{self.hidden} path(s) left out by permission rules"


class Budget:
    """The wall clock of one call: ``ctx.call_budget`` seconds, or less when the run's
    ``max_wall_seconds`` ends sooner."""

    def __init__(self, ctx: ToolContext) -> None:
        now = time.monotonic()
        self.seconds = max(float(ctx.call_budget), 0.0)
        self.deadline = now + self.seconds
        self.limit = f"the per-call limit of {self.seconds:g}s"
        if ctx.deadline is not None and ctx.deadline < self.deadline:
            self.deadline = ctx.deadline
            self.limit = "the run's agent.max_wall_seconds"
        self.hit = False

    def remaining(self) -> float:
        return max(self.deadline - time.monotonic(), 0.0)

    def expired(self) -> bool:
        if not self.hit and time.monotonic() >= self.deadline:
            self.hit = True
        return self.hit

    def note(self, what: str) -> str:
        return f"stopped after {what}: {self.limit} was reached; results are partial"

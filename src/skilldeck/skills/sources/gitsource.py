"""Skills from a git repository, through the ``git`` command line.

A fetch is shallow and sparse: ``git init`` in a temp dir, ``fetch --depth 1
--filter=blob:none`` of the one commit the ref names, ``ls-tree`` to find every
``SKILL.md`` without downloading a file, then a sparse checkout of only the chosen
skill folders (a server without partial-clone support sends the blobs anyway; git
says so and it still works). A full commit sha that the server will not hand out
by itself falls back to fetching the branches and tags, then checking it exists.

Every git runs with the command-scope config of :mod:`skilldeck._gitguard`
(no hooks, fsmonitor, pager, editor, askpass or credential helper; no ``ext::``
transport), ``GIT_TERMINAL_PROMPT=0`` (never waits on a password prompt), a
timeout, and ``LC_ALL=C`` so its errors can be told apart: host unreachable, ref
not found. The repository's own config is never read: the clone is a fresh
repository whose config skilldeck writes.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from skilldeck._gitguard import git_guard_env
from skilldeck.errors import (
    NotASkillSourceError,
    RefNotFoundError,
    SourceUnreachableError,
)
from skilldeck.skills.packaging.lockfile import is_excluded
from skilldeck.skills.sources.spec import FetchOptions, check_argument

__all__ = ["GitCheckout", "fetch_commit", "remote_commit"]

_SHA = re.compile(r"^[0-9a-f]{40}$")
_UNREACHABLE = (
    "could not resolve host",
    "unable to access",
    "connection refused",
    "connection timed out",
    "does not appear to be a git repository",
    "repository not found",
    "could not read from remote repository",
    "not a git repository",
    "failed to connect",
)
_SKILL_FILES = ("SKILL.md", "skill.md")


#: before every git: no hooks; no detached gc or maintenance left writing into the
#: temp repository while it is removed; no background commit-graph writes
_BASE = (
    "git",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "gc.auto=0",
    "-c",
    "maintenance.auto=false",
    "-c",
    "fetch.writeCommitGraph=false",
)


def _env() -> dict[str, str]:
    env = git_guard_env(os.environ)
    env.update(GIT_TERMINAL_PROMPT="0", LC_ALL="C", GIT_ASKPASS="", SSH_ASKPASS="")
    env.pop("GIT_DIR", None)
    env.pop("GIT_WORK_TREE", None)
    return env


def _git(args: list[str], *, url: str, options: FetchOptions, cwd: Path | None = None) -> str:
    """Run ``git ARGS``; a failure becomes an error that names ``url``."""
    try:
        done = subprocess.run(
            [*_BASE, *args],
            cwd=cwd,
            env=_env(),
            capture_output=True,
            text=True,
            timeout=options.git_timeout,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except subprocess.TimeoutExpired as e:
        raise SourceUnreachableError(
            f"git {args[0]} of {url} took longer than {options.git_timeout:g}s; check the "
            "network or raise the timeout."
        ) from e
    except FileNotFoundError as e:
        raise SourceUnreachableError(
            "The git program is not installed; install git to fetch skills from a repository."
        ) from e
    if done.returncode != 0:
        reason = git_reason(done.stderr, done.returncode)
        if any(marker in done.stderr.lower() for marker in _UNREACHABLE):
            raise SourceUnreachableError(f"Cannot reach the git repository {url}: {reason}")
        raise _GitFailed(reason)
    return done.stdout


#: lines git adds to every remote failure; they say nothing about this one
_BOILERPLATE = (
    "could not read from remote repository",
    "please make sure you have the correct access rights",
    "and the repository exists",
)


def git_reason(stderr: str, returncode: int) -> str:
    """What a failed git said, shortened: its ``fatal:``/``error:`` lines (at most two)
    without the boilerplate git adds to every remote failure."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    useful = [line for line in lines if not any(b in line.lower() for b in _BOILERPLATE)]
    marked = [line for line in useful if line.lower().startswith(("fatal:", "error:", "ssh:"))]
    picked = [
        line.removeprefix("fatal: ").removeprefix("error: ").rstrip(".")
        for line in (marked or useful)
    ]
    reason = "; ".join(dict.fromkeys(picked[:2]))
    return reason or f"git exited with code {returncode}"


class _GitFailed(Exception):
    """A git command failed for a reason the caller classifies (ref not found...)."""


def remote_commit(url: str, ref: str | None, options: FetchOptions) -> str:
    """The commit ``ref`` names on the remote (a tag's target, a branch's tip, HEAD)."""
    check_argument(url, ref)
    if ref is not None and _SHA.match(ref):
        return ref
    options.reporter.step(f"asking {url} for {ref or 'its default branch'}")
    try:
        out = _git(
            ["ls-remote", url, *(() if ref is None else (ref, f"{ref}^{{}}")), "HEAD"],
            url=url,
            options=options,
        )
    except _GitFailed as e:
        raise SourceUnreachableError(f"Cannot list the refs of {url}: {e}") from e
    refs: dict[str, str] = {}
    for line in out.splitlines():
        sha, _, name = line.partition("\t")
        refs[name] = sha
    wanted = (
        ("HEAD",)
        if ref is None
        else (f"refs/tags/{ref}^{{}}", f"refs/tags/{ref}", f"refs/heads/{ref}", ref)
    )
    for name in wanted:
        if name in refs:
            return refs[name]
    if ref is None:
        raise RefNotFoundError(f"{url} has no default branch (HEAD); name one with @REF.")
    raise RefNotFoundError(
        f"{url} has no tag or branch named {ref!r}; list them with `git ls-remote {url}`, "
        "or give a full commit sha."
    )


@dataclass
class GitCheckout:
    """A shallow fetch of one commit: skill folders found, checked out on demand."""

    url: str
    root: Path
    commit: str
    options: FetchOptions

    def skill_folders(self, under: str | None) -> list[str]:
        """Every folder (relative, ``""`` for the top) holding a SKILL.md, under ``under``."""
        out = _git(
            ["ls-tree", "-r", "--name-only", self.commit],
            url=self.url,
            options=self.options,
            cwd=self.root,
        )
        found: list[str] = []
        prefix = f"{under.strip('/')}/" if under else ""
        for line in out.splitlines():
            parts = tuple(line.split("/"))
            if parts[-1] not in _SKILL_FILES or is_excluded(parts):
                continue
            folder = "/".join(parts[:-1])
            if (not prefix or f"{folder}/".startswith(prefix)) and folder not in found:
                found.append(folder)
        if not found:
            where = f"{self.url} (folder {under})" if under else self.url
            raise NotASkillSourceError(
                f"{where} holds no SKILL.md at {self.commit[:12]}; it is not a skill source."
            )
        return sorted(found)

    def skill_files(self, folders: list[str]) -> Path:
        """Check out only the ``SKILL.md`` of each folder (one batched blob fetch), to
        read names and descriptions before choosing; returns the root."""
        patterns = [f"/{f}/{name}" if f else f"/{name}" for f in folders for name in _SKILL_FILES]
        self._sparse(patterns)
        return self.root

    def checkout(self, folders: list[str]) -> Path:
        """Check out only ``folders`` (all of it when one is the top); returns the root."""
        self.options.reporter.step(f"checking out {len(folders)} skill folder(s)")
        self._sparse(["/*"] if "" in folders else [f"/{folder}/" for folder in folders])
        return self.root

    def _sparse(self, patterns: list[str]) -> None:
        run = {"url": self.url, "options": self.options, "cwd": self.root}
        _git(["sparse-checkout", "set", "--no-cone", *patterns], **run)  # type: ignore[arg-type]
        _git(["checkout", "-q", "--detach", self.commit], **run)  # type: ignore[arg-type]


def fetch_commit(url: str, ref: str | None, workdir: Path, options: FetchOptions) -> GitCheckout:
    """Fetch the one commit ``ref`` names (default branch when None) into ``workdir``."""
    commit = remote_commit(url, ref, options)
    root = workdir / "repo"
    root.mkdir(parents=True)
    run = {"url": url, "options": options, "cwd": root}
    _git(["init", "-q", "--template=", "."], **run)  # type: ignore[arg-type]
    _git(["remote", "add", "origin", url], **run)  # type: ignore[arg-type]
    options.reporter.step(f"fetching {url} at {commit[:12]}")
    shallow = ["fetch", "-q", "--depth", "1", "--filter=blob:none", "--no-tags", "origin"]
    try:
        _git([*shallow, commit], **run)  # type: ignore[arg-type]
    except _GitFailed:
        _fetch_all(root, url, commit, options)
    return GitCheckout(url, root, commit, options)


def _fetch_all(root: Path, url: str, commit: str, options: FetchOptions) -> None:
    """A server that will not send an unadvertised sha: fetch every branch and tag."""
    refspecs = ["+refs/heads/*:refs/remotes/origin/*", "+refs/tags/*:refs/tags/*"]
    try:
        _git(
            ["fetch", "-q", "--filter=blob:none", "origin", *refspecs],
            url=url,
            options=options,
            cwd=root,
        )
        _git(["cat-file", "-e", f"{commit}^{{commit}}"], url=url, options=options, cwd=root)
    except _GitFailed as e:
        raise RefNotFoundError(
            f"{url} has no commit {commit}; check the sha (a full 40-character one)."
        ) from e

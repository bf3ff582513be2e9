"""``install_from``: install the chosen skills of any source through the one install flow.

Parse the source, open it in a temp dir, choose (``skills``, ``all_skills``; a
source with one skill needs neither, one with several lists them and asks), fetch
only what was chosen, then hand each folder to
:func:`skilldeck.skills.packaging.package.install` with its origin — so the
hostile-archive checks, validation, the plug-in checks of
:mod:`skilldeck.skills.packaging.hooks`, the atomic move and the lock entry are the
same for a git repository as for a local folder.
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Sequence
from pathlib import Path

from skilldeck.config import Settings
from skilldeck.errors import NotASkillSourceError, PackageError, SkillChoiceError
from skilldeck.skills.packaging.lockfile import Scope, skills_root
from skilldeck.skills.packaging.package import InstalledSkill, install
from skilldeck.skills.sources.httpsource import open_client
from skilldeck.skills.sources.resolve import Candidate, open_source
from skilldeck.skills.sources.spec import FetchOptions, parse_source

__all__ = ["Choice", "brief", "choose", "fetch_options", "install_from", "list_source"]

#: how much of a description a listing of a source's skills shows
BRIEF_LIMIT = 60


class Choice(str):
    """An item of :attr:`SkillChoiceError.candidates <skilldeck.errors.SkillChoiceError>`:
    the string it always was (the skill's name, or its folder where the name is not
    enough) that also carries the skill's name, folder inside the source and
    description — ``install --json`` lists them as objects, telling apart two skills
    of one name."""

    name: str
    subpath: str
    description: str

    def __new__(cls, value: str, candidate: Candidate) -> Choice:
        self = super().__new__(cls, value)
        self.name, self.subpath = candidate.name, candidate.subpath
        self.description = candidate.description
        return self

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "subpath": self.subpath, "description": self.description}


def fetch_options(settings: Settings, base: FetchOptions | None = None) -> FetchOptions:
    """``base`` (or the defaults) with the GitHub URL of ``[skills] github_url``."""
    options = base or FetchOptions()
    github_url = getattr(settings.skills, "github_url", None)
    if github_url and options.github_url == FetchOptions.github_url:
        options = dataclasses.replace(options, github_url=github_url)
    return options


def install_from(
    source: str | Path,
    *,
    settings: Settings,
    skills: Sequence[str] = (),
    all_skills: bool = False,
    scope: Scope = "workspace",
    verify_key: Path | None = None,
    force: bool = False,
    identity: Path | None = None,
    allow_risk: bool = False,
    fetch: FetchOptions | None = None,
) -> list[InstalledSkill]:
    """Install the chosen skills of ``source`` (a path, URL, ``owner/repo``…).

    Raises :class:`~skilldeck.errors.SkillChoiceError` (listing the skills) when the
    source holds several and neither ``skills`` nor ``all_skills`` chose.
    """
    if skills and all_skills:
        raise SkillChoiceError(
            "--skill and --all both given: choose one (--skill NAME, repeatable, or --all).",
            candidates=[],
        )
    options = fetch_options(settings, fetch)
    spec = parse_source(str(source), github_url=options.github_url)
    if spec.kind == "local" and not Path(spec.location).exists():
        raise NotASkillSourceError(
            f"{source} does not exist; pass a skill folder, a .skill file, owner/repo, a git "
            "URL, an https URL or a skills index."
        )
    installed: list[InstalledSkill] = []
    with (
        tempfile.TemporaryDirectory(prefix="skilldeck-fetch-", ignore_cleanup_errors=True) as tmp,
        open_client(options) as client,
    ):
        opened = open_source(spec, Path(tmp), options, client)
        chosen = choose(opened.candidates(), skills, all_skills=all_skills, source=str(source))
        refuse_same_name(chosen, str(source))
        if len(chosen) > 1 and not force:
            refuse_installed(chosen, settings, scope)
        for item in opened.materialize(chosen):
            installed.append(
                install(
                    item.path,
                    scope=scope,
                    verify_key=verify_key,
                    force=force,
                    settings=settings,
                    identity=identity,
                    allow_risk=allow_risk,
                    origin=item.origin,
                )
            )
    return installed


def list_source(
    source: str, *, settings: Settings, fetch: FetchOptions | None = None
) -> list[Candidate]:
    """The skills ``source`` holds, without installing any."""
    options = fetch_options(settings, fetch)
    spec = parse_source(source, github_url=options.github_url)
    with (
        tempfile.TemporaryDirectory(prefix="skilldeck-fetch-", ignore_cleanup_errors=True) as tmp,
        open_client(options) as client,
    ):
        return open_source(spec, Path(tmp), options, client).candidates()


def refuse_installed(chosen: list[Candidate], settings: Settings, scope: Scope) -> None:
    """Refuse, before installing any, when some of several chosen skills are already
    installed: half a batch installed and the rest never tried is worse than nothing."""
    root = skills_root(settings, scope)
    taken = [c.name for c in chosen if (root / c.name).exists() or (root / c.name).is_symlink()]
    if taken:
        raise PackageError(
            f"Already installed in the {scope} scope ({root}): {', '.join(taken)}. Nothing "
            "was installed. Pass --force to replace them (backups are kept), or choose the "
            "others with --skill NAME."
        )


def refuse_same_name(chosen: list[Candidate], source: str) -> None:
    """Refuse, before installing any, two chosen skills of one name: they would
    install into one folder, the second refused (or, with --force, replacing the
    first) after the first was installed."""
    by_name: dict[str, list[Candidate]] = {}
    for c in chosen:
        by_name.setdefault(c.name, []).append(c)
    clashes = [group for group in by_name.values() if len(group) > 1]
    if not clashes:
        return
    described = "; ".join(
        f"{len(group)} skills named {group[0].name!r}, in "
        + ", ".join(c.subpath or "(top)" for c in group)
        for group in clashes
    )
    first = next((c.subpath for c in clashes[0] if c.subpath), clashes[0][0].name)
    raise SkillChoiceError(
        f"{source} holds {described}: they would install into one folder. Nothing was "
        f"installed. Choose the one you mean by its folder (--skill {first}) and any "
        "others with more --skill NAME.",
        candidates=[Choice(c.subpath, c) for group in clashes for c in group],
    )


def brief(text: str, limit: int = BRIEF_LIMIT) -> str:
    """``text`` on one line, cut at a word boundary with "…" when longer than ``limit``:
    a listing cut mid-word ("customer. U") reads as a typo. A first word longer than
    ``limit`` is cut where it must be."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    head = flat[: limit - 1]
    if flat[limit - 1] != " " and " " in head:
        head = head[: head.rindex(" ")]
    return head.rstrip(" ,;:.—-") + "…"


def choose(
    candidates: list[Candidate], wanted: Sequence[str], *, all_skills: bool, source: str
) -> list[Candidate]:
    """The candidates asked for; all of one; several without a choice is an error."""
    if all_skills or (len(candidates) == 1 and not wanted):
        return candidates
    if not wanted:
        raise SkillChoiceError(
            f"{source} holds {len(candidates)} skills:\n{listing(candidates)}\nChoose with "
            "--skill NAME (repeatable) or install them all with --all.",
            candidates=[Choice(c.name, c) for c in candidates],
        )
    out: list[Candidate] = []
    for name in wanted:
        match = _matching(candidates, name, source)
        out.extend(m for m in match if m not in out)
    return out


def listing(candidates: list[Candidate]) -> str:
    """One line per skill — name, its folder when another skill has that name, and
    its description (or "(no description)") — for a user choosing among them."""
    names = [c.name for c in candidates]
    lines = []
    for c in candidates:
        where = f" ({c.subpath})" if names.count(c.name) > 1 and c.subpath else ""
        lines.append(f"  {c.name}{where} — {brief(c.description) or '(no description)'}")
    return "\n".join(lines)


def _matching(candidates: list[Candidate], name: str, source: str) -> list[Candidate]:
    """The one candidate ``--skill name`` means: its folder inside the source (exact),
    else its name or folder name. Two skills answering to it is an error, not a guess."""
    match = [c for c in candidates if c.subpath and c.subpath.strip("/") == name.strip("/")]
    match = match or [c for c in candidates if name in (c.name, Path(c.subpath).name)]
    if not match:
        names = ", ".join(c.name for c in candidates)
        raise NotASkillSourceError(f"{source} has no skill named {name!r}; it holds: {names}.")
    if len(match) > 1:
        paths = ", ".join(c.subpath or "(top)" for c in match)
        first = next((c.subpath for c in match if c.subpath), name)
        folder = f"{source.rstrip('/')}/{first}"
        directly = f", or install its folder directly: `skilldeck skills install {folder}`"
        raise SkillChoiceError(
            f"{source} holds {len(match)} skills named {name!r}, in {paths}; install the "
            f"one you mean by its folder: --skill {first}"
            + (directly if Path(source).is_dir() else "")
            + ".",
            candidates=[Choice(c.subpath, c) for c in match],
        )
    return match

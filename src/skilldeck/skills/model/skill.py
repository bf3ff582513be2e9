"""The ``Skill`` object: metadata read eagerly, body and resources read lazily.

Level 1 (name + description) is all discovery pays for; the body (level 2) is read
from disk the first time ``body`` is asked for, starting at the byte offset the parser
recorded, and resources (level 3, :mod:`.resources`) are listed/read on demand with
path confinement. A skill rebuilt by discovery decodes its stored fields on first
use (:mod:`.stored`: the fast constructors and the decoding).

Speed note: the slot layout is justified by ``python -m bench discovery`` (figure
``warm``, ratio to skills-ref).

A skill holds facts only. Whether it can be used (config's disabled list,
machine-level gating, one agent's tools) is the registry's view: ask
``SkillRegistry.is_enabled`` / ``why_unavailable`` / ``is_available``.
"""

from __future__ import annotations

import os
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from skilldeck.skills import model
from skilldeck.skills.model import resources
from skilldeck.skills.model.diagnostics import Diagnostic, diagnostic_from_row, diagnostic_to_row
from skilldeck.skills.model.stored import FieldStore, StoredFields

if TYPE_CHECKING:
    from skilldeck.skills.model.spec import SkillMetadata


class SkillKind(StrEnum):
    PROMPT = "prompt"  # SKILL.md only (plus resources)
    SCRIPT = "script"  # frontmatter `entrypoint: scripts/<file>`
    CODE = "code"  # skill.py with one CodeSkill subclass


class SkillSource(StrEnum):
    """Where a skill came from, highest precedence first."""

    REGISTERED = "registered"
    ROOT = "root"  # an explicit --root given on the command line
    WORKSPACE = "workspace"
    USER = "user"
    EXTRA = "extra"  # extra directories from config
    BUNDLED = "bundled"


def detect_kind(folder: Path, metadata: SkillMetadata) -> SkillKind:
    if os.path.isfile(os.path.join(folder, "skill.py")):
        return SkillKind.CODE
    return declared_kind(metadata)


def declared_kind(metadata: SkillMetadata) -> SkillKind:
    """The kind the frontmatter asks for, ignoring a ``skill.py`` in the folder."""
    # strict-valid skills (spec fields only) declare it as `metadata: {entrypoint: …}`
    if metadata.entrypoint or metadata.metadata.get("entrypoint"):
        return SkillKind.SCRIPT
    return SkillKind.PROMPT


def declared_kind_of(fields: dict[str, Any]) -> SkillKind:
    """:func:`declared_kind` from metadata field values (see ``Skill.field_values``)."""
    return SkillKind.SCRIPT if declared_entrypoint(fields) else SkillKind.PROMPT


def declared_entrypoint(fields: dict[str, Any]) -> str | None:
    """The entrypoint metadata field values declare, at the top level or (for
    strict-valid skills) under ``metadata:``."""
    entry = fields.get("entrypoint")
    if entry:
        return entry  # type: ignore[no-any-return]
    meta = fields.get("metadata")
    return meta.get("entrypoint") if meta else None


#: Frontmatter fields that can make a skill unavailable (see :mod:`.gating`).
GATING_FIELDS = ("requires_tools", "requires_bins", "requires_env", "compatibility")


def sets_gating_field(fields: dict[str, Any]) -> bool:
    """Whether metadata field values set any of :data:`GATING_FIELDS` (spelled out:
    discovery asks this of every skill it parses)."""
    return bool(
        fields.get("requires_tools")
        or fields.get("requires_bins")
        or fields.get("requires_env")
        or fields.get("compatibility")
        or fields.get("credentials")
        or fields.get("dependencies")
    )


class GatingFields(NamedTuple):
    """The frontmatter fields gating reads, as a discovered skill stored them."""

    requires_tools: list[str]
    requires_bins: list[str]
    requires_env: list[str]
    compatibility: str | None


class Skill(StoredFields):
    """One loaded skill. ``folder`` is the skill directory, ``skill_md`` its SKILL.md.

    ``body_offset`` is the byte offset of the body inside ``skill_md`` (after the
    closing ``---`` line), so the body can be loaded without re-parsing YAML.
    Equality is identity (two loads of one folder are two skills).
    """

    # What every skill sets is in slots; what is usually left as it starts (not
    # gated, no model built yet) and what is derived on first use (paths, decoded
    # snapshot fields, diagnostics, body) has a class-level default and lands in the
    # instance dict only when set, so a discovered skill costs nine stores.
    __slots__ = (
        "_end",
        "_md",
        "_name",
        "_start",
        "_store",
        "body_offset",
        "kind",
        "root",
        "source",
    )

    _end: int
    _md: str | None
    _name: str
    _start: int
    _store: FieldStore | None
    body_offset: int
    kind: SkillKind
    root: Path | None
    source: SkillSource

    #: whether a gating field is set, for a skill whose metadata is not built yet
    _gate: bool = False
    _metadata: SkillMetadata | None = None
    _body: str | None = None
    _diag_rows: list[list[Any]] | None = None
    _diagnostics: list[Diagnostic] | None = None
    _fields: dict[str, Any] | None = None
    _folder: Path | None = None
    _skill_md: Path | None = None

    def __init__(
        self,
        metadata: SkillMetadata,
        folder: Path,
        skill_md: Path,
        source: SkillSource = SkillSource.REGISTERED,
        root: Path | None = None,
        body_offset: int = 0,
        kind: SkillKind = SkillKind.PROMPT,
        diagnostics: list[Diagnostic] | None = None,
        _body: str | None = None,
    ) -> None:
        self.metadata = metadata
        self._folder = folder
        self._skill_md = skill_md
        self._md = None
        self.source = source
        self.root = root
        self.body_offset = body_offset
        self.kind = kind
        self._diagnostics = [] if diagnostics is None else diagnostics
        if _body is not None:
            self._body = _body

    # ---- level 1 -----------------------------------------------------------------

    @property
    def metadata(self) -> SkillMetadata:
        meta = self._metadata
        if meta is None:
            try:  # the facade imports pydantic only now: warm listings never get here
                meta = model.SkillMetadata.model_validate(self._stored_fields())
            except ValueError:  # pydantic's ValidationError: a damaged stored record
                meta = self._reload()
            self._metadata = meta
        return meta

    @metadata.setter
    def metadata(self, value: SkillMetadata) -> None:
        self._metadata = value
        self._store = None
        self._fields = None
        self._gate = False
        self._name = value.name

    @property
    def name(self) -> str:
        return self._name

    @property
    def description(self) -> str:
        meta = self._metadata
        if meta is not None:
            return meta.description
        return self._stored_fields()["description"]  # type: ignore[no-any-return]

    @property
    def version(self) -> str | None:
        meta = self._metadata
        if meta is not None:
            return meta.version
        version: str | None = self._stored_fields().get("version")
        return version

    def may_be_gated(self) -> bool:
        """Whether any frontmatter field gating looks at is set. Free on a snapshot
        skill: the snapshot recorded the answer, so its metadata stays undecoded."""
        if self._metadata is None:
            return self._gate
        meta = self._metadata
        return bool(
            meta.requires_tools
            or meta.requires_bins
            or meta.requires_env
            or meta.compatibility
            or meta.credentials
            or meta.dependencies
        )

    def gating_fields(self) -> SkillMetadata | GatingFields:
        """What :mod:`.gating` reads (``requires_tools``, ``requires_bins``,
        ``requires_env``, ``compatibility``): the metadata itself, or for a snapshot
        skill the stored values, so gating a few skills of a listing does not
        import and run the metadata model for them."""
        if self._metadata is not None:
            return self._metadata
        stored = self._stored_fields()
        tools, bins, env = (stored.get(f, []) for f in GATING_FIELDS[:3])
        compatibility = stored.get("compatibility")
        if not (
            all(type(v) is list and all(type(x) is str for x in v) for v in (tools, bins, env))
            and (compatibility is None or type(compatibility) is str)
        ):
            return self.metadata  # not what was stored: let the model validate it
        return GatingFields(tools, bins, env, compatibility)

    def field_values(self) -> dict[str, Any]:
        """The metadata as a dict of the fields that were set (what the discovery
        snapshot stores), without building the model when it was not built yet."""
        if self._metadata is not None:
            return self._metadata.model_dump(exclude_defaults=True)
        return self._stored_fields()

    # ---- where -------------------------------------------------------------------

    @property
    def folder(self) -> Path:
        folder = self._folder
        if folder is None:
            folder = self._folder = Path(os.path.dirname(self._md or ""))
        return folder

    @folder.setter
    def folder(self, value: Path) -> None:
        self._folder = value

    @property
    def skill_md(self) -> Path:
        path = self._skill_md
        if path is None:
            path = self._skill_md = Path(self._md or "")
        return path

    @skill_md.setter
    def skill_md(self, value: Path) -> None:
        self._skill_md = value
        self._md = None

    @property
    def skill_md_str(self) -> str:
        """``str(skill_md)`` without building a Path (discovered skills hold a string)."""
        return self._md if self._md is not None else str(self._skill_md)

    @property
    def folder_str(self) -> str:
        """``str(folder)`` without building a Path."""
        if self._folder is None and self._md is not None:
            return os.path.dirname(self._md)
        return str(self.folder)

    # ---- diagnostics -------------------------------------------------------------

    @property
    def diagnostics(self) -> list[Diagnostic]:
        diags = self._diagnostics
        if diags is None:
            md = self.skill_md
            try:
                diags = [diagnostic_from_row(row, md) for row in self.diagnostic_rows()]
            except (ValueError, TypeError, KeyError):
                self._reload()
                diags = self._diagnostics or []
            self._diagnostics = diags
        return diags

    @diagnostics.setter
    def diagnostics(self, value: list[Diagnostic]) -> None:
        self._diagnostics = value
        self._diag_rows = None

    def diagnostic_rows(self) -> list[list[Any]]:
        """Diagnostics as ``[code, rule, message, severity, line, path]`` rows
        (path ``"="`` is this SKILL.md), decoded from the store when they came
        from one, so a JSON listing needs no Diagnostic objects."""
        if self._diagnostics is not None:
            md = self.skill_md_str
            return [diagnostic_to_row(d, md) for d in self._diagnostics]
        if self._diag_rows is None:
            self._stored_fields()
        rows = self._diag_rows
        if rows is not None:
            return rows
        return self.diagnostic_rows() if self._diagnostics is not None else []  # reloaded

    def __repr__(self) -> str:
        return (
            f"Skill(metadata={self.metadata!r}, folder={self.folder!r}, "
            f"skill_md={self.skill_md!r}, source={self.source!r}, root={self.root!r}, "
            f"body_offset={self.body_offset!r}, kind={self.kind!r}, "
            f"diagnostics={self.diagnostics!r})"
        )

    # ---- level 2 -------------------------------------------------------------

    @property
    def body(self) -> str:
        """Level 2: the Markdown after the frontmatter, read on first access."""
        if self._body is None:
            raw = self.skill_md.read_bytes()[self.body_offset :]
            text = raw.decode("utf-8", errors="replace")
            self._body = text.replace("\r\n", "\n").strip("\n")
        return self._body

    def with_body(self, body: str) -> Skill:
        """Attach an in-memory body (for skills registered in code)."""
        self._body = body
        return self

    # ---- level 3 (see :mod:`.resources`) ---------------------------------------------

    def resolve_resource(self, relative: str) -> Path:
        """Resolve ``relative`` inside the skill folder or raise ResourceAccessError
        (symlinks are resolved first, so a link pointing outside is refused)."""
        return resources.resolve_resource(self.folder, self.name, relative)

    def list_resources(self) -> list[str]:
        """Files under the skill folder other than SKILL.md, as sorted relative paths."""
        return resources.list_resources(self.folder)

    def read_resource(self, relative: str) -> str:
        """Level 3: one file of the skill, read without following links out of it."""
        return resources.read_resource(self.folder, self.name, relative)

"""How a discovered skill holds its fields until they are needed.

A skill rebuilt by discovery holds its name, its SKILL.md path as a string and a
handle on its stored, already validated fields (a :class:`FieldStore`: discovery's
snapshot implements it, this module never sees how it is encoded); the metadata
model, the paths and the diagnostics are built from them the first time each is
asked for. :class:`StoredFields` is the part of :class:`~.skill.Skill` that does
this: the fast constructors discovery uses (``Skill._from_store``,
``Skill._from_fields``, ``Skill._many_from_store``; nothing else builds a ``Skill``
without ``__init__``) and the decoding on first use, with its fallback of reading
SKILL.md again when a stored record no longer decodes.

Speed note: the constructors' few stores and ``_many_from_store``'s loop are
justified by ``python -m bench discovery`` (figure ``warm``, ratio to skills-ref).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, Self

from skilldeck.errors import SkillParseError

if TYPE_CHECKING:
    from skilldeck.skills.model.diagnostics import Diagnostic
    from skilldeck.skills.model.skill import SkillKind, SkillSource
    from skilldeck.skills.model.spec import SkillMetadata

__all__ = ["FieldStore", "StoredFields"]


class FieldStore(Protocol):
    """Where a discovered skill's validated fields wait, still encoded (discovery's
    snapshot blob): ``decode(start, end)`` gives ``(fields or None, diagnostic
    rows)`` or raises ValueError for a damaged record."""

    def decode(self, start: int, end: int) -> tuple[dict[str, Any] | None, list[Any]]: ...


class StoredFields:
    """The stored-fields half of ``Skill`` (a base class: ``Skill`` declares the
    slots it fills, and the class-level defaults, in one place)."""

    # an instance dict for what is set only sometimes (see Skill's slot comment)
    __slots__ = ("__dict__", "__weakref__")

    if TYPE_CHECKING:  # declared (slots or class defaults) by Skill
        _end: int
        _md: str | None
        _name: str
        _start: int
        _store: FieldStore | None
        _gate: bool
        _fields: dict[str, Any] | None
        _diag_rows: list[list[Any]] | None
        _metadata: SkillMetadata | None
        _diagnostics: list[Diagnostic] | None
        body_offset: int
        kind: SkillKind
        root: Path | None
        source: SkillSource

        @property
        def skill_md(self) -> Path: ...

    @classmethod
    def _from_store(
        cls,
        name: str,
        skill_md: str,
        store: FieldStore,
        start: int,
        end: int,
        *,
        gate: bool,
        source: SkillSource,
        root: Path | None,
        body_offset: int,
        kind: SkillKind,
    ) -> Self:
        """A skill whose fields and diagnostics are ``store``'s record from ``start``
        to ``end``, decoded on first use (a record that no longer decodes makes the
        skill read its SKILL.md again then). ``gate`` says whether any gating field
        is set, so gating can skip the skill without decoding it."""
        self = cls.__new__(cls)
        self._name, self._md, self._store, self._start, self._end = (
            name,
            skill_md,
            store,
            start,
            end,
        )
        if gate:
            self._gate = True
        self.source, self.root, self.body_offset, self.kind = source, root, body_offset, kind
        return self

    @classmethod
    def _from_fields(
        cls,
        name: str,
        skill_md: str,
        fields: dict[str, Any],
        diagnostic_rows: list[list[Any]],
        *,
        gate: bool,
        source: SkillSource,
        root: Path | None,
        body_offset: int,
        kind: SkillKind,
    ) -> Self:
        """A skill from field values just validated (of the declared types, so
        validating them later gives what validating them now would); the metadata
        model and the Diagnostic objects are built on first use. Discovery keeps
        these: no model with its twenty containers and no Path objects stay alive
        per skill, and the skill is the same as a warm discovery's."""
        self = cls.__new__(cls)
        self._name, self._md, self._store, self._start, self._end = name, skill_md, None, 0, 0
        if gate:
            self._gate = True
        self._fields = fields
        self._diag_rows = diagnostic_rows
        self.source, self.root, self.body_offset, self.kind = source, root, body_offset, kind
        return self

    @classmethod
    def _many_from_store(
        cls,
        store: FieldStore,
        records: Iterable[tuple[str, str, int, int, int, SkillKind]],
        *,
        source: SkillSource,
        root: Path | None,
    ) -> list[Self]:
        """:meth:`_from_store` for many ``(skill_md, name, start, end, body_offset,
        kind)`` records at once, none gated (the caller marks the few that are):
        a warm discovery builds thousands, and a call per skill would be a tenth of
        it (``python -m bench discovery``, figure ``warm``)."""
        new = cls.__new__
        skills: list[Self] = []
        add = skills.append
        for md, name, start, end, offset, kind in records:
            self = new(cls)
            self._name, self._md, self._store, self._start, self._end = name, md, store, start, end
            self.source, self.root, self.body_offset, self.kind = source, root, offset, kind
            add(self)
        return skills

    def _stored_fields(self) -> dict[str, Any]:
        """The stored metadata fields as a dict (decoded once, shape-checked)."""
        fields = self._fields
        if fields is None:
            try:
                if self._store is None:
                    raise ValueError("no stored record")
                fields, self._diag_rows = self._store.decode(self._start, self._end)
                ok = (
                    fields is not None
                    and type(fields.get("description")) is str
                    and type(fields.get("version", "")) is str
                )
            except ValueError:
                ok = False
            if not ok or fields is None:
                fields = self._reload().model_dump(exclude_defaults=True)
            self._fields = fields
        return fields

    def _reload(self) -> SkillMetadata:
        """Read SKILL.md again (a stored record that does not decode), adopting
        what it says now (metadata, name, diagnostics); a file that no longer loads
        is a SkillParseError."""
        from skilldeck.skills.format import load_skill  # lazy: format builds Skills (cycle)

        fresh, diagnostics = load_skill(self.skill_md, source=self.source, root=self.root)
        if fresh is None:
            problem = next((d for d in diagnostics if d.is_error), None)
            raise SkillParseError(
                problem.message if problem else "the skill no longer loads",
                path=self.skill_md,
                line=problem.line if problem else None,
                code=problem.code if problem else "SD000",
            )
        self._metadata = fresh.metadata
        self._name = fresh.name
        self._diagnostics = fresh.diagnostics
        self._diag_rows = None
        return fresh.metadata

"""Per-field rules and normalisation behind :func:`skilldeck.skills.format.metadata.build_metadata`.

Each helper takes one raw frontmatter value, returns what :class:`SkillMetadata`
stores, and reports through the :class:`Collector`: ``flag`` for the spec rules
skilldeck relaxes in lenient mode (warning) and enforces in strict mode (error),
``error`` for what makes a skill unusable either way.
"""

from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path
from typing import Any

from skilldeck.skills.format import _fields as F
from skilldeck.skills.format._rules import Collector
from skilldeck.skills.format.parse import ParsedFrontmatter
from skilldeck.skills.model.names import KNOWN_FIELDS, SPEC_FIELDS

__all__ = ["from_metadata", "normalise", "reject_non_spec", "skill_description", "skill_name"]

MAX_NAME_LENGTH = 64
MAX_DESCRIPTION_LENGTH = 1024
MAX_COMPATIBILITY_LENGTH = 500
_SPEC_LIST = ", ".join(sorted(SPEC_FIELDS))
_GOOD_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*\Z")
_COLLECTIONS = (dict, list)  # for isinstance: a constant tuple, no union built per call

_TEXT_FIELDS = ("license", "when_to_use", "model", "agent", "version")
_TOOL_LISTS = ("allowed-tools", "disallowed-tools", "requires-tools", "forbidden-tools")
_NAME_LISTS = ("arguments", "tags", "conflicts", "before", "after", "requires-bins",
               "requires-env", "paths")  # fmt: skip
_LINE_LISTS = ("execution-protocol", "preconditions", "postconditions")
#: ``requires:`` may also be a mapping of requirement kinds → our fields.
_REQUIREMENT_KINDS = {
    "skills": "requires",
    "tools": "requires_tools",
    "bins": "requires_bins",
    "env": "requires_env",
}


def from_metadata(
    parsed: ParsedFrontmatter, fields: dict[str, Any], c: Collector, folder: str, key: str
) -> None:
    """Strict-valid skills can only use the spec fields, so they declare skilldeck's
    ``version`` and ``entrypoint`` under ``metadata:``; read them from there when the
    top-level field is absent (an entrypoint gets the same checks). A
    ``requirements.txt`` beside SKILL.md is noted as ``dependencies``."""
    if folder and "dependencies" not in fields and _is_file(f"{folder}/requirements.txt"):
        # read at use (skills/execution/environments.py); noted here so gating sees it
        fields["dependencies"] = {"files": ["requirements.txt"]}
    meta: dict[str, str] | None = fields.get("metadata")
    if not meta:
        return
    if "version" not in fields and meta.get("version"):
        fields["version"] = meta["version"]
    if "entrypoint" not in fields and meta.get("entrypoint"):
        fields["entrypoint"] = _entrypoint(key, meta["entrypoint"].strip(), c, folder)
    if "credentials" not in fields and (found := F.openclaw_credentials(meta)):
        fields["credentials"] = found  # OpenClaw's requires.env / primaryEnv


def reject_non_spec(c: Collector, key: str, canon: str) -> None:
    if canon in SPEC_FIELDS:
        c.error("SD151", f"`{key}` must be spelled `{canon}` in strict mode.", key=key)
    elif canon in KNOWN_FIELDS:
        c.error("SD151", f"`{key}` is a Claude Code/skilldeck extension, not an Agent "
                f"Skills spec field; strict mode allows only {_SPEC_LIST}. Validate "
                "without --strict to use it.", key=key)  # fmt: skip
    else:
        c.error("SD150", f"unexpected field `{key}`: strict mode allows only {_SPEC_LIST}. "
                "Move custom data under `metadata:`.", key=key)  # fmt: skip


def normalise(
    parsed: ParsedFrontmatter,
    key: str,
    canon: str,
    value: Any,
    fields: dict[str, Any],
    extra: dict[str, Any],
    c: Collector,
    folder: str,
) -> None:
    """Store the normalised ``value`` of one known field in ``fields``."""
    attr = canon.replace("-", "_")
    if canon in _TEXT_FIELDS:
        fields[attr] = F.as_text(parsed, key, value).strip()
    elif canon == "argument-hint":
        fields[attr] = F.as_text(parsed, key, value, lists_ok=True).strip()
    elif canon in _TOOL_LISTS or canon in _NAME_LISTS:
        fields[attr] = F.as_list(parsed, key, value)
    elif canon in _LINE_LISTS:
        fields[attr] = F.as_list(parsed, key, value, lines=True)
    elif canon in ("disable-model-invocation", "user-invocable"):
        fields[attr] = F.as_bool(key, value)
    elif canon == "timeout":
        fields[attr] = F.as_number(key, value)
    elif canon == "max-turns":
        fields[attr] = F.as_int(key, value)
    elif canon == "compatibility":
        fields[attr] = _compatibility(parsed, key, value, c)
    elif canon == "metadata":
        fields[attr] = _metadata(parsed, key, value, c)
    elif canon == "requires":
        _requires(parsed, key, value, fields, extra, c)
    elif canon == "output-contract":
        fields[attr] = _output_contract(key, value)
    elif canon == "context":
        fields[attr] = _context(parsed, key, value, c)
    else:
        _runtime_field(parsed, key, canon, value, fields, c, folder)


def _runtime_field(
    parsed: ParsedFrontmatter,
    key: str,
    canon: str,
    value: Any,
    fields: dict[str, Any],
    c: Collector,
    folder: str,
) -> None:
    """``entrypoint``, ``credentials`` and ``dependencies``: what running needs."""
    attr = canon.replace("-", "_")
    if canon == "entrypoint":
        fields[attr] = _entrypoint(key, F.as_text(parsed, key, value).strip(), c, folder)
    elif canon in ("credentials", "dependencies"):
        code, read = ("SD180", F.as_credentials) if canon == "credentials" else (
            "SD181", F.as_dependencies)  # fmt: skip
        fields[attr], problems = read(value)
        for problem in problems:
            c.warn(code, f"{problem}.", key=key)


def skill_name(parsed: ParsedFrontmatter, folder: str, c: Collector, key: str | None) -> str | None:
    """The skill's name (``folder`` is the skill folder's path as a string)."""
    raw = parsed.data.get(key) if key else None
    if isinstance(raw, _COLLECTIONS):
        c.error("SD107", "`name` must be text (lowercase letters, digits and hyphens), "
                "not a " + ("mapping" if isinstance(raw, dict) else "list") + ".",
                key=key)  # fmt: skip
        return None
    name = F.text_of(parsed, (key,), raw).strip() if key else ""
    if not name:
        fallback = os.path.basename(folder)
        what = "is empty" if key else "is missing"
        if c.strict:
            c.error("SD102", f"required field `name` {what}; add `name: {fallback}`.",
                    key=key)  # fmt: skip
            return None
        c.warn("SD102", f"`name` {what}; using the folder name '{fallback}'. Add "
               f"`name: {fallback}` to the frontmatter.", key=key)  # fmt: skip
        name = fallback
    _check_name(name, folder, c, key)
    return name


def _check_name(name: str, folder: str, c: Collector, key: str | None) -> None:
    """The spec's naming rules, checked on the NFKC form like skills-ref does."""
    folder_name = os.path.basename(folder)
    if _GOOD_NAME.match(name) and len(name) <= MAX_NAME_LENGTH:  # the common case
        if name != folder_name and unicodedata.normalize("NFKC", folder_name) != name:
            c.flag("SD101", f"name '{name}' does not match its folder '{folder_name}'; "
                   f"rename the folder to '{name}' or set `name: {folder_name}`.",
                   key=key)  # fmt: skip
        return
    norm = unicodedata.normalize("NFKC", name)
    slug = _slugify(norm)
    if len(norm) > MAX_NAME_LENGTH:
        c.flag("SD103", f"name '{norm}' is {len(norm)} characters long; the limit is "
               f"{MAX_NAME_LENGTH}. Shorten it (and its folder).", key=key)  # fmt: skip
    if norm != norm.lower():
        c.flag("SD104", f"name '{norm}' must be lowercase; use '{slug}'.", key=key)
    if norm.startswith("-") or norm.endswith("-"):
        c.flag("SD105", f"name '{norm}' must not start or end with a hyphen; use "
               f"'{slug}'.", key=key)  # fmt: skip
    if "--" in norm:
        c.flag("SD105", f"name '{norm}' must not contain consecutive hyphens; use "
               f"'{slug}'.", key=key)  # fmt: skip
    bad = sorted({ch for ch in norm if not (ch.isalnum() or ch == "-")})
    if bad:
        shown = ", ".join(repr(ch) for ch in bad)
        c.flag("SD106", f"name '{norm}' contains {shown}; only letters, digits and "
               f"hyphens are allowed. Use '{slug}'.", key=key)  # fmt: skip
    if unicodedata.normalize("NFKC", folder_name) != norm:
        c.flag("SD101", f"name '{norm}' does not match its folder '{folder_name}'; rename "
               f"the folder to '{norm}' or set `name: {folder_name}`.", key=key)  # fmt: skip


def _slugify(name: str) -> str:
    out: list[str] = []
    for ch in name.lower():
        out.append(ch if ch.isalnum() else "-")
    slug = "-".join(part for part in "".join(out).split("-") if part)
    return slug[:MAX_NAME_LENGTH].strip("-") or "my-skill"


def skill_description(parsed: ParsedFrontmatter, c: Collector, key: str | None) -> str | None:
    raw = parsed.data.get(key) if key else None
    if isinstance(raw, _COLLECTIONS):
        c.error("SD112", "`description` must be text, not a "
                + ("mapping" if isinstance(raw, dict) else "list")
                + "; quote the whole value.", key=key)  # fmt: skip
        return None
    text = F.text_of(parsed, (key,), raw).strip() if key else ""
    if not text:
        what = "is empty" if key else "is missing"
        c.error("SD110", f"required field `description` {what}: add one or two sentences "
                "saying what the skill does and when to use it.", key=key)  # fmt: skip
        return None
    if len(text) > MAX_DESCRIPTION_LENGTH:
        c.flag("SD111", f"description is {len(text)} characters long; the limit is "
               f"{MAX_DESCRIPTION_LENGTH}. Move the details into the body.", key=key)  # fmt: skip
    return text


def _compatibility(parsed: ParsedFrontmatter, key: str, value: Any, c: Collector) -> str | None:
    if isinstance(value, _COLLECTIONS):
        c.flag("SD121", "`compatibility` must be text (e.g. `Requires git and Python "
               "3.11+`).", key=key)  # fmt: skip
        return None
    text = F.text_of(parsed, (key,), value)
    if len(text) > MAX_COMPATIBILITY_LENGTH:
        c.flag("SD120", f"compatibility is {len(text)} characters long; the limit is "
               f"{MAX_COMPATIBILITY_LENGTH}.", key=key)  # fmt: skip
    return text


def _metadata(parsed: ParsedFrontmatter, key: str, value: Any, c: Collector) -> dict[str, str]:
    if not isinstance(value, dict):
        c.flag("SD130", "`metadata` must be a mapping of `key: value` text lines; "
               "ignored.", key=key)  # fmt: skip
        return {}
    out: dict[str, str] = {}
    for sub, item in value.items():
        text = F.text_of(parsed, (key, sub), item)
        if isinstance(item, _COLLECTIONS):
            c.warn("SD131", f"metadata value `{sub}` is a nested "
                   + ("mapping" if isinstance(item, dict) else "list")
                   + f"; stored as the text {text!r}. Metadata values are strings.",
                   key=key)  # fmt: skip
        out[str(sub)] = text
    return out


def _requires(
    parsed: ParsedFrontmatter,
    key: str,
    value: Any,
    fields: dict[str, Any],
    extra: dict[str, Any],
    c: Collector,
) -> None:
    """``requires: [skill-a]`` or ``requires: {skills: [...], bins: [...], mcp: [...]}``."""
    if not isinstance(value, dict):
        fields["requires"] = F.as_list(parsed, key, value)
        return
    unsupported: dict[str, Any] = {}
    for kind, items in value.items():
        attr = _REQUIREMENT_KINDS.get(str(kind))
        if attr is None:
            unsupported[str(kind)] = items
            continue
        try:
            found = F.as_list(parsed, f"{key}.{kind}", items, where=(key, kind))
            fields[attr] = [*fields.get(attr, []), *found]
        except F.FieldProblem as e:
            c.flag("SD160", f"{e} (ignored).", key=key)
    if unsupported:
        extra["requires"] = unsupported
        kinds = ", ".join(f"`{k}`" for k in unsupported)
        c.warn("SD162", f"requirement kind {kinds} is not checked by skilldeck (it "
               "checks skills, tools, bins and env); kept in `extra`.", key=key)  # fmt: skip


def _output_contract(key: str, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise F.FieldProblem(f"`{key}` must be a JSON Schema written as a YAML mapping")
    import jsonschema  # lazily: only skills with an output contract pay for it

    try:
        jsonschema.Draft202012Validator.check_schema(value)
    except jsonschema.SchemaError as e:
        raise F.FieldProblem(f"`{key}` is not a valid JSON Schema: {e.message}") from e
    return value


def _context(parsed: ParsedFrontmatter, key: str, value: Any, c: Collector) -> str:
    text = F.as_text(parsed, key, value).strip()
    if text != "fork":
        c.warn("SD160", f"`context: {text}` is not supported (only `fork`); the skill runs "
               "inline.", key=key)  # fmt: skip
    return text


def _entrypoint(key: str, text: str, c: Collector, folder: str) -> str:
    if os.path.isabs(text) or ".." in Path(text).parts:
        c.error("SD171", f"entrypoint '{text}' must be a path inside the skill folder, "
                "such as `scripts/run.py`.", key=key)  # fmt: skip
    elif not _is_file(os.path.join(folder, text)):
        c.warn("SD170", f"entrypoint '{text}' does not exist in {folder}; create it or fix "
               "the path.", key=key)  # fmt: skip
    return text


def _is_file(path: str) -> bool:
    """``isfile`` that says False for paths the OS refuses (too long, NUL, …)."""
    try:
        return os.path.isfile(path)
    except (OSError, ValueError):
        return False

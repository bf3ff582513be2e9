"""The Memory tool stays inside ``$SKILLDECK_HOME/memory/<agent>/``.

Adds to ``tests/unit/tools/test_tool_memory.py`` (keys with separators, a symlinked
note): hard links, FIFOs, planted temp files, a symlinked memory folder, hostile agent
names, and a note swapped for a link between check and use.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hardening_helpers import run_with_deadline, unblock_fifo

from skilldeck.config import load_settings
from skilldeck.tools.base import ToolContext
from skilldeck.tools.memory import MemoryTool, memory_dir

pytestmark = pytest.mark.anyio
SECRET = "OUTSIDE-SECRET"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.md").write_text(SECRET, encoding="utf-8")
    return folder


def _ctx(tmp_path: Path, home: Path, agent: str = "main") -> ToolContext:
    settings = load_settings(workspace=tmp_path, home=home)
    return ToolContext(session_id="m", workspace=tmp_path, settings=settings, agent_name=agent)


@pytest.fixture
def ctx(tmp_path: Path, skilldeck_home: Path) -> ToolContext:
    return _ctx(tmp_path, skilldeck_home)


def _intact(outside: Path) -> None:
    assert (outside / "secret.md").read_text(encoding="utf-8") == SECRET
    assert sorted(p.name for p in outside.iterdir()) == ["secret.md"]


async def _all_actions(ctx: ToolContext, key: str) -> list[tuple[str, bool, str]]:
    tool = MemoryTool()
    out = []
    for args in (
        {"action": "read", "key": key},
        {"action": "write", "key": key, "content": "pwned"},
        {"action": "delete", "key": key},
    ):
        result = await tool.call(args, ctx)
        out.append((str(args["action"]), result.is_error, result.content))
    return out


@pytest.mark.parametrize(
    "key",
    ["..", "../secret", "../../outside/secret", "a/b", "/etc/passwd", "a\\b", "a\x00b", "...",
     "a..b", "a\uff0fb", "~/x", "$HOME", " ", "key\n"],
)  # fmt: skip
async def test_hostile_keys_are_refused(ctx: ToolContext, outside: Path, key: str) -> None:
    for action, is_error, content in await _all_actions(ctx, key):
        assert is_error, (action, key, content)
        assert SECRET not in content
    _intact(outside)
    home = ctx.settings.home
    assert not any(p.suffix == ".md" for p in home.rglob("*") if "memory" not in p.parts)


@pytest.mark.parametrize("agent", ["..", ".", "../..", "a/../..", "/etc", "..\\.."])
async def test_hostile_agent_names_stay_under_memory(
    tmp_path: Path, skilldeck_home: Path, agent: str
) -> None:
    ctx = _ctx(tmp_path, skilldeck_home, agent)
    base = (skilldeck_home / "memory").resolve()
    folder = memory_dir(ctx).resolve()
    assert folder.parent == base, folder
    result = await MemoryTool().call({"action": "write", "key": "note", "content": "x"}, ctx)
    assert not result.is_error
    written = [p.resolve() for p in skilldeck_home.rglob("note.md")]
    assert written and all(base in p.parents for p in written), written


async def test_hard_linked_note_is_not_read_or_modified(ctx: ToolContext, outside: Path) -> None:
    folder = memory_dir(ctx)
    folder.mkdir(parents=True)
    os.link(outside / "secret.md", folder / "leak.md")
    read = await MemoryTool().call({"action": "read", "key": "leak"}, ctx)
    assert read.is_error and SECRET not in read.content
    await MemoryTool().call({"action": "write", "key": "leak", "content": "pwned"}, ctx)
    assert (outside / "secret.md").read_text(encoding="utf-8") == SECRET


async def test_planted_temp_file_cannot_redirect_a_write(ctx: ToolContext, outside: Path) -> None:
    """A hard link (or symlink) planted where the writer puts its temp file must not
    make the write land in the linked file."""
    folder = memory_dir(ctx)
    folder.mkdir(parents=True)
    os.link(outside / "secret.md", folder / ".note.md.tmp")
    (folder / ".other.md.tmp").symlink_to(outside / "secret.md")
    for key in ("note", "other"):
        await MemoryTool().call({"action": "write", "key": key, "content": "pwned"}, ctx)
    assert (outside / "secret.md").read_text(encoding="utf-8") == SECRET


async def test_fifo_note_does_not_hang(ctx: ToolContext) -> None:
    folder = memory_dir(ctx)
    folder.mkdir(parents=True)
    fifo = folder / "pipe.md"
    os.mkfifo(fifo)
    tool = MemoryTool()

    def read() -> object:
        import anyio

        return anyio.run(tool.call, {"action": "read", "key": "pipe"}, ctx)

    try:
        finished, result = run_with_deadline(read, 3)
    finally:
        unblock_fifo(fifo)
    assert finished, "Memory read blocked on a FIFO"
    assert getattr(result, "is_error", False)


async def test_symlinked_memory_folder_is_refused(ctx: ToolContext, outside: Path) -> None:
    folder = memory_dir(ctx)
    folder.parent.mkdir(parents=True)
    folder.symlink_to(outside, target_is_directory=True)
    for action, is_error, content in await _all_actions(ctx, "secret"):
        assert is_error, (action, content)
        assert SECRET not in content
    listing = await MemoryTool().call({"action": "list"}, ctx)
    assert "secret" not in listing.content
    _intact(outside)


async def test_delete_of_a_symlink_removes_only_the_link(ctx: ToolContext, outside: Path) -> None:
    folder = memory_dir(ctx)
    folder.mkdir(parents=True)
    (folder / "link.md").symlink_to(outside / "secret.md")
    await MemoryTool().call({"action": "delete", "key": "link"}, ctx)
    _intact(outside)


async def test_note_swapped_for_a_link_after_the_check(
    ctx: ToolContext, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The path is validated, then (race) the note becomes a symlink before the open."""
    import skilldeck.tools.memory as memory

    folder = memory_dir(ctx)
    folder.mkdir(parents=True)
    (folder / "swap.md").write_text("mine", encoding="utf-8")
    real_note_path = memory._note_path

    def racing(c: ToolContext, key: str | None) -> Path:
        path = real_note_path(c, key)
        path.unlink(missing_ok=True)
        path.symlink_to(outside / "secret.md")
        return path

    monkeypatch.setattr(memory, "_note_path", racing)
    for action, _, content in await _all_actions(ctx, "swap"):
        assert SECRET not in content, action
    _intact(outside)

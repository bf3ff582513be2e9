"""Filesystem escapes, counted: every attempt must be refused (or contained), none may
read or change anything outside.

The per-vector unit tests live next to their modules (``tests/unit/tools/
test_tool_escapes.py``, ``test_tool_paths.py``, ``tests/unit/skills/packaging/test_package.py``,
``tests/unit/hardening/``); this suite throws a wider matrix at every entry point, runs
check/use races against a thread that keeps swapping a folder for a symlink, and
reports the totals (``escape_attempts``, ``escape_attempts_refused``, ``escapes`` = 0).
"""

from __future__ import annotations

import os
import shutil
import stat
import threading
import warnings
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
import stress_helpers as H
from hardening_helpers import good_skill

from skilldeck.config import Settings, load_settings
from skilldeck.errors import PackageError, SkilldeckError
from skilldeck.mcp.catalog import resource_text
from skilldeck.sandbox import probe_sandbox
from skilldeck.skills.format import load_skill
from skilldeck.skills.packaging import install
from skilldeck.skills.packaging.lockfile import skills_root
from skilldeck.tools.base import Tool, ToolContext, ToolResult
from skilldeck.tools.bash import BashTool
from skilldeck.tools.fs import GlobTool, GrepTool
from skilldeck.tools.fs.files import READ_STATE, EditTool, MultiEditTool, ReadTool, WriteTool
from skilldeck.tools.memory import MemoryTool, memory_dir

SECRET = "STRESS-OUTSIDE-SECRET"
RACE_ROUNDS = H.scale(300, 3000)


class Tally:
    """Attempts, refusals and escapes of one test; added to the suite's figures."""

    def __init__(self) -> None:
        self.attempts = self.refused = self.escapes = 0
        self.leaks: list[str] = []

    def record(self, what: str, *, refused: bool, leaked: bool) -> None:
        if not refused or leaked:
            print(f"{'LEAK' if leaked else 'not refused'}: {what}")
        self.attempts += 1
        self.refused += refused and not leaked
        if leaked:
            self.escapes += 1
            self.leaks.append(what)

    def report(self, vector: str) -> None:
        H.add(escape_attempts=self.attempts, escape_attempts_refused=self.refused,
              escapes=self.escapes, **{f"escape_attempts_{vector}": self.attempts})  # fmt: skip
        assert self.escapes == 0, self.leaks[:10]
        assert self.refused == self.attempts


@pytest.fixture
def outside() -> Iterator[Path]:
    """Outside the workspace *and* outside /tmp (the sandbox hides /tmp behind a tmpfs,
    which would make a write there look refused when it was merely invisible)."""
    base = Path("/var/tmp") if Path("/var/tmp").is_dir() else Path.home()
    folder = base / f"skilldeck-stress-{os.getpid()}-{threading.get_ident()}"
    folder.mkdir(parents=True)
    (folder / "secret.txt").write_text(f"{SECRET}\n", encoding="utf-8")
    (folder / "sub").mkdir()
    (folder / "sub" / "data.txt").write_text(f"{SECRET} data\n", encoding="utf-8")
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() if p.is_file() else b"<dir>"
        for p in sorted(folder.rglob("*"))
    }


def _world(tmp_path: Path, outside: Path) -> ToolContext:
    ws = (tmp_path / "ws").resolve()
    ws.mkdir()
    (ws / "ok.txt").write_text("fine\n", encoding="utf-8")
    (ws / "link.txt").symlink_to(outside / "secret.txt")
    (ws / "rel-link.txt").symlink_to(os.path.relpath(outside / "secret.txt", ws))
    (ws / "chain1").symlink_to(ws / "chain2")
    (ws / "chain2").symlink_to(outside / "secret.txt")
    (ws / "linkdir").symlink_to(outside, target_is_directory=True)
    (ws / "up").symlink_to("..", target_is_directory=True)
    (ws / "sub").mkdir()
    os.link(outside / "secret.txt", ws / "hard.txt")
    settings = load_settings(workspace=ws, home=tmp_path / "home")
    return ToolContext(session_id="stress", workspace=ws, settings=settings)


def _paths(ws: Path, outside: Path) -> list[str]:
    secret = outside / "secret.txt"
    rel = os.path.relpath(secret, ws)
    return [
        rel, f"sub/../{rel}", f"./././{rel}", f"sub/./../{rel}", str(secret), f"//{secret}",
        f"{ws}/../{rel}", f"/proc/self/root{secret}", f"/proc/self/cwd/{rel}",
        "link.txt", "rel-link.txt", "chain1", "linkdir/secret.txt", "linkdir/sub/data.txt",
        f"up/{ws.parent.name}/../{rel}", "up/" + rel, "hard.txt",
        f"~/{os.path.relpath(secret, Path.home())}",
        f"{rel}\x00.txt", "linkdir/../secret.txt",
    ]  # fmt: skip


def _sibling(path: str) -> str:
    """A new file next to ``path`` (outside too when ``path``'s folder is)."""
    head = path.rsplit("/", 1)[0] if "/" in path else "linkdir"
    return f"{head}/pwned-new.txt"


def _call(tool: Tool, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    """Call a tool the way the loop does: whatever it raises becomes an error result."""
    try:
        return anyio.run(tool.call, args, ctx)
    except Exception as e:
        return ToolResult.error(f"{type(e).__name__}: {e}")


def test_file_tools_refuse_every_path_out(tmp_path: Path, outside: Path) -> None:
    ctx = _world(tmp_path, outside)
    before = _snapshot(outside)
    tally = Tally()
    read_state = {str(outside / "secret.txt"): os.stat(outside / "secret.txt").st_mtime_ns}
    for path in _paths(ctx.workspace, outside):
        ctx.state[READ_STATE] = dict(read_state)  # only confinement may stop the writes
        attempts: list[tuple[Tool, dict[str, Any]]] = [
            (ReadTool(), {"file_path": path}),
            (WriteTool(), {"file_path": path, "content": "pwned"}),
            (WriteTool(), {"file_path": _sibling(path), "content": "pwned"}),
            (EditTool(), {"file_path": path, "old_string": SECRET, "new_string": "pwned"}),
            (MultiEditTool(), {"file_path": path, "edits": [{"old_string": SECRET,
                                                             "new_string": "pwned"}]}),
            (GrepTool(), {"pattern": "SECRET", "path": path, "output_mode": "content"}),
            (GlobTool(), {"pattern": "*", "path": path}),
            (GlobTool(), {"pattern": f"{path}/*"}),
        ]  # fmt: skip
        for tool, args in attempts:
            result = _call(tool, args, ctx)
            leaked = SECRET in result.content or _snapshot(outside) != before
            # a search that finds nothing outside is contained even when it is no error
            refused = result.is_error or (tool.name in ("Glob", "Grep") and not leaked
                                          and "secret" not in result.content)  # fmt: skip
            tally.record(f"{tool.name} {path!r}", refused=refused, leaked=leaked)
    for args in ({"pattern": "SECRET", "output_mode": "content"}, {"pattern": "**/*"}):
        tool = GrepTool() if "output_mode" in args else GlobTool()
        result = _call(tool, args, ctx)  # a whole-workspace search: links are not followed
        tally.record(f"{tool.name} workspace", refused=True, leaked=SECRET in result.content
                     or "secret.txt" in result.content)  # fmt: skip
    tally.report("file_tools")


def _swapper(ws: Path, outside: Path, stop: threading.Event) -> threading.Thread:
    """Keeps replacing ``ws/flip`` by a symlink to ``outside/sub`` and back."""
    real, link = ws / ".flip-real", ws / ".flip-link"
    real.mkdir()
    (real / "data.txt").write_text("safe data\n", encoding="utf-8")
    link.symlink_to(outside / "sub", target_is_directory=True)

    return threading.Thread(target=_flip, args=(ws / "flip", real, link, stop), daemon=True)


def _flip(place: Path, real: Path, link: Path, stop: threading.Event) -> None:
    """Move ``real`` and ``link`` in and out of ``place`` until ``stop``. A tool may
    create ``place`` itself in the instant it is empty; that folder is removed."""
    current = real
    while not stop.is_set():
        try:
            os.rename(current, place)
        except OSError:
            shutil.rmtree(place, ignore_errors=True)
            continue
        os.rename(place, current)
        current = link if current is real else real


def _race(ws: Path, outside: Path, attempt: Callable[[], None]) -> None:
    stop = threading.Event()
    swapper = _swapper(ws, outside, stop)
    swapper.start()
    try:
        for _ in range(RACE_ROUNDS):
            attempt()
    finally:
        stop.set()
        swapper.join()


def test_races_swapping_a_folder_for_a_link(tmp_path: Path, outside: Path) -> None:
    ctx = _world(tmp_path, outside)
    before = _snapshot(outside)
    tally = Tally()
    read, write = ReadTool(), WriteTool()
    seen = {"ok": 0}

    def attempt() -> None:
        result = _call(read, {"file_path": "flip/data.txt"}, ctx)
        if not result.is_error:
            seen["ok"] += 1
        tally.record("Read flip/data.txt", refused=True, leaked=SECRET in result.content)
        _call(write, {"file_path": "flip/new.txt", "content": "x"}, ctx)
        tally.record(
            "Write flip/new.txt", refused=True, leaked=(outside / "sub" / "new.txt").exists()
        )

    _race(ctx.workspace, outside, attempt)
    assert _snapshot(outside) == before
    H.add(race_reads_that_succeeded_inside=seen["ok"])
    tally.report("races")


def test_memory_tool_refuses_and_survives_races(tmp_path: Path, outside: Path) -> None:
    ctx = _world(tmp_path, outside)
    before = _snapshot(outside)
    tally = Tally()
    memory = MemoryTool()
    keys = ["..", "../secret", "a/b", str(outside / "secret"), "a\\b", "a\x00b", "...", "a..b",
            "~", "key\n", "secret.txt/..", "\u2215etc"]  # fmt: skip
    for key in keys:
        for action in ("read", "write", "delete"):
            result = _call(memory, {"action": action, "key": key, "content": "pwned"}, ctx)
            tally.record(f"Memory {action} {key!r}", refused=result.is_error,
                         leaked=SECRET in result.content)  # fmt: skip
    folder = memory_dir(ctx)
    folder.parent.mkdir(parents=True, exist_ok=True)
    real, link = folder.parent / ".real", folder.parent / ".link"
    real.mkdir()
    link.symlink_to(outside, target_is_directory=True)
    stop = threading.Event()
    swapper = threading.Thread(target=_flip, args=(folder, real, link, stop), daemon=True)
    swapper.start()
    try:
        for i in range(RACE_ROUNDS):
            key = "secret" if i % 2 else "note"
            result = _call(memory, {"action": ("read", "write")[i % 2], "key": key,
                                    "content": "pwned"}, ctx)  # fmt: skip
            tally.record("Memory race", refused=True, leaked=SECRET in result.content)
    finally:
        stop.set()
        swapper.join()
    assert _snapshot(outside) == before
    tally.report("memory")


def test_level3_resources_refuse_paths_out(tmp_path: Path, outside: Path) -> None:
    md = good_skill(tmp_path / "skills", "res-skill")
    folder = md.parent
    (folder / "references").mkdir()
    (folder / "references" / "guide.md").write_text("# Guide\n", encoding="utf-8")
    (folder / "references" / "link.md").symlink_to(outside / "secret.txt")
    (folder / "out").symlink_to(outside, target_is_directory=True)
    skill, _ = load_skill(folder)
    assert skill is not None
    rel = os.path.relpath(outside / "secret.txt", folder)
    specs = [rel, f"references/../{rel}", str(outside / "secret.txt"), "references/link.md",
             "out/secret.txt", "out/sub/data.txt", f"/proc/self/root{outside}/secret.txt",
             "", "\x00", "references/guide.md\x00", "~/x", "out/../secret.txt"]  # fmt: skip
    tally = Tally()
    for spec in specs:
        for name, reader in (("read_resource", skill.read_resource),
                             ("mcp", lambda r: resource_text(skill, r))):  # fmt: skip
            try:
                text = reader(spec)
            except SkilldeckError:
                tally.record(f"{name} {spec!r}", refused=True, leaked=False)
                continue
            tally.record(f"{name} {spec!r}", refused=False, leaked=SECRET in text)
    assert skill.read_resource("references/guide.md") == "# Guide\n"
    tally.report("resources")


@pytest.mark.skipif(not probe_sandbox().available, reason="bubblewrap is not usable here")
def test_bash_cannot_write_outside_the_workspace(tmp_path: Path, outside: Path) -> None:
    ctx = _world(tmp_path, outside)
    before = _snapshot(outside)
    tally = Tally()
    target = outside / "secret.txt"
    commands = [
        f"echo pwned > {target}", f"echo pwned >> {target}", f"rm -f {target}",
        f"cp ok.txt {outside}/new.txt", f"mv ok.txt {outside}/", f"ln -s /etc {outside}/l",
        f"python3 -c \"open('{target}', 'w').write('pwned')\"", f"touch {outside}/sub/t",
        f"cd {outside} && echo x > y", "echo pwned > linkdir/secret.txt",
        f"chmod 000 {target}", f"mkdir {outside}/d",
    ]  # fmt: skip
    for command in commands:
        _call(BashTool(), {"command": command}, ctx)
        tally.record(f"Bash {command!r}", refused=_snapshot(outside) == before,
                     leaked=_snapshot(outside) != before)  # fmt: skip
    tally.report("bash_sandbox")


# ---- package installs ------------------------------------------------------------------

SKILL_MD = b"---\nname: demo-skill\ndescription: A demo skill for install tests.\n---\nHi.\n"


def _zip(path: Path, entries: list[tuple[str, bytes, int]]) -> Path:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # duplicate names warn
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
            for name, data, mode in entries:
                info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
                info.create_system = 3
                info.external_attr = mode << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                zf.writestr(info, data)
    return path


def _hostile_archives(outside: Path) -> dict[str, list[tuple[str, bytes, int]]]:
    base = [("demo-skill/SKILL.md", SKILL_MD, 0o100644)]
    reg, lnk = 0o100644, 0o120777
    rel_out = "../" * 12 + str(outside).lstrip("/") + "/pwned.txt"
    names = {
        "dotdot": "demo-skill/../../pwned.txt", "deep-dotdot": f"demo-skill/{rel_out}",
        "backslash": "demo-skill\\..\\..\\pwned.txt", "mixed": "demo-skill/sub\\..\\..\\..\\p",
        "absolute": str(outside / "pwned.txt"), "drive": "C:\\pwned.txt", "drive2": "c:/pwned.txt",
        "dot-segments": "demo-skill/./.././../pwned.txt", "top-dotdot": "../pwned.txt",
        "double-slash": "//" + str(outside) + "/p.txt",
    }  # fmt: skip
    archives = {k: [*base, (v, b"pwned", reg)] for k, v in names.items()}
    for i, target in enumerate([str(outside / "secret.txt"), "../../../../" + str(outside),
                                "../" * 20 + "etc/passwd", "/etc/shadow", ".."]):  # fmt: skip
        archives[f"symlink-{i}"] = [*base, (f"demo-skill/references/l{i}", target.encode(), lnk)]
    archives["symlink-then-file"] = [
        *base, ("demo-skill/escape", str(outside).encode(), lnk),
        ("demo-skill/escape/pwned.txt", b"pwned", reg),
    ]  # fmt: skip
    archives["duplicate"] = [*base, ("demo-skill/a.md", b"1", reg), ("demo-skill/a.md", b"2", reg)]
    archives["bomb"] = [*base, ("demo-skill/z.bin", b"\0" * (101 * 1024 * 1024), reg)]
    return archives


def test_package_installs_refuse_hostile_archives(tmp_path: Path, outside: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    settings: Settings = load_settings(workspace=ws, home=tmp_path / "home")
    before = _snapshot(outside)
    tally = Tally()
    archives = _hostile_archives(outside)
    for name, entries in archives.items():
        archive = _zip(tmp_path / f"{name}.skill", entries)
        try:
            install(archive, settings=settings, force=True)
            refused = False
        except PackageError:
            refused = True
        installed = skills_root(settings, "workspace") / "demo-skill"
        leaked = _snapshot(outside) != before or (
            installed.exists() and any(p.is_symlink() for p in installed.rglob("*"))
        )
        tally.record(f"install {name}", refused=refused, leaked=leaked)
    # device and FIFO entries are not refused but can only ever become regular files
    special = _zip(tmp_path / "special.skill", [
        ("demo-skill/SKILL.md", SKILL_MD, 0o100644),
        ("demo-skill/fifo", b"data", stat.S_IFIFO | 0o644),
        ("demo-skill/dev", b"data", stat.S_IFCHR | 0o644),
        ("demo-skill/suid", b"#!/bin/sh\n", 0o104755),
    ])  # fmt: skip
    result = install(special, settings=settings, force=True)
    for child in ("fifo", "dev", "suid"):
        mode = (result.path / child).lstat().st_mode
        contained = stat.S_ISREG(mode) and not mode & (stat.S_ISUID | stat.S_ISGID)
        tally.record(f"install special {child}", refused=contained, leaked=not contained)
    assert _snapshot(outside) == before
    tally.report("packages")

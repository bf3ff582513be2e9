"""Issue 15, class 8: the working directory Bash carries between calls comes from a
report the command itself can forge (a function named ``pwd`` or ``builtin``, an
alias, its own EXIT trap). A forged report must never make the next command start
outside the writable roots, and redefining ``pwd`` must not lose a real ``cd``."""

from __future__ import annotations

from pathlib import Path

import pytest

from skilldeck.config import SandboxSettings, Settings
from skilldeck.sandbox import probe_sandbox
from skilldeck.tools.base import ToolContext
from skilldeck.tools.bash import CWD_STATE, BashTool

pytestmark = pytest.mark.anyio

MODES = [
    "off",
    pytest.param(
        "required",
        marks=pytest.mark.skipif(
            not probe_sandbox().available, reason="bubblewrap sandbox not usable here"
        ),
    ),
]


@pytest.fixture(params=MODES)
def ctx(request: pytest.FixtureRequest, tmp_path: Path) -> ToolContext:
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / "to-root").symlink_to("/")
    (ws / "to-parent").symlink_to(tmp_path)
    settings = Settings(workspace=ws, sandbox=SandboxSettings(mode=request.param))
    return ToolContext(session_id="s", workspace=ws.resolve(), settings=settings)


async def where(ctx: ToolContext) -> str:
    result = await BashTool().call({"command": "/bin/pwd -P"}, ctx)
    return result.content.splitlines()[-1]


@pytest.mark.parametrize(
    "redefine",
    [
        "pwd() { echo /; }",
        "shopt -s expand_aliases; alias pwd='echo /'; alias builtin='echo /'",
        'command() { echo /; }; cd() { builtin cd "$@"; }',
    ],
)
async def test_a_redefined_pwd_does_not_lose_a_real_cd(ctx: ToolContext, redefine: str) -> None:
    result = await BashTool().call({"command": f"{redefine}; cd sub"}, ctx)
    assert "reset" not in result.content, result.content
    assert await where(ctx) == str(ctx.workspace / "sub")


@pytest.mark.parametrize(
    "forged",
    [
        "/",
        "{ws}/..",
        "{ws}/sub/../..",
        "{ws}/to-root",
        "{ws}/to-parent",
        "sub",
        "../..",
        "/nonexistent/dir",
    ],
)
async def test_a_forged_report_never_moves_the_shell_out_of_the_roots(
    ctx: ToolContext, forged: str
) -> None:
    text = forged.format(ws=ctx.workspace)
    forge = f"builtin() {{ echo '{text}'; }}; pwd() {{ echo '{text}'; }}"
    await BashTool().call({"command": f"cd sub; {forge}"}, ctx)
    stored = Path(ctx.state[CWD_STATE])
    assert stored == ctx.workspace or ctx.workspace in stored.parents
    assert stored.resolve() == stored  # only real paths are kept
    here = await where(ctx)
    assert here == str(ctx.workspace) or here.startswith(f"{ctx.workspace}/"), here


async def test_a_forged_report_through_the_exit_trap_is_checked_too(ctx: ToolContext) -> None:
    report = f"trap 'echo {ctx.workspace}/to-root >&$__sd_fd' EXIT"
    result = await BashTool().call({"command": report}, ctx)
    assert "reset" in result.content
    assert await where(ctx) == str(ctx.workspace)


async def test_a_stored_directory_swapped_for_a_symlink_is_not_entered(ctx: ToolContext) -> None:
    await BashTool().call({"command": "cd sub"}, ctx)
    sub = ctx.workspace / "sub"
    sub.rmdir()
    sub.symlink_to("/")  # between two calls, the stored folder now leads out
    result = await BashTool().call({"command": "/bin/pwd -P"}, ctx)
    assert result.content.splitlines()[-1] == str(ctx.workspace)
    assert "reset" in result.content

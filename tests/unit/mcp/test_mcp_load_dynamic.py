"""Issue 16: the MCP server's load_skill and prompts use the one load operation. The
server has no permission gate, so a body with dynamic context is refused with the
reason and its command never runs (it used to be served unexpanded)."""

from __future__ import annotations

from pathlib import Path

import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from skill_fixtures import write_skill
from skilldeck.config import load_settings
from skilldeck.mcp.server import build_server
from skilldeck.skills.registry import SkillRegistry

pytestmark = pytest.mark.anyio


async def test_dynamic_context_is_refused_without_a_gate(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    marker = tmp_path / "ran"
    write_skill(root, "stamp", f"Now: !`touch {marker}`\n")
    write_skill(root, "plain", "Plain $ARGUMENTS\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    settings = load_settings(workspace=ws, home=tmp_path / "home")
    registry = SkillRegistry.discover(settings, roots=[root], no_defaults=True, use_cache=False)
    async with Client(build_server(registry, poll_interval=0)) as client:
        result = await client.call_tool("load_skill", {"name": "stamp"})
        text = "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))
        assert result.is_error and "the MCP server has none" in text
        with pytest.raises(MCPError, match="dynamic context"):
            await client.get_prompt("stamp", {})
        plain = await client.call_tool("load_skill", {"name": "plain", "args": "ok"})
        assert not plain.is_error
    assert not marker.exists()

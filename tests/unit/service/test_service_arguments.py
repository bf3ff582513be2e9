"""SessionService's arguments and refusals as a library sees them: rule lists, a
decision that is not one, a new message to a session that waits for a reply."""

from __future__ import annotations

from pathlib import Path

import pytest
from service_fakes import QUESTION, call, write_script

from skilldeck.errors import ConfigError, SessionError
from skilldeck.service import SessionService

pytestmark = pytest.mark.anyio


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


def write_then_done(tmp_path: Path) -> Path:
    return write_script(
        tmp_path / "s.jsonl",
        [{"tool_calls": [call("w1", "Write", file_path="x.txt", content="x")]}, {"text": "ok"}],
    )


@pytest.mark.parametrize("key", ["allow", "ask", "deny", "skills"])
async def test_start_refuses_a_string_where_a_list_is_expected(
    tmp_path: Path, work: Path, key: str
) -> None:
    async with SessionService(model=f"scripted:{write_then_done(tmp_path)}", cwd=work) as service:
        with pytest.raises(ConfigError, match=rf"{key}= takes a list.*write {key}=\['Write'\]"):
            await service.start("write", **{key: "Write"})  # type: ignore[arg-type]
        assert service.list() == []  # nothing started


async def test_start_with_deny_write_as_a_list_denies_it(tmp_path: Path, work: Path) -> None:
    async with SessionService(model=f"scripted:{write_then_done(tmp_path)}", cwd=work) as service:
        sid = await service.start("write", deny=["Write"], permission_mode="bypassPermissions")
        assert await service.wait(sid) == "completed"
    assert not (work / "x.txt").exists()


async def test_start_refuses_a_missing_cwd_and_a_bad_max_turns(tmp_path: Path, work: Path) -> None:
    async with SessionService(model=f"scripted:{write_then_done(tmp_path)}", cwd=work) as service:
        with pytest.raises(ConfigError, match="does not exist"):
            await service.start("write", cwd=work / "missing")
        with pytest.raises(ConfigError, match="max_turns=0 is not a turn limit"):
            await service.start("write", max_turns=0)


async def test_approve_with_an_unknown_decision_lists_the_three(tmp_path: Path, work: Path) -> None:
    async with SessionService(model=f"scripted:{write_then_done(tmp_path)}", cwd=work) as service:
        sid = await service.start("write")
        assert await service.wait(sid) == "paused"
        with pytest.raises(SessionError, match=r"'yes' is not a reply.*'allow'.*'always'.*'deny'"):
            await service.approve(sid, "w1", "yes")
        assert await service.approve(sid, "w1", "allow") is True  # still waiting, still works
        assert await service.wait(sid) == "completed"


async def test_send_to_a_session_paused_for_approval_says_to_approve(
    tmp_path: Path, work: Path
) -> None:
    async with SessionService(model=f"scripted:{write_then_done(tmp_path)}", cwd=work) as service:
        sid = await service.start("write")
        await service.wait(sid)
        with pytest.raises(SessionError) as refused:
            await service.send(sid, "more")
        message = str(refused.value)
        assert f"approve({sid!r}, 'w1', 'allow'|'always'|'deny') (Write)" in message
        assert "resume it first" not in message


async def test_send_to_a_session_paused_for_a_question_says_to_answer(
    tmp_path: Path, work: Path
) -> None:
    script = write_script(
        tmp_path / "q.jsonl",
        [{"tool_calls": [call("q1", "AskUserQuestion", questions=[QUESTION])]}, {"text": "ok"}],
    )
    async with SessionService(model=f"scripted:{script}", cwd=work) as service:
        sid = await service.start("ask")
        await service.wait(sid)
        with pytest.raises(SessionError, match=rf"answer\({sid!r}, 'q1', \.\.\.\)"):
            await service.send(sid, "more")


async def test_roots_given_as_one_string_are_one_root(tmp_path: Path, work: Path) -> None:
    """A lone string was one root per character: "/" among them, so the whole
    filesystem was scanned for skills."""
    root = tmp_path / "kit"
    (root / "hello").mkdir(parents=True)
    (root / "hello" / "SKILL.md").write_text(
        "---\nname: hello\ndescription: Say hello to someone.\n---\nSay hello.\n"
    )
    service = SessionService(
        model=f"scripted:{write_then_done(tmp_path)}", cwd=work, roots=str(root), no_defaults=True
    )
    assert service.scan.roots == (root,)
    assert service.registry.names() == ["hello"]

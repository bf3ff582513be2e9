"""The sessions a service holds in memory (``service/sessions.py``): one run at a time
per session, summaries that say which run here, quiet logs forgotten."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from service_fakes import HeldModel, write_script

from skilldeck.errors import SessionError
from skilldeck.service import SessionService

pytestmark = pytest.mark.anyio


async def test_a_session_running_here_is_claimed_by_nobody_else(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    model = HeldModel(write_script(tmp_path / "s.jsonl", [{"text": "slow reply"}]))
    async with SessionService(model=model, cwd=work) as service:
        sid = await service.start("be slow")
        await model.reached.wait()  # the run is held after its first text delta
        assert service._live.busy_ids() == [sid]
        assert service._live.summary(service.store.get(sid)).running_here
        with pytest.raises(SessionError, match="already running here"):
            await service.send(sid, "and another thing")
        with pytest.raises(SessionError, match="already running here"):
            await service.resume(sid)
        service._live.forget_idle(time.monotonic() + 1)
        assert sid in service._live  # a running session's log is never forgotten
        model.release.set()
        assert await service.wait(sid) == "completed"
        assert service._live.busy_ids() == []
        assert not service._live.summary(service.store.get(sid)).running_here

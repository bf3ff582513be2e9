"""A sub-agent's own permission request in the page: a Task whose child calls Write in
default mode → the dialog appears → approved by a click → the child finishes → the
parent finishes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from browser_pages import open_page

from skilldeck.web import create_app
from web_flow import call, live_server, write_flow

FLOW = [
    {
        "text": "Asking a helper.",
        "tool_calls": [
            call(
                "task-1",
                "Task",
                description="write the notes",
                prompt="CHILD-JOB: write NOTES.md",
                subagent_type="general-purpose",
            )
        ],
    },
    {"text": "The helper wrote the notes."},
    {"for": "CHILD-JOB", "tool_calls": [call("cw-1", "Write", file_path="NOTES.md", content="x")]},
    {"for": "CHILD-JOB", "text": "Written."},
]


@pytest.mark.parametrize("reload", [False, True], ids=["same-page", "after-a-reload"])
def test_a_sub_agents_permission_request_is_approved_by_a_click(
    browser: Any, tmp_path: Path, page_errors: list[str], reload: bool
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    script = write_flow(tmp_path / "flow.jsonl", FLOW)
    app = create_app(service_options={"model": f"scripted:{script}", "cwd": work})
    with live_server(app) as url:
        page = open_page(browser, url, page_errors)
        page.wait_for_selector("body[data-ready='1']")
        page.fill("#input", "write the notes through a helper")
        page.press("#input", "Enter")
        page.wait_for_selector("dialog#permission[open]")
        if reload:  # the page re-attaches to the running session: the request is back
            page.reload()
            page.wait_for_selector("dialog#permission[open]")
        assert page.inner_text("#perm-tool") == "Write"
        assert "NOTES.md" in page.inner_text("#perm-input")
        assert not (work / "NOTES.md").exists()
        page.click("#perm-once")
        page.wait_for_selector("#status-chip.completed")
        assert (work / "NOTES.md").read_text() == "x"
        page.wait_for_selector(".card.subagent .badge.ok")
        sub = page.locator(".card.subagent")
        assert sub.locator(".card.tool[data-tool-call-id='cw-1'] .badge.ok").count() == 1
        assert "The helper wrote the notes." in page.inner_text("#log")
    assert page_errors == []

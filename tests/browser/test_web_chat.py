"""The whole chat flow in a real Chromium, with the scripted model: a message, a tool
card, a permission approved by a click, a question answered by a click, a sub-agent
card nested under its Task call, the end. Saves a screenshot: to the test's temporary
folder, or to docs/web-chat.png (the one docs/web.md shows) when
``SKILLDECK_SCREENSHOT=docs`` is set, so a test run never dirties the checkout."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_pages import open_page

from skilldeck.web import create_app
from web_flow import TASK, live_server, write_flow

REPO = Path(__file__).resolve().parents[2]
DOCS_SCREENSHOT = REPO / "docs" / "web-chat.png"


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


@pytest.fixture
def server(tmp_path: Path, work: Path) -> Iterator[str]:
    script = write_flow(tmp_path / "flow.jsonl")
    app = create_app(service_options={"model": f"scripted:{script}", "cwd": work})
    with live_server(app) as url:
        yield url


def send(page: Any, text: str) -> None:
    page.fill("#input", text)
    page.press("#input", "Enter")


def test_the_whole_flow_by_clicks(
    browser: Any, server: str, work: Path, page_errors: list[str], tmp_path: Path
) -> None:
    page = open_page(browser, server, page_errors)
    page.wait_for_selector("body[data-ready='1']")
    assert page.inner_text("#model").startswith("scripted:")
    assert page.inner_text("#mode") == "default"
    send(page, TASK)
    # the first turn: Markdown text, a TodoWrite card, a Write card waiting for approval
    page.wait_for_selector("dialog#permission[open]")
    assert page.inner_text("#perm-tool") == "Write"
    assert "NOTES.md" in page.inner_text("#perm-input")
    assert page.locator(".msg.assistant strong", has_text="plan").count() == 1
    assert page.locator("#todos li").count() == 2
    write_card = page.locator(".card.tool[data-tool-call-id='write-1']")
    assert "needs approval" in write_card.inner_text()
    page.click("#perm-once")
    # approved: the file is written, then the question card
    page.wait_for_selector(".card.question")
    assert (work / "NOTES.md").read_text() == "# Release 1.0\n\n- web chat\n"
    assert "done" in write_card.locator(".badge").inner_text()
    page.click(".card.question button.option:has-text('Friendly')")
    # answered: a sub-agent card nested under its Task call, then the final Markdown
    sub = page.locator(".card.tool[data-tool-call-id='task-1'] .card.subagent")
    sub.wait_for()
    page.wait_for_selector(".msg.assistant h2:has-text('Done')")
    page.wait_for_selector("#status-chip.completed")  # (no wait_for_function: CSP forbids eval)
    assert "general-purpose" in sub.inner_text()
    assert "one" in sub.locator(".sub-log .msg").inner_text()
    assert sub.locator(".card.tool[data-tool-call-id='read-1']").count() == 1
    assert "completed" in sub.locator(".badge").first.inner_text()
    assert page.locator(".msg.assistant table").count() == 1
    assert page.is_visible("#send") and not page.is_visible("#stop")
    page.eval_on_selector(
        "#log", "log => { log.style.scrollBehavior = 'auto'; log.scrollTop = log.scrollHeight; }"
    )
    page.wait_for_timeout(100)
    to_docs = os.environ.get("SKILLDECK_SCREENSHOT") == "docs"
    shot = DOCS_SCREENSHOT if to_docs else tmp_path / "web-chat.png"
    page.screenshot(path=str(shot))
    assert shot.stat().st_size > 10_000
    assert page_errors == []

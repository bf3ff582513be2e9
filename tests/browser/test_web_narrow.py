"""The page on a phone-sized screen (390×844): nothing overflows sideways, the sessions
sidebar and the todos/skills panel open as drawers, the whole flow still works by taps.
The screenshot goes to the test's temporary folder (and its path is printed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from skilldeck.web import create_app
from web_flow import TASK, live_server, write_flow

WIDTH, HEIGHT = 390, 844


def overflow(page: Any) -> int:
    """How many pixels the page is wider than the screen (0: no sideways scrolling)."""
    return int(page.evaluate("document.documentElement.scrollWidth")) - WIDTH


def inside_screen(page: Any, selector: str) -> bool:
    box = page.locator(selector).bounding_box()
    return box is not None and box["x"] >= 0 and box["x"] + box["width"] <= WIDTH + 0.5


def test_the_page_at_phone_width(browser: Any, tmp_path: Path, page_errors: list[str]) -> None:
    work = tmp_path / "work"
    work.mkdir()
    script = write_flow(tmp_path / "flow.jsonl")
    app = create_app(service_options={"model": f"scripted:{script}", "cwd": work})
    with live_server(app) as url:
        context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
        page = context.new_page()
        page.on("pageerror", lambda e: page_errors.append(f"pageerror: {e}"))
        page.goto(url)
        page.wait_for_selector("body[data-ready='1']")
        assert overflow(page) <= 0
        assert inside_screen(page, "#send") and inside_screen(page, "#status-chip")

        page.fill("#input", TASK)
        page.press("#input", "Enter")
        page.wait_for_selector("dialog#permission[open]")
        assert inside_screen(page, "dialog#permission") and inside_screen(page, "#perm-once")
        page.click("#perm-once")
        page.click(".card.question button.option:has-text('Formal')")
        page.wait_for_selector("#status-chip.completed")
        page.wait_for_selector(".card.subagent .badge.ok")
        assert overflow(page) <= 0
        # nested cards shrink with the screen: their badges stay on it
        assert inside_screen(page, ".card.subagent > summary .badge")
        assert inside_screen(page, ".card.tool[data-tool-call-id='read-1'] > summary .badge")
        shot = tmp_path / "web-chat-narrow.png"
        page.screenshot(path=str(shot))
        print(f"screenshot: {shot}")

        # the sessions sidebar: hidden, opened by its button, closed by choosing a session
        assert not page.is_visible("#sessions")
        page.click("#toggle-sidebar")
        page.wait_for_selector("#sessions li.active", state="visible")
        assert inside_screen(page, ".sidebar")
        page.screenshot(path=str(tmp_path / "web-chat-narrow-sidebar.png"))
        page.click("#sessions li.active")
        page.wait_for_selector(".sidebar", state="hidden")
        page.wait_for_selector("#status-chip.completed")

        # the todos / skills panel: the same, closed by tapping outside it
        assert not page.is_visible("#todos")
        page.click("#toggle-panel")
        page.wait_for_selector("#todos li.completed", state="visible")
        assert inside_screen(page, ".panel")
        page.click("#backdrop", position={"x": 10, "y": HEIGHT // 2})
        page.wait_for_selector(".panel", state="hidden")
        context.close()
    assert page_errors == []

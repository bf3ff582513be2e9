"""Two tabs on one session: what is answered in one closes in the other, live, and the
other tab sees the run that the reply resumed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_pages import open_page

from skilldeck.web import create_app
from web_flow import TASK, live_server, write_flow


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    work = tmp_path / "work"
    work.mkdir()
    script = write_flow(tmp_path / "flow.jsonl")
    app = create_app(service_options={"model": f"scripted:{script}", "cwd": work})
    with live_server(app) as url:
        yield url


def ready(browser: Any, url: str, errors: list[str]) -> Any:
    page = open_page(browser, url, errors)
    page.wait_for_selector("body[data-ready='1']")
    return page


QUESTION = ".card.question:not(.answered)"


def test_a_reply_in_one_tab_closes_the_other_tabs_dialog_live(
    browser: Any, server: str, page_errors: list[str]
) -> None:
    one = ready(browser, server, page_errors)
    one.fill("#input", TASK)
    one.press("#input", "Enter")
    one.wait_for_selector("dialog#permission[open]")
    sid = one.inner_text("#session-id")
    two = ready(browser, f"{server}/#session={sid}", page_errors)
    two.wait_for_selector("dialog#permission[open]")  # the same approval waits in both

    one.click("#perm-once")
    # the second tab's dialog closes by itself, and it streams the resumed run up to
    # its next pause: the question
    two.wait_for_selector("dialog#permission", state="hidden")
    two.wait_for_selector(QUESTION)
    one.wait_for_selector(QUESTION)

    # now the other way round: answered in the second tab, closed in the first
    two.click(f"{QUESTION} button.option:has-text('Formal')")
    one.wait_for_selector(f"{QUESTION}", state="detached")
    for page in (one, two):
        page.wait_for_selector("#status-chip.completed")
        page.wait_for_selector(".card.subagent .badge.ok")
        assert page.locator(".msg.user .bubble", has_text=TASK).count() == 1
    assert one.locator(".card.question button.option[disabled]").count() == 2
    assert page_errors == []

"""The page against real sessions: a session paused by `skilldeck run` in a terminal
finished from the page, two sessions in two tabs at once, hostile text that must not
run, and a token that must be right."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_pages import open_page

from skilldeck.web import create_app
from web_flow import TASK, call, live_server, write_flow

HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>'


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


@pytest.fixture
def script(tmp_path: Path) -> Path:
    return write_flow(tmp_path / "flow.jsonl")


@pytest.fixture
def server(script: Path, work: Path) -> Iterator[str]:
    app = create_app(service_options={"model": f"scripted:{script}", "cwd": work})
    with live_server(app) as url:
        yield url


def ready(browser: Any, url: str, errors: list[str]) -> Any:
    page = open_page(browser, url, errors)
    page.wait_for_selector("body[data-ready='1']")
    return page


def finish_flow(page: Any) -> None:
    """Approve the Write, answer the question, wait for the end."""
    page.wait_for_selector("dialog#permission[open]")
    page.click("#perm-once")
    page.click(".card.question button.option:has-text('Formal')")
    page.wait_for_selector("#status-chip.completed")  # (no wait_for_function: CSP forbids eval)


def test_a_session_paused_in_the_terminal_is_finished_from_the_page(
    browser: Any, server: str, script: Path, work: Path, page_errors: list[str]
) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "skilldeck.cli.main", "run", TASK, "--model", f"scripted:{script}"],
        cwd=work,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode != 0 or "paused" in (proc.stdout + proc.stderr).lower()
    page = ready(browser, server, page_errors)
    row = page.locator("#sessions li", has_text=TASK)
    assert "paused" in row.inner_text()
    row.locator("button.s-resume").click()
    # the page replays the terminal's history, then asks for the approval it waits on
    page.wait_for_selector("dialog#permission[open]")
    assert page.locator(".msg.user .bubble", has_text=TASK).count() == 1
    assert page.locator(".card.tool[data-tool-call-id='todo-1']").count() == 1
    finish_flow(page)
    assert (work / "NOTES.md").exists()
    assert page.locator(".card.subagent").count() == 1
    assert page_errors == []


def test_two_sessions_in_two_tabs_at_once(
    browser: Any, server: str, work: Path, page_errors: list[str]
) -> None:
    one = ready(browser, server, page_errors)
    two = ready(browser, server, page_errors)
    for page, text in ((one, "first session"), (two, "second session")):
        page.fill("#input", text)
        page.press("#input", "Enter")
    for page in (one, two):
        page.wait_for_selector("dialog#permission[open]")
    first, second = one.inner_text("#session-id"), two.inner_text("#session-id")
    assert first and second and first != second
    finish_flow(two)  # the second tab finishes while the first still waits
    assert one.inner_text("#status") == "paused"
    finish_flow(one)
    for page, text in ((one, "first session"), (two, "second session")):
        assert page.locator(".msg.user .bubble").all_inner_texts() == [text]
        assert page.locator(".card.subagent").count() == 1
    two.click("#refresh-sessions")
    two.locator("#sessions li").nth(1).wait_for()
    assert page_errors == []


def test_hostile_text_from_the_model_a_tool_and_a_skill_never_runs(
    browser: Any, tmp_path: Path, work: Path, page_errors: list[str]
) -> None:
    (work / "evil.html").write_text(HOSTILE, encoding="utf-8")
    skill = work / ".skilldeck" / "skills" / "evil-skill"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        f"---\nname: evil-skill\ndescription: 'Evil notes {HOSTILE}'\n---\nbody\n",
        encoding="utf-8",
    )
    lines = [
        {
            "text": f"Here: {HOSTILE} and [a link](javascript:window.__pwned=3)",
            "tool_calls": [call("r1", "Read", file_path="evil.html")],
        },
        {"text": f"Done {HOSTILE}"},
    ]
    script = write_flow(tmp_path / "evil.jsonl", lines)
    app = create_app(service_options={"model": f"scripted:{script}", "cwd": work})
    with live_server(app) as url:
        page = ready(browser, url, page_errors)
        page.fill("#input", f"hi {HOSTILE}")
        page.press("#input", "Enter")
        page.wait_for_selector("#status-chip.completed")  # (no wait_for_function: CSP forbids eval)
        page.click(".tab[data-tab='skills']")
        page.fill("#skill-search", "evil notes")
        page.locator("#skills li", has_text="evil-skill").click()
        page.wait_for_selector("#skill-detail h3")
        page.wait_for_timeout(300)
        assert "<img" in page.inner_text("#skill-detail")  # shown as text
        assert "Evil notes" in page.inner_text("#skills")
        assert "<script>" in page.text_content(".card.tool[data-tool-call-id='r1'] pre.result")
        assert page.evaluate("window.__pwned") is None
        assert page.locator("#log script, #skill-detail script, [onerror]").count() == 0
        hrefs = page.eval_on_selector_all("#log a", "links => links.map(a => a.href)")
        assert not any(h.startswith("javascript:") for h in hrefs)
    # a CSP violation would be logged as a console error: none means nothing even tried
    assert page_errors == []


def test_a_missing_or_wrong_token_is_refused(
    browser: Any, script: Path, work: Path, page_errors: list[str]
) -> None:
    app = create_app(service_options={"model": f"scripted:{script}", "cwd": work}, token="tok3n")
    with live_server(app) as url:
        page = open_page(browser, url, [])
        assert "Missing or wrong token" in page.inner_text("body")
        page.goto(f"{url}/login?token=wrong")
        assert "Missing or wrong token" in page.inner_text("body")
        page.goto(f"{url}/api/sessions")
        assert "Missing or wrong token" in page.inner_text("body")
        page.goto(f"{url}/login?token=tok3n")
        page.wait_for_selector("body[data-ready='1']")
        assert page.url == f"{url}/"  # the token left the address bar
        assert page.inner_text("#model").startswith("scripted:")
        sessions = json.loads(page.evaluate("fetch('api/sessions').then(r => r.text())"))
        assert sessions == {"sessions": []}


def test_a_reload_reattaches_to_the_running_session_and_stop_cancels_it(
    browser: Any, tmp_path: Path, work: Path, page_errors: list[str]
) -> None:
    lines = [
        {"text": "Taking my time.", "tool_calls": [call("b1", "Bash", command="sleep 60")]},
        {"text": "never reached"},
    ]
    script = write_flow(tmp_path / "slow.jsonl", lines)
    options = {"model": f"scripted:{script}", "cwd": work, "permission_mode": "bypassPermissions"}
    with live_server(create_app(service_options=options)) as url:
        page = ready(browser, url, page_errors)
        page.fill("#input", "be slow")
        page.press("#input", "Enter")
        page.wait_for_selector(".card.tool[data-tool-call-id='b1'] .badge.running")
        page.reload()  # the address keeps the session: the page re-attaches to it
        page.wait_for_selector(".card.tool[data-tool-call-id='b1'] .badge.running")
        assert page.locator(".msg.user .bubble", has_text="be slow").count() == 1
        assert page.is_visible("#stop")
        page.click("#stop")
        page.wait_for_selector("#status-chip.cancelled")
        assert page.locator(".notice", has_text="Stopped").count() == 1
        assert page.inner_text(".card.tool[data-tool-call-id='b1'] .badge") == "stopped"
        assert page.is_visible("#send")
    assert page_errors == []


def test_always_allow_and_a_multiselect_question_with_free_text(
    browser: Any, tmp_path: Path, work: Path, page_errors: list[str]
) -> None:
    def options(*labels: str) -> list[dict[str, str]]:
        return [{"label": label, "description": f"the {label.lower()}"} for label in labels]

    questions = [
        {
            "question": "Which parts?",
            "header": "Parts",
            "multiSelect": True,
            "options": options("Intro", "Body", "Outro"),
        },
        {"question": "Any title?", "header": "Title", "options": options("None", "Default")},
    ]
    lines = [
        {"tool_calls": [call("w1", "Write", file_path="a.txt", content="a")]},
        {
            "tool_calls": [
                call("w2", "Write", file_path="b.txt", content="b"),
                call("q1", "AskUserQuestion", questions=questions),
            ]
        },
        {"text": "All set."},
    ]
    script = write_flow(tmp_path / "always.jsonl", lines)
    app = create_app(service_options={"model": f"scripted:{script}", "cwd": work})
    with live_server(app) as url:
        page = ready(browser, url, page_errors)
        page.fill("#input", "write two files")
        page.press("#input", "Enter")
        page.wait_for_selector("dialog#permission[open]")
        page.click("#perm-always")
        card = page.locator(".card.question")
        card.wait_for()
        assert not page.is_visible("dialog#permission")  # b.txt needed no second approval
        card.locator("button.option", has_text="Intro").click()
        card.locator("button.option", has_text="Outro").click()
        card.locator(".q", has_text="Which parts?").locator("button.primary").click()
        title = card.locator(".q", has_text="Any title?").locator("input")
        title.fill("Release 1.0")
        title.press("Enter")
        page.wait_for_selector("#status-chip.completed")
        answer = page.text_content(".card.tool[data-tool-call-id='q1'] pre.result") or ""
    assert (work / "a.txt").exists() and (work / "b.txt").exists()
    assert '"Which parts?"="Intro, Outro"' in answer
    assert '"Any title?"="Release 1.0"' in answer
    assert page_errors == []

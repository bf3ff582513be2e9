"""Opening a page for the browser tests (a module with its own name: ``from conftest
import …`` would find whichever ``conftest`` another test folder put on ``sys.path``
first)."""

from __future__ import annotations

from typing import Any


def open_page(browser: Any, url: str, errors: list[str]) -> Any:
    """A new page in its own context (own cookies), recording errors, at ``url``."""
    context = browser.new_context(viewport={"width": 1440, "height": 960})
    page = context.new_page()
    page.on("pageerror", lambda e: errors.append(f"pageerror: {e}"))
    page.on(
        "console",
        lambda m: errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None,
    )
    page.goto(url)
    return page

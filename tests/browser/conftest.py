"""Browser tests: Debian's chromium driven by Playwright for Python (never a downloaded
browser, never pytest-playwright). Skipped, with the reason, when chromium is absent."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path(os.environ.get("SKILLDECK_CHROMIUM", "/usr/bin/chromium"))


# per module, not per session: Playwright's sync API keeps an event loop running while
# it is open, and an anyio test run after it (another folder, or a shuffled order)
# could not start its own
@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.skip(f"browser tests need Debian's chromium at {CHROMIUM} (apt install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def page_errors() -> list[str]:
    """Console errors and uncaught exceptions of the pages a test opens."""
    return []

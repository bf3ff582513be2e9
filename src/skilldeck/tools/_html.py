"""HTML to Markdown for WebFetch: trafilatura for the main content, markdownify when
trafilatura is missing or extracts nothing (short pages, app shells, link lists)."""

from __future__ import annotations

import re
from functools import cache
from typing import Any

_DROP_TAGS = ("script", "style", "noscript", "template", "iframe", "svg", "canvas", "head")


def html_to_markdown(html: str, *, url: str | None = None) -> str:
    """The readable content of ``html`` as Markdown (may be empty for an empty page)."""
    text = _with_trafilatura(html, url)
    if not text or not text.strip():
        text = _with_markdownify(html)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


@cache
def _trafilatura() -> Any:
    """The trafilatura module, or None when it (or lxml's html cleaner) is missing."""
    try:
        import trafilatura
    except ImportError:  # the markdownify path still works
        return None
    return trafilatura


def _with_trafilatura(html: str, url: str | None) -> str | None:
    trafilatura = _trafilatura()
    if trafilatura is None:
        return None
    try:
        result: Any = trafilatura.extract(
            html,
            url=url,
            output_format="markdown",
            include_links=True,
            include_tables=True,
            include_formatting=True,
            favor_recall=True,
            with_metadata=False,
        )
    except Exception:  # trafilatura raises assorted errors on odd markup
        return None
    return result if isinstance(result, str) else None


def _with_markdownify(html: str) -> str:
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(html, "html.parser")
    title_tag = soup.find("title")
    title = title_tag.get_text(" ", strip=True) if title_tag else ""
    for tag in soup.find_all(_DROP_TAGS):
        tag.decompose()
    body: str = MarkdownConverter(heading_style="ATX", bullets="-").convert_soup(soup)
    body = "\n".join(line.rstrip() for line in body.splitlines())
    if title and not body.lstrip().startswith("#"):
        body = f"# {title}\n\n{body.strip()}"
    return body

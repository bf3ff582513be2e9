"""WebFetch through httpx2.MockTransport and WebSearch through a fake backend —
never the network."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import httpx2
import pytest

from skilldeck.config import Settings
from skilldeck.errors import ModelError, ToolError
from skilldeck.tools._html import _with_markdownify, html_to_markdown
from skilldeck.tools.base import ToolContext, ToolResult
from skilldeck.tools.web import (
    DDGSBackend,
    SearchBackend,
    SearchHit,
    WebFetchTool,
    WebSearchTool,
    normalise_url,
)

pytestmark = pytest.mark.anyio

PAGE = """<!doctype html><html><head><title>Widgets Guide</title>
<style>body { color: red }</style><script>stealCookies()</script></head>
<body><nav><a href="/">Home</a></nav>
<article><h1>Widgets</h1>
<p>Widgets are <strong>small parts</strong> used in many machines. See
<a href="https://example.com/more">the full list</a> of widget kinds.</p>
<h2>Kinds</h2><ul><li>Round widgets</li><li>Square widgets</li></ul>
<p>Every widget has a serial number stamped on its side for tracking purposes.</p>
</article></body></html>"""


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(session_id="t", workspace=tmp_path, settings=Settings(workspace=tmp_path))


def serve(ctx: ToolContext, routes: dict[str, Any]) -> list[str]:
    """Install a MockTransport answering ``routes`` (url -> Response or callable)."""
    seen: list[str] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(str(request.url))
        route = routes.get(str(request.url))
        if route is None:
            return httpx2.Response(404, text="not here")
        return route(request) if callable(route) else route

    ctx.services["http_transport"] = httpx2.MockTransport(handler)
    return seen


async def fetch(ctx: ToolContext, url: str, prompt: str = "summarise") -> ToolResult:
    return await WebFetchTool().call({"url": url, "prompt": prompt}, ctx)


def html(body: str, status: int = 200) -> httpx2.Response:
    return httpx2.Response(status, text=body, headers={"content-type": "text/html; charset=utf-8"})


# ---- HTML conversion ----


def test_markdownify_fallback_drops_scripts_and_keeps_structure() -> None:
    md = _with_markdownify(PAGE)
    assert "stealCookies" not in md and "color: red" not in md
    assert "# Widgets" in md and "## Kinds" in md
    assert "**small parts**" in md
    assert "[the full list](https://example.com/more)" in md
    assert "- Round widgets" in md


def test_html_to_markdown_never_empty_for_content() -> None:
    md = html_to_markdown("<html><body><p>Just one line.</p></body></html>")
    assert "Just one line." in md


@pytest.mark.skipif(
    importlib.util.find_spec("lxml_html_clean") is None,
    reason="trafilatura needs lxml_html_clean to import",
)
def test_trafilatura_extracts_main_content() -> None:
    from skilldeck.tools._html import _with_trafilatura

    md = _with_trafilatura(PAGE, "https://example.com/widgets")
    assert md and "serial number" in md and "stealCookies" not in md


# ---- WebFetch ----


async def test_fetch_html_as_markdown_with_prompt(ctx: ToolContext) -> None:
    seen = serve(ctx, {"https://example.com/widgets": html(PAGE)})
    result = await fetch(ctx, "http://example.com/widgets", "what are widgets?")
    assert not result.is_error, result.content
    assert seen == ["https://example.com/widgets"]  # upgraded to https
    assert result.content.startswith(
        "Content of https://example.com/widgets (for: what are widgets?):\n\n"
    )
    assert "small parts" in result.content
    assert "stealCookies" not in result.content
    assert result.data["url"] == "https://example.com/widgets"


async def test_loopback_http_is_not_upgraded() -> None:
    assert normalise_url("http://127.0.0.1:8000/x") == "http://127.0.0.1:8000/x"
    assert normalise_url("http://localhost/x") == "http://localhost/x"
    assert normalise_url("http://example.org/x") == "https://example.org/x"


@pytest.mark.parametrize("url", ["ftp://example.com/f", "example.com", "https://u:p@x.com/"])
async def test_invalid_urls(ctx: ToolContext, url: str) -> None:
    with pytest.raises(ToolError):
        normalise_url(url)
    result = await fetch(ctx, url)
    assert result.is_error


async def test_plain_text_and_json_pass_through(ctx: ToolContext) -> None:
    serve(
        ctx,
        {
            "https://example.com/a.txt": httpx2.Response(200, text="<b>not html</b>"),
            "https://example.com/a.json": httpx2.Response(200, json={"k": [1, 2]}),
        },
    )
    text = await fetch(ctx, "https://example.com/a.txt")
    assert text.content.endswith("<b>not html</b>")
    data = await fetch(ctx, "https://example.com/a.json")
    assert data.content.endswith('{"k":[1,2]}')


async def test_binary_content_is_refused(ctx: ToolContext) -> None:
    serve(
        ctx,
        {
            "https://example.com/p.png": httpx2.Response(
                200, content=b"\x89PNG\x00\x00", headers={"content-type": "image/png"}
            )
        },
    )
    result = await fetch(ctx, "https://example.com/p.png")
    assert result.is_error and "image/png" in result.content


async def test_content_is_capped_with_note(ctx: ToolContext) -> None:
    serve(ctx, {"https://example.com/big": httpx2.Response(200, text="w " * 40_000)})
    result = await fetch(ctx, "https://example.com/big")
    assert len(result.content) < 30_400
    assert "content truncated" in result.content and "80,000" in result.content


async def test_http_error_status(ctx: ToolContext) -> None:
    serve(ctx, {})
    result = await fetch(ctx, "https://example.com/missing")
    assert result.is_error
    assert "HTTP 404" in result.content


async def test_timeout_is_an_error_result(ctx: ToolContext) -> None:
    def slow(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ReadTimeout("slow", request=request)

    serve(ctx, {"https://example.com/slow": slow})
    result = await fetch(ctx, "https://example.com/slow")
    assert result.is_error and "Timed out" in result.content


async def test_connection_error_is_an_error_result(ctx: ToolContext) -> None:
    def down(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("refused", request=request)

    serve(ctx, {"https://example.com/": down})
    result = await fetch(ctx, "https://example.com/")
    assert result.is_error and "Could not fetch" in result.content


async def test_same_host_redirects_are_followed(ctx: ToolContext) -> None:
    seen = serve(
        ctx,
        {
            "https://example.com/old": httpx2.Response(301, headers={"location": "/new"}),
            "https://example.com/new": httpx2.Response(
                302, headers={"location": "https://www.example.com/final"}
            ),
            "https://www.example.com/final": html("<p>arrived safely at the final page</p>"),
        },
    )
    result = await fetch(ctx, "https://example.com/old")
    assert not result.is_error, result.content
    assert "arrived safely" in result.content
    assert seen[-1] == "https://www.example.com/final"


async def test_cross_host_redirect_is_reported_not_followed(ctx: ToolContext) -> None:
    seen = serve(
        ctx,
        {
            "https://short.example/x": httpx2.Response(
                301, headers={"location": "https://other.example/landing"}
            )
        },
    )
    result = await fetch(ctx, "https://short.example/x")
    assert not result.is_error
    assert "REDIRECT DETECTED" in result.content
    assert "https://other.example/landing" in result.content
    assert seen == ["https://short.example/x"]
    assert result.data["redirect"] == "https://other.example/landing"


async def test_redirect_loop_is_an_error(ctx: ToolContext) -> None:
    serve(ctx, {"https://example.com/a": httpx2.Response(302, headers={"location": "/a"})})
    result = await fetch(ctx, "https://example.com/a")
    assert result.is_error and "Too many redirects" in result.content


class FakeLLM:
    def __init__(self, answer: str | Exception) -> None:
        self.answer = answer
        self.prompts: list[tuple[str, str | None]] = []

    async def complete(self, prompt: str, system: str | None = None) -> str:
        self.prompts.append((prompt, system))
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


async def test_llm_applies_the_prompt(ctx: ToolContext) -> None:
    serve(ctx, {"https://example.com/widgets": html(PAGE)})
    llm = FakeLLM("Widgets are small machine parts.")
    ctx.services["llm"] = llm
    result = await fetch(ctx, "https://example.com/widgets", "what are widgets?")
    assert result.content.endswith("Widgets are small machine parts.")
    prompt, system = llm.prompts[0]
    assert prompt.startswith("what are widgets?")
    assert "small parts" in prompt
    assert system and "untrusted" in system


async def test_llm_failure_falls_back_to_content(ctx: ToolContext) -> None:
    serve(ctx, {"https://example.com/widgets": html(PAGE)})
    ctx.services["llm"] = FakeLLM(ModelError("down"))
    result = await fetch(ctx, "https://example.com/widgets")
    assert result.content.startswith("Content of https://example.com/widgets")


# ---- WebSearch ----


class FakeSearch:
    def __init__(self, hits: list[SearchHit]) -> None:
        self.hits = hits
        self.calls: list[tuple[str, int]] = []

    async def search(self, query: str, *, max_results: int) -> list[SearchHit]:
        self.calls.append((query, max_results))
        return self.hits[:max_results]


HITS = [
    SearchHit("Python docs", "https://docs.python.org/3/", "The official   docs."),
    SearchHit("PyPI", "https://pypi.org/project/x/", "Package index"),
    SearchHit("Blog", "https://www.blog.example/post", "A blog post"),
]


async def test_search_formats_results(ctx: ToolContext) -> None:
    fake = FakeSearch(HITS)
    assert isinstance(fake, SearchBackend)
    ctx.services["web_search"] = fake
    result = await WebSearchTool().call({"query": "python packaging"}, ctx)
    assert not result.is_error
    assert 'Web search results for query: "python packaging"' in result.content
    assert "1. Python docs\n   https://docs.python.org/3/\n   The official docs." in result.content
    assert fake.calls == [("python packaging", 10)]
    assert [r["url"] for r in result.data["results"]] == [h.url for h in HITS]


async def test_search_domain_filters(ctx: ToolContext) -> None:
    ctx.services["web_search"] = FakeSearch(HITS)
    allowed = await WebSearchTool().call(
        {"query": "python", "allowed_domains": ["python.org", "blog.example"]}, ctx
    )
    assert [r["url"] for r in allowed.data["results"]] == [HITS[0].url, HITS[2].url]
    blocked = await WebSearchTool().call(
        {"query": "python", "blocked_domains": ["https://pypi.org"]}, ctx
    )
    assert HITS[1].url not in blocked.content
    assert HITS[0].url in blocked.content


async def test_search_no_results_and_short_query(ctx: ToolContext) -> None:
    ctx.services["web_search"] = FakeSearch([])
    none = await WebSearchTool().call({"query": "zzqqx"}, ctx)
    assert not none.is_error and "No web results" in none.content
    short = await WebSearchTool().call({"query": "a"}, ctx)
    assert short.is_error and "query" in short.content


async def test_ddgs_backend_maps_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    import ddgs

    calls: list[dict[str, Any]] = []

    class StubDDGS:
        def __init__(self, timeout: int | None = None) -> None:
            pass

        def text(self, query: str, **kwargs: Any) -> list[dict[str, str]]:
            calls.append({"query": query, **kwargs})
            return [
                {"title": "T", "href": "https://a.example/", "body": "B"},
                {"title": "no url"},
            ]

    monkeypatch.setattr(ddgs, "DDGS", StubDDGS)
    hits = await DDGSBackend().search("q", max_results=5)
    assert hits == [SearchHit("T", "https://a.example/", "B")]
    assert calls[0]["max_results"] == 5


async def test_ddgs_backend_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    import ddgs
    from ddgs.exceptions import DDGSException, RatelimitException

    def stub(exc: Exception) -> type:
        class StubDDGS:
            def __init__(self, timeout: int | None = None) -> None:
                pass

            def text(self, query: str, **kwargs: Any) -> list[dict[str, str]]:
                raise exc

        return StubDDGS

    monkeypatch.setattr(ddgs, "DDGS", stub(DDGSException("No results found.")))
    assert await DDGSBackend().search("q", max_results=5) == []
    monkeypatch.setattr(ddgs, "DDGS", stub(RatelimitException("429")))
    with pytest.raises(ToolError, match="Web search failed"):
        await DDGSBackend().search("q", max_results=5)

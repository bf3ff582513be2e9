"""Web chat latency: from a click on Send to the first streamed token on the page.

``skilldeck web``'s app is served by uvicorn on 127.0.0.1 with the scripted model;
Debian's chromium (Playwright) opens the page. Measured in the same run, N times each,
each time in a new session:

* ``baseline (raw AG-UI)``: an HTTP client POSTs a ``RunAgentInput`` to ``/agui`` and
  reads until the first ``TEXT_MESSAGE_CONTENT`` — the server's own share (a new
  session, the agent built, the first model call, the mapping, SSE);
* ``page (click → token)``: in the browser, from the ``click`` event on Send (taken
  in the page, ``performance.now()``) to the moment the first assistant text is in
  the DOM (a ``MutationObserver``): everything a user waits for.

The ratio page / baseline is what the browser side adds (fetch, stream parsing,
Markdown, DOMPurify). Results go to ``bench/results/web.json``.

Usage: ``python -m bench web [--repeat N]`` (needs /usr/bin/chromium).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx2

from skilldeck.web import create_app

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
from web_flow import FLOW, live_server, write_flow  # type: ignore[import-not-found]  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
WATCH = """() => {
  window.__bench = { click: null, token: null };
  document.querySelector('#send').addEventListener('click',
    () => { window.__bench.click = performance.now(); }, { capture: true });
  new MutationObserver(() => {
    const text = document.querySelector('#log .msg.assistant .md');
    if (window.__bench.token === null && text && text.textContent.trim()) {
      window.__bench.token = performance.now();
    }
  }).observe(document.querySelector('#log'),
    { subtree: true, childList: true, characterData: true });
}"""


def raw_first_token(url: str) -> float:
    body = {
        "threadId": "",
        "runId": "b",
        "messages": [{"id": "u", "role": "user", "content": "go"}],
    }
    with httpx2.Client(base_url=url, timeout=60) as http:
        start = time.perf_counter()
        with http.stream("POST", "/agui", json=body) as response:
            for line in response.iter_lines():
                if '"TEXT_MESSAGE_CONTENT"' in line:
                    return (time.perf_counter() - start) * 1000
    raise RuntimeError("no token streamed")


def page_first_token(browser: Any, url: str) -> float:
    page = browser.new_page()
    try:
        page.goto(url)
        page.wait_for_selector("body[data-ready='1']")
        page.evaluate(WATCH)
        page.fill("#input", "go")
        page.click("#send")
        page.wait_for_selector("#log .msg.assistant .md > *")
        bench = page.evaluate("() => window.__bench")
        return float(bench["token"] - bench["click"])
    finally:
        page.close()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench web")
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args(argv)
    if not Path(CHROMIUM).exists():
        print(f"needs {CHROMIUM} (apt install chromium)", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        os.environ["SKILLDECK_HOME"] = str(root / "home")
        work = root / "work"
        work.mkdir()
        script = write_flow(root / "flow.jsonl", [{"text": FLOW[-3]["text"]}] * 1000)
        app = create_app(service_options={"model": f"scripted:{script}", "cwd": work})
        with live_server(app) as url, sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            raw_first_token(url)  # warm-up: imports, the registry's first scan
            page_first_token(browser, url)
            raw: list[float] = []
            page: list[float] = []
            for _ in range(args.repeat):  # interleaved: both see the same store and machine
                raw.append(raw_first_token(url))
                page.append(page_first_token(browser, url))
            browser.close()
    report = {
        "repeat": args.repeat,
        "baseline (raw AG-UI) ms": _stats(raw),
        "page (click -> token) ms": _stats(page),
        "ratio page/baseline (median)": round(statistics.median(page) / statistics.median(raw), 2),
    }
    print(json.dumps(report, indent=2))
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "web.json").write_text(json.dumps(report, indent=2) + "\n")
    return 0


def _stats(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "median": round(statistics.median(ordered), 1),
        "p90": round(ordered[int(len(ordered) * 0.9) - 1], 1),
        "min": round(ordered[0], 1),
    }

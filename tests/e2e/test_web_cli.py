"""``skilldeck web`` as a user starts it: the address it prints, the page and the API
behind it, a token generated off loopback, and one clear line for a bad option."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2
from cli_helpers import skilldeck, write_script

URL = re.compile(r"open (http://\S+)")


@contextmanager
def web(*args: str, cwd: Path) -> Iterator[tuple[str, str]]:
    """Run ``skilldeck web ARGS --port 0``; the URL it prints and the line it is on."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "skilldeck.cli.main", "web", "--port", "0", *args],
        cwd=cwd,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        found = URL.search(line)
        assert found, f"no URL in {line!r}"
        yield found.group(1), line
    finally:
        proc.terminate()
        proc.communicate(timeout=30)  # and closes the pipes


def test_web_serves_the_page_and_the_api_on_loopback(tmp_path: Path) -> None:
    script = write_script(tmp_path / "s.jsonl", [{"text": "hi"}])
    with web("--model", f"scripted:{script}", "--permission-mode", "plan", cwd=tmp_path) as (
        url,
        _,
    ):
        assert url.startswith("http://127.0.0.1:") and "token" not in url
        with httpx2.Client(base_url=url, timeout=30) as http:
            page = http.get("/")
            assert page.status_code == 200 and "skilldeck" in page.text
            health = http.get("/api/health").json()
    assert health["model"] == f"scripted:{script}"
    assert health["permissionMode"] == "plan"
    assert health["cwd"] == str(tmp_path.resolve())


def test_off_loopback_a_token_is_generated_and_required(tmp_path: Path) -> None:
    with web("--host", "0.0.0.0", cwd=tmp_path) as (url, line):
        assert "keep this URL private" in line
        token = url.split("token=")[1]
        base = url.split("/login")[0]
        with httpx2.Client(base_url=base, timeout=30) as http:
            assert http.get("/api/health").status_code == 401
            assert http.get(f"/login?token={token}").status_code == 303
            assert http.get("/api/health").status_code == 200  # the login cookie


def test_a_given_token_is_used(tmp_path: Path) -> None:
    with web("--token", "given-token", cwd=tmp_path) as (url, _):
        assert url.endswith("/login?token=given-token")


def test_bad_options_fail_with_one_line(tmp_path: Path) -> None:
    proc = skilldeck("web", "--permission-mode", "yolo", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "error: Unknown --permission-mode 'yolo': use one of default, acceptEdits, plan, "
        "bypassPermissions."
    ]
    missing = skilldeck("web", "--cwd", str(tmp_path / "nowhere"), cwd=tmp_path)
    assert missing.returncode == 2 and "is not a folder" in missing.stderr
    assert "Traceback" not in proc.stderr + missing.stderr


def test_a_port_in_use_is_one_line(tmp_path: Path) -> None:
    with web(cwd=tmp_path) as (url, _):
        port = url.rsplit(":", 1)[1].strip("/")
        taken = skilldeck("web", "--port", port, cwd=tmp_path)
    assert taken.returncode == 1
    assert taken.stderr.strip().splitlines() == [
        f"error: Cannot listen on 127.0.0.1:{port}: Address already in use (try another --port)."
    ]

"""The bugs a new user hit (issue 15, "Also found by a new user"), through the real CLI.

Model servers here are tiny ``http.server`` threads on 127.0.0.1 that answer every
request with one fixed (broken) body, the way a wrong ``--base-url`` does.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from cli_helpers import json_events, skilldeck, tool_call, write_script

from skilldeck.agent.store import SessionStore
from skilldeck.config import load_settings


class FixedServer:
    """Answers every POST with ``status``, ``content_type`` and ``body``."""

    def __init__(self, body: bytes, content_type: str, status: int = 200) -> None:
        self.requests = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length", "0")))
                server.requests += 1
                self.send_response(status)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> FixedServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


JSON = "application/json"
SSE = "text/event-stream"
#: (id, body, content type) of 200 answers that are not chat completions
MALFORMED = [
    ("not-json", b"not json at all", JSON),
    ("html", b"<html><body><h1>Welcome to nginx!</h1></body></html>", "text/html"),
    ("empty-object", b"{}", JSON),
    ("no-choices", b'{"choices": []}', JSON),
    ("choice-without-message", b'{"choices": [{"index": 0, "finish_reason": "stop"}]}', JSON),
]
#: streamed answers (text/event-stream) that are not completion chunks
MALFORMED_SSE = [
    ("sse-not-json", b"data: <html>oops</html>\n\n", SSE),
    ("sse-empty-chunk", b"data: {}\n\ndata: [DONE]\n\n", SSE),
    ("sse-no-events", b"this is not server-sent events\n", SSE),
    ("sse-only-done", b"data: [DONE]\n\n", SSE),
]


def _session_status(cwd: Path, session_id: str) -> str:
    with SessionStore.open(load_settings(workspace=cwd)) as store:
        return store.get(session_id).status


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace


@pytest.mark.parametrize(
    ("body", "content_type"), [(b, c) for _, b, c in MALFORMED], ids=[i for i, _, _ in MALFORMED]
)
def test_malformed_200_reply_is_an_error_in_json_mode(
    ws: Path, body: bytes, content_type: str
) -> None:
    """``--json`` uses the non-streamed call: an error event, exit 1, no traceback."""
    with FixedServer(body, content_type) as server:
        proc = skilldeck(
            "run", "hi", "-m", "openai-compat:m", "--base-url", server.url, "--json", cwd=ws
        )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    done = json_events(proc.stdout)[-1]
    assert done["type"] == "done" and done["status"] == "error"
    reason = done["reason"]
    assert server.url in reason and "HTTP 200" in reason
    assert body.decode()[:40] in reason
    assert "\n" not in reason
    assert _session_status(ws, done["session_id"]) == "error"  # resumable, not completed


@pytest.mark.parametrize(
    ("body", "content_type"),
    [(b, c) for _, b, c in MALFORMED + MALFORMED_SSE],
    ids=[i for i, _, _ in MALFORMED + MALFORMED_SSE],
)
def test_malformed_200_reply_is_an_error_when_streaming(
    ws: Path, body: bytes, content_type: str
) -> None:
    """Text mode streams: one ``error:`` line on stderr naming URL, status, body start."""
    with FixedServer(body, content_type) as server:
        proc = skilldeck(
            "run", "hi", "-m", "openai-compat:m", "--base-url", server.url, cwd=ws,
            env={"COLUMNS": "80"},
        )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, proc.stderr
    assert server.url in errors[0] and "HTTP 200" in errors[0]
    first_line = body.decode().splitlines()[0].removeprefix("data: ")
    assert first_line[:30] in errors[0]
    with SessionStore.open(load_settings(workspace=ws)) as store:
        (record,) = store.list()
        assert record.status == "error"


def test_anthropic_adapter_refuses_a_malformed_reply(ws: Path) -> None:
    with FixedServer(b'{"type": "message"}', JSON) as server:
        proc = skilldeck(
            "run", "hi", "-m", "anthropic:claude-x", "--base-url", server.url, "--json",
            cwd=ws, env={"ANTHROPIC_API_KEY": "k"},
        )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    done = json_events(proc.stdout)[-1]
    assert done["status"] == "error" and "HTTP 200" in done["reason"]
    assert "Anthropic Messages API" in done["reason"]
    with FixedServer(b"<html>proxy login</html>", "text/html") as server:
        proc = skilldeck(
            "run", "hi", "-m", "anthropic:claude-x", "--base-url", server.url,
            cwd=ws, env={"ANTHROPIC_API_KEY": "k"},
        )  # fmt: skip
    assert proc.returncode == 1 and "proxy login" in proc.stderr


def test_a_failure_before_the_run_is_a_json_error_event(ws: Path) -> None:
    proc = skilldeck("run", "hi", "-m", "openai-compat:m", "--json", cwd=ws)
    assert proc.returncode == 1
    (event,) = json_events(proc.stdout)
    assert event["type"] == "error" and "--base-url" in event["message"]
    assert "Traceback" not in proc.stderr


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A loopback port nothing listens on (bound, never listened)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


def test_refused_local_server_fails_fast_with_one_line(ws: Path, closed_port: int) -> None:
    url = f"http://127.0.0.1:{closed_port}/v1"
    proc = skilldeck("run", "hi", "-m", "openai-compat:m", "--base-url", url, cwd=ws)
    assert proc.returncode == 1
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and url in errors[0]
    assert "attempts" not in errors[0]  # tried once: nothing listens on this machine
    assert json.dumps(errors)  # one plain line


# ---- chat: Ctrl-C cancels the turn, not the chat ------------------------------------


def test_ctrl_c_during_a_chat_turn_cancels_the_turn_and_the_chat_goes_on(ws: Path) -> None:
    """SIGINT while a tool runs: the turn stops (the 30 s sleep is not waited for), the
    REPL says so and reads the next message, and /exit leaves with 0."""
    marker = ws / "slept-once"
    slow = f"if [ -e {marker} ]; then echo again; else touch {marker}; sleep 30; fi"
    script = write_script(
        ws / "chat.jsonl",
        [{"tool_calls": [tool_call("c1", "Bash", command=slow)]}, {"text": "second answer"}],
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "skilldeck.cli.main", "chat", "-m", f"scripted:{script}",
         "--permission-mode", "bypassPermissions"],
        cwd=ws, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env={**os.environ, "COLUMNS": "80"},
    )  # fmt: skip
    assert proc.stdin is not None
    proc.stdin.write("go slow\n")
    proc.stdin.flush()
    deadline = time.monotonic() + 60
    while not marker.exists():  # the tool is running (the marker comes before the sleep)
        assert proc.poll() is None and time.monotonic() < deadline, "the tool never ran"
        time.sleep(0.05)
    time.sleep(0.5)  # inside the sleep now
    started = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(input="and now?\n/session\n/exit\n", timeout=60)
    assert time.monotonic() - started < 25  # the sleep was cancelled, not waited for
    assert proc.returncode == 0, err
    assert "Turn cancelled" in out
    assert "second answer" in out  # the next message was answered
    assert "Traceback" not in err


def _chat(ws: Path, lines: list[str], *extra: str) -> subprocess.CompletedProcess[str]:
    script = write_script(ws / "chat.jsonl", [{"text": "ok"}])
    return skilldeck(
        "chat", "-m", f"scripted:{script}", *extra, cwd=ws,
        input="\n".join(lines) + "\n", env={"COLUMNS": "80"},
    )  # fmt: skip


# ---- skills: invalid, unavailable, disabled ----------------------------------------


def _skill(root: Path, name: str, front: str) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\n{front}---\nDo the thing.\n", encoding="utf-8")
    return folder


@pytest.fixture
def skills_root(ws: Path) -> Path:
    root = ws / "roots"
    _skill(root, "good", "name: good\ndescription: A skill that works everywhere.\n")
    _skill(root, "broken-skill", "name: broken-skill\n")  # no description: invalid
    _skill(
        root,
        "gated",
        "name: gated\ndescription: Needs a program.\nrequires-bins: [no-such-program-xyz]\n",
    )
    return root


def test_chat_skills_lists_only_usable_and_skill_refuses_the_rest(
    ws: Path, skills_root: Path
) -> None:
    proc = _chat(
        ws,
        ["/skills", "/skill gated", "/skill broken-skill", "/exit"],
        "--root", str(skills_root), "--no-defaults",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    listing = out.split("/help for commands", 1)[1].split("unavailable here", 1)[0]
    assert "good" in listing and "gated  " not in listing and "Needs a program" not in listing
    assert "1 unavailable" in out and "1 invalid" in out and "hidden" in out
    assert "Skill 'gated' is unavailable here: " in out and "no-such-program-xyz" in out
    assert "'broken-skill' exists but is invalid" in out and "SD110" in out
    assert "ok" not in out.splitlines()  # nothing was sent to the model


def test_skills_run_of_an_invalid_skill_shows_its_diagnostics(ws: Path, skills_root: Path) -> None:
    proc = skilldeck(
        "skills", "run", "broken-skill", "--root", str(skills_root), "--no-defaults", cwd=ws,
        env={"COLUMNS": "80"},
    )  # fmt: skip
    assert proc.returncode == 1
    assert "Did you mean" not in proc.stderr and "No skill named" not in proc.stderr
    assert "exists but is invalid" in proc.stderr
    skill_md = skills_root / "broken-skill" / "SKILL.md"
    assert f"{skill_md}:" in proc.stderr and "SD110" in proc.stderr
    assert f"skilldeck skills validate {skills_root / 'broken-skill'}" in proc.stderr


def test_skills_run_of_unavailable_and_disabled_skills_says_why(
    ws: Path, skills_root: Path
) -> None:
    where = ("--root", str(skills_root), "--no-defaults")
    proc = skilldeck("skills", "run", "gated", *where, cwd=ws)
    assert proc.returncode == 1 and "unavailable" in proc.stderr
    assert "no-such-program-xyz" in proc.stderr
    assert skilldeck("skills", "disable", "good", *where, cwd=ws).returncode == 0
    proc = skilldeck("skills", "run", "good", *where, cwd=ws)
    assert proc.returncode == 1 and "disabled" in proc.stderr
    assert "skilldeck skills enable good" in proc.stderr


def test_skills_list_counts_hidden_skills_and_all_shows_reasons(
    ws: Path, skills_root: Path
) -> None:
    where = ("--root", str(skills_root), "--no-defaults")
    proc = skilldeck("skills", "list", *where, cwd=ws, env={"COLUMNS": "80"})
    assert proc.returncode == 0
    assert "good" in proc.stdout and "broken-skill" not in proc.stdout
    assert "1 invalid" in proc.stderr and "1 unavailable" in proc.stderr
    assert "skilldeck skills list --all" in proc.stderr
    assert "skilldeck skills validate" in proc.stderr
    assert all(len(line) <= 80 for line in (proc.stdout + proc.stderr).splitlines())
    proc = skilldeck("skills", "list", "--all", *where, cwd=ws, env={"COLUMNS": "80"})
    flat = " ".join(proc.stdout.split())
    assert "SD110 required field `description` is missing" in flat
    assert "needs program(s) not found on PATH: no-such-program-xyz" in flat
    assert all(len(line) <= 80 for line in proc.stdout.splitlines())
    assert skilldeck("skills", "disable", "good", *where, cwd=ws).returncode == 0
    proc = skilldeck("skills", "list", "--all", *where, cwd=ws, env={"COLUMNS": "80"})
    assert "disabled by config" in " ".join(proc.stdout.split())


def test_skills_validate_labels_errors_and_warnings(ws: Path, skills_root: Path) -> None:
    proc = skilldeck("skills", "validate", str(skills_root), cwd=ws, env={"COLUMNS": "80"})
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert any(": error SD110 " in line for line in lines)
    warned = [line for line in lines if ": warning " in line]
    errors = sum(": error " in line for line in lines)
    assert lines[-1].endswith(f"{errors} error(s), {len(warned)} warning(s)")


# ---- pack -o DIR/, mcp serve --root /missing ----------------------------------------


def test_pack_into_a_new_or_existing_directory(ws: Path, skills_root: Path) -> None:
    good = str(skills_root / "good")
    proc = skilldeck("skills", "pack", good, "-o", "newdir/", cwd=ws)
    assert proc.returncode == 0, proc.stderr
    assert (ws / "newdir").is_dir() and (ws / "newdir" / "good.skill").is_file()
    (ws / "existing").mkdir()
    proc = skilldeck("skills", "pack", good, "-o", "existing", cwd=ws)
    assert proc.returncode == 0 and (ws / "existing" / "good.skill").is_file()
    proc = skilldeck("skills", "pack", good, "-o", "plain.skill", cwd=ws)
    assert proc.returncode == 0 and (ws / "plain.skill").is_file()


def test_mcp_serve_refuses_a_missing_root(ws: Path) -> None:
    missing = ws / "missing"
    proc = skilldeck("mcp", "serve", "--root", str(missing), cwd=ws)
    assert proc.returncode != 0
    (line,) = proc.stderr.splitlines()
    assert str(missing) in line and "Traceback" not in proc.stderr

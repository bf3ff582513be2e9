"""``skilldeck skills eval`` through the real CLI: the router offline, the scripted
model (deterministic), an OpenAI-compatible server on 127.0.0.1, ``--min-rate``,
``--json``, ``--coexist`` and a bad eval file as one clear line."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import skilldeck, tool_call, write_script

from skill_fixtures import write_skill_md

CATALOG = {
    "pdf-tools": "Extract text and tables from PDF files, fill PDF forms, merge PDF documents.",
    "git-commit": "Write conventional commit messages for staged git changes.",
    "slack-gif-creator": "Create animated GIFs sized for Slack emoji and messages.",
}
PDF_EVALS = [
    {"query": "extract the tables from this PDF file", "should_trigger": True},
    {"query": "merge these two PDF documents", "should_trigger": True},
    {"query": "write a commit message for my staged git changes", "should_trigger": False},
]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    base = tmp_path / "skills"
    for name, description in CATALOG.items():
        folder = base / name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: {description}\n---\n\n# {name}\n", encoding="utf-8"
        )
    (base / "pdf-tools" / "evals").mkdir()
    (base / "pdf-tools" / "evals" / "trigger_evals.json").write_text(json.dumps(PDF_EVALS))
    return base


def run(*args: str, cwd: Path) -> Any:
    env = {"SKILLDECK_HOME": str(cwd / "home"), "HOME": str(cwd)}
    return skilldeck("skills", "eval", *args, cwd=cwd, env=env)


def test_router_eval_of_a_skill_folder(root: Path, tmp_path: Path) -> None:
    done = run(
        str(root / "pdf-tools"),
        "--root",
        str(root),
        "--no-defaults",
        "--threshold",
        "0.1",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "Trigger evals (router, trigger score >= 0.10)" in done.stdout
    assert "3/3 requests passed (100%)" in done.stdout
    assert "Note: 3 skills in the catalog." in done.stdout  # why scores run low
    assert "try --threshold" not in done.stdout  # it is already 0.1
    assert max(map(len, done.stdout.splitlines())) <= 80
    default = run(str(root / "pdf-tools"), "--root", str(root), "--no-defaults", cwd=tmp_path)
    assert "try --threshold 0.1" in " ".join(default.stdout.split())


def test_router_eval_json_and_min_rate(root: Path, tmp_path: Path) -> None:
    base = ("pdf-tools", "--root", str(root), "--no-defaults", "--json")
    done = run(*base, "--threshold", "0.99", "--min-rate", "0.9", cwd=tmp_path)
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert report["mode"] == "router"
    assert report["skills"][0]["trigger_rate"] == 0.0
    assert done.stderr.strip() == "error: 1 skill(s) under --min-rate 90%: pdf-tools (33%)."


def test_scripted_model_is_deterministic(root: Path, tmp_path: Path) -> None:
    script = write_script(
        tmp_path / "model.jsonl",
        [
            {
                "for": "extract the tables",
                "tool_calls": [tool_call("c1", "Skill", skill="pdf-tools")],
            },
            {"for": "merge these", "tool_calls": [tool_call("c1", "Skill", skill="git-commit")]},
            {"for": "commit message", "tool_calls": [tool_call("c1", "Skill", skill="git-commit")]},
        ],
    )
    args = ("pdf-tools", "--root", str(root), "--no-defaults", "--model", f"scripted:{script}")
    first = run(*args, "--runs", "2", "--json", cwd=tmp_path)
    again = run(*args, "--runs", "2", "--json", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert first.stdout == again.stdout
    (pdf,) = json.loads(first.stdout)["skills"]
    assert pdf["trigger_rate"] == 0.5
    assert pdf["confusions"] == {"git-commit": 2}
    assert pdf["false_triggers"] == 0
    text = run(*args, cwd=tmp_path)
    assert "git-commit (2)" not in text.stdout  # 3 runs by default
    assert "git-commit (3)" in text.stdout


class CompatServer:
    """Chat Completions on 127.0.0.1: calls Skill(pdf-tools) when the request mentions
    PDF and the catalog it was shown lists it, else answers in text; keeps what it
    was sent."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))))
                server.bodies.append(body)
                reply = server.reply(body)
                if body.get("stream"):
                    self.send_response(200)
                    self.send_header("content-type", "text/event-stream")
                    self.end_headers()
                    for chunk in as_chunks(reply):
                        self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.write(b"data: [DONE]\n\n")
                    self.close_connection = True
                    return
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def reply(self, body: dict[str, Any]) -> dict[str, Any]:
        user = body["messages"][-1]["content"]
        tools = {t["function"]["name"] for t in body.get("tools", [])}
        # the level-1 catalog, wherever the agent puts it (system prompt, tool text)
        listed = "Skill" in tools and "<name>pdf-tools</name>" in json.dumps(body)
        message: dict[str, Any] = {"role": "assistant", "content": "I will do it myself."}
        if "PDF" in str(user) and listed:
            call = {"name": "Skill", "arguments": json.dumps({"skill": "pdf-tools"})}
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "call_1", "type": "function", "function": call}],
            }
        finish = "tool_calls" if "tool_calls" in message else "stop"
        return {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": body["model"],
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
        }


def as_chunks(reply: dict[str, Any]) -> list[dict[str, Any]]:
    """A completion as Chat Completions stream chunks (one delta, then usage)."""
    choice = reply["choices"][0]
    delta = {k: v for k, v in choice["message"].items() if v is not None}
    for i, call in enumerate(delta.get("tool_calls", [])):
        call["index"] = i
    base = {k: reply[k] for k in ("id", "created", "model")}
    base["object"] = "chat.completion.chunk"
    return [
        {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]},
        {**base, "choices": [], "usage": reply["usage"]},
    ]


@pytest.fixture
def server() -> Iterator[CompatServer]:
    srv = CompatServer()
    srv.thread.start()
    try:
        yield srv
    finally:
        srv.httpd.shutdown()
        srv.httpd.server_close()


def test_openai_compatible_server(root: Path, tmp_path: Path, server: CompatServer) -> None:
    done = run(
        str(root / "pdf-tools"),
        "--root", str(root), "--no-defaults", "--json", "--runs", "2",
        "--model", "openai-compat:local", "--base-url", server.url,
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["summary"]["passed"] == 3
    assert report["summary"]["trigger_rate"] == 1.0
    assert len(server.bodies) == 6  # 3 requests x 2 runs, one model call each
    system = server.bodies[0]["messages"][0]
    assert system["role"] == "system" and "<available_skills>" in system["content"]
    assert {"Skill", "Read", "Bash"} <= {t["function"]["name"] for t in server.bodies[0]["tools"]}


def new_skill(folder: Path, description: str) -> Path:
    """A one-file skill named after ``folder`` (the skills --coexist adds)."""
    write_skill_md(folder, description=description, body=f"# {folder.name}")
    return folder


def test_coexist_reports_who_loses(root: Path, tmp_path: Path) -> None:
    new = new_skill(
        tmp_path / "new" / "pdf-merger",
        "Merge PDF documents; merge two PDF files into one PDF.",
    )
    base = ("--root", str(root), "--no-defaults", "--threshold", "0.1", "--coexist", str(new))
    done = run(*base, "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["skills_losing_top1"] == ["pdf-tools"]
    assert data["lost"] == [
        {"skill": "pdf-tools", "query": "merge these two PDF documents", "taken_by": "pdf-merger"}
    ]
    text = run(*base, cwd=tmp_path)
    assert "1 skill(s) lose top-1 on their own evals:" in text.stdout


@pytest.mark.parametrize(
    "extra",
    [("--min-rate", "0.9"), ("--model", "scripted:x.jsonl"), ("--runs", "2")],
    ids=["min-rate", "model", "runs"],
)
def test_coexist_refuses_options_it_would_ignore(
    root: Path, tmp_path: Path, extra: tuple[str, str]
) -> None:
    """A CI step ``--coexist NEW --min-rate 0.9`` used to pass while skills lost
    requests: the option was never read. Now it is a usage error naming it."""
    new = new_skill(tmp_path / "new" / "pdf-merger", "Merge PDF files.")
    done = run("--root", str(root), "--no-defaults", "--coexist", str(new), *extra, cwd=tmp_path)
    assert done.returncode == 2, done.stdout
    assert f"{extra[0]} does not apply" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("extra", [("--runs", "5"), ("--base-url", "http://127.0.0.1:9")])
def test_model_options_without_a_model_are_refused(
    root: Path, tmp_path: Path, extra: tuple[str, str]
) -> None:
    """The router runs once, offline: ``--runs 5`` without ``--model`` was ignored."""
    done = run("pdf-tools", "--root", str(root), "--no-defaults", *extra, cwd=tmp_path)
    assert done.returncode == 2, done.stdout
    assert f"{extra[0]} apply to a model: add --model" in done.stderr


def test_coexist_says_when_no_skill_has_evals(tmp_path: Path) -> None:
    new_skill(tmp_path / "bare" / "git-commit", "Write commit messages.")
    new = new_skill(tmp_path / "new" / "pdf-merger", "Merge PDF files.")
    args = ("--root", str(tmp_path / "bare"), "--no-defaults", "--coexist", str(new))
    done = run(*args, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "No existing skill here ships trigger evals" in done.stdout
    assert "No existing skill loses" not in done.stdout


def test_bad_eval_file_is_one_clear_line(root: Path, tmp_path: Path) -> None:
    (root / "pdf-tools" / "evals" / "trigger_evals.json").write_text('[{"query": ""}]')
    done = run("pdf-tools", "--root", str(root), "--no-defaults", cwd=tmp_path)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        f"error: Eval set {root / 'pdf-tools/evals/trigger_evals.json'}, item 1: "
        '"query" must be a non-empty string.'
    ]


def test_a_skill_without_evals_says_how_to_write_them(root: Path, tmp_path: Path) -> None:
    done = run(str(root / "git-commit"), "--root", str(root), "--no-defaults", cwd=tmp_path)
    assert done.returncode == 1
    assert "evals/trigger_evals.json" in done.stderr


def test_a_failing_model_is_one_clear_line(root: Path, tmp_path: Path) -> None:
    script = write_script(tmp_path / "broken.jsonl", [{"error": "the model is down"}])
    done = run(
        "pdf-tools",
        "--root",
        str(root),
        "--no-defaults",
        "--model",
        f"scripted:{script}",
        cwd=tmp_path,
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "the model is down" in done.stderr


def test_coexist_with_a_missing_folder_names_coexist(root: Path, tmp_path: Path) -> None:
    done = run("--root", str(root), "--coexist", str(tmp_path / "nonexistent"), cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().startswith(f"error: --coexist {tmp_path / 'nonexistent'}:")
    assert "--root" not in done.stderr


def test_an_unavailable_skill_is_reported_as_such_not_as_a_miss(root: Path, tmp_path: Path) -> None:
    gated = root / "gated-pdf"
    (gated / "evals").mkdir(parents=True)
    (gated / "SKILL.md").write_text(
        "---\nname: gated-pdf\ndescription: Extract text from PDF files.\n"
        "requires-bins: [no-such-program-xyz]\n---\n\n# gated\n",
        encoding="utf-8",
    )
    (gated / "evals" / "trigger_evals.json").write_text(json.dumps(PDF_EVALS[:1]))
    alone = run("gated-pdf", "--root", str(root), "--no-defaults", cwd=tmp_path)
    assert alone.returncode == 1 and "Traceback" not in alone.stderr
    assert "gated-pdf not evaluated (1 request(s)): unavailable here" in alone.stderr
    assert "no-such-program-xyz" in alone.stderr
    assert "rank 1" not in alone.stdout + alone.stderr
    both = run("gated-pdf", "pdf-tools", "--root", str(root), "--no-defaults", cwd=tmp_path)
    assert both.returncode == 0, both.stderr
    flat = " ".join(both.stdout.split())
    assert "gated-pdf not evaluated (1 request(s)): unavailable here: needs program(s)" in flat
    assert "gated-pdf (should trigger)" not in flat  # not a silent miss
    assert "3 requests passed" in flat or "/3 requests passed" in flat
    data = json.loads(
        run(
            "gated-pdf", "pdf-tools", "--root", str(root), "--no-defaults", "--json", cwd=tmp_path
        ).stdout
    )
    assert [n["skill"] for n in data["not_run"]] == ["gated-pdf"]
    assert {c["skill"] for c in data["cases"]} == {"pdf-tools"}


def test_a_folder_here_that_holds_no_skill_does_not_hide_the_catalog_skill(
    root: Path, tmp_path: Path
) -> None:
    (tmp_path / "pdf-tools").mkdir()  # data, not a skill
    done = run("pdf-tools", "--root", str(root), "--no-defaults", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert [s["skill"] for s in json.loads(done.stdout)["skills"]] == ["pdf-tools"]


def test_a_stale_skill_name_is_one_warning_line(root: Path, tmp_path: Path) -> None:
    evals = root / "pdf-tools" / "evals"
    (evals / "trigger_evals.json").unlink()
    (evals / "evals.json").write_text(json.dumps({"skill_name": "pdf", "evals": PDF_EVALS}))
    done = run(str(root / "pdf-tools"), "--root", str(root), "--no-defaults", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("warning:") == 1 and "skill_name 'pdf'" in done.stderr

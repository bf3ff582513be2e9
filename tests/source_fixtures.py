"""Offline skill sources for tests: local git repositories and an HTTP server on 127.0.0.1.

Used by tests/unit/skills/sources and tests/e2e/test_install_sources_cli.py.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import http.server
import json
import os
import shutil
import subprocess
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def skill_md(name: str, note: str = "v1") -> str:
    return (
        f"---\nname: {name}\ndescription: The {name} skill for source tests ({note}). "
        f"Use when testing installs.\n---\n\n# {name}\n\nRevision {note}.\n"
    )


def write_skill(folder: Path, name: str, note: str = "v1") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(skill_md(name, note), encoding="utf-8")
    (folder / "references").mkdir(exist_ok=True)
    (folder / "references" / "notes.md").write_text(f"notes {note}\n", encoding="utf-8")
    return folder


class GitRepo:
    """A real repository on disk, reachable as ``file://`` (what tests install from)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir(parents=True)
        self.git("init", "-q", "-b", "main")
        self.git("config", "uploadpack.allowFilter", "true")
        self.git("config", "uploadpack.allowAnySHA1InWant", "true")

    @property
    def url(self) -> str:
        return self.path.as_uri()

    def git(self, *args: str) -> str:
        done = subprocess.run(
            ["git", *args],
            cwd=self.path,
            env={**os.environ, **GIT_ENV},
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout.strip()

    def commit(self, message: str) -> str:
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")

    def tag(self, name: str, *, move: bool = False) -> None:
        self.git("tag", *(("-f",) if move else ()), "-a", name, "-m", name)


def git_repo(path: Path, skills: dict[str, str], note: str = "v1") -> GitRepo:
    """A repository holding ``{folder: skill name}`` (folder "" for the top)."""
    repo = GitRepo(path)
    for folder, name in skills.items():
        write_skill(path / folder if folder else path, name, note)
    repo.commit(f"skills {note}")
    return repo


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_index(site: Path, folders: list[Path], *, corrupt: str | None = None) -> Path:
    """``site/.well-known/agent-skills/index.json`` (RFC v0.2.0) for skill ``folders``;
    the file named ``corrupt`` (``name/path``) is served changed after its digest."""
    base = site / ".well-known" / "agent-skills"
    entries = []
    for folder in folders:
        name = folder.name
        files = []
        for file in sorted(p for p in folder.rglob("*") if p.is_file()):
            rel = file.relative_to(folder).as_posix()
            data = file.read_bytes()
            files.append({"path": rel, "digest": f"sha256:{sha256(data)}"})
            out = base / name / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(data + (b"tampered\n" if corrupt == f"{name}/{rel}" else b""))
        lines = "".join(
            f"{f['path']}\0{f['digest'][7:]}\n" for f in sorted(files, key=lambda f: f["path"])
        )
        entries.append(
            {
                "name": name,
                "description": f"{name} from the index",
                "digest": f"sha256:{sha256(lines.encode())}",
                "files": files,
            }
        )
    index = base / "index.json"
    index.write_text(json.dumps({"version": "0.2.0", "skills": entries}), encoding="utf-8")
    return index


def zip_skill(folder: Path, out: Path) -> Path:
    with zipfile.ZipFile(out, "w") as zf:
        for file in sorted(p for p in folder.rglob("*") if p.is_file()):
            zf.write(file, f"{folder.name}/{file.relative_to(folder).as_posix()}")
    return out


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        return None


@contextlib.contextmanager
def serve(root: Path) -> Iterator[str]:
    """Serve ``root`` on 127.0.0.1 (a free port); yields the base URL."""
    handler = functools.partial(_Quiet, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def copy_tree(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest)
    return dest

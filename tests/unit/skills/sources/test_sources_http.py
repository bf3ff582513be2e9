"""Installing from URLs and skills indexes: a real HTTP server on 127.0.0.1, and
``httpx2.MockTransport`` for failures a local server cannot fake."""

from __future__ import annotations

import json
from pathlib import Path

import httpx2
import pytest

from skilldeck.config import Settings
from skilldeck.errors import (
    DigestMismatchError,
    NotASkillSourceError,
    SourceError,
    SourceUnreachableError,
)
from skilldeck.skills.packaging import pack
from skilldeck.skills.packaging.lockfile import lock_path, skills_root
from skilldeck.skills.sources import FetchOptions, install_from, list_source
from source_fixtures import serve, write_index, write_skill, zip_skill

INDEX = "/.well-known/agent-skills/index.json"


@pytest.fixture
def site(tmp_path: Path) -> Path:
    root = tmp_path / "site"
    root.mkdir()
    return root


def entry(settings: Settings, name: str, scope: str = "workspace") -> dict[str, object]:
    raw = json.loads(lock_path(settings, scope).read_text(encoding="utf-8"))  # type: ignore[arg-type]
    return dict(raw["skills"][name])


def test_skill_zip_and_raw_skill_md_urls(tmp_path: Path, site: Path, settings: Settings) -> None:
    folder = write_skill(tmp_path / "src" / "webby", "webby")
    pack(folder, output=site / "webby.skill")
    zip_skill(folder, site / "webby.zip")
    (site / "raw" / "main").mkdir(parents=True)
    (site / "raw" / "main" / "SKILL.md").write_bytes((folder / "SKILL.md").read_bytes())
    with serve(site) as base:
        [one] = install_from(f"{base}/webby.skill", settings=settings)
        assert one.files == 2
        assert entry(settings, "webby")["kind"] == "url"
        assert entry(settings, "webby")["source"] == f"{base}/webby.skill"
        [two] = install_from(f"{base}/webby.zip", settings=settings, scope="user")
        assert two.path == skills_root(settings, "user") / "webby"
        [three] = install_from(f"{base}/raw/main/SKILL.md", settings=settings, force=True)
        assert three.name == "webby" and three.files == 1


def test_index_installs_with_verified_digests(
    tmp_path: Path, site: Path, settings: Settings
) -> None:
    folders = [write_skill(tmp_path / "src" / n, n) for n in ("idx-one", "idx-two")]
    write_index(site, folders)
    with serve(site) as base:
        names = [c.name for c in list_source(base + INDEX, settings=settings)]
        assert names == ["idx-one", "idx-two"]
        [one] = install_from(base + INDEX, settings=settings, skills=["idx-two"])
    assert one.name == "idx-two"
    recorded = entry(settings, "idx-two")
    assert recorded["kind"] == "index"
    assert recorded["commit"] == f"sha256:{recorded['digest']}"  # the RFC digest = our content hash
    assert (skills_root(settings, "workspace") / "idx-two" / "references" / "notes.md").is_file()


def test_index_digest_mismatch_refuses_and_installs_nothing(
    tmp_path: Path, site: Path, settings: Settings
) -> None:
    folder = write_skill(tmp_path / "src" / "tampered", "tampered")
    write_index(site, [folder], corrupt="tampered/references/notes.md")
    with serve(site) as base, pytest.raises(DigestMismatchError, match="does not match"):
        install_from(base + INDEX, settings=settings)
    assert not (skills_root(settings, "workspace") / "tampered").exists()


def test_index_skill_digest_must_add_up(tmp_path: Path, site: Path, settings: Settings) -> None:
    folder = write_skill(tmp_path / "src" / "partial", "partial")
    index = write_index(site, [folder])
    doc = json.loads(index.read_text(encoding="utf-8"))
    doc["skills"][0]["files"] = [f for f in doc["skills"][0]["files"] if f["path"] == "SKILL.md"]
    index.write_text(json.dumps(doc), encoding="utf-8")  # a file left out: the total differs
    with serve(site) as base, pytest.raises(DigestMismatchError, match="skill digest"):
        install_from(base + INDEX, settings=settings)


@pytest.mark.parametrize(
    ("doc", "error"),
    [
        ({"skills": [{"name": "x", "description": "d", "files": ["SKILL.md"]}]}, SourceError),
        ({"version": "1.0.0", "skills": []}, SourceError),
        ({"version": "0.2.0"}, NotASkillSourceError),
        (
            {
                "version": "0.2.0",
                "skills": [
                    {
                        "name": "x",
                        "digest": "sha256:" + "0" * 64,
                        "files": [{"path": "../evil", "digest": "sha256:" + "0" * 64}],
                    }
                ],
            },
            SourceError,
        ),
    ],
)
def test_unverifiable_or_malformed_indexes_are_refused(
    site: Path, settings: Settings, doc: dict[str, object], error: type[Exception]
) -> None:
    index = site / ".well-known" / "agent-skills" / "index.json"
    index.parent.mkdir(parents=True)
    index.write_text(json.dumps(doc), encoding="utf-8")
    with serve(site) as base, pytest.raises(error):
        install_from(base + INDEX, settings=settings)


def test_http_errors_are_clear(site: Path, settings: Settings) -> None:
    with serve(site) as base, pytest.raises(SourceUnreachableError, match="HTTP 404"):
        install_from(f"{base}/missing.skill", settings=settings)


def test_plain_http_to_another_host_is_refused(settings: Settings) -> None:
    with pytest.raises(SourceError, match="https only"):
        install_from("http://example.com/x.skill", settings=settings)


def test_unreachable_host_and_timeout_through_an_injected_transport(settings: Settings) -> None:
    def refuse(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("connection refused", request=request)

    def slow(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ReadTimeout("timed out", request=request)

    down = FetchOptions(transport=httpx2.MockTransport(refuse))
    with pytest.raises(SourceUnreachableError, match=r"Cannot reach https://skills\.example"):
        install_from("https://skills.example" + INDEX, settings=settings, fetch=down)
    late = FetchOptions(transport=httpx2.MockTransport(slow), http_timeout=2)
    with pytest.raises(SourceUnreachableError, match="within 2s"):
        install_from("https://skills.example/a.skill", settings=settings, fetch=late)


def test_redirect_to_plain_http_is_refused(settings: Settings) -> None:
    def hop(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(302, headers={"Location": "http://evil.example/a.skill"})

    options = FetchOptions(transport=httpx2.MockTransport(hop))
    with pytest.raises(SourceError, match="https only"):
        install_from("https://skills.example/a.skill", settings=settings, fetch=options)

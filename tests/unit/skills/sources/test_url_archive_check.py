"""``check`` / ``update`` of skills from a downloaded archive: two skills of one
archive are each checked against their own folder; an archive installed as one
skill and later republished holding several is followed by the skill's name, and
its messages name the URL, never a deleted temp file."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from skilldeck.config import Settings
from skilldeck.errors import PackageError
from skilldeck.skills.packaging.lockfile import lock_path, skills_root
from skilldeck.skills.sources import check_updates, install_from, update
from source_fixtures import serve, skill_md


def multi_zip(out: Path, members: dict[str, str], note: str = "v1") -> Path:
    """A zip with one skill per ``folder → name``."""
    with zipfile.ZipFile(out, "w") as zf:
        for folder, name in members.items():
            zf.writestr(f"{folder}/SKILL.md", skill_md(name, note))
            zf.writestr(f"{folder}/references/notes.md", f"notes {folder} {note}\n")
    return out


def lock_doc(settings: Settings) -> dict[str, dict[str, object]]:
    raw = json.loads(lock_path(settings, "workspace").read_text(encoding="utf-8"))
    return dict(raw["skills"])


def test_two_skills_of_one_url_archive_are_each_up_to_date(
    tmp_path: Path, settings: Settings
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    multi_zip(site / "two.zip", {"alpha": "alpha", "beta": "beta"})
    with serve(site) as base:
        done = install_from(f"{base}/two.zip", settings=settings, all_skills=True)
        assert [d.name for d in done] == ["alpha", "beta"]
        before = lock_doc(settings)

        statuses = check_updates(settings)
        assert [(s.name, s.state) for s in statuses] == [
            ("alpha", "up-to-date"),
            ("beta", "up-to-date"),
        ], [s.message for s in statuses]
        results = update(settings, all_skills=True)
        assert [r.outcome for r in results] == ["up-to-date", "up-to-date"]
        assert lock_doc(settings) == before  # nothing reinstalled

        multi_zip(site / "two.zip", {"alpha": "alpha", "beta": "beta"}, note="v2")
        statuses = check_updates(settings)
        assert [s.state for s in statuses] == ["outdated", "outdated"]
        assert statuses[0].available != statuses[1].available
        assert [r.outcome for r in update(settings, all_skills=True)] == ["updated", "updated"]
        assert [s.state for s in check_updates(settings)] == ["up-to-date", "up-to-date"]
    root = skills_root(settings, "workspace")
    assert (root / "beta" / "references" / "notes.md").read_text() == "notes beta v2\n"


def test_an_archive_grown_to_several_follows_the_skill_by_name(
    tmp_path: Path, settings: Settings
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    multi_zip(site / "grow.zip", {"grow": "grow"})
    with serve(site) as base:
        [done] = install_from(f"{base}/grow.zip", settings=settings)
        assert done.name == "grow" and "subpath" not in lock_doc(settings)["grow"]

        multi_zip(site / "grow.zip", {"grow": "grow", "extra": "extra"})  # same grow
        [status] = check_updates(settings)
        assert status.state == "up-to-date", status.message

        multi_zip(site / "grow.zip", {"grow": "grow", "extra": "extra"}, note="v2")
        [status] = check_updates(settings)
        assert status.state == "outdated", status.message
        [result] = update(settings, names=["grow"])
        assert result.outcome == "updated", result.message
        assert lock_doc(settings)["grow"]["subpath"] == "grow"
        [status] = check_updates(settings)
        assert status.state == "up-to-date", status.message


def test_an_archive_grown_without_the_skill_names_the_url(
    tmp_path: Path, settings: Settings
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    multi_zip(site / "grow.zip", {"grow": "grow"})
    with serve(site) as base:
        install_from(f"{base}/grow.zip", settings=settings)
        multi_zip(site / "grow.zip", {"alpha": "alpha", "beta": "beta"})
        [status] = check_updates(settings)
        [result] = update(settings, names=["grow"])
    for message in (status.message, result.message):
        assert status.state == "error" and result.outcome == "refused"
        assert f"{base}/grow.zip" in message, message
        assert "/tmp" not in message and "skilldeck-check-" not in message, message
        assert "alpha, beta" in message and "--skill NAME" in message, message


def test_a_downloaded_archive_refused_is_named_by_its_url(
    tmp_path: Path, settings: Settings
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "broken.zip").write_bytes(b"not a zip")
    with zipfile.ZipFile(site / "loose.zip", "w") as zf:
        zf.writestr("notes/readme.md", "no skill here\n")
    with serve(site) as base:
        for name in ("broken.zip", "loose.zip"):
            with pytest.raises(PackageError) as caught:
                install_from(f"{base}/{name}", settings=settings)
            message = str(caught.value)
            assert message.startswith(f"{base}/{name} is not a"), message
            assert "skilldeck-fetch-" not in message, message

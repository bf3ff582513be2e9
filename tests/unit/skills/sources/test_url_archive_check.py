"""``check`` / ``update`` of skills from a downloaded archive: two skills of one
archive are each checked against their own folder."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from skilldeck.config import Settings
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

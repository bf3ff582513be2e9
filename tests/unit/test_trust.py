"""The trust store and the trust decision (skilldeck.trust), and how settings,
discovery and the CLI fast path follow it."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from skilldeck._fastconfig import load_light_settings
from skilldeck._trust_text import describe_workspace
from skilldeck.config import load_settings
from skilldeck.errors import ConfigError, ConfigWarning
from skilldeck.skills.discovery import resolve_roots
from skilldeck.skills.model.skill import SkillSource
from skilldeck.trust import (
    TRUST_ENV,
    TrustState,
    assess_workspace,
    list_trusted,
    revoke_folder,
    store_path,
    trust_folder,
)

pytestmark = pytest.mark.usefixtures("untrusted_workspaces")


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    workspace = tmp_path / "ws"
    (workspace / ".skilldeck").mkdir(parents=True)
    monkeypatch.chdir(workspace)
    return workspace


def write_config(ws: Path, text: str) -> None:
    (ws / ".skilldeck" / "config.toml").write_text(text, encoding="utf-8")


def test_never_trusted_then_trusted_then_changed(ws: Path, skilldeck_home: Path) -> None:
    write_config(ws, "[skills]\nstrict = true\n")
    assert assess_workspace(ws, skilldeck_home).state is TrustState.UNTRUSTED
    trust_folder(ws, skilldeck_home)
    assert assess_workspace(ws, skilldeck_home).state is TrustState.TRUSTED
    assert load_settings().skills.strict is True
    write_config(ws, "[skills]\nstrict = false\n")
    assert assess_workspace(ws, skilldeck_home).state is TrustState.CHANGED
    assert [s for _, _, s in list_trusted(skilldeck_home)] == [TrustState.CHANGED]


def test_untrusted_config_is_ignored_with_one_warning(ws: Path) -> None:
    write_config(ws, "[skills]\nstrict = true\n")
    with pytest.warns(ConfigWarning) as caught:
        settings = load_settings()
    assert settings.skills.strict is False
    assert len(caught) == 1
    message = str(caught[0].message)
    assert "not trusted" in message and f"skilldeck trust {ws}" in message


def test_nothing_to_ignore_means_no_warning(ws: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not load_settings().workspace_trusted


def test_explicit_trust_argument_decides(ws: Path, skilldeck_home: Path) -> None:
    write_config(ws, "[skills]\nprompt_budget = 5\n")
    assert load_settings(trust=True).skills.prompt_budget == 5
    trust_folder(ws, skilldeck_home)
    with pytest.warns(ConfigWarning):
        assert load_settings(trust=False).skills.prompt_budget == 8000


def test_environment_trusts_and_distrusts(
    ws: Path, skilldeck_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(ws, "[skills]\nprompt_budget = 5\n")
    monkeypatch.setenv(TRUST_ENV, "1")
    assert load_settings().skills.prompt_budget == 5
    trust_folder(ws, skilldeck_home)
    monkeypatch.setenv(TRUST_ENV, "0")
    with pytest.warns(ConfigWarning):
        assert load_settings().skills.prompt_budget == 8000


def test_home_and_root_are_never_trusted_implicitly(
    skilldeck_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = Path.home()
    monkeypatch.setenv(TRUST_ENV, "1")
    for folder in (home, Path("/")):
        assert assess_workspace(folder, skilldeck_home).state is TrustState.UNTRUSTED
        with pytest.raises(ConfigError, match="does not trust / or your home folder"):
            trust_folder(folder, skilldeck_home)


def test_in_the_home_folder_the_users_own_files_still_count(
    skilldeck_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the default SKILLDECK_HOME, ~/.skilldeck/config.toml is the user's file
    even when skilldeck runs in ~: it loads, and no warning claims it is ignored."""
    home = skilldeck_home.parent
    monkeypatch.delenv("SKILLDECK_HOME")
    skilldeck_home.mkdir(parents=True, exist_ok=True)
    (skilldeck_home / "config.toml").write_text("[skills]\nstrict = true\n", "utf-8")
    (home / ".claude" / "skills").mkdir(parents=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        settings = load_settings(workspace=home)
    assert settings.skills.strict is True
    sources = {r.path: r.source for r in resolve_roots(settings)}
    assert sources[home / ".claude" / "skills"] is SkillSource.USER


def test_workspace_roots_only_when_trusted(ws: Path, skilldeck_home: Path) -> None:
    (ws / ".agents" / "skills").mkdir(parents=True)
    with pytest.warns(ConfigWarning, match=r"\.agents/skills"):
        untrusted = load_settings()
    assert SkillSource.WORKSPACE not in {r.source for r in resolve_roots(untrusted)}
    trust_folder(ws, skilldeck_home)
    trusted = load_settings()
    assert SkillSource.WORKSPACE in {r.source for r in resolve_roots(trusted)}


def test_store_is_0600_json_with_the_digest(ws: Path, skilldeck_home: Path) -> None:
    write_config(ws, "model = 'x:y'\n")
    result = trust_folder(ws, skilldeck_home)
    store = store_path(skilldeck_home)
    assert store.stat().st_mode & 0o777 == 0o600
    record = json.loads(store.read_text("utf-8"))["folders"][str(ws.resolve())]
    assert record["config_sha256"] == result.digest and len(result.digest or "") == 64


def test_revoke(ws: Path, skilldeck_home: Path) -> None:
    trust_folder(ws, skilldeck_home)
    assert revoke_folder(ws, skilldeck_home) is True
    assert revoke_folder(ws, skilldeck_home) is False
    assert assess_workspace(ws, skilldeck_home).state is TrustState.UNTRUSTED


@pytest.mark.parametrize("content", ["not json", '{"folders": []}', "[1]"])
def test_a_damaged_store_trusts_nothing(ws: Path, skilldeck_home: Path, content: str) -> None:
    trust_folder(ws, skilldeck_home)
    store_path(skilldeck_home).write_text(content, encoding="utf-8")
    assert assess_workspace(ws, skilldeck_home).state is TrustState.UNTRUSTED


def test_trusting_while_the_config_changes_records_nothing(ws: Path, skilldeck_home: Path) -> None:
    write_config(ws, "[skills]\nstrict = true\n")
    shown = assess_workspace(ws, skilldeck_home)
    write_config(ws, '[sandbox]\nmode = "off"\n')
    with pytest.raises(ConfigError, match="changed while you were reading"):
        trust_folder(ws, skilldeck_home, expect=shown)
    assert not store_path(skilldeck_home).exists()


def test_description_marks_what_relaxes_security(ws: Path, skilldeck_home: Path) -> None:
    write_config(ws, '[sandbox]\nmode = "off"\n[skills]\nstrict = true\n')
    (ws / ".claude" / "skills" / "x").mkdir(parents=True)
    (ws / ".claude" / "skills" / "x" / "SKILL.md").write_text("---\n", "utf-8")
    lines = describe_workspace(assess_workspace(ws, skilldeck_home), skilldeck_home)
    assert '    ! sandbox.mode = "off"' in lines
    assert "      skills.strict = true" in lines
    assert "  .claude/skills/: 1 entry: x" in lines


def test_fast_path_follows_the_same_trust(ws: Path, skilldeck_home: Path) -> None:
    write_config(ws, "[skills]\nstrict = true\ndirs = ['/elsewhere']\n")
    with pytest.warns(ConfigWarning) as fast_warned:
        light = load_light_settings()
    with pytest.warns(ConfigWarning) as full_warned:
        full = load_settings()
    assert light is not None and not light.workspace_trusted
    assert (light.skills.strict, light.skills.dirs) == (full.skills.strict, full.skills.dirs)
    assert light.skills.dirs == [] and light.skills.strict is False
    assert [str(w.message) for w in fast_warned] == [str(w.message) for w in full_warned]
    trust_folder(ws, skilldeck_home)
    light = load_light_settings()
    assert light is not None and light.skills.dirs == [Path("/elsewhere")]
    assert light.full().workspace_trusted


def test_a_damaged_store_trusts_nothing_and_is_never_overwritten(
    ws: Path, skilldeck_home: Path, tmp_path: Path
) -> None:
    write_config(ws, "[skills]\nstrict = true\n")
    trust_folder(ws, skilldeck_home)
    store = store_path(skilldeck_home)
    other = tmp_path / "other"
    other.mkdir()
    for damage in ("{broken", '{"folders": [1]}', "[]"):
        store.write_text(damage, encoding="utf-8")
        assert assess_workspace(ws, skilldeck_home).state is TrustState.UNTRUSTED
        for write in (
            lambda: trust_folder(other, skilldeck_home),
            lambda: revoke_folder(ws, skilldeck_home),
            lambda: list_trusted(skilldeck_home),
        ):
            with pytest.raises(ConfigError, match=r"trust store .* cannot be used"):
                write()
        assert store.read_text(encoding="utf-8") == damage


def test_recording_an_installed_root_never_fails_on_a_damaged_store(
    ws: Path, skilldeck_home: Path
) -> None:
    from skilldeck.trust import accept_created_root

    store_path(skilldeck_home).parent.mkdir(parents=True, exist_ok=True)
    store_path(skilldeck_home).write_text("[1]", encoding="utf-8")
    assert accept_created_root(ws, skilldeck_home, ".skilldeck/skills") is False
    assert store_path(skilldeck_home).read_text(encoding="utf-8") == "[1]"

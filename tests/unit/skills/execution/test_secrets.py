"""The secrets store (keyring, or the 0600 file without one) and redaction."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from keyring.backend import KeyringBackend
from keyring.backends.fail import Keyring as FailKeyring

from skilldeck.errors import SecretsError
from skilldeck.skills.execution.secrets import (
    KEYRING_SERVICE,
    SecretStore,
    check_secret_name,
    redact,
    redact_data,
    remember,
)


class MemoryKeyring(KeyringBackend):
    """A keyring backend that keeps passwords in a dict (an OS keyring stand-in)."""

    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.data: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.data.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.data[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self.data.pop((service, username), None)


def test_without_a_keyring_values_go_to_a_0600_file(tmp_path: Path) -> None:
    store = SecretStore(tmp_path, backend=FailKeyring())
    assert store.backend_name == "file"
    entry = store.set("GITHUB_TOKEN", "ghp_filestored1")
    assert entry.backend == "file"
    values = tmp_path / "secrets" / "values.json"
    assert stat.S_IMODE(values.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "secrets").stat().st_mode) == 0o700
    assert json.loads(values.read_text()) == {"GITHUB_TOKEN": "ghp_filestored1"}
    # the index holds names only
    assert "ghp_filestored1" not in (tmp_path / "secrets" / "index.json").read_text()
    assert SecretStore(tmp_path, backend=FailKeyring()).get("GITHUB_TOKEN") == "ghp_filestored1"


def test_with_a_keyring_values_go_there_and_never_to_a_file(tmp_path: Path) -> None:
    ring = MemoryKeyring()
    store = SecretStore(tmp_path, backend=ring)
    assert store.set("API_KEY", "sk-in-the-keyring").backend == "keyring"
    assert ring.data == {(KEYRING_SERVICE, "API_KEY"): "sk-in-the-keyring"}
    assert not (tmp_path / "secrets" / "values.json").exists()
    assert store.get("API_KEY") == "sk-in-the-keyring"
    assert [e.to_dict() for e in store.entries()] == [
        {"name": "API_KEY", "skill": None, "backend": "keyring"}
    ]
    assert store.remove("API_KEY") and ring.data == {}
    assert store.get("API_KEY") is None and store.entries() == []


def test_a_skill_scoped_value_wins_over_the_global_one(tmp_path: Path) -> None:
    store = SecretStore(tmp_path, use_keyring=False)
    store.set("TOKEN", "global-value")
    store.set("TOKEN", "only-for-gh", skill="gh")
    assert store.get("TOKEN", skill="gh") == "only-for-gh"
    assert store.get("TOKEN", skill="other") == "global-value"
    assert store.get("TOKEN") == "global-value"
    assert store.remove("TOKEN", skill="gh")
    assert store.get("TOKEN", skill="gh") == "global-value"
    assert not store.remove("TOKEN", skill="gh")


@pytest.mark.parametrize("name", ["bad name", "1ABC", "A-B", "", "X" * 200, "$(id)"])
def test_names_must_be_environment_variable_names(name: str) -> None:
    with pytest.raises(SecretsError):
        check_secret_name(name)


@pytest.mark.parametrize("value", ["short", "two\nlines here"])
def test_short_or_multiline_values_are_refused(tmp_path: Path, value: str) -> None:
    with pytest.raises(SecretsError, match="at least"):
        SecretStore(tmp_path, use_keyring=False).set("NAME", value)


def test_a_damaged_file_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "index.json").write_text("{nope")
    with pytest.raises(SecretsError, match=r"index\.json"):
        SecretStore(tmp_path, use_keyring=False).entries()


def test_redact_replaces_remembered_values_longest_first() -> None:
    remember({"SHORT_TOKEN": "abc123xyz", "LONG_TOKEN": "abc123xyz-and-more"})
    text = "a abc123xyz-and-more b abc123xyz c"
    assert redact(text) == "a [secret LONG_TOKEN] b [secret SHORT_TOKEN] c"
    data = {"out": ["abc123xyz", ("abc123xyz",)], "n": 1}
    assert redact_data(data) == {"out": ["[secret SHORT_TOKEN]", ("[secret SHORT_TOKEN]",)], "n": 1}
    assert redact("nothing here") == "nothing here"


def test_an_empty_or_odd_skill_name_never_reaches_the_global_value(tmp_path: Path) -> None:
    store = SecretStore(tmp_path, use_keyring=False)
    store.set("GTOKEN", "globalvalue1")
    for skill in ("", " ", "../evil", "a\nb", "a/b"):
        with pytest.raises(SecretsError, match="is not a skill name"):
            store.set("GTOKEN", "othervalue22", skill=skill)
        with pytest.raises(SecretsError, match="is not a skill name"):
            store.remove("GTOKEN", skill=skill)
    assert store.get("GTOKEN") == "globalvalue1"
    for name in ("my-skill_2.0", "café", "Data Tools"):  # what lenient discovery loads
        store.set("GTOKEN", "perskill1234", skill=name)
        assert store.get("GTOKEN", skill=name) == "perskill1234"
        assert store.remove("GTOKEN", skill=name)


def test_an_index_that_is_not_an_object_is_an_error_not_an_empty_store(tmp_path: Path) -> None:
    store = SecretStore(tmp_path, use_keyring=False)
    store.set("GTOKEN", "globalvalue1")
    (tmp_path / "secrets" / "index.json").write_text("[1]", encoding="utf-8")
    with pytest.raises(SecretsError, match="holds a JSON list"):
        store.entries()
    with pytest.raises(SecretsError):
        store.set("OTHER", "othervalue22")  # would have rewritten the index with one name
    assert json.loads((tmp_path / "secrets" / "index.json").read_text()) == [1]

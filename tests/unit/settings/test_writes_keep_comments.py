"""``skills disable``/``enable`` edit the config file in place: its comments, order
and layout stay (the file used to be written anew from its values, every comment
lost), in each way TOML can spell the table."""

from __future__ import annotations

from pathlib import Path

import pytest

from skilldeck.errors import ConfigError
from skilldeck.settings import load_settings, read_toml, record_disabled, record_enabled
from skilldeck.settings.writes import update_config_file

HAND_KEPT = """\
# my skilldeck settings — kept by hand
model = "scripted:demo.jsonl"  # the offline model

[skills]
# the ones that kept triggering on everything
disabled = ["noisy"]
match_embeddings = true

[permissions]
deny = ["Bash(rm:*)"]  # never
"""


@pytest.fixture
def user_config(tmp_path: Path, skilldeck_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    skilldeck_home.mkdir(parents=True, exist_ok=True)
    return skilldeck_home / "config.toml"


def test_disable_keeps_comments_order_and_other_tables(user_config: Path) -> None:
    user_config.write_text(HAND_KEPT, encoding="utf-8")
    record_disabled(load_settings(), "pdf")
    text = user_config.read_text(encoding="utf-8")
    assert text == HAND_KEPT.replace('disabled = ["noisy"]', 'disabled = ["noisy", "pdf"]')
    record_enabled(load_settings(), "pdf")
    assert user_config.read_text(encoding="utf-8") == HAND_KEPT


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ('skills.disabled = ["a"]  # dotted\n', 'skills.disabled = ["a", "b"]  # dotted\n'),
        ('skills = { disabled = ["a"] }\n', 'skills = { disabled = ["a", "b"] }\n'),
        ("# only a comment\n", '# only a comment\n\n[skills]\ndisabled = ["b"]\n'),
        ('model = "x"\n', 'model = "x"\n\n[skills]\ndisabled = ["b"]\n'),
    ],
)
def test_each_spelling_of_the_table_is_edited_where_it_is(
    user_config: Path, before: str, after: str
) -> None:
    user_config.write_text(before, encoding="utf-8")
    record_disabled(load_settings(), "b")
    assert user_config.read_text(encoding="utf-8") == after
    assert read_toml(user_config)["skills"]["disabled"][-1] == "b"


def test_no_file_yet_is_created(user_config: Path) -> None:
    record_disabled(load_settings(), "pdf")
    assert user_config.read_text(encoding="utf-8") == '[skills]\ndisabled = ["pdf"]\n'


def test_a_broken_file_is_named_and_left_alone(user_config: Path) -> None:
    user_config.write_text("# mine\n[skills\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="invalid TOML"):
        update_config_file(user_config, {"skills": {"disabled": ["x"]}})
    assert user_config.read_text(encoding="utf-8") == "# mine\n[skills\n"


def test_nested_updates_merge_into_existing_tables(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('[a]\nkeep = 1  # one\n[a.b]\nold = "x"\n', encoding="utf-8")
    update_config_file(path, {"a": {"b": {"new": Path("/p")}, "drop": None}})
    assert read_toml(path) == {"a": {"keep": 1, "b": {"old": "x", "new": "/p"}}}
    assert "# one" in path.read_text(encoding="utf-8")


def test_a_long_list_is_written_one_name_a_line(tmp_path: Path) -> None:
    """tomlkit builds a Python list into an array in quadratic time, so a long one is
    parsed from tomli-w's text instead (one name a line; the stress test times it),
    and reads back exactly."""
    path = tmp_path / "c.toml"
    path.write_text("# keep me\n[skills]\n", encoding="utf-8")
    names = [f"skill-{i}" for i in range(20_000)]
    update_config_file(path, {"skills": {"disabled": names}})
    assert read_toml(path)["skills"]["disabled"] == names
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# keep me\n[skills]\ndisabled = [\n")

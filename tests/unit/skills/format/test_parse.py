"""SKILL.md parsing: frontmatter bytes only, offsets, lines, every failure with a code."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from skilldeck.errors import SkillParseError
from skilldeck.skills.format import (
    MAX_FRONTMATTER_BYTES,
    find_skill_md,
    parse_skill_md,
    parse_yaml_text,
)
from skilldeck.skills.format import parse as parse_module


def write(tmp_path: Path, data: bytes | str, name: str = "SKILL.md") -> Path:
    folder = tmp_path / "demo"
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def parse_error(tmp_path: Path, data: bytes | str) -> SkillParseError:
    path = write(tmp_path, data)
    with pytest.raises(SkillParseError) as info:
        parse_skill_md(path)
    assert info.value.path == path
    return info.value


# ---- happy paths -----------------------------------------------------------------


def test_basic_frontmatter_offset_and_key_lines(tmp_path: Path) -> None:
    text = "---\nname: demo\ndescription: Does things.\n---\n# Body\n"
    parsed = parse_skill_md(write(tmp_path, text))
    assert parsed.data == {"name": "demo", "description": "Does things."}
    assert parsed.key_lines == {"name": 2, "description": 3}
    assert text.encode()[parsed.body_offset :] == b"# Body\n"
    assert parsed.duplicate_keys == ()


def test_body_offset_is_in_bytes_after_multibyte_text(tmp_path: Path) -> None:
    text = "---\nname: demo\ndescription: Résumé — naïve ünïcödé\n---\nBody ✓\n"
    path = write(tmp_path, text)
    parsed = parse_skill_md(path)
    assert path.read_bytes()[parsed.body_offset :].decode("utf-8") == "Body ✓\n"
    assert parsed.data["description"] == "Résumé — naïve ünïcödé"


def test_bom_is_skipped_and_lines_still_count_from_one(tmp_path: Path) -> None:
    path = write(tmp_path, b"\xef\xbb\xbf---\nname: demo\ndescription: d\n---\nbody")
    parsed = parse_skill_md(path)
    assert parsed.data["name"] == "demo"
    assert parsed.key_lines == {"name": 2, "description": 3}
    assert path.read_bytes()[parsed.body_offset :] == b"body"


def test_crlf_line_endings(tmp_path: Path) -> None:
    path = write(tmp_path, b"---\r\nname: demo\r\ndescription: d\r\n---\r\nbody\r\n")
    parsed = parse_skill_md(path)
    assert parsed.data == {"name": "demo", "description": "d"}
    assert parsed.key_lines["description"] == 3
    assert path.read_bytes()[parsed.body_offset :] == b"body\r\n"


def test_closing_line_may_have_trailing_spaces_and_end_the_file(tmp_path: Path) -> None:
    parsed = parse_skill_md(write(tmp_path, "---   \nname: demo\ndescription: d\n---  "))
    assert parsed.data["name"] == "demo"
    assert parsed.body_offset == len("---   \nname: demo\ndescription: d\n---  ")


def test_indented_or_longer_dashes_do_not_close(tmp_path: Path) -> None:
    text = "---\nname: demo\ndescription: |\n  ---\n  ----\n---\nbody"
    parsed = parse_skill_md(write(tmp_path, text))
    assert parsed.data["description"] == "---\n----\n"


def test_lowercase_skill_md_is_found_and_parsed(tmp_path: Path) -> None:
    path = write(tmp_path, "---\nname: demo\ndescription: d\n---\n", name="skill.md")
    assert find_skill_md(path.parent) == path
    assert parse_skill_md(path).data["name"] == "demo"


def test_find_skill_md_prefers_uppercase_and_ignores_directories(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    folder.mkdir()
    assert find_skill_md(folder) is None
    (folder / "SKILL.md").mkdir()
    assert find_skill_md(folder) is None
    (folder / "skill.md").write_text("x", encoding="utf-8")
    assert find_skill_md(folder) == folder / "skill.md"


def test_empty_frontmatter_is_an_empty_mapping(tmp_path: Path) -> None:
    parsed = parse_skill_md(write(tmp_path, "---\n---\nbody"))
    assert parsed.data == {}
    assert parsed.key_lines == {}
    assert parsed.body_offset == len("---\n---\n")


def test_comment_only_frontmatter_is_empty(tmp_path: Path) -> None:
    assert parse_skill_md(write(tmp_path, "---\n# nothing yet\n---\n")).data == {}


def test_only_the_frontmatter_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    body = b"x" * (5 * 1024 * 1024)
    path = write(tmp_path, b"---\nname: demo\ndescription: d\n---\n" + body)
    requested: list[int] = []
    real_read = os.read

    def counting_read(fd: int, n: int) -> bytes:
        requested.append(n)
        return real_read(fd, n)

    monkeypatch.setattr(parse_module.os, "read", counting_read)
    parse_skill_md(path)
    assert sum(requested) <= 64 * 1024


def test_frontmatter_spanning_many_chunks(tmp_path: Path) -> None:
    padding = "".join(f"k{i}: value number {i}\n" for i in range(2000))  # ~45 KiB
    text = f"---\nname: demo\n{padding}description: last\n---\nbody"
    parsed = parse_skill_md(write(tmp_path, text))
    assert parsed.data["description"] == "last"
    assert parsed.key_lines["description"] == 2003
    assert text.encode()[parsed.body_offset :] == b"body"


def test_closing_line_split_across_chunk_boundary(tmp_path: Path) -> None:
    # put "---" so that it straddles the 8 KiB read boundary
    head = "---\nname: demo\ndescription: " + "a" * (8192 - 30) + "\n"
    text = head + "---\nbody"
    parsed = parse_skill_md(write(tmp_path, text))
    assert parsed.data["name"] == "demo"
    assert text.encode()[parsed.body_offset :] == b"body"


# ---- YAML 1.1 values and their source text -----------------------------------------


def test_retyped_values_keep_their_source_text(tmp_path: Path) -> None:
    text = (
        "---\nname: demo\ndescription: d\nversion: 1.10\nlicense: no\nargument-hint: [file]\n"
        "metadata:\n  v: 1.0\n  n: 7\n  s: plain\ntags:\n  - 1.0\n  - x\ndate: 2024-01-02\n---\n"
    )
    parsed = parse_skill_md(write(tmp_path, text))
    assert parsed.data["version"] == 1.1
    assert parsed.data["license"] is False
    assert parsed.data["argument-hint"] == ["file"]
    assert parsed.data["date"] == "2024-01-02"  # timestamps stay text
    assert parsed.text("version") == "1.10"
    assert parsed.text("license") == "no"
    assert parsed.text("argument-hint") == "[file]"
    assert parsed.text("metadata", "v") == "1.0"
    assert parsed.text("metadata", "n") == "7"
    assert parsed.text("metadata", "s") is None
    assert parsed.text("tags", 0) == "1.0"
    assert parsed.text("tags", 1) is None


def test_keys_are_their_source_text(tmp_path: Path) -> None:
    parsed = parse_skill_md(write(tmp_path, "---\non: push\nyes: 1\n3: three\n---\n"))
    assert parsed.data == {"on": "push", "yes": 1, "3": "three"}


def test_values_through_the_libyaml_path(tmp_path: Path) -> None:
    text = (
        "---\nname: demo\ndescription: >\n  folded\n  text\nnested:\n  deeper:\n    x: [1, 2]\n"
        'quoted: "a\\tb"\nnull_value: ~\nempty:\n---\n'
    )
    parsed = parse_skill_md(write(tmp_path, text))
    assert parsed.data["description"] == "folded text\n"
    assert parsed.data["nested"] == {"deeper": {"x": [1, 2]}}
    assert parsed.data["quoted"] == "a\tb"
    assert parsed.data["null_value"] is None
    assert parsed.data["empty"] is None
    assert parsed.key_lines["nested"] == 6
    assert parsed.key_lines["quoted"] == 9


def test_merge_keys_and_small_aliases_work(tmp_path: Path) -> None:
    text = "---\nbase: &b\n  x: 1\nother:\n  <<: *b\n  y: 2\nname: demo\n---\n"
    parsed = parse_skill_md(write(tmp_path, text))
    assert parsed.data["other"] == {"x": 1, "y": 2}


def test_duplicate_keys_are_recorded_and_the_last_wins(tmp_path: Path) -> None:
    text = "---\nname: a\ndescription: d\nname: b\n---\n"
    parsed = parse_skill_md(write(tmp_path, text))
    assert parsed.data["name"] == "b"
    assert parsed.duplicate_keys == (("name", 4),)
    assert parsed.key_lines["name"] == 4


def test_duplicate_keys_on_the_libyaml_path(tmp_path: Path) -> None:
    text = "---\nname: a\ndescription: |\n  x\nname: b\n---\n"
    assert parse_skill_md(write(tmp_path, text)).duplicate_keys == (("name", 5),)


def test_parse_yaml_text_offsets_lines(tmp_path: Path) -> None:
    parsed = parse_yaml_text("a: 1\nb: 2\n", path=tmp_path / "x", first_line=10)
    assert parsed.key_lines == {"a": 10, "b": 11}


# ---- failures, each with a code and a line -----------------------------------------


@pytest.mark.parametrize(
    ("data", "code", "line"),
    [
        ("# Title\n\nno frontmatter\n", "SD001", 1),
        ("", "SD001", 1),
        ("--- name: x\n---\n", "SD001", 1),
        ("---\nname: x\ndescription: d\n", "SD002", 1),
        ("---", "SD002", 1),
        ("---\n- a\n- b\n---\n", "SD004", 2),
        ("---\njust a sentence\n---\n", "SD004", 2),
        ("---\nname: x\ndescription: Use when: it matters\n---\n", "SD003", 3),
        ("---\nname: x\n\tdescription: tab\n---\n", "SD003", 3),
        ('---\nname: x\ndescription: "unterminated\n---\n', "SD003", 3),
        # reported where the bracket was opened, not where libyaml gave up (line 4)
        ("---\nname: x\nlist: [a, b\nother: y\n---\n", "SD003", 3),
        ("---\nname: x\nref: *nothing\n---\n", "SD003", 3),
    ],
)
def test_failures_have_codes_and_lines(tmp_path: Path, data: str, code: str, line: int) -> None:
    error = parse_error(tmp_path, data)
    assert (error.code, error.line) == (code, line)
    assert error.bare_message
    assert str(error).startswith(f"{error.path}")


def test_yaml_error_message_says_how_to_fix(tmp_path: Path) -> None:
    error = parse_error(tmp_path, "---\nname: x\ndescription: Use when: needed\n---\n")
    assert "column" in error.bare_message
    assert "quote" in error.bare_message


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("[WIP] does things", ["`[` is read as a YAML list", 'description: "[WIP] does things"']),
        ("{x} is y", ["`{` is read as a YAML mapping", 'description: "{x} is y"']),
        ("*important* tool", ["read as an alias", 'description: "*important* tool"']),
        ("@mention bot", ["cannot start with `@`", 'description: "@mention bot"']),
        ("- a note", ["`- ` starts a list item", "quote the value"]),
        ('"Say "hi" now"', ['ends at the next `"`', "single quotes instead"]),
        ("'It''s' fine", ["ends at the next `'`", "double quotes instead"]),
        ("> 5 years of it", ["`>` is read as a block of text", 'description: "> 5 years of it"']),
        ("Use when: it matters", ["a value contains `: `", "wrap the whole value in quotes"]),
    ],
)
def test_yaml_error_hint_follows_what_the_value_starts_with(
    tmp_path: Path, value: str, says: list[str]
) -> None:
    error = parse_error(tmp_path, f"---\nname: x\ndescription: {value}\nlicense: MIT\n---\n")
    assert (error.code, error.line) == ("SD003", 3)
    for text in says:
        assert text in error.bare_message


@pytest.mark.parametrize(
    ("data", "line", "says"),
    [
        ("---\nname: x\ntags: [a, b\nother: y\n---\n", 3,
         ["opens `[` that is never closed with `]`", "(noticed on line 4)", 'tags: "[a, b"']),
        ("---\nname: x\ndescription: {a: b\n---\n", 3,
         ["opens `{` that is never closed with `}`", 'description: "{a: b"']),
        ('---\nname: x\ndescription: "no end\nlicense: MIT\n---\n', 3,
         ['opens a `"` that is never closed', "single quotes instead"]),
        ("---\nname: x\ndescription: 'no end\n---\n", 3,
         ["opens a `'` that is never closed", "double quotes instead"]),
    ],
)  # fmt: skip
def test_unclosed_quote_or_bracket_is_reported_where_it_opens(
    tmp_path: Path, data: str, line: int, says: list[str]
) -> None:
    error = parse_error(tmp_path, data)
    assert (error.code, error.line) == ("SD003", line)
    for text in says:
        assert text in error.bare_message


def test_tab_indentation_says_to_use_spaces(tmp_path: Path) -> None:
    error = parse_error(tmp_path, "---\nname: x\ndescription: d\n\tlicense: MIT\n---\n")
    assert "use spaces" in error.bare_message


def test_invalid_utf8_is_reported_with_its_line(tmp_path: Path) -> None:
    error = parse_error(tmp_path, b"---\nname: x\ndescription: caf\xe9\n---\n")
    assert (error.code, error.line) == ("SD005", 3)
    assert "UTF-8" in error.bare_message


def test_invalid_utf8_in_the_body_is_not_the_parsers_business(tmp_path: Path) -> None:
    parsed = parse_skill_md(write(tmp_path, b"---\nname: x\ndescription: d\n---\n\xff\xfe"))
    assert parsed.data["name"] == "x"


def test_missing_file_is_unreadable(tmp_path: Path) -> None:
    with pytest.raises(SkillParseError) as info:
        parse_skill_md(tmp_path / "nope" / "SKILL.md")
    assert info.value.code == "SD008"


def test_directory_is_unreadable(tmp_path: Path) -> None:
    with pytest.raises(SkillParseError) as info:
        parse_skill_md(tmp_path)
    assert info.value.code == "SD008"


def test_oversized_frontmatter_is_refused(tmp_path: Path) -> None:
    text = "---\nname: x\n" + "# padding line\n" * (MAX_FRONTMATTER_BYTES // 15 + 10)
    error = parse_error(tmp_path, text + "---\n")
    assert error.code == "SD006"


def test_alias_bomb_is_refused(tmp_path: Path) -> None:
    lines = ['a: &a ["x","x","x","x","x","x","x","x","x","x"]']
    for prev, cur in zip("abcde", "bcdef", strict=True):
        lines.append(f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 10) + "]")
    error = parse_error(tmp_path, "---\n" + "\n".join(lines) + "\n---\n")
    assert error.code == "SD007"


def test_recursive_alias_is_refused(tmp_path: Path) -> None:
    error = parse_error(tmp_path, "---\nname: x\na: &a [*a]\n---\n")
    assert (error.code, error.line) == ("SD007", 3)


def test_deep_nesting_is_refused_without_crashing(tmp_path: Path) -> None:
    deep = "[" * 100_000 + "]" * 100_000  # would crash libyaml's recursive composer
    error = parse_error(tmp_path, f"---\nname: x\nv: {deep}\n---\n")
    assert (error.code, error.line) == ("SD007", 3)


def test_moderate_nesting_is_fine(tmp_path: Path) -> None:
    parsed = parse_skill_md(write(tmp_path, "---\nv: " + "[" * 50 + "]" * 50 + "\n---\n"))
    value = parsed.data["v"]
    for _ in range(49):
        value = value[0]
    assert value == []


def test_control_characters_are_invalid_yaml(tmp_path: Path) -> None:
    error = parse_error(tmp_path, "---\nname: x\ndescription: bell\x07\n---\n")
    assert error.code == "SD003"


def test_works_without_libyaml(tmp_path: Path) -> None:
    """PyYAML built without libyaml: the pure-Python parser takes over, same results."""
    script = tmp_path / "no_libyaml.py"
    script.write_text(
        "import sys\n"
        "sys.modules['yaml._yaml'] = None  # as if PyYAML had no C extension\n"
        "import yaml\n"
        "assert not yaml.__with_libyaml__\n"
        "from pathlib import Path\n"
        "from skilldeck.errors import SkillParseError\n"
        "from skilldeck.skills.format.parse import parse_yaml_text\n"
        "p = parse_yaml_text('a:\\n  b:\\n    c: [1, 2.0]\\nd: |\\n  x\\n', path=Path('x'))\n"
        "assert p.data == {'a': {'b': {'c': [1, 2.0]}}, 'd': 'x\\n'}, p.data\n"
        "try:\n"
        "    parse_yaml_text('a: b: c\\n', path=Path('x'), first_line=2)\n"
        "except SkillParseError as e:\n"
        "    assert (e.code, e.line) == ('SD003', 2), (e.code, e.line)\n"
        "else:\n"
        "    raise AssertionError('no error')\n"
        "print('ok')\n",
        encoding="utf-8",
    )
    result = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"

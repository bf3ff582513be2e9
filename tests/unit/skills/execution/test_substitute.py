"""Level-2 placeholder substitution: every form, escapes, and what must stay untouched."""

from __future__ import annotations

import shlex
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from skilldeck.skills.execution import split_arguments
from skilldeck.skills.execution.substitute import substitute

SKILL = Path("/skills/demo")
PROJECT = Path("/work/project")


def sub(body: str, arguments: str | None = None, **kw: object) -> str:
    options: dict[str, object] = {
        "skill_dir": SKILL,
        "session_id": "sess-1",
        "project_dir": PROJECT,
    }
    options.update(kw)
    return substitute(body, arguments=arguments, **options)  # type: ignore[arg-type]


def test_arguments_whole_string() -> None:
    assert sub("Fix issue $ARGUMENTS now", "123 urgent") == "Fix issue 123 urgent now"


def test_indexed_arguments_are_zero_based_and_shell_quoted() -> None:
    body = "from $ARGUMENTS[0] to $ARGUMENTS[1]; again $0 -> $1"
    assert sub(body, "'src dir' \"dst dir\"") == "from src dir to dst dir; again src dir -> dst dir"


def test_missing_positional_becomes_empty() -> None:
    assert sub("a=$0 b=$1 c=$ARGUMENTS[5].", "only") == "a=only b= c=."


def test_declared_names_map_to_positions() -> None:
    body = "Migrate $component from $from to ${to}."
    out = sub(body, "Button React Vue", declared=["component", "from", "to"])
    assert out == "Migrate Button from React to Vue."


def test_undeclared_names_are_left_alone() -> None:
    body = "echo $HOME $PATH $USER ${HOME} $component"
    assert sub(body, "x", declared=["other"]) == body + "\n\nARGUMENTS: x"


def test_directory_and_session_variables_both_spellings() -> None:
    body = (
        "${SKILL_DIR} ${CLAUDE_SKILL_DIR} ${SESSION_ID} ${CLAUDE_SESSION_ID} "
        "${PROJECT_DIR} ${CLAUDE_PROJECT_DIR}"
    )
    assert sub(body) == "/skills/demo /skills/demo sess-1 sess-1 /work/project /work/project"


def test_unknown_session_and_project_stay_as_written() -> None:
    body = "${SESSION_ID} ${CLAUDE_PROJECT_DIR}"
    assert sub(body, session_id=None, project_dir=None) == body


def test_escapes_give_the_literal_form() -> None:
    body = r"literal \$ARGUMENTS and \${SKILL_DIR} and \$0 but $ARGUMENTS"
    assert sub(body, "v") == "literal $ARGUMENTS and ${SKILL_DIR} and $0 but v"


def test_escape_before_foreign_dollar_is_kept() -> None:
    body = r'echo "\$HOME" and \$PATH'
    assert sub(body) == body


def test_positional_left_alone_without_arguments() -> None:
    # a body loaded without arguments keeps shell snippets such as awk's $1
    body = "awk '{print $1}' file; echo $0"
    assert sub(body, None) == body


def test_arguments_become_empty_without_arguments() -> None:
    assert sub("run: [$ARGUMENTS]", None) == "run: []"


def test_appends_arguments_when_body_has_no_placeholder() -> None:
    assert sub("Do the thing.\n", "fast please") == "Do the thing.\n\nARGUMENTS: fast please"


def test_no_append_when_any_argument_placeholder_is_used() -> None:
    assert sub("first: $0", "a b") == "first: a"
    assert sub("who: $who", "bob", declared=["who"]) == "who: bob"


def test_no_append_for_empty_arguments() -> None:
    assert sub("Body.", "") == "Body."
    assert sub("Body.", "   ") == "Body."


def test_dollar_glued_to_a_word_is_not_a_placeholder() -> None:
    assert sub("price US$5 and $$1", "x") == "price US$5 and $$1\n\nARGUMENTS: x"


def test_arguments_prefix_of_longer_name_is_not_substituted() -> None:
    assert sub("$ARGUMENTSX", "v") == "$ARGUMENTSX\n\nARGUMENTS: v"


def test_values_are_inserted_literally() -> None:
    # a value that looks like a placeholder is not substituted again
    assert sub("$0 then $1", "'$1' second") == "$1 then second"


def test_split_arguments_falls_back_on_unbalanced_quotes() -> None:
    assert split_arguments("it's broken") == ["it's", "broken"]
    assert split_arguments("'a b' c") == ["a b", "c"]


@given(st.text(alphabet=st.characters(blacklist_characters="$\\"), max_size=200))
def test_text_without_dollar_is_unchanged(body: str) -> None:
    assert sub(body, None) == body


@given(st.text(alphabet="ab '\"\\\t\n\r\x0b$`#é ", max_size=24))
def test_arguments_split_exactly_as_shlex_does(text: str) -> None:
    try:
        expected = shlex.split(text)
    except ValueError:  # unbalanced quotes: whitespace splitting
        expected = text.split()
    assert split_arguments(text) == expected


def test_one_huge_argument_splits() -> None:
    # shlex needed minutes of CPU for this (it grows a word a character at a time)
    assert split_arguments("z" * 2_000_000) == ["z" * 2_000_000]
    assert split_arguments("a\\ " * 200_000) == ["a " * 200_000]

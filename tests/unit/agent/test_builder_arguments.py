"""build_agent's arguments checked when the agent is built: rule and skill lists (a
lone string is never one rule per character), rules naming tools that do not exist,
the cwd, max_turns."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel

from skilldeck.agent.builder import build, build_agent
from skilldeck.agent.spec import AgentSpec, PermissionOptions, Runtime
from skilldeck.config import Settings, load_settings
from skilldeck.errors import ConfigError, ConfigWarning
from skilldeck.llm.scripted import ScriptedModel
from skilldeck.tools.base import Tool, ToolContext, ToolResult


@pytest.fixture
def settings(tmp_path: Path, skilldeck_home: Path) -> Settings:
    return load_settings(workspace=tmp_path, home=skilldeck_home)


def bash_model() -> ScriptedModel:
    return ScriptedModel.from_lines(
        [
            {"tool_calls": [{"id": "b", "name": "Bash", "input": {"command": "echo RAN > ran"}}]},
            {"text": "done"},
        ]
    )


def unknown_tool_warnings(settings: Settings, **kwargs: Any) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        build_agent(settings, model=bash_model(), cwd=settings.workspace, **kwargs).close()
    return [str(w.message) for w in caught if issubclass(w.category, ConfigWarning)]


# ---- a lone string is refused, never split into characters ---------------------------


@pytest.mark.parametrize("key", ["allow", "ask", "deny"])
def test_a_rule_string_instead_of_a_list_is_a_config_error(settings: Settings, key: str) -> None:
    with pytest.raises(ConfigError, match=rf"{key}= takes a list.*write {key}=\['Bash'\]"):
        build_agent(settings, model=bash_model(), cwd=settings.workspace, **{key: "Bash"})


def test_deny_as_a_string_never_lets_bash_run(settings: Settings) -> None:
    """The QA reproduction: ``deny="Bash"`` used to deny B, a, s, h and run Bash."""
    with pytest.raises(ConfigError):
        build_agent(
            settings,
            model=bash_model(),
            cwd=settings.workspace,
            permission_mode="bypassPermissions",
            deny="Bash",
        ).run_sync("go")
    assert not (settings.workspace / "ran").exists()


def test_skills_as_a_string_is_a_config_error_naming_the_fix(settings: Settings) -> None:
    with pytest.raises(ConfigError, match=r"skills= takes a list.*write skills=\['summarize'\]"):
        build_agent(settings, model=bash_model(), skills="summarize")


def test_items_that_are_not_strings_are_a_config_error(settings: Settings) -> None:
    with pytest.raises(ConfigError, match="deny= takes a list of strings; 3 is a int"):
        build_agent(settings, model=bash_model(), deny=["Bash", 3])  # type: ignore[list-item]
    with pytest.raises(ConfigError, match="allow= takes a list of strings, not int"):
        build_agent(settings, model=bash_model(), allow=5)  # type: ignore[arg-type]


def test_lists_tuples_and_other_iterables_of_strings_are_accepted(settings: Settings) -> None:
    agent = build_agent(
        settings, model=bash_model(), deny=("Bash",), ask=iter(["WebFetch"]), allow={"Read"}
    )
    with agent:
        assert "Bash" not in agent.tools.names()  # wholly denied: not offered


def test_the_spec_refuses_a_string_too(settings: Settings) -> None:
    with pytest.raises(ConfigError, match="deny= takes a list"):
        PermissionOptions(deny="Bash")
    with pytest.raises(ConfigError, match="skills= takes a list"):
        AgentSpec(skills="summarize")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="only_tools= takes a list"):
        build(AgentSpec(only_tools="Read"), Runtime(settings=settings))  # type: ignore[arg-type]


# ---- rules naming a tool that does not exist -------------------------------------------


@pytest.mark.parametrize(
    ("rule", "guess"),
    [("bash", "Bash"), ("Bsah", "Bash"), ("bash(git:*)", "Bash(git:*)"), ("webfetch", "WebFetch")],
)
def test_a_rule_naming_no_tool_warns_with_the_likely_name(
    settings: Settings, rule: str, guess: str
) -> None:
    [message] = unknown_tool_warnings(settings, deny=[rule])
    expected = f"deny rule `{rule}` names no tool, so it denies nothing (did you mean `{guess}`?)"
    assert message == expected


def test_a_rule_far_from_any_tool_warns_without_a_guess(settings: Settings) -> None:
    [message] = unknown_tool_warnings(settings, allow=["Zzyzx"])
    assert message == "allow rule `Zzyzx` names no tool, so it allows nothing"


@pytest.mark.parametrize(
    "rule",
    [
        "Bash",
        "Bash(git diff:*)",
        "Skill(summarize)",
        "Skill",
        "Task",
        "Agent(Explore)",
        "TaskOutput",
        "Memory",
        "NotebookEdit",
        "mcp__github__create_issue",
        "mcp__github",
        "mcp__github__*",
        "*",
        "Web*",
        "Read(./secrets/**)",
        "WebFetch(domain:example.com)",
    ],
)
def test_legitimate_rules_do_not_warn(settings: Settings, rule: str) -> None:
    assert unknown_tool_warnings(settings, deny=[rule], allow=[rule]) == []


class LookupInput(BaseModel):
    key: str


class Lookup(Tool):
    name: ClassVar[str] = "Lookup"
    description: ClassVar[str] = "Looks a key up."
    Input: ClassVar[type[BaseModel]] = LookupInput

    async def run(self, input: Any, ctx: ToolContext) -> ToolResult:
        return ToolResult(input.key)


def test_a_custom_tool_the_agent_holds_does_not_warn(settings: Settings) -> None:
    assert unknown_tool_warnings(settings, tools=[Lookup()], ask=["Lookup(k*)"]) == []


def test_a_config_rule_naming_no_tool_warns_with_its_file(
    tmp_path: Path, skilldeck_home: Path
) -> None:
    skilldeck_home.mkdir(parents=True, exist_ok=True)
    config = skilldeck_home / "config.toml"
    config.write_text('[permissions]\ndeny = ["bash"]\n', encoding="utf-8")
    settings = load_settings(workspace=tmp_path, home=skilldeck_home)
    [message] = unknown_tool_warnings(settings)
    assert message.startswith(f"{config}: permissions.deny rule `bash` names no tool")
    assert message.endswith("(did you mean `Bash`?)")


# ---- cwd and max_turns -----------------------------------------------------------------


def test_a_missing_cwd_is_a_config_error_at_build_time(settings: Settings, tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(ConfigError, match=r"cwd .*nope does not exist: pass an existing folder"):
        build_agent(settings, model=bash_model(), cwd=missing)


def test_a_file_as_cwd_is_a_config_error_at_build_time(settings: Settings, tmp_path: Path) -> None:
    a_file = tmp_path / "notes.txt"
    a_file.write_text("x", encoding="utf-8")
    with pytest.raises(ConfigError, match="is a file, not a folder"):
        build_agent(settings, model=bash_model(), cwd=a_file)


def test_a_string_cwd_is_a_path(settings: Settings, tmp_path: Path) -> None:
    with build_agent(settings, model=bash_model(), cwd=str(tmp_path)) as agent:  # type: ignore[arg-type]
        assert agent.cwd == tmp_path.resolve()


@pytest.mark.parametrize("turns", [0, -1, True, 2.5, "3"])
def test_max_turns_below_one_or_not_a_whole_number_is_a_config_error(
    settings: Settings, turns: object
) -> None:
    with pytest.raises(ConfigError, match=r"max_turns=.* is not a turn limit: .*at least 1"):
        build_agent(settings, model=bash_model(), max_turns=turns)  # type: ignore[arg-type]


def test_max_turns_one_is_one_and_none_is_the_configured_default(settings: Settings) -> None:
    with build_agent(settings, model=bash_model(), max_turns=1) as agent:
        assert agent.limits.max_turns == 1
    with build_agent(settings, model=bash_model()) as agent:
        assert agent.limits.max_turns == settings.agent.max_turns


# ---- roots: one path given alone is one root, never one per character ----------------


def _one_skill_root(tmp_path: Path) -> Path:
    root = tmp_path / "my skills"
    (root / "hello").mkdir(parents=True)
    (root / "hello" / "SKILL.md").write_text(
        "---\nname: hello\ndescription: Say hello to someone.\n---\nSay hello.\n"
    )
    return root


@pytest.mark.parametrize("as_given", [str, Path, lambda p: [str(p)], lambda p: (p,)])
def test_roots_take_one_path_or_a_list(settings: Settings, tmp_path: Path, as_given: Any) -> None:
    root = _one_skill_root(tmp_path)
    agent = build_agent(
        settings, model=bash_model(), cwd=tmp_path, roots=as_given(root), no_defaults=True
    )
    with agent:
        assert agent.skills is not None and agent.skills.names() == ["hello"]

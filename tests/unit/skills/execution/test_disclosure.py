"""Progressive disclosure: the level-1 block within budget, level 2 and level 3."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from skilldeck.errors import ResourceAccessError
from skilldeck.skills.execution import (
    DESCRIPTION_LIMITS,
    render_available_skills,
    render_level2,
)
from skilldeck.skills.model.skill import Skill
from skilldeck.skills.model.spec import SkillMetadata

LONG = (
    "Extract text and tables from PDF files, fill forms and merge documents. "
    "Use when the user mentions PDFs, forms, scanned pages or document merging, "
    "or asks to split, rotate, watermark or encrypt a PDF file of any size at all."
)


def make(name: str, description: str = LONG, folder: Path | None = None, **meta: object) -> Skill:
    folder = folder or Path("/skills") / name
    metadata = SkillMetadata(name=name, description=description, **meta)  # type: ignore[arg-type]
    return Skill(metadata=metadata, folder=folder, skill_md=folder / "SKILL.md")


def descriptions(block: str) -> dict[str, str]:
    pairs = re.findall(r"<name>(.*?)</name>\n<description>(.*?)</description>", block)
    return dict(pairs)


def test_block_shape_and_escaping() -> None:
    block = render_available_skills([make("a-b", 'Use <tags> & "quotes" here.')])
    assert block == (
        "<available_skills>\n<skill>\n<name>a-b</name>\n"
        '<description>Use &lt;tags&gt; &amp; "quotes" here.</description>\n'
        "<location>/skills/a-b/SKILL.md</location>\n</skill>\n</available_skills>"
    )


def test_location_is_escaped_too(tmp_path: Path) -> None:
    folder = tmp_path / "a&b"
    block = render_available_skills([make("x", "d", folder=folder)])
    assert f"<location>{tmp_path}/a&amp;b/SKILL.md</location>" in block


def test_skills_the_model_may_not_invoke_are_left_out() -> None:
    """(Disabled and unavailable skills are the caller's to leave out: it passes
    ``SkillRegistry.usable()``.)"""
    hidden = make("hidden", disable_model_invocation=True)
    block = render_available_skills([make("shown"), hidden])
    assert list(descriptions(block)) == ["shown"]
    assert "more skill" not in block  # left out on purpose, not for lack of room
    assert render_available_skills([hidden]) == ""


def test_fits_without_changes_when_under_budget() -> None:
    skills = [make(f"s{i}") for i in range(5)]
    block = render_available_skills(skills, budget=100_000)
    assert all(d == LONG for d in descriptions(block).values())


def test_descriptions_shortened_before_any_skill_is_dropped() -> None:
    skills = [make(f"skill-{i:02d}") for i in range(20)]
    full = render_available_skills(skills, budget=1_000_000)
    budget = len(full) - 1500  # too small for all in full, enough for all shortened
    block = render_available_skills(skills, budget=budget)
    assert len(block) <= budget
    shown = descriptions(block)
    assert len(shown) == 20  # nobody dropped
    assert "more skill" not in block
    shortened = [d for d in shown.values() if d != LONG]
    assert shortened, "something had to be shortened"
    first_sentence = LONG.split(". ")[0] + "."
    assert all(d == first_sentence or d.endswith("…") for d in shortened)
    # least relevant (last) first: shortened ones form a suffix of the list
    flags = [d != LONG for d in shown.values()]
    assert flags == sorted(flags)


def test_drops_only_after_shortening_everything_and_says_so() -> None:
    skills = [make(f"skill-{i:03d}") for i in range(200)]
    block = render_available_skills(skills, budget=4000)
    assert len(block) <= 4000
    shown = descriptions(block)
    assert 0 < len(shown) < 200
    assert all(len(d) <= DESCRIPTION_LIMITS[-1] for d in shown.values())
    left_out = 200 - len(shown)
    assert block.endswith(
        f"{left_out} more skills are not shown; call the Skill tool with "
        '{"query": "<what you need>"} to search them.\n</available_skills>'
    )
    assert list(shown) == [f"skill-{i:03d}" for i in range(len(shown))]  # the tail went


def test_ranked_skills_come_first_and_stay_whole() -> None:
    skills = [make(f"skill-{i:03d}") for i in range(60)]
    ranked = ["skill-050", "skill-007"]
    block = render_available_skills(skills, budget=3000, ranked=ranked)
    shown = descriptions(block)
    assert list(shown)[:2] == ranked
    assert shown["skill-050"] == LONG and shown["skill-007"] == LONG
    assert len(block) <= 3000
    assert "more skills are not shown" in block


def test_ranked_skills_are_shortened_last_when_even_they_do_not_fit() -> None:
    skills = [make(f"skill-{i:03d}") for i in range(10)]
    ranked = [f"skill-{i:03d}" for i in range(10)]
    block = render_available_skills(skills, budget=1200, ranked=ranked)
    assert len(block) <= 1200
    shown = descriptions(block)
    assert list(shown) == ranked[: len(shown)]


def test_unknown_ranked_names_are_ignored() -> None:
    block = render_available_skills([make("a"), make("b")], ranked=["zzz", "b"])
    assert list(descriptions(block)) == ["b", "a"]


def test_whitespace_in_descriptions_is_collapsed() -> None:
    block = render_available_skills([make("a", "line one\n  line two\tend")])
    assert descriptions(block)["a"] == "line one line two end"


def test_tiny_budget_still_returns_the_note() -> None:
    block = render_available_skills([make("a"), make("b")], budget=10)
    assert "<skill>" not in block
    assert "2 more skills are not shown" in block


# ---- level 2 / 3 -------------------------------------------------------------------


@pytest.fixture
def on_disk(tmp_path: Path) -> Skill:
    folder = tmp_path / "greeter"
    (folder / "scripts").mkdir(parents=True)
    (folder / "references").mkdir()
    text = (
        "---\nname: greeter\ndescription: Greets.\narguments: [who]\n---\n\n"
        "# Greeter\n\nSay hello to $who from ${SKILL_DIR}. Args: $ARGUMENTS.\n"
        "Keep awk '{print $1}' as is.\n"
    )
    (folder / "SKILL.md").write_text(text, encoding="utf-8")
    (folder / "scripts" / "run.py").write_text("print('hi')\n", encoding="utf-8")
    (folder / "references" / "guide.md").write_text("# Guide\nDetails.\n", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("top secret\n", encoding="utf-8")
    body_offset = len(text.split("---\n\n", 1)[0].encode()) + len("---\n")
    meta = SkillMetadata(name="greeter", description="Greets.", arguments=["who"])
    return Skill(
        metadata=meta, folder=folder, skill_md=folder / "SKILL.md", body_offset=body_offset
    )


def test_level2_without_arguments(on_disk: Skill) -> None:
    text = render_level2(on_disk)
    assert text.startswith(f"Base directory for this skill: {on_disk.folder}\n\n# Greeter")
    assert "---" not in text and "description:" not in text
    assert f"from {on_disk.folder}." in text
    assert "awk '{print $1}'" in text
    assert text.endswith(
        "Files in this skill (paths relative to the base directory):\n"
        "- references/guide.md\n- scripts/run.py"
    )


def test_level2_with_arguments(on_disk: Skill) -> None:
    text = render_level2(on_disk, arguments="Ada", session_id="s1", project_dir=Path("/p"))
    assert "Say hello to Ada from" in text
    assert "Args: Ada." in text


def test_level2_long_resource_lists_are_capped(tmp_path: Path) -> None:
    folder = tmp_path / "many"
    (folder / "assets").mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: many\ndescription: d\n---\nBody\n", encoding="utf-8"
    )
    for i in range(45):
        (folder / "assets" / f"f{i:02d}.txt").write_text("x", encoding="utf-8")
    skill = make("many", "d", folder=folder)
    skill.body_offset = len(b"---\nname: many\ndescription: d\n---\n")
    text = render_level2(skill)
    assert "- assets/f29.txt" in text and "- assets/f30.txt" not in text
    assert text.endswith("- … and 15 more")


def test_level3_reads_inside_and_refuses_escapes(on_disk: Skill, tmp_path: Path) -> None:
    assert on_disk.list_resources() == ["references/guide.md", "scripts/run.py"]
    assert on_disk.read_resource("references/guide.md").startswith("# Guide")
    for bad in ("../secret.txt", str(tmp_path / "secret.txt"), "references/../../secret.txt"):
        with pytest.raises(ResourceAccessError):
            on_disk.read_resource(bad)
    (on_disk.folder / "link").symlink_to(tmp_path / "secret.txt")
    with pytest.raises(ResourceAccessError):
        on_disk.read_resource("link")
    assert "link" not in on_disk.list_resources()
    with pytest.raises(ResourceAccessError):
        on_disk.read_resource("references/missing.md")

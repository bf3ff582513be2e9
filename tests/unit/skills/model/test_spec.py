"""SkillMetadata: field sets, spellings, and a cheap model_construct for caches."""

from __future__ import annotations

from skilldeck.skills.model.spec import (
    CLAUDE_CODE_FIELDS,
    KNOWN_FIELDS,
    SKILLDECK_FIELDS,
    SPEC_FIELDS,
    SkillMetadata,
    attribute_name,
    canonical_field,
)


def test_spec_fields_are_the_six_of_the_specification() -> None:
    assert {
        "name",
        "description",
        "license",
        "compatibility",
        "metadata",
        "allowed-tools",
    } == SPEC_FIELDS
    assert KNOWN_FIELDS == SPEC_FIELDS | CLAUDE_CODE_FIELDS | SKILLDECK_FIELDS


def test_every_known_field_is_an_attribute() -> None:
    for field in KNOWN_FIELDS:
        assert attribute_name(field) in SkillMetadata.model_fields


def test_spellings() -> None:
    assert canonical_field("allowed_tools") == "allowed-tools"
    assert canonical_field("when-to-use") == canonical_field("when_to_use") == "when_to_use"
    assert canonical_field(" max_turns ") == "max-turns"


def test_model_construct_fills_defaults_and_matches_validation() -> None:
    built = SkillMetadata.model_construct(name="a", description="d", tags=["x"])
    validated = SkillMetadata(name="a", description="d", tags=["x"])
    assert built == validated
    assert built.model_fields_set == {"name", "description", "tags"}
    assert built.allowed_tools == [] and built.metadata == {} and built.extra == {}
    other = SkillMetadata.model_construct(name="b", description="d")
    assert other.allowed_tools is not built.allowed_tools  # no shared mutable default


def test_dump_and_construct_round_trip() -> None:
    original = SkillMetadata(
        name="a", description="d", version="1.10", metadata={"k": "v"}, timeout=3.0
    )
    again = SkillMetadata.model_construct(**original.model_dump(exclude_defaults=True))
    assert again == original
    assert original.forbidden == []

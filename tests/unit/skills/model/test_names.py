"""``skills/model/names.py``: the field names and name rules, importable without pydantic."""

from __future__ import annotations

import subprocess
import sys

from skilldeck.skills import model
from skilldeck.skills.model import names, spec


def test_spec_re_exports_the_same_objects() -> None:
    for name in names.__all__:
        assert getattr(spec, name) is getattr(names, name)
        if name in model.__all__:
            assert getattr(model, name) is getattr(names, name)


def test_the_model_declares_exactly_the_known_fields() -> None:
    declared = set(spec.SkillMetadata.model_fields) - {"extra"}
    assert declared == {names.attribute_name(f) for f in names.KNOWN_FIELDS}


def test_validation_modules_import_without_pydantic() -> None:
    code = (
        "import sys\n"
        "import skilldeck.skills.model.names, skilldeck.skills.format.validate\n"
        "from skilldeck.skills.model import canonical_field, unsafe_name_reason\n"
        "assert canonical_field('when-to-use') == 'when_to_use'\n"
        "assert unsafe_name_reason('../x')\n"
        "print(sorted(m for m in ('pydantic', 'pydantic_core') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.strip() == "[]"

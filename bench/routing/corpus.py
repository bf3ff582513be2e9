"""Loading the real corpus and generating a large synthetic catalog."""

from __future__ import annotations

import os
import random
import re
import tempfile
from pathlib import Path

from skilldeck.skills.model.skill import Skill, SkillSource
from skilldeck.skills.model.spec import SkillMetadata

REPO = Path(__file__).resolve().parents[2]
#: ``../shared/corpus`` beside the checkout, or ``SKILLDECK_CORPUS`` (as the tests read
#: it: a clone elsewhere finds the corpus the same way)
CORPUS = Path(os.environ.get("SKILLDECK_CORPUS") or REPO.parent / "shared" / "corpus")
_WORD = re.compile(r"[a-z]{4,}")


def load_corpus(root: Path = CORPUS) -> list[Skill]:
    """Every skill folder under ``root`` — all copies, not just one per name — through
    skilldeck's own discovery (frontmatter only; bodies stay on disk until indexed)."""
    from skilldeck.config import load_settings
    from skilldeck.skills.discovery.discover import discover

    with tempfile.TemporaryDirectory(prefix="routing-bench-") as home:
        settings = load_settings(home=Path(home), workspace=Path(home))
        result = discover(settings, roots=[root], no_defaults=True, use_cache=False)
    return sorted(result.skills, key=lambda s: str(s.folder))


def synthetic_catalog(base: list[Skill], count: int, *, seed: int = 7) -> list[Skill]:
    """``count`` made-up skills recombining the text of ``base`` under new names.

    Skill *i* takes the description and body of one real skill, a sentence and a
    slice of body from another, and a name built from two words of other names, so
    the vocabulary and length distribution stay those of a real catalog.
    """
    rng = random.Random(seed)
    bodies = [s.body for s in base]
    words = sorted({w for s in base for w in _WORD.findall(s.name.lower())})
    out: list[Skill] = []
    for i in range(count):
        a, b = rng.randrange(len(base)), rng.randrange(len(base))
        name = f"{rng.choice(words)}-{rng.choice(words)}-{i:05d}"
        first_sentence = base[b].description.split(". ")[0]
        body_b = bodies[b]
        start = rng.randrange(max(1, len(body_b) // 2))
        meta = SkillMetadata(
            name=name,
            description=f"{base[a].description} {first_sentence}".strip(),
            tags=list(base[a].metadata.tags),
        )
        folder = Path("/synthetic") / name
        skill = Skill(meta, folder, folder / "SKILL.md", source=SkillSource.ROOT)
        out.append(skill.with_body(bodies[a] + "\n\n" + body_b[start : start + 3000]))
    return out

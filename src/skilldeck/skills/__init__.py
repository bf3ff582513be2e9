"""The skill system: a pure library (no LLM, no network), in subpackages by
responsibility — ``model`` (the Skill), ``format`` (reading and validating SKILL.md),
``discovery`` (finding skills on disk), ``registry``, ``rules`` (the tool-rule grammar),
``policy`` (composing skill sets), ``execution`` (loading and running a skill),
``code`` (code skills), ``routing`` (which skill fits a request) and ``packaging``.
Each subpackage's ``__init__`` is its facade: import public names from there.

The flat module paths of earlier releases (``skilldeck.skills.skill``,
``skilldeck.skills.validate``…) still import, with a DeprecationWarning, through the
finder of :mod:`skilldeck._moved`: it hands back the moved module itself, so both
names are one object.
"""

from __future__ import annotations

from skilldeck._moved import redirect_moved_modules

#: earlier flat module paths, still importable (with a DeprecationWarning)
MOVED: dict[str, str] = {
    "_bm25f": "routing",
    "_codechild": "code",
    "_embeddings": "routing",
    "_fastyaml": "format",
    "_fields": "format",
    "_forked": "discovery",
    "_lexicon": "routing.multilingual",
    "_match_index": "routing",
    "_normalize": "format",
    "_parallel": "discovery",
    "_refcheck": "format.reference",
    "_refyaml": "format.reference",
    "_rules": "format",
    "_sealed": "discovery",
    "_srcimport": "code",
    "_yamlerrors": "format",
    "_yamlnodes": "format",
    "audit": "code",
    "cache": "discovery",
    "codeapi": "code",
    "codehost": "code",
    "codeskill": "code",
    "codetrust": "code",
    "diagnostics": "model",
    "disclosure": "execution",
    "discover": "discovery",
    "dynamic": "execution",
    "entries": "registry",
    "gating": "execution",
    "globmatch": "rules",
    "hints": "routing",
    "hostrules": "rules",
    "loading": "execution",
    "lockfile": "packaging",
    "match": "routing",
    "package": "packaging",
    "parse": "format",
    "pathrules": "rules",
    "policy": "policy",
    "process": "execution",
    "registry": "registry",
    "runner": "execution",
    "select": "policy",
    "shellparse": "rules",
    "shellprograms": "rules",
    "shellrules": "rules",
    "shellwords": "rules",
    "shellwrappers": "rules",
    "signing": "packaging",
    "skill": "model",
    "spec": "model",
    "substitute": "execution",
    "templates": "format",
    "tokenize": "routing",
    "toolrules": "rules",
    "unpack": "packaging",
    "validate": "format",
    "walk": "discovery",
}

redirect_moved_modules(__name__, MOVED)

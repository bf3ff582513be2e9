"""The skill system: a pure library (no LLM, no network), in subpackages by
responsibility — ``model`` (the Skill), ``format`` (reading and validating SKILL.md),
``discovery`` (finding skills on disk), ``registry``, ``rules`` (the tool-rule grammar),
``policy`` (composing skill sets), ``execution`` (loading and running a skill),
``code`` (code skills), ``routing`` (which skill fits a request) and ``packaging``.
Each subpackage's ``__init__`` is its facade: import public names from there.

The flat module paths of earlier releases (``skilldeck.skills.skill``,
``skilldeck.skills.validate``…) still import, with a DeprecationWarning, through the
finder below: it hands back the moved module itself, so both names are one object.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType

#: old flat module name -> its subpackage
MOVED: dict[str, str] = {
    "_bm25f": "routing",
    "_codechild": "code",
    "_embeddings": "routing",
    "_fastyaml": "format",
    "_fields": "format",
    "_forked": "discovery",
    "_lexicon": "routing",
    "_match_index": "routing",
    "_normalize": "format",
    "_parallel": "discovery",
    "_refcheck": "format",
    "_refyaml": "format",
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


class _MovedModuleFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Resolve ``skilldeck.skills.<old>`` to ``skilldeck.skills.<sub>.<old>``."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        prefix, _, leaf = fullname.rpartition(".")
        if prefix != __name__ or leaf not in MOVED or leaf == MOVED[leaf]:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: ModuleSpec) -> ModuleType:
        leaf = spec.name.rpartition(".")[2]
        new_name = f"{__name__}.{MOVED[leaf]}.{leaf}"
        warnings.warn(
            f"{spec.name} moved to {new_name}; import it (or its subpackage) from there",
            DeprecationWarning,
            stacklevel=2,
        )
        return importlib.import_module(new_name)

    def exec_module(self, module: ModuleType) -> None:
        """The moved module is already executed."""


if not any(isinstance(f, _MovedModuleFinder) for f in sys.meta_path):
    sys.meta_path.append(_MovedModuleFinder())

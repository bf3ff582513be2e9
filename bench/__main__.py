"""``python -m bench <name> [args]``: run ``bench/<name>.py``'s ``main(argv)``.

With no name, list the benchmarks available. Each benchmark measures its own
baseline in the same run and reports ratios; results go to ``bench/results/``.
``python -m bench compare [discovery loop routing]`` runs benchmarks for the old code
(a git revision) and the working tree in one invocation (``bench/compare.py``).
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path


def available() -> list[str]:
    here = Path(__file__).resolve().parent
    return sorted(m.name for m in pkgutil.iter_modules([str(here)]) if not m.name.startswith("_"))


def main(argv: list[str]) -> int:
    names = available()
    if not argv or argv[0] in {"-h", "--help"}:
        print("usage: python -m bench <name> [args]\n\navailable benchmarks:")
        for name in names:
            print(f"  {name}")
        return 0
    name, rest = argv[0], argv[1:]
    if name not in names:
        print(f"unknown benchmark {name!r}; available: {', '.join(names)}", file=sys.stderr)
        return 2
    module = importlib.import_module(f"bench.{name}")
    return int(module.main(rest))


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

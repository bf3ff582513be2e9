"""The CLI's fast paths: `skills list --json`, `skills validate PATH…` and `skills
match QUERY` in their plain shapes, answered before typer, rich or pydantic is
imported (``cli/main.py`` calls each module's ``try_fast(argv)``; ``python -m bench
startup`` is the benchmark they answer to). Anything else declines to the typer
command. Modules here are reached by path from ``cli/main.py``; nothing re-exports them.
"""

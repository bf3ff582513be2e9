"""The ``skilldeck`` command line: thin commands that parse input, call the library
and render; ``main`` loads only the command it runs; the ``skills`` commands live in
``cli/skills``, ``run`` / ``resume`` and what ``chat`` shares with them in ``cli/run``."""

from skilldeck._moved import redirect_moved_modules

#: earlier flat module paths, still importable (with a DeprecationWarning)
redirect_moved_modules(
    __name__,
    {
        "fastpath": "skills.fast",
        "run_cmd": "run",
        "skills_cmd": "skills",
        "skills_exec_cmd": "skills",
        "skills_match_cmd": "skills",
        "skills_pkg_cmd": "skills",
        "skills_trust_cmd": "skills",
    },
)

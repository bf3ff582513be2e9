"""Atomic capabilities the model calls (Claude Code names): the tool base and
registry, Bash, the web tools, AskUserQuestion, TodoWrite, Memory, Skill, and the
file tools with their confinement (``fs``)."""

from skilldeck._moved import redirect_moved_modules

#: earlier flat module paths, still importable (with a DeprecationWarning)
redirect_moved_modules(
    __name__,
    {
        "_grep": "fs",
        "_grepworker": "fs",
        "_guard": "fs",
        "_text": "fs",
        "_walk": "fs",
        "files": "fs",
        "paths": "fs",
        "search": "fs",
    },
)

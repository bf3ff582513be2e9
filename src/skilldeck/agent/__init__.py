"""The agent: the loop and its turn dispatch (the steps of a run in ``run``), built
from a typed spec (``spec``, ``builder``, ``toolset``, ``startup``, the pieces in
``assembly``), with sessions on disk (``store``), the permission gate
(``permissions``) and sub-agents (``subagents``)."""

from skilldeck._moved import redirect_moved_modules

#: earlier flat module paths, still importable (with a DeprecationWarning)
redirect_moved_modules(
    __name__,
    {
        "definitions": "subagents",
        "gate": "permissions",
        "launch": "store",
        "migrations": "store",
        "permissions": "permissions",
        "resume": "store",
        "session": "store",
        "sink": "subagents",
        "subagents": "subagents",
        "task_tools": "subagents",
    },
)

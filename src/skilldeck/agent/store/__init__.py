"""Sessions on disk: the SQLite store (its rows, its private files) and its
migrations, a session's launch record, rebuilding exactly that agent on resume, and
the lease that gives a session one writer at a time.

Other packages import these names from here; names load lazily, so importing the
facade costs nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skilldeck._moved import load_attribute

if TYPE_CHECKING:
    from skilldeck.agent.store.files import private_file, process_alive
    from skilldeck.agent.store.launch import (
        LAUNCH_KEY,
        LAUNCH_VERSION,
        MODE_STRICTNESS,
        definition_from_dict,
        definition_to_dict,
        gate_from_dict,
        gate_to_dict,
        narrow_gate,
        narrower_mode,
        restore_settings,
        snapshot_settings,
    )
    from skilldeck.agent.store.lease import LEASE_TTL, Lease
    from skilldeck.agent.store.migrations import (
        Migration,
        apply_migrations,
        m001_initial,
        m002_indexes,
        m003_tool_state_and_parent,
        m004_launch_record,
        m005_session_leases,
        migration,
        pending_migrations,
    )
    from skilldeck.agent.store.resume import (
        build_agent_for_session,
        refuse_if_running_elsewhere,
        session_settings,
    )
    from skilldeck.agent.store.rows import (
        STATUSES,
        SessionRecord,
        StoredMessage,
        TurnWrite,
        UsageRow,
        new_session_id,
        valid_text,
    )
    from skilldeck.agent.store.session import SessionStore

_HOME: dict[str, str] = {
    "SessionRecord": "rows",
    "StoredMessage": "rows",
    "UsageRow": "rows",
    "TurnWrite": "rows",
    "new_session_id": "rows",
    "STATUSES": "rows",
    "valid_text": "rows",
    "SessionStore": "session",
    "private_file": "files",
    "process_alive": "files",
    "Migration": "migrations",
    "migration": "migrations",
    "pending_migrations": "migrations",
    "apply_migrations": "migrations",
    "m001_initial": "migrations",
    "m002_indexes": "migrations",
    "m003_tool_state_and_parent": "migrations",
    "m004_launch_record": "migrations",
    "m005_session_leases": "migrations",
    "LEASE_TTL": "lease",
    "Lease": "lease",
    "refuse_if_running_elsewhere": "resume",
    "LAUNCH_KEY": "launch",
    "LAUNCH_VERSION": "launch",
    "MODE_STRICTNESS": "launch",
    "definition_from_dict": "launch",
    "definition_to_dict": "launch",
    "gate_from_dict": "launch",
    "gate_to_dict": "launch",
    "narrow_gate": "launch",
    "narrower_mode": "launch",
    "restore_settings": "launch",
    "snapshot_settings": "launch",
    "build_agent_for_session": "resume",
    "session_settings": "resume",
}

__all__ = [
    "LAUNCH_KEY",
    "LAUNCH_VERSION",
    "LEASE_TTL",
    "MODE_STRICTNESS",
    "STATUSES",
    "Lease",
    "Migration",
    "SessionRecord",
    "SessionStore",
    "StoredMessage",
    "TurnWrite",
    "UsageRow",
    "apply_migrations",
    "build_agent_for_session",
    "definition_from_dict",
    "definition_to_dict",
    "gate_from_dict",
    "gate_to_dict",
    "m001_initial",
    "m002_indexes",
    "m003_tool_state_and_parent",
    "m004_launch_record",
    "m005_session_leases",
    "migration",
    "narrow_gate",
    "narrower_mode",
    "new_session_id",
    "pending_migrations",
    "private_file",
    "process_alive",
    "refuse_if_running_elsewhere",
    "restore_settings",
    "session_settings",
    "snapshot_settings",
    "valid_text",
]


def __getattr__(name: str) -> Any:
    return load_attribute(__name__, _HOME, name, globals())

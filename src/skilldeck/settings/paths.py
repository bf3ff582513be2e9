"""Paths derived from ``home`` and ``workspace``, shared by the pydantic Settings and
the light view (kept free of pydantic so the fast path stays fast)."""

from __future__ import annotations

from pathlib import Path

from skilldeck.trust import CONFIG_FILENAME, WORKSPACE_DIRNAME

__all__ = ["HomePaths"]


class HomePaths:
    """``user_config_path``, ``workspace_config_path``, ``cache_dir``, ``sessions_db``."""

    home: Path
    workspace: Path

    @property
    def user_config_path(self) -> Path:
        return self.home / CONFIG_FILENAME

    @property
    def workspace_config_path(self) -> Path:
        return self.workspace / WORKSPACE_DIRNAME / CONFIG_FILENAME

    @property
    def cache_dir(self) -> Path:
        return self.home / "cache"

    @property
    def sessions_db(self) -> Path:
        return self.home / "sessions.db"

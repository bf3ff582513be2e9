"""Test-wide guards: no real network, an isolated SKILLDECK_HOME, the corpus path."""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("SKILLDECK_CORPUS", REPO_ROOT.parent / "shared" / "corpus"))

_real_connect = socket.socket.connect


def _is_loopback(address: object) -> bool:
    if isinstance(address, tuple) and address:
        host = str(address[0])
        if host == "localhost":
            return True
        try:
            return ipaddress.ip_address(host).is_loopback
        except ValueError:
            return False
    return True  # AF_UNIX paths and the like


def _guarded_connect(self: socket.socket, address: object) -> None:
    if self.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address):
        raise RuntimeError(f"Tests must not touch the network (attempted connect to {address!r}).")
    _real_connect(self, address)  # type: ignore[arg-type]


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)


@pytest.fixture(autouse=True)
def skilldeck_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """Every test gets its own empty SKILLDECK_HOME and HOME, so user roots are empty."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("SKILLDECK_HOME", str(home / ".skilldeck"))
    monkeypatch.setenv("HOME", str(home))
    for key in list(os.environ):
        if key.startswith("SKILLDECK_") and key not in {"SKILLDECK_HOME", "SKILLDECK_CORPUS"}:
            monkeypatch.delenv(key, raising=False)
    # Tests build workspaces in tmp folders and expect their config and skills to
    # load, as in a folder the user trusted. Tests of workspace trust itself take
    # this away with the `untrusted_workspaces` fixture.
    monkeypatch.setenv("SKILLDECK_TRUST_WORKSPACE", "1")
    # Non-English routing would compile the installed dictionaries (a minute) into
    # each test's cache; tests of the dictionaries point this at their own files.
    monkeypatch.setenv("SKILLDECK_DICTIONARIES", "none")
    # Routing fuses wordllama embeddings by default; most tests assert lexical
    # rankings of small catalogs, so they rank lexically. Tests of the embeddings
    # delete this (tests/unit/skills/routing/test_embeddings_default.py).
    monkeypatch.setenv("SKILLDECK_EMBEDDINGS", "none")
    yield home / ".skilldeck"


@pytest.fixture
def untrusted_workspaces(monkeypatch: pytest.MonkeyPatch) -> None:
    """Workspace trust as a user's machine has it: only the trust store decides."""
    monkeypatch.delenv("SKILLDECK_TRUST_WORKSPACE", raising=False)


@pytest.fixture
def corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.skip(f"skill corpus not found at {CORPUS}")
    return CORPUS


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


# Hypothesis: derandomized under CI so a run is reproducible; locally it explores.
from hypothesis import settings as _hypothesis_settings  # noqa: E402

_hypothesis_settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
_hypothesis_settings.register_profile("dev", deadline=None)
_hypothesis_settings.load_profile("ci" if os.environ.get("CI") else "dev")

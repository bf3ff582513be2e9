"""``.skill`` packages: pack, unpack, signing, the lock file and verification;
encrypted ``.skillpack`` (age) packs.

Other packages import these names from here; the modules behind them are this
package's own business. Names load lazily (an import of the facade costs nothing).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skilldeck._moved import load_attribute

if TYPE_CHECKING:
    from skilldeck.skills.packaging.package import (
        MAX_BYTES,
        MAX_FILES,
        InstalledSkill,
        VerifyProblem,
        install,
        installed,
        keygen,
        pack,
        uninstall,
        verify,
    )
    from skilldeck.skills.packaging.skillpack import age_keygen, decrypt_pack, encrypt_skill

_HOME: dict[str, str] = {
    "MAX_BYTES": "package",
    "MAX_FILES": "package",
    "InstalledSkill": "package",
    "VerifyProblem": "package",
    "install": "package",
    "installed": "package",
    "keygen": "package",
    "pack": "package",
    "uninstall": "package",
    "verify": "package",
    "age_keygen": "skillpack",
    "decrypt_pack": "skillpack",
    "encrypt_skill": "skillpack",
}

__all__ = [
    "MAX_BYTES",
    "MAX_FILES",
    "InstalledSkill",
    "VerifyProblem",
    "age_keygen",
    "decrypt_pack",
    "encrypt_skill",
    "install",
    "installed",
    "keygen",
    "pack",
    "uninstall",
    "verify",
]


def __getattr__(name: str) -> Any:
    return load_attribute(__name__, _HOME, name, globals())

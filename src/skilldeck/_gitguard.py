"""Environment that keeps git from running what a repository's config names.

A narrowly allowed ``git diff`` or ``git status`` is not read-only if ``.git/config``
says ``core.fsmonitor = ./evil`` or ``diff.external = ./evil``: git runs those
programs. The sandbox makes ``.git/config`` read-only, but a config written before
(or a sandbox that is off) would still be honoured. So every command the ``Bash``
tool runs gets *command-scope* git config through ``GIT_CONFIG_COUNT`` /
``GIT_CONFIG_KEY_n`` / ``GIT_CONFIG_VALUE_n`` — which git reads after the system,
global, repository and worktree files, so its values win.

Neutralised (fixed key names): ``core.fsmonitor``, ``core.hooksPath`` (every hook),
``diff.external`` (replaced by a plain ``diff -u`` of the two files),
``core.pager``/``GIT_PAGER``, ``core.editor``, ``sequence.editor``,
``core.sshCommand``, ``core.askPass``, ``credential.helper`` (the helper list is
reset, so pushes needing credentials fail), ``gpg.program`` and its ssh/x509 forms
with ``commit.gpgSign``/``tag.gpgSign`` off, and the ``ext::`` transport.

Not neutralised (their names are chosen by the config itself, so no fixed key can
override them): filter drivers (``filter.<name>.clean/smudge/process``), diff and
merge drivers (``diff.<name>.textconv/command``, ``merge.<name>.driver``), aliases
(``alias.<name> = !cmd``), ``submodule.<name>.update = !cmd``, remote
``uploadpack``/``receivepack`` and files pulled in by ``include.path``. These need a
config file the sandbox does not let a command write (``.git/config`` is read-only
inside it; the file tools refuse it too); a user-defined driver such as git-lfs keeps
working.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["GIT_OVERRIDES", "git_guard_env"]

# git calls this with: path old-file old-hex old-mode new-file new-hex new-mode
_PLAIN_DIFF = (
    'sd_diff() { printf "diff --git a/%s b/%s\\n" "$1" "$1"; '
    'diff -u --label "a/$1" --label "b/$1" -- "$2" "$5"; [ $? -le 1 ]; }; sd_diff'
)

#: (key, value) pairs given to every git the Bash tool starts, in this order
GIT_OVERRIDES: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("diff.external", _PLAIN_DIFF),
    ("core.pager", "cat"),
    ("core.editor", "true"),
    ("sequence.editor", "true"),
    ("core.sshCommand", "ssh"),
    ("core.askPass", ""),
    ("credential.helper", ""),
    ("gpg.program", "gpg"),
    ("gpg.ssh.program", "ssh-keygen"),
    ("gpg.x509.program", "gpgsm"),
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("protocol.ext.allow", "never"),
)


def git_guard_env(env: Mapping[str, str]) -> dict[str, str]:
    """A copy of ``env`` with :data:`GIT_OVERRIDES` appended to any command-scope
    git config it already carries (the user's own entries keep their slots; ours
    come last and so win), and ``GIT_PAGER`` forced to ``cat``."""
    out = dict(env)
    try:
        start = max(0, int(out.get("GIT_CONFIG_COUNT", "0")))
    except ValueError:
        start = 0
    for i in range(start):
        if f"GIT_CONFIG_KEY_{i}" not in out:  # git refuses a gap: drop the user's set
            start = 0
            break
    for offset, (key, value) in enumerate(GIT_OVERRIDES):
        out[f"GIT_CONFIG_KEY_{start + offset}"] = key
        out[f"GIT_CONFIG_VALUE_{start + offset}"] = value
    out["GIT_CONFIG_COUNT"] = str(start + len(GIT_OVERRIDES))
    out["GIT_PAGER"] = "cat"
    return out

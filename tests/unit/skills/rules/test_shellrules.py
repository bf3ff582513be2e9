"""Bash rules decided on what bash runs (tree-sitter-bash), failing closed."""

from __future__ import annotations

import pytest

from skilldeck.skills.rules import (
    arguments_safe,
    bash_allow_refusal,
    bash_opaque_reason,
    bash_rule_matches,
    parse_line,
    programs,
    split_shell_command,
)


def allows(spec: str, command: str) -> bool:
    return bash_rule_matches(spec, command, deny=False)


def denies(spec: str, command: str) -> bool:
    return bash_rule_matches(spec, command, deny=True)


@pytest.mark.parametrize(
    "command",
    [
        "git diff",
        "git diff --stat HEAD~1",
        '"git" diff',
        "g'i't diff -- 'a b' \"c d\"",
        "git di\\ff --name-only",
        "git diff 2>&1",
        "git diff >/dev/null 2>/dev/null",
        "git diff </dev/null >&2",
        "git diff && git diff --stat; git diff || git diff",
        "git diff x\\#y",
        "git diff 'x#;touch M'",
        "git diff --pretty=oneline",
        "git diff \\\n --stat",
    ],
)
def test_literal_commands_are_approved(command: str) -> None:
    assert allows("git diff:*", command), parse_line(command).refusal


@pytest.mark.parametrize(
    "command",
    [
        "git diff x#;touch M",
        "git diff #\ntouch M",
        "git diff $'\\'' ; touch M",
        "git diff ${x:=$'\\x24(touch M)'}${x@P}",
        "git diff $(( a[$(touch M)] ))",
        "git diff $(touch M)",
        "git diff `touch M`",
        "git diff <(touch M)",
        "git diff $HOME",
        "git diff ~",
        "git diff *",
        "git diff {a,b}",
        "git diff > README.md",
        "git diff >> README.md",
        "git diff 2> err",
        "git diff &> out",
        "git diff >&out",
        "git diff <<< hi",
        "git diff <<EOF\nx\nEOF",
        "git diff &",
        "git diff; touch M",
        "git diff | sh",
        "FOO=1 git diff",
        "(git diff)",
        "{ git diff; }",
        "! git diff",
        'git diff $"x"',
        "git diff 'unterminated",
        'git diff "unterminated',
        "git diff ;; touch M",
        "git diff\rtouch M",
        "f() { git diff; }; f",
        "if git diff; then git diff; fi",
        "git diff --output=README.md",
        "git diff --output README.md",
        "git diff --out=README.md",
        "git diff -oREADME.md",
        "git diff --ext-diff",
        "git diff x\\\n;touch M",
        "git d\\\niff",
    ],
)
def test_anything_else_is_never_approved(command: str) -> None:
    assert not allows("git diff:*", command)
    assert not allows("git diff *", command)


def test_redirect_words_tree_sitter_misplaces_are_still_refused() -> None:
    # tree-sitter files `arg` under the redirection; bash passes it to ls
    assert not allows("ls:*", "ls >/dev/null -R /")
    assert ("ls", "-R", "/") in programs("ls >/dev/null -R /").candidates


def test_writing_and_running_arguments_refused_for_prefix_and_glob_rules() -> None:
    assert not allows("find:*", "find . -delete")
    assert not allows("find:*", "find . -exec rm {} +")
    assert not allows("find:*", "find . -fprint out")
    assert not allows("rg:*", "rg --pre ./evil x")
    assert not allows("tree:*", "tree -o out")
    assert not allows("sort:*", "sort -no out in")
    assert allows("grep:*", "grep -o x file")
    assert allows("find:*", "find . -name '*.py'")
    # an exact rule is the user's own words: it may name an output file
    assert allows("git diff --output=d.txt", "git diff --output=d.txt")
    assert arguments_safe(("git", "log", "--oneline", "--exit-code"))
    assert not arguments_safe(("git", "log", "--ou=x"))


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf x",
        "/bin/rm x",
        "./rm x",
        "command rm x",
        "builtin rm x",
        "exec rm x",
        "env rm x",
        "env -i FOO=1 rm x",
        "env -u HOME rm x",
        "sudo rm x",
        "sudo -u bob rm x",
        "sudo -- rm x",
        "doas rm x",
        "nice rm x",
        "nice -n 5 rm x",
        "nice -10 rm x",
        "nohup rm x",
        "time rm x",
        "timeout 5 rm x",
        "timeout -s KILL 5 rm x",
        "stdbuf -oL rm x",
        "ionice -c 3 rm x",
        "chroot / rm x",
        "xargs rm",
        "xargs -n 1 rm",
        "busybox rm x",
        "strace -o /dev/null rm x",
        "setsid rm x",
        "flock /tmp/l rm x",
        "\\rm x",
        "r''m x",
        '"rm" x',
        "r\\m x",
        "bash -c 'rm x'",
        "sh -c 'ls; rm x'",
        "zsh -c 'rm x'",
        "bash -ec 'rm x'",
        "bash -o pipefail -c 'rm x'",
        "sudo bash -c \"sh -c 'rm x'\"",
        "eval rm x",
        "eval 'ls; rm x'",
        "su -c 'rm x'",
        "env -S 'rm x'",
        "watch 'rm x'",
        "trap 'rm x' EXIT",
        "alias ls='rm x'",
        "find . -delete",
        "find . -exec rm {} ;",
        "find . -execdir /bin/rm {} +",
        "find . -ok rm {} ;",
        "ls x#;rm -f victim",
        "ls #\nrm victim",
        "echo $(rm x)",
        "echo `rm x`",
        "cat <(rm x)",
        "(rm x)",
        "{ rm x; }",
        "f() { rm x; }",
        "if true; then rm x; fi",
        "while true; do rm x; done",
        "for i in a; do rm $i; done",
        "case a in a) rm x;; esac",
        "ls | xargs rm",
        "ls && rm x",
        "cat <<EOF\n$(rm x)\nEOF",
        "git rebase -x 'rm x'",
        "git -c alias.y='!rm x' y",
        "git -c core.fsmonitor='rm x' status",
        "git filter-branch --tree-filter 'rm x'",
        "git bisect run rm x",
        "git clone -u 'rm x' repo",
        "tar --to-command='rm x' -xf a.tar",
        "tar --checkpoint-action=exec='rm x' -cf a.tar y",
        "rsync --rsh='rm x' a b",
        "sudo -i 'rm x'",
        "toybox rm x",
    ],
)
def test_deny_rule_catches_every_spelling(command: str) -> None:
    assert denies("rm:*", command), programs(command)
    assert not allows("ls:*", command) or command.startswith("ls")


@pytest.mark.parametrize(
    "command",
    [
        "$X x",
        "${X} x",
        "$(echo rm) x",
        "`echo rm` x",
        'eval "$x"',
        "eval $x",
        'bash -c "$x"',
        "sudo $X x",
        "env $X",
        "echo rm | bash",
        "bash <<< 'rm x'",
        "bash < script.sh",
        "bash -s",
        "bash /dev/stdin",
        "source /dev/stdin <<< 'rm x'",
        ". <(echo rm x)",
        'source "$f"',
        "echo $(( a[$(echo x)] ))",
        "x='a[$(rm v)]'; echo $((x))",
        "let x",
        "((x++))",
        "declare -i x",
        "unset 'a[$(rm v)]'",
        'printf -v "$n" x',
        'read "$n"',
        'test -v "$n"',
        "[[ $x -eq 1 ]]",
        "echo ${x@P}",
        "echo ${!x}",
        "echo ${a[x]}",
        "PS4='$(rm v)' bash -xc ls",
        "PATH=/tmp ls",
        "LD_PRELOAD=/tmp/x.so ls",
        "env PATH=/tmp ls",
        "hash -p /bin/rm ls",
        'find . -exec "$p" ;',
        "find . $expr",
        "git $opt status",
        'tar --to-command="$c" -xf a.tar',
        "ls (",
        "if then",
        "r\\\nm x",
        "echo \\\\\nrm x",
        "ls #\\\nrm x",
        "[[ -v 'a[$(rm v)]' ]]",
        "echo $[ x ]",
    ],
)
def test_unanalysable_lines_match_every_deny_rule(command: str) -> None:
    assert bash_opaque_reason(command), command
    assert denies("rm:*", command)
    assert denies("git push:*", command)
    assert not allows("ls:*", command)


@pytest.mark.parametrize(
    "command",
    [
        "ls -la",
        "echo rm",
        "grep -rn 'rm -rf' src",
        "git status",
        "git commit -m 'rm the old file'",
        "git log --grep=rm",
        "cat rm.txt",
        "echo $HOME",
        'cd "$HOME" && ls',
        "bash script.sh",
        "source .venv/bin/activate && pytest -q",
        "python -c 'import os'",
        "printf '%s\\n' \"$x\"",
        "git commit -m \"$(cat <<'EOF'\nmessage\nEOF\n)\"",
        "git --no-pager log",
        "git rm --cached x",
    ],
)
def test_deny_rule_leaves_other_commands_alone(command: str) -> None:
    assert not denies("rm:*", command), programs(command)


def test_deny_rule_word_from_expansion_matches_any_word() -> None:
    assert denies("git push:*", "git $sub origin")
    assert denies("make deploy", "make $target")
    assert not denies("git push:*", "git log $x")
    assert denies("rm -rf:*", "find . -delete")
    assert denies("rm *", "xargs rm")


def test_split_requotes_parts_and_keeps_unanalysable_lines_whole() -> None:
    assert split_shell_command("a | b; c && 'd; e'") == ("a", "b", "c", "'d; e'")
    assert split_shell_command("git diff x#;touch M") == ("git diff x#;touch M",)
    for part in split_shell_command("echo 'a b' \"c'd\" && ls"):
        assert parse_line(part).simple is not None


def test_refusal_says_why() -> None:
    why = bash_allow_refusal("git diff > README.md")
    assert why is not None and "redirect" in why
    assert bash_allow_refusal("git diff") is None


def test_long_wrapper_chains_and_huge_lines_fail_closed() -> None:
    chain = "nice " * 3000 + "rm x"
    assert denies("rm:*", chain) and bash_opaque_reason(chain)
    assert denies("rm:*", "nice " * 30 + "rm x")
    huge = "echo " + "a" * 200_000
    assert not allows("echo:*", huge)
    assert denies("git push:*", huge)


def test_deeply_nested_line_does_not_crash() -> None:
    command = "echo " + "$(" * 3000 + "rm x" + ")" * 3000
    assert denies("rm:*", command)
    assert not allows("echo:*", command)
    nested = "bash -c " + "'" + "eval " * 50 + "rm x'"
    assert denies("rm:*", nested)


@pytest.mark.parametrize(
    ("spec", "command"),
    [
        ("git push:*", "git -C . push origin"),
        ("git push:*", "git --no-pager push"),
        ("git push:*", "git -c alias.p=push p"),
        ("git push:*", "sudo git push"),
        ("git push:*", "/usr/bin/git push --force"),
        ("kubectl delete:*", "kubectl -n prod delete pod x"),
        ("rm:*", "man -P 'rm x' ls"),
        ("rm:*", "ssh -o ProxyCommand='rm x' host"),
        ("rm:*", "ssh -oProxyCommand='rm x' host"),
        ("rm:*", "tar -I 'rm x' -xf a.tar"),
        ("rm:*", "sort --compress-program=rm x"),
        ("rm:*", "rsync -e 'rm x' a b"),
        ("rm:*", "rg --hostname-bin=rm x"),
    ],
)
def test_deny_rule_sees_through_options_and_option_commands(spec: str, command: str) -> None:
    assert denies(spec, command), programs(command)


@pytest.mark.parametrize(
    ("spec", "command"),
    [
        ("git push:*", "git log --oneline"),
        ("git push:*", "git log push"),
        ("git push:*", 'git commit -m "$msg"'),
        ("git push:*", "git log $x"),
        ("rm:*", "man rm"),
    ],
)
def test_deny_rule_does_not_reach_other_subcommands(spec: str, command: str) -> None:
    assert not denies(spec, command), programs(command)

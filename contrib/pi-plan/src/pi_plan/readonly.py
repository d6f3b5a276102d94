"""Which bash commands plan mode lets through: every part of the command line must start
with a known read-only program (or read-only git / package-manager subcommand), with no
output redirection and no option that writes or runs something else."""

from __future__ import annotations

import re
import shlex

_SEPARATORS = re.compile(r"&&|\|\||;|\|&?|\n")
_SUBSTITUTION = re.compile(r"\$\(|`|<\(|>\(")
# "> file", ">> file", "&> file", "1>file"; "2>&1", ">&2" and "> /dev/null" write nothing.
_REDIRECT = re.compile(r"(?<![0-9&])>{1,2}(?!&)|[0-9&]>{1,2}(?!&)")
_HARMLESS_REDIRECT = re.compile(r"[0-9&]?>{1,2}\s*/dev/null|[0-9]?>&[0-9]")

READ_ONLY_PROGRAMS = frozenset("""
    cat head tail less more grep egrep fgrep rg ag find fd ls tree pwd echo printf wc sort uniq
    diff cmp file stat du df which whereis type env printenv uname whoami id date cal uptime
    ps free jq basename dirname realpath readlink nl cut tr column true false test
""".split())
# Subcommands that only read, for programs that can also write.
READ_ONLY_SUBCOMMANDS = {
    "git": {"status", "log", "diff", "show", "branch", "remote", "blame", "ls-files", "ls-tree",
            "rev-parse", "describe", "shortlog", "grep", "tag"},
    "npm": {"ls", "list", "view", "info", "outdated", "audit"},
    "pip": {"list", "show", "freeze"},
    "cargo": {"tree", "metadata"},
}
# Options that turn a read-only program into a writer or a launcher.
FORBIDDEN_OPTIONS = {
    "find": {"-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprintf", "-fls"},
    "fd": {"-x", "--exec", "-X", "--exec-batch"},
    "sort": {"-o", "--output"},
    "git branch": {"-d", "-D", "--delete", "-m", "-M", "--move", "-c", "-C", "--copy", "-f", "--force",
                   "-u", "--set-upstream-to", "--unset-upstream", "--edit-description"},
    "git tag": {"-d", "--delete", "-a", "-s", "-u", "-f", "--force", "-m", "-F"},
}


def is_read_only_command(command: str) -> bool:
    """True when ``command`` only reads (as far as can be told without running it)."""
    if _SUBSTITUTION.search(command):
        return False
    if _REDIRECT.search(_HARMLESS_REDIRECT.sub(" ", command)):
        return False
    parts = [p.strip() for p in _SEPARATORS.split(command)]
    if any("&" in p for p in parts):  # background jobs
        return False
    return all(_part_is_read_only(p) for p in parts if p)


def _part_is_read_only(part: str) -> bool:
    try:
        words = shlex.split(part)
    except ValueError:
        return False
    while words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[0]):  # FOO=bar cmd
        words = words[1:]
    if not words:
        return True
    program, args = words[0].rsplit("/", 1)[-1], words[1:]
    if program == "env" and args:  # env runs its arguments
        return False
    key = program
    if program in READ_ONLY_SUBCOMMANDS:
        positional = [a for a in args if not a.startswith("-")]
        sub = positional[0] if positional else None
        if sub not in READ_ONLY_SUBCOMMANDS[program]:
            return False
        if program == "git" and sub in ("branch", "tag", "remote") and len(positional) > 1:
            return False  # `git branch new-name`, `git tag v1`, `git remote add …` write
        key = f"{program} {sub}"
    elif program not in READ_ONLY_PROGRAMS:
        return False
    forbidden = FORBIDDEN_OPTIONS.get(key, set())
    return not any(a in forbidden or a.split("=", 1)[0] in forbidden for a in args)

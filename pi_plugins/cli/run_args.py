"""The flags of ``pi`` as the run command reads them (:class:`RunArgs`), and what pi 1.6
refuses in them before it does anything (:func:`check_flags`)."""

from __future__ import annotations

from pi_core.protocol.records import field, record


class UsageError(Exception):
    """A problem with what the user asked for; printed without a traceback."""


class FlagError(UsageError):
    """Flags pi 1.6 refuses before it does anything: said in pi's words (``Error: ...``)
    with pi's exit code, 1."""


class PiRefusal(UsageError):
    """A refusal printed exactly as pi 1.6 prints it (no ``Error:`` before it), exit code 1."""


class QuietExit(UsageError):
    """The user chose to stop before the run began (a Cancel): nothing said, exit code 0."""


def check_flags(args: RunArgs) -> None:
    """What pi 1.6 refuses in its flags (docs/cli.md), in its words: the ``--tools``
    lists, the session id, the flags ``--fork`` and ``--session-id`` cannot be given with."""
    from pi_plugins.cli.tool_selection import ToolFlagError, parse_tools

    try:
        parse_tools(args.tools)
    except ToolFlagError as exc:
        raise FlagError(str(exc)) from None
    if args.session_id is not None:
        from pi_plugins.cli.session_ids import valid_session_id

        if not valid_session_id(args.session_id):
            raise FlagError("Session id must be non-empty, contain only alphanumeric characters, '-', "
                            "'_', and '.', and start and end with an alphanumeric character")
    others = (("--session", args.session), ("--continue", args.continue_session), ("--resume", args.resume))
    for flag, given in (*others, ("--no-session", args.no_session)):
        if args.fork and given:
            raise FlagError(f"--fork cannot be combined with {flag}")
    for flag, given in others:
        if args.session_id is not None and given:
            raise FlagError(f"--session-id cannot be combined with {flag}")


@record
class RunArgs:
    """The flags of ``pi`` (pi's names, Python's spelling)."""

    messages: list[str] = field(factory=list)
    provider: str | None = None
    model: str | None = None
    api_key: str | None = None
    system_prompt: str | None = None
    append_system_prompt: list[str] = field(factory=list)
    mode: str = "text"
    print: bool = False
    #: message_update shape, "lean" or "full"; None: the mode's default (JSON lean, RPC full).
    events: str | None = None
    continue_session: bool = False
    resume: bool = False
    session: str | None = None
    fork: str | None = None
    session_dir: str | None = None
    no_session: bool = False
    models: str | None = None
    no_tools: bool = False
    #: ``-nbt``: the built-in tools start off; plugin tools stay on.
    no_builtin_tools: bool = False
    tools: str | None = None
    #: ``-xt``: tool names or patterns turned off after every other tool flag.
    exclude_tools: str | None = None
    #: ``--session-id``: this project's session with that id, created when there is none.
    session_id: str | None = None
    #: ``-n/--name``: the session's display name.
    name: str | None = None
    thinking: str | None = None
    extensions: list[str] = field(factory=list)
    no_extensions: bool = False
    skills: list[str] = field(factory=list)
    no_skills: bool = False
    prompt_templates: list[str] = field(factory=list)
    no_prompt_templates: bool = False
    no_context_files: bool = False
    #: ``--theme`` files or folders, and ``--no-themes`` (the interactive mode reads them).
    themes: list[str] = field(factory=list)
    no_themes: bool = False
    #: ``--use-theme NAME[/NAME]``: the chat's theme for this run, not saved (pi 1.6).
    use_theme: str | None = None
    #: ``--tui-mode``: the chat fullscreen or regular (else the ``tuiMode`` setting).
    tui_mode: str | None = None
    export: str | None = None
    export_output: str | None = None
    list_models: str | None = None
    verbose: bool = False
    offline: bool = False
    #: ``-a/--approve`` (True) or ``-na/--no-approve`` (False): project trust for this run.
    approve: bool | None = None

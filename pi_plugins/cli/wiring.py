"""What ``pi`` does between parsing its flags and running a mode: load plugins and
settings, pick the model and the session, build the harness.

Modes (print, json, rpc, interactive) are plugins: they register a :class:`Mode` through
the ``register_modes`` hook and receive the :class:`App`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from attrs import define, field

from pi_core.protocol.options import ResourceOptions


class UsageError(Exception):
    """A problem with what the user asked for; printed without a traceback."""


class FlagError(UsageError):
    """Flags pi 1.6 refuses before it does anything: said in pi's words (``Error: ...``)
    with pi's exit code, 1."""


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


@define
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
    export: str | None = None
    export_output: str | None = None
    list_models: str | None = None
    verbose: bool = False
    offline: bool = False
    #: ``-a/--approve`` (True) or ``-na/--no-approve`` (False): project trust for this run.
    approve: bool | None = None


@define
class Prompt:
    text: str | None
    images: list = field(factory=list)


class App:
    """Everything a mode needs: the harness, the model registry, the flags, the output."""

    def __init__(self, args: RunArgs, harness: Any, registry: Any, plugins: Any,
                 stdout=None, stderr=None, stdin=None, notices: list[str] | None = None) -> None:
        self.args = args
        #: What the start had to say, kept for the chat to show (the other modes printed it).
        self.notices = notices or []
        self.harness = harness
        self.registry = registry
        self._plugins = plugins
        self.stdout = stdout or sys.stdout
        self.stderr = stderr or sys.stderr
        self.stdin = stdin or sys.stdin

    @property
    def plugins(self) -> Any:
        """The harness's plugins (a ``/reload`` replaces them)."""
        return getattr(self.harness, "plugins", None) or self._plugins

    def initial_prompt(self, read_stdin: bool = True) -> Prompt:
        """Piped stdin, then the ``@file`` contents, then the first message, joined into
        one prompt (pi's order); the other messages follow one by one."""
        parts, images = [], []
        if read_stdin and not self.stdin.isatty():
            piped = self.stdin.read()
            if piped.strip():
                parts.append(piped)
        files = [m[1:] for m in self.args.messages if m.startswith("@") and len(m) > 1]
        for name in files:
            text, image = read_file_argument(name, self.harness.ctx.cwd)
            parts.append(text)
            if image is not None:
                images.append(image)
        rest = self.rest_messages()
        if rest:
            parts.append(rest[0])
        return Prompt("".join(parts) if parts else None, images)

    def rest_messages(self) -> list[str]:
        return [m for m in self.args.messages if not (m.startswith("@") and len(m) > 1)]

    def write(self, text: str) -> None:
        self.stdout.write(text)
        self.stdout.flush()


def read_file_argument(name: str, cwd: str):
    """An ``@file`` argument as prompt text (and image content for pictures)."""
    from pi_core.protocol.messages import ImageContent

    path = Path(os.path.expanduser(name))
    path = path if path.is_absolute() else Path(cwd) / path
    if not path.is_file():
        raise UsageError(f"@{name}: no such file ({path})")
    import base64
    import mimetypes

    mime = mimetypes.guess_type(path.name)[0] or ""
    if mime.startswith("image/"):
        data = base64.b64encode(path.read_bytes()).decode()
        return f'<file name="{path}"></file>\n', ImageContent(data=data, mime_type=mime)
    content = path.read_text(encoding="utf-8", errors="replace")
    return f'<file name="{path}">\n{content}\n</file>\n', None


# ---------------------------------------------------------------- building the app


def sessions_dir(args: RunArgs, settings) -> Path | None:
    """``--session-dir``, then ``PI_CODING_AGENT_SESSION_DIR``, then ``sessionDir``."""
    chosen = args.session_dir or os.environ.get("PI_CODING_AGENT_SESSION_DIR")
    if chosen:
        return Path(chosen).expanduser()
    setting = settings.get("sessionDir")
    if setting:
        path = Path(setting).expanduser()
        return path if path.is_absolute() else Path(os.getcwd()) / path
    return None


def open_session(args: RunArgs, cwd: str, directory: Path | None):
    from pi_core.session import Session
    from pi_core.session.locations import session_dir_for

    if args.no_session and args.session_id is None:
        return Session.in_memory(cwd), "startup"
    folder = directory or session_dir_for(cwd)
    if not (args.no_session or args.fork or args.session_id is not None or args.session
            or args.continue_session):
        return Session.create(cwd, folder), "startup"
    # finding, forking or naming a session (what a new one never needs: pi -p's start)
    from pi_core.app.listing import continue_recent, find_session
    from pi_plugins.cli import session_ids

    if args.no_session:
        assert args.session_id is not None  # (without one, the in-memory session above)
        return session_ids.new_session_with_id(cwd, None, args.session_id, in_memory=True), "startup"
    if args.fork:
        found = find_session(args.fork, cwd, folder)
        if found is None:
            raise UsageError(f"--fork {args.fork}: no such session")
        return fork_from(found.path, cwd, folder, session_id=args.session_id), "fork"
    if args.session_id is not None:  # exactly that project-local session (pi 1.6)
        path = session_ids.find_project_session(args.session_id, Path(folder))
        if path is not None:
            return Session.open(path, folder, cwd=cwd), "resume"
        print(f"Warning: No project session found with id '{args.session_id}'; creating a new "
              "session with that id.", file=sys.stderr)
        return session_ids.new_session_with_id(cwd, Path(folder), args.session_id), "startup"
    if args.session:
        found = find_session(args.session, cwd, folder)
        if found is None:
            raise UsageError(f"--session {args.session}: no such session (give a file or an id prefix)")
        if found.scope == "global":
            return fork_from(found.path, cwd, folder), "fork"
        return Session.open(found.path, folder, cwd=cwd), "resume"
    return continue_recent(cwd, folder), "resume"  # --continue


def model_wish(args: RunArgs) -> dict:
    """What the flags ask of the model, as :mod:`pi_core.app.start_model` takes it."""
    return {"pattern": args.model, "provider": args.provider, "api_key": args.api_key, "offline": args.offline}


def probed_endpoints(plugins, settings) -> list[str]:
    """The endpoints the ``discover_models`` plugins tried, for those that say
    (a module-level ``probed_endpoints(settings)``, as the built-in local_models has)."""
    found: list[str] = []
    for impl in plugins.impls("discover_models"):
        describe = getattr(sys.modules.get(impl.function.__module__), "probed_endpoints", None)
        if callable(describe):
            try:
                found += [e for e in describe(settings) if e not in found]
            except Exception:  # a plugin's description is no reason to fail
                pass
    return found


async def _trusted_plugins(args: RunArgs, cwd: str, home: Path, extension_paths: list[str],
                           trust_ui: Any):
    """(settings, plugins, trust decision): the project's protected resources are in
    them only once the project is trusted, as the ``decide_project_trust`` hook says
    (the built-in ``trust`` plugin; untrusted without an answer). When the quiet answer
    is not settled, the plugins that are not the project's (and that the project's plugin
    lists would keep) load first and are asked; the rest follow in load order once it is
    decided."""
    from pi_core.app.discovery import load_plugins, load_project_plugins
    from pi_core.app.settings import Settings, TrustQuestion, decide_trust, quiet_trust

    untrusted = Settings.load(cwd, home, project_trusted=False)
    discover = not args.no_extensions
    trust = quiet_trust(cwd, home, untrusted.global_data, approve=args.approve, chat=trust_ui is not None)
    if trust.settled:
        settings = Settings.load(cwd, home, project_trusted=trust.trusted)
        return settings, load_plugins(cwd=cwd, agent_dir=home, extension_paths=extension_paths,
                                      discover=discover, settings=settings), trust
    plugins = load_plugins(cwd=cwd, agent_dir=home, extension_paths=extension_paths, discover=discover,
                           settings=untrusted, if_trusted=Settings.load(cwd, home, project_trusted=True))
    from pi_core.context import Context

    ctx = Context(cwd=cwd, plugins=plugins, settings=untrusted, agent_dir=home, ui=trust_ui)
    ctx.mode = "interactive" if trust_ui is not None else args.mode
    trust = await decide_trust(plugins, TrustQuestion(
        cwd, home, approve=args.approve, global_settings=untrusted.global_data, quiet=False,
        can_ask=trust_ui is not None, chat=trust_ui is not None), ctx)
    settings = Settings.load(cwd, home, project_trusted=True) if trust.trusted else untrusted
    load_project_plugins(plugins, settings=settings)  # and what waited for the decision
    return settings, plugins, trust


async def build_app(args: RunArgs, *, cwd: str | None = None, ui: Any = None,
                    trust_ui: Any = None, chat: bool = False) -> App:
    """The app for ``args``; ``trust_ui`` (the chat's terminal) may ask whether to trust
    the project, where no decision was made or saved. The chat (``chat``) starts without
    a model, as pi's does, so that ``/login`` can be used to get one."""
    from pi_core.app.discovery import load_plugins
    from pi_core.app.registry import ModelRegistry
    from pi_core.app.settings import Settings
    from pi_core.paths import agent_dir

    cwd = cwd or os.getcwd()
    home = agent_dir()
    extension_paths = list(args.extensions)  # settings `extensions` load with discovery
    settings, plugins, trust = await _trusted_plugins(args, cwd, home, extension_paths, trust_ui)
    settings.problems.extend(await plugins.call("settings_problems", settings=settings, ctx=None))
    notices: list[str] = []

    def say(line: str) -> None:
        """On stderr now, or in the chat's header (where a line printed before the chat was lost)."""
        if chat:
            notices.append(line)
        else:
            print(line, file=sys.stderr)

    for problem in settings.problems + trust.problems:
        say(f"warning: {problem}")
    if trust.notice:  # what the trust plugin says the run skipped
        say(trust.notice)
    registry = await ModelRegistry.from_plugins(plugins, agent_dir=home)
    for problem in registry.errors:
        say(f"warning: {problem}")
    from pi_core.app.registry import ModelNotFoundError
    from pi_core.app.start_model import choose_model, find_local_models

    await find_local_models(registry, plugins, settings, **model_wish(args))
    try:
        model, level, explicit, warning = choose_model(registry, settings, pattern=args.model,
                                                       provider=args.provider)
    except ModelNotFoundError as exc:
        if args.mode not in SERVING_MODES and not chat:
            raise UsageError(str(exc)) from exc
        # as pi: a program that started us still gets answers (no models, a failed
        # prompt that says why) instead of a process that is gone
        from pi_core.protocol.model import unknown_model

        model, level, explicit, warning = unknown_model(), None, False, None
    if warning:
        say(f"warning: {warning}")
    if model.key in registry.local:
        why = "" if args.model or settings.get("defaultModel") else "no model or API key is configured; "
        say(f"Using {model.key}, found on a local server at {model.base_url} "
            f"({why}`pi --list-models` lists what was found)")
    if args.api_key:
        registry.set_runtime_key(model.provider, args.api_key)
    from pi_core.session.reader import SessionError

    try:
        session, reason = open_session(args, cwd, sessions_dir(args, settings))
    except SessionError as exc:  # locked by another pi, not a session file…
        raise UsageError(str(exc)) from exc
    if args.name is not None and args.name.strip():  # -n/--name, first as in pi
        session.append_session_info(args.name)
    options = ResourceOptions(
        system_prompt=args.system_prompt,  # the system-prompt plugin reads files it names
        append_system_prompt=list(args.append_system_prompt),
        context_files=not args.no_context_files,
        skills=not args.no_skills,
        skill_paths=[Path(p) for p in args.skills],
        prompt_templates=not args.no_prompt_templates,
        prompt_template_paths=[Path(p) for p in args.prompt_templates],
    )
    from pi_core.app.assembly import ConfigurationError, assemble
    from pi_core.context import Context

    flags = await plugin_flags(args, plugins, Context(cwd=cwd, plugins=plugins, settings=settings,
                                                      agent_dir=home, options=options))
    try:
        harness = await assemble(
            plugins=plugins, session=session, model=model, registry=registry, settings=settings,
            cwd=cwd, agent_dir=home, thinking_level=args.thinking or level, model_is_explicit=explicit,
            options=options, ui=ui, flags=flags, reason=reason,
            scoped_models=scoped_models(args.models or settings.get("enabledModels"), registry),
            plugin_loader=lambda: load_plugins(
                cwd=cwd, agent_dir=home, extension_paths=extension_paths, discover=not args.no_extensions,
                settings=Settings.load(cwd, home, project_trusted=trust.trusted)))
    except ConfigurationError as exc:
        session.close()
        raise UsageError(str(exc)) from None
    _apply_tool_flags(args, harness)
    return App(args, harness, registry, plugins, notices=notices)


#: Modes that serve a client program: they keep running when no model is configured.
SERVING_MODES = ("rpc", "acp")


async def plugin_flags(args: RunArgs, plugins, ctx) -> dict:
    """Read the plugins' flags (``register_flags``) out of the words the command line
    left over, pi's ``registerFlag`` / ``getFlag``: ``--name`` for a boolean flag,
    ``--name VALUE`` or ``--name=VALUE`` for a string one. What is left must be messages:
    an unknown ``--option`` is an error, as before plugins could add flags."""
    from pi_core.protocol.commands import Flag

    flags = {f.name: f for f in await plugins.call("register_flags", ctx=ctx) if isinstance(f, Flag)}
    values = {name: flag.default for name, flag in flags.items()}
    words, rest, i = list(args.messages), [], 0
    while i < len(words):
        word = words[i]
        i += 1
        looks_like_option = (word.startswith("--") and len(word) > 2) or \
            (word.startswith("-") and word[1:2].isalpha())
        if not looks_like_option:
            rest.append(word)
            continue
        name, eq, value = word.lstrip("-").partition("=")
        flag = flags.get(name) if word.startswith("--") else None
        if flag is None:
            hint = f" (plugin flags: {', '.join('--' + n for n in sorted(flags))})" if flags else ""
            raise UsageError(f"No such option: {word.partition('=')[0]}{hint}")
        if flag.type == "boolean":
            if eq and value.lower() not in ("true", "false", "1", "0", "yes", "no"):
                raise UsageError(f"--{name} is a switch; give it without a value")
            values[name] = value.lower() in ("true", "1", "yes") if eq else True
        else:
            if not eq:
                if i >= len(words):
                    raise UsageError(f"--{name} needs a value")
                value, i = words[i], i + 1
            values[name] = value
    args.messages = rest
    return values


def scoped_models(patterns, registry) -> list:
    """``--models`` (comma-separated) or ``enabledModels`` (a list): patterns with globs
    (``anthropic/*``, ``*sonnet*``) or model names, each with an optional ``:thinking``."""
    import fnmatch

    from pi_core.app.registry import ModelNotFoundError

    if isinstance(patterns, str):
        patterns = patterns.split(",")
    chosen, seen = [], set()
    for pattern in [p.strip() for p in patterns or [] if p.strip()]:
        if any(ch in pattern for ch in "*?["):
            glob, _, level = pattern.partition(":")
            found = [(m, level or None) for m in registry.available()
                     if fnmatch.fnmatch(m.key, glob) or fnmatch.fnmatch(m.id, glob)]
        else:
            try:
                resolution = registry.resolve(pattern)
            except ModelNotFoundError as exc:
                print(f"warning: --models: {exc}", file=sys.stderr)
                continue
            found = [(resolution.model, resolution.thinking_level)]
        for model, level in found:
            if model.key not in seen:
                seen.add(model.key)
                chosen.append((model, level))
    return chosen


def fork_from(source: str | os.PathLike, target_cwd: str | os.PathLike,
              sessions_dir: str | os.PathLike | None = None, session_id: str | None = None):
    """A new session of ``target_cwd`` holding every entry of ``source``; written at
    once, as pi does (``--fork``, or resuming another project's session here).
    ``session_id`` names the new session (``--fork X --session-id ID``)."""
    from pi_core.session import Session, SessionError

    source = Path(os.path.abspath(source))
    with Session.open(source, read_only=True) as original:
        if not original.on_disk:
            raise SessionError(f"cannot fork {source}: the file holds no session")
        entries = original.entries
    if session_id is None:
        forked = Session.create(target_cwd, sessions_dir, parent_session=str(source))
    else:
        from pi_plugins.cli.session_ids import new_session_with_id

        forked = new_session_with_id(os.fspath(target_cwd), Path(sessions_dir) if sessions_dir else None,
                                     session_id, parent_session=str(source))
    forked.take_entries(entries)
    return forked


def _apply_tool_flags(args: RunArgs, harness) -> None:
    """``--tools``, ``--exclude-tools``, ``--no-tools``, ``--no-builtin-tools``
    (:mod:`pi_plugins.cli.tool_selection`)."""
    from pi_plugins.cli.tool_selection import parse_tools, select, unknown_names

    if args.tools is None and args.exclude_tools is None and not (args.no_tools or args.no_builtin_tools):
        return
    agent = harness.agent
    tools = agent.tools or []
    names = [t.name for t in tools]
    selection = parse_tools(args.tools)
    unknown = unknown_names(selection, names)
    if unknown:
        print(f"warning: --tools names unknown tools: {', '.join(unknown)}", file=sys.stderr)
    default = [t.name for t in tools if t.default_active]
    agent.set_active_tools(select(
        names, default, tools=selection, exclude=args.exclude_tools,
        no_tools=args.no_tools and selection is None, builtin={t.name for t in tools if _is_builtin(t)},
        no_builtin_tools=args.no_builtin_tools))


def _is_builtin(tool) -> bool:
    """A tool of the built-in tools plugin (not one a plugin registered under the same name)."""
    module = getattr(tool.function, "__module__", None) or type(tool).__module__
    return module.startswith("pi_plugins.tools")

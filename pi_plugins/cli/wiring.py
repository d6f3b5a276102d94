"""What ``pi`` does between parsing its flags and running a mode: load plugins and
settings (once the project's trust is decided), pick the model and the session, read the
plugins' flags, assemble the harness (:func:`build_app`) and hand the mode its
:class:`pi_plugins.cli.app.App`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from pi_core.protocol.options import ResourceOptions
from pi_plugins.cli.app import App
from pi_plugins.cli.run_args import FlagError, PiRefusal, RunArgs, UsageError


def model_wish(args: RunArgs) -> dict:
    """What the flags ask of the model, as :mod:`pi_plugins.models.start_model` takes it."""
    return {"pattern": args.model, "provider": args.provider, "api_key": args.api_key, "offline": args.offline}


async def _trusted_plugins(args: RunArgs, cwd: str, home: Path, extension_paths: list[str],
                           trust_ui: Any):
    """(settings, plugins, trust decision): the project's protected resources are in
    them only once the project is trusted, as the ``decide_project_trust`` hook says
    (the built-in ``trust`` plugin; untrusted without an answer). When the quiet answer
    is not settled, the plugins that are not the project's (and that the project's plugin
    lists would keep) load first and are asked; the rest follow in load order once it is
    decided."""
    from pi_core.app.discovery import load_plugins, load_project_plugins
    from pi_core.app.settings import Settings, TrustQuestion, quiet_trust
    from pi_plugins.trust import decide_trust

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


def packages_not_loaded(given: list[str]) -> str:
    """Why ``-e``'s pi packages are skipped: the plugin that loads them is dropped."""
    named = ", ".join(f"-e {p}" for p in given)
    return (f"{named}: pi packages need the packages built-in, which is not loaded "
            "(-builtin:packages in the settings' extensions or on -e, or plugins.disabled); skipped")


async def build_app(args: RunArgs, *, cwd: str | None = None, ui: Any = None,
                    trust_ui: Any = None, chat: bool = False) -> App:
    """The app for ``args``; ``trust_ui`` (the chat's terminal) may ask whether to trust
    the project, where no decision was made or saved. The chat (``chat``) starts without
    a model, as pi's does, so that ``/login`` can be used to get one."""
    from pi_core.app.discovery import load_plugins
    from pi_core.app.settings import Settings
    from pi_core.paths import agent_dir
    from pi_plugins.models.registry import ModelRegistry

    cwd = cwd or os.getcwd()
    home = agent_dir()
    extension_paths = list(args.extensions)  # settings `extensions` load with discovery
    settings, plugins, trust = await _trusted_plugins(args, cwd, home, extension_paths, trust_ui)
    from pi_core.app.discovery import PACKAGE_PREFIXES, pi_package_source

    given = [p for p in extension_paths if pi_package_source(p)]
    if given and not any(info.name == "packages" for info in plugins.infos):
        settings.problems.append(packages_not_loaded(given))
        given = []
    settings.extension_sources = [p if p.startswith(PACKAGE_PREFIXES) else os.path.abspath(p) for p in given]
    if settings.global_data.get("httpProxy"):  # pi 1.6: the agent dir's only
        from pi_plugins.providers.transport import apply_http_proxy_setting

        apply_http_proxy_setting(settings.global_data["httpProxy"])
    from pi_core.app.assembly import check_settings

    await check_settings(plugins, settings)  # before the model is chosen; assemble() won't ask again
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
    from pi_plugins.models.registry import AmbiguousModelError, ModelNotFoundError
    from pi_plugins.models.start_model import choose_model, find_local_models

    await find_local_models(registry, plugins, settings, **model_wish(args))
    if args.model:
        named = (args.provider, args.model) if args.provider else args.model.partition("/")[::2]
        refusal = unsupported_model(*named) if registry.find(*named) is None else None
        if refusal:
            raise UsageError(refusal)
    try:
        model, level, explicit, warning = choose_model(registry, settings, pattern=args.model,
                                                       provider=args.provider)
    except ModelNotFoundError as exc:
        if isinstance(exc, AmbiguousModelError):  # pi 1.6 stops in every mode, in its words
            raise FlagError(str(exc)) from exc
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
    from pi_plugins.cli.sessions import (
        choose_for_missing_cwd,
        missing_session_cwd,
        open_session,
        sessions_dir,
    )

    try:
        session, reason = open_session(args, cwd, sessions_dir(args, settings))
    except SessionError as exc:  # locked by another pi, not a session file…
        raise UsageError(str(exc)) from exc
    gone = missing_session_cwd(session, reason, cwd)
    if gone and not chat:
        session.close()
        raise PiRefusal(gone)
    if gone and trust_ui is not None:  # the chat offers Continue / Fork / Cancel (pi 1.6)
        session = await choose_for_missing_cwd(session, cwd, sessions_dir(args, settings), trust_ui)
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
    from pi_plugins.cli.tool_selection import apply_tool_flags

    flags = await plugin_flags(args, plugins, Context(cwd=cwd, plugins=plugins, settings=settings,
                                                      agent_dir=home, options=options))
    try:
        harness = await assemble(
            plugins=plugins, session=session, model=model, registry=registry, settings=settings,
            cwd=cwd, agent_dir=home, thinking_level=args.thinking or level, model_is_explicit=explicit,
            options=options, ui=ui, flags=flags, reason=None,
            scoped_models=scoped_models(args.models or settings.get("enabledModels"), registry),
            plugin_loader=lambda: load_plugins(
                cwd=cwd, agent_dir=home, extension_paths=extension_paths, discover=not args.no_extensions,
                settings=Settings.load(cwd, home, project_trusted=trust.trusted)))
    except ConfigurationError as exc:
        session.close()
        raise UsageError(str(exc)) from None
    # The tool flags choose the tools before session_start, so plugins that declare more
    # on the branch (tool_search's loaded tools) add to the flags' choice.
    await harness.agent.setup()
    apply_tool_flags(args, harness)
    # pi 1.6's ctx.mode, known to session_start (main.py sets it again once the mode is chosen)
    harness.ctx.mode = "tui" if chat else {"text": "print"}.get(args.mode, args.mode)
    if reason is not None:
        await harness.start(reason=reason)
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

    from pi_plugins.models.registry import ModelNotFoundError

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


def unsupported_model(provider: str, model_id: str) -> str | None:
    """The one line for a model pi 1.6's catalogue lists that is no chat model (an image
    or classifier model, which pi runs from codemode scripts only), else None."""
    try:
        from pi_plugins.providers.catalogue import other_model_kind
    except ImportError:  # pragma: no cover - the providers ship with the command line
        return None
    kind = other_model_kind(provider, model_id)
    if kind is None:
        return None
    article = "an" if kind[0] in "aeiou" else "a"
    return (f"{provider}/{model_id} is {article} {kind} model, not a chat model: not supported here "
            "(pi-harness runs chat models only)")

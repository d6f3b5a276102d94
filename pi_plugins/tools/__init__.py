"""The built-in coding tools: ``read``, ``bash``, ``edit``, ``write`` (active by default)
and ``grep``, ``find``, ``ls`` (available, e.g. with ``--tools read,grep,find,ls``).

Every tool reaches files and processes only through an execution environment
(:mod:`pi_plugins.tools.environment`), which a plugin may replace through the
``execution_environment`` hook. A plugin that registers a tool under one of these names
(say its own ``read``) replaces the built-in, as ``register_tools`` collects by name.

Importing this package is cheap: the tool modules load when the tools are registered.
"""

from __future__ import annotations

from pi_core import hookimpl

#: Every built-in tool, in the order they are offered to the model.
ALL_TOOLS = ("read", "bash", "edit", "write", "grep", "find", "ls")
#: What the model gets when the user does not choose (the CLI's ``--tools`` default).
DEFAULT_ACTIVE_TOOLS = ("read", "bash", "edit", "write")


def builtin_tools() -> list:
    """The seven built-in :class:`pi_core.protocol.tools.Tool` objects, in ``ALL_TOOLS`` order."""
    from pi_plugins.tools.bash import bash_tool
    from pi_plugins.tools.edit import edit_tool
    from pi_plugins.tools.find import find_tool
    from pi_plugins.tools.grep import grep_tool
    from pi_plugins.tools.ls import ls_tool
    from pi_plugins.tools.presentation import dress
    from pi_plugins.tools.read import read_tool
    from pi_plugins.tools.write import write_tool

    return [dress(t) for t in (read_tool, bash_tool, edit_tool, write_tool, grep_tool, find_tool, ls_tool)]


@hookimpl
def register_tools():
    return builtin_tools()


@hookimpl(trylast=True)
def before_agent_start(event, ctx):
    """A prompt's images fitted to the model's limits (:mod:`.image_fitting`), once every
    other handler has had the prompt (a model it chose decides the limits, as in pi 1.6)."""
    if not event.images:
        return None
    from pi_plugins.tools.image_fitting import fit_images, with_notes

    images, notes = fit_images(list(event.images), ctx)
    if not notes and images == list(event.images):
        return None
    import attrs

    return attrs.evolve(event, prompt=with_notes(event.prompt, notes), images=images)


@hookimpl(trylast=True)
def message_end(message, ctx):
    """A user message's images fitted as it joins the conversation: a steering or
    follow-up message's, as pi 1.6 fits them at delivery (a prompt's are fitted already)."""
    content = getattr(message, "content", None)
    if getattr(message, "role", None) != "user" or not isinstance(content, list) \
            or not any(getattr(block, "type", None) == "image" for block in content):
        return None  # no image to fit
    from pi_plugins.tools.image_fitting import fit_message

    fitted = fit_message(message, ctx)
    return None if fitted is message else fitted


@hookimpl(trylast=True)
def after_tool_call(result, event, ctx):
    """Any tool's result images fitted, after the other handlers changed the result."""
    from pi_plugins.tools.image_fitting import fit_tool_images

    content = fit_tool_images(list(result.content or []), ctx)
    if content is None:
        return None
    import attrs

    return attrs.evolve(result, content=content)


@hookimpl
def session_start(event, ctx):
    """On ``/reload``, the tools newly named in ``defaultTools`` come on, as in pi 1.6."""
    if getattr(event, "reason", None) == "reload":
        from pi_plugins.cli.tool_selection import enable_new_default_tools

        enable_new_default_tools(ctx)


__all__ = ["ALL_TOOLS", "DEFAULT_ACTIVE_TOOLS", "after_tool_call", "before_agent_start", "builtin_tools", "message_end",
           "register_tools", "session_start"]

"""What pi 1.6 tells the commands it starts about itself: ``PI_CODING_AGENT=true`` and
``AI_AGENT=pi`` (so tools can see an agent launched them), and the session's
``PI_SESSION_ID``, ``PI_SESSION_FILE`` (saved sessions only), ``PI_PROVIDER``,
``PI_MODEL`` and ``PI_REASONING_LEVEL``. Inherited values of the session variables are
dropped first, so a nested pi's command never sees its parent's. Keys stay out (the
``keys`` plugin's rules run before this)."""

from __future__ import annotations

from typing import Any

SESSION_VARIABLES = ("PI_SESSION_ID", "PI_SESSION_FILE", "PI_PROVIDER", "PI_MODEL", "PI_REASONING_LEVEL")


def with_session_environment(env: dict[str, str], ctx: Any) -> dict[str, str]:
    """``env`` with pi's markers and ``ctx``'s session variables (those it knows)."""
    for name in SESSION_VARIABLES:
        env.pop(name, None)
    env["PI_CODING_AGENT"] = "true"
    env["AI_AGENT"] = "pi"
    session = getattr(ctx, "session", None)
    if session is not None:
        env["PI_SESSION_ID"] = str(session.id)
        if session.file:
            env["PI_SESSION_FILE"] = str(session.file)
    model = getattr(ctx, "model", None)
    if model is not None and model.provider:
        env["PI_PROVIDER"], env["PI_MODEL"] = model.provider, model.id
    level = ctx.get_thinking_level() if hasattr(ctx, "get_thinking_level") else None
    if level:
        env["PI_REASONING_LEVEL"] = level
    return env

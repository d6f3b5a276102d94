"""The check before a prompt's first request: a model, and a key for it. The model
plugin's key lookup may hand back an awaitable (an expired sign-in being refreshed);
its refusal is a :class:`MissingAuthError` too."""

from __future__ import annotations

import inspect

from pi_core.protocol.model import is_unknown


class MissingAuthError(RuntimeError):
    """No model, or no key for the model: the prompt stops before any request."""


#: Why no prompt can start when there is no model at all (said before any request).
NO_MODEL = ("No model available: set a provider's API key (for example OPENAI_API_KEY), "
            "add a model to models.json, or pass --model. `pi --list-models` lists models.")


def preflight(get_api_key, auth_problem=None):
    """The harness's check before a prompt's first request, as pi makes it: no model or
    no key is a :class:`MissingAuthError`; an expired sign-in is refreshed first, and a
    refused refresh is the error in pi's words."""

    async def check(model) -> None:
        problem = (NO_MODEL if is_unknown(model) else None) or (auth_problem and auth_problem(model))
        if problem:
            raise MissingAuthError(problem)
        key = get_api_key(model) if get_api_key is not None else None
        if inspect.isawaitable(key):
            await key  # a refused refresh raises a MissingAuthError in pi's words

    return check

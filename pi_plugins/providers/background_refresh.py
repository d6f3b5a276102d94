"""pi 1.6's background catalogue refresh: the catalogues of the providers with a key are
refreshed into ``models-store.json`` while pi runs, never in the way of a start or a prompt.

When, as pi 1.6 does it: once at start-up in the chat and in ``--mode rpc`` (not in
``-p`` or ``--mode json``; a second after the start, :data:`START_DELAY_SECONDS`), when ``/model`` opens, and for the one provider after a
sign-in in the chat (queued after a refresh under way, which may have chosen its
providers before that key existed). A pi.dev catalogue checked within the last four hours is not asked
for again (:func:`pi_plugins.providers.catalogue_refresh.is_fresh`); ``pi update
--models`` asks regardless. Under ``PI_OFFLINE`` (``--offline``) nothing is sent. A
refresh takes at most 15 s, and its failures are silent (the stored and shipped
catalogues stay), as in pi 1.6.

What a refresh stored is published to the running registry at once: the catalogue's
models in it are swapped for the new catalogue's, and models.json and plugins'
registrations are applied over them again (``ModelRegistry.refresh``).
"""

from __future__ import annotations

import asyncio
import os
import weakref
from collections.abc import Mapping
from typing import Any

#: pi 1.6's bound on one background refresh.
TIMEOUT_SECONDS = 15.0

#: How long the start-up refresh waits first, so the start and a first prompt have the
#: processor (its imports, TLS set-up and key look-ups are small, not nothing).
START_DELAY_SECONDS = 1.0

#: The refresh under way for each registry: one at a time, later callers share it (pi's
#: coordinator of interactive refreshes).
_running: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def offline(env: Mapping[str, str] | None = None) -> bool:
    """pi 1.6's switch: ``PI_OFFLINE`` set to anything but the empty string."""
    return bool((os.environ if env is None else env).get("PI_OFFLINE"))


def refresh_in_background(registry: Any, providers: Any = None, delay: float = 0.0) -> asyncio.Task | None:
    """Start refreshing ``registry``'s catalogues (all, or ``providers``) after ``delay``
    seconds, without waiting; the task (shared while one runs), or None offline, without
    a registry, or outside an event loop. The task never raises."""
    if registry is None or not hasattr(registry, "builtin") or offline(registry.env):
        return None
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return None
    running = _running.get(registry)
    if running is not None and not running.done():
        if providers is None:
            return running  # a whole refresh under way serves this one
        # a sign-in's provider: its key may have come after the running refresh chose its
        # providers, so it is asked for once that one ends (queued, as pi 1.6's coordinator)
        work = _after(running, registry, providers)
    else:
        work = _refresh(registry, providers, delay)
    task = loop.create_task(work, name="pi catalogue refresh")
    _running[registry] = task
    return task


async def _after(running: asyncio.Task, registry: Any, providers: Any) -> list[str]:
    try:
        await asyncio.shield(running)
    except asyncio.CancelledError:
        if not running.cancelled():
            raise  # this one was cancelled, not the one it waited for
    except Exception:  # noqa: BLE001 (it never raises; its end is what counts)
        pass
    return await _refresh(registry, providers)


async def _refresh(registry: Any, providers: Any, delay: float = 0.0) -> list[str]:
    if delay > 0:
        await asyncio.sleep(delay)
    from pi_plugins.providers.catalogue import builtin_models
    from pi_plugins.providers.catalogue_refresh import refresh

    before = builtin_models()  # the catalogue the registry holds now
    try:
        failures = await asyncio.wait_for(
            refresh(registry.agent_dir, registry.env, force=False, registry=registry, providers=providers),
            TIMEOUT_SECONDS)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # silent, as pi 1.6: the stored catalogue stays in use
        return [f"{type(exc).__name__}: {exc}"]
    publish(registry, before)
    return failures


def publish(registry: Any, before: list) -> None:
    """Swap the catalogue's models in ``registry`` (``before``: the catalogue it was given)
    for the store's newest, keeping every other plugin's models where they were."""
    from pi_plugins.providers.catalogue import builtin_models

    old = {id(model) for model in before}
    fresh = builtin_models()
    if {id(model) for model in fresh} == old:
        return  # nothing new was stored
    merged: list = []
    for model in registry.builtin:
        if id(model) in old:
            if fresh:
                merged.extend(fresh)
                fresh = []
        else:
            merged.append(model)
    registry.builtin = merged + fresh
    registry.refresh()


def refresh_notice(failures: list[str], then: str) -> str | None:
    """pi 1.6's word on a refresh that ended with ``failures`` (``"provider: why"``), as
    ``/model`` says it (``then``: "showing" in the list, "searching" for a name); None
    when every catalogue came."""
    if any("timed out" in failure or failure.startswith("TimeoutError") for failure in failures):
        return f"Model refresh timed out; {then} cached models."
    names = [failure.split(":", 1)[0] for failure in failures]
    if len(names) == 1:
        return f"Could not refresh {names[0]}; {then} cached models."
    if names and then == "showing":
        return f"Could not refresh {len(names)} model catalogs ({', '.join(names)}); {then} cached models."
    return f"Could not refresh {', '.join(names)}; {then} cached models." if names else None


async def stop(registry: Any) -> None:
    """Cancel ``registry``'s refresh under way (the process is leaving)."""
    task = _running.pop(registry, None) if registry is not None else None
    if task is not None and not task.done():
        task.cancel()
        try:
            await task
        except BaseException:  # noqa: BLE001 (its end is all that matters here)
            pass

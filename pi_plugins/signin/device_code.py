"""Polling a device authorization (RFC 8628) until the user has entered the code, by
pi 1.6's rules for every device-code sign-in (Codex, xAI, Kimi Code, Meta, Radius): at
least a second between polls, five when the server names no interval, five more (or the
server's new interval) after each ``slow_down``, and pi's words when the code runs out.
Each flow gives one ``poll()`` that reads its server's answer as a :class:`Poll`."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from attrs import define

from pi_plugins.signin.oauth_kit import LoginCallbacks, LoginCancelled, SignInError

#: Seconds between polls at the least (pi's MINIMUM_INTERVAL_MS).
MINIMUM_INTERVAL = 1.0
#: RFC 8628 3.2: the interval when the server names none.
DEFAULT_INTERVAL = 5.0
#: RFC 8628 3.5: what a ``slow_down`` adds when it names no interval.
SLOW_DOWN_STEP = 5.0
TIMED_OUT = "Device flow timed out"
SLOWED_AND_TIMED_OUT = ("Device flow timed out after one or more slow_down responses. This is often "
                        "caused by clock drift in WSL or VM environments. Please sync or restart the VM "
                        "clock and try again.")


@define
class Poll:
    """One answer of the token endpoint: ``complete`` (with ``value``), ``pending``,
    ``slow_down`` (maybe with the server's new ``interval``) or ``failed`` (``message``)."""

    status: str
    value: Any = None
    message: str = ""
    interval: float | None = None


def positive(value: Any) -> float | None:
    """A positive finite number of seconds, or None (a missing or malformed field)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if 0 < value < float("inf") else None


async def poll_device_flow(poll: Callable[[], Awaitable[Poll]], callbacks: LoginCallbacks, *,
                           interval: float | None, expires_in: float | None,
                           wait_first: bool = False) -> Any:
    """Call ``poll`` until it completes (its value), fails (:class:`SignInError`), the
    code expires or the user cancels (:class:`LoginCancelled`)."""
    deadline = time.monotonic() + expires_in if expires_in is not None else float("inf")
    step = max(MINIMUM_INTERVAL, interval if interval is not None else DEFAULT_INTERVAL)
    slowed = 0
    if wait_first:
        await _sleep(min(step, max(0.0, deadline - time.monotonic())), callbacks)
    while time.monotonic() < deadline:
        if callbacks.cancelled():
            raise LoginCancelled()
        answer = await poll()
        if answer.status == "complete":
            return answer.value
        if answer.status == "failed":
            raise SignInError(answer.message)
        if answer.status == "slow_down":
            slowed += 1
            asked = positive(answer.interval)
            step = max(MINIMUM_INTERVAL, asked if asked is not None else step + SLOW_DOWN_STEP)
        left = deadline - time.monotonic()
        if left <= 0:
            break
        await _sleep(min(step, left), callbacks)
    raise SignInError(SLOWED_AND_TIMED_OUT if slowed else TIMED_OUT)


async def _sleep(seconds: float, callbacks: LoginCallbacks) -> None:
    """Wait, waking now and then to notice a cancelled sign-in."""
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        if callbacks.cancelled():
            raise LoginCancelled()
        await asyncio.sleep(min(left, 0.2))

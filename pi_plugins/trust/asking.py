"""pi's answers to the trust question and the question itself, word for word, and the
``project_trust`` event: imported where a decision asks (the chat's question, ``/trust``,
a plugin's answer), not by a start that decides without asking."""

from __future__ import annotations

import os

from pi_core.protocol.records import record
from pi_plugins.trust.policy import canonical


@record(frozen=True)
class TrustOption:
    """One answer of the trust question: its label, whether it trusts, what it saves."""

    label: str
    trusted: bool
    updates: tuple = ()


def trust_options(cwd: str | os.PathLike, *, session_only: bool = True) -> list[TrustOption]:
    """pi's answers, in pi's order and words (the chat's question and ``/trust``)."""
    here = canonical(cwd)
    parent = os.path.dirname(here)
    options = [TrustOption("Trust", True, ((here, True),))]
    if parent != here:
        options.append(TrustOption(f"Trust parent folder ({parent})", True, ((parent, True), (here, None))))
    if session_only:
        options.append(TrustOption("Trust (this session only)", True))
    options.append(TrustOption("Do not trust", False, ((here, False),)))
    if session_only:
        options.append(TrustOption("Do not trust (this session only)", False))
    return options


def question(cwd: str | os.PathLike) -> str:
    """pi 1.6's question, word for word (its ``formatProjectTrustPrompt``)."""
    return (f"Trust project folder?\n{canonical(cwd)}\n\nThis allows pi to load .pi settings and "
            "resources, install missing project packages, and execute project extensions.")


@record
class ProjectTrustEvent:
    """What ``project_trust`` handlers receive: the folder being decided."""

    cwd: str
    type: str = "project_trust"

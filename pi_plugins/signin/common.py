"""What the shell's and the chat's sign-in share: which providers there are, where
auth.json is, and opening the browser where there is one."""

from __future__ import annotations

import os
from pathlib import Path

from pi_plugins.models.auth import AuthStorage
from pi_plugins.signin.flows import SIGN_INS, SignIn


def sign_ins(agent_dir: Path | None = None) -> dict[str, SignIn]:
    """Every sign-in by provider: the built-in ones and one for each Radius gateway of
    models.json (``/login my-radius`` signs in at that gateway, as pi 1.6)."""
    from pi_core.paths import agent_dir as default_agent_dir
    from pi_plugins.signin.radius import gateway_sign_ins

    return {**SIGN_INS, **gateway_sign_ins(agent_dir or default_agent_dir())}


def auth_storage(agent_dir: Path | None = None) -> AuthStorage:
    from pi_core.paths import agent_dir as default_agent_dir

    return AuthStorage((agent_dir or default_agent_dir()) / "auth.json", sign_ins=sign_ins(agent_dir))


def known_providers(agent_dir: Path | None = None) -> list[str]:
    """Every provider of the built-in catalogue and of models.json, and the sign-ins'."""
    from pi_core.paths import agent_dir as default_agent_dir
    from pi_plugins.models.models_json import load_models_json
    from pi_plugins.providers.catalogue import builtin_models

    names = dict.fromkeys(m.provider for m in builtin_models())
    names.update(dict.fromkeys(sign_ins(agent_dir)))
    try:
        config = load_models_json((agent_dir or default_agent_dir()) / "models.json") or {}
    except ValueError:
        config = {}
    names.update(dict.fromkeys((config.get("providers") or {}) if isinstance(config, dict) else {}))
    return sorted(names)


def display_name(provider: str, agent_dir: Path | None = None) -> str:
    flow = sign_ins(agent_dir).get(provider)
    return flow.name if flow is not None else provider


def copilot_model_ids() -> list[str]:
    """The Copilot models a new sign-in enables (pi enables every one it knows)."""
    from pi_plugins.providers.catalogue import builtin_models

    return [m.id for m in builtin_models() if m.provider == "github-copilot"]


def device_id(agent_dir: Path | None = None) -> str:
    """This installation's id (``deviceId`` in the global settings.json, made once), which
    Sign in with ChatGPT names the installation by, as pi 1.6 does."""
    import uuid

    from pi_core.app.settings import Settings
    from pi_core.paths import agent_dir as default_agent_dir

    home = agent_dir or default_agent_dir()
    settings = Settings.load(os.getcwd(), home)
    known = settings.global_data.get("deviceId")
    if isinstance(known, str) and known:
        return known
    made = str(uuid.uuid4())
    settings.remember("deviceId", made)
    return made


def login_options(provider: str, agent_dir: Path | None = None) -> dict:
    """What a provider's sign-in needs from the front end besides the callbacks."""
    if provider == "github-copilot":
        return {"model_ids": copilot_model_ids()}
    if provider == "openai":
        return {"device_id": device_id(agent_dir)}
    return {}


def method_labels(provider: str, agent_dir: Path | None = None) -> tuple[str, str]:
    """pi 1.6's two ways in for a provider with both: its sign-in's label (or "Sign in
    with an account") and "Sign in with an API key"."""
    flow = sign_ins(agent_dir).get(provider)
    return (getattr(flow, "login_label", None) or "Sign in with an account", "Sign in with an API key")

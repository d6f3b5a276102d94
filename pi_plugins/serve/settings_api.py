"""``pi serve``'s settings view on the server: the defaults a new session starts with
(pi's ``defaultProvider``, ``defaultModel``, ``defaultThinkingLevel``) and provider keys,
stored in ``auth.json`` as ``pi auth`` stores them.

The defaults are saved where pi 1.6's ``/settings`` saves them, the user's settings.json
in the agent dir, or, when asked for (``"scope": "project"``), the session folder's
``.pi/settings.json``, which overrides the user's in that folder (pi 1.6's
docs/settings.md); never in a project that is not trusted. A folder trusted only because
its ``.pi`` holds nothing to protect yet counts as untrusted here (unless
``defaultProjectTrust`` is ``"always"``): the file would make it one that needs trust,
and its settings would then be skipped. A bare ``.pi`` below a folder saved as trusted is
trusted by that decision, as in pi. A file that is not valid
JSON is refused and left as it is.

- ``GET /api/settings?cwd=F``: the defaults in effect in folder F (by default the one
  ``pi serve`` runs in), those its project file sets, both files, whether F is trusted,
  the models and each provider's key state (whether one is stored; never the key);
- ``PUT /api/settings``: ``{"defaultModel": "provider/id", "defaultThinkingLevel": L,
  "scope": "user"|"project", "cwd": F}``;
- ``PUT /api/providers/{provider}/key`` ``{"key": K}``, ``DELETE`` the same: a key.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from pi_plugins.serve.sessions import RequestError, SessionHost

THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh")
#: The settings the view sets, in either file.
DEFAULTS = ("defaultProvider", "defaultModel", "defaultThinkingLevel")
SCOPES = ("user", "project")


async def json_object(request: Request) -> dict:
    """The request's body, which must be a JSON object (else a 400)."""
    try:
        body = await request.json()
    except ValueError:
        raise RequestError(400, "the body must be a JSON object") from None
    if not isinstance(body, dict):
        raise RequestError(400, "the body must be a JSON object")
    return body


def update_settings_file(path: Path, changes: dict) -> None:
    """Set ``changes`` in the settings file ``path``, keeping the rest of it; written
    whole through a temp file. A file that is not a JSON object is refused, untouched."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = "{}"
    except OSError as exc:
        raise RequestError(500, f"{path}: cannot read: {exc}") from None
    try:
        data = json.loads(text) if text.strip() else {}
    except ValueError as exc:
        raise RequestError(409, f"{path} is not valid JSON ({exc}); fix it first, it was left as is") from None
    if not isinstance(data, dict):
        raise RequestError(409, f"{path}: expected a JSON object; fix it first, it was left as is")
    data.update(changes)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        temp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        os.replace(temp, path)
    except OSError as exc:
        raise RequestError(500, f"{path}: cannot save: {exc}") from None


def settings_routes(host: SessionHost) -> list[Route]:
    env = host.env
    registry = env.registry

    def folder(given: object) -> str:
        """The folder whose settings are meant: a session's, else the server's."""
        if given is None or given == "":
            return host.cwd
        if not isinstance(given, str) or not os.path.isabs(given) or not os.path.isdir(given):
            raise RequestError(400, f"cwd {given!r} is not an absolute path to a folder")
        return os.path.realpath(given)

    def load(cwd: str):
        """Both files as they are now (not the copy a live session holds)."""
        from pi_core.app.settings import Settings

        return Settings.load(cwd, env.agent_dir, project_trusted=env.approve)

    def project_writable(cwd: str, chosen) -> bool:
        """Trusted still once the file is there: by a decision (``-a``, one saved for it
        or a parent folder, a plugin's), or, where it has nothing to protect yet, by
        ``defaultProjectTrust: "always"``; not merely for having nothing to protect."""
        from pi_core.app.settings import quiet_trust
        from pi_plugins.trust.policy import default_policy

        if not chosen.project_trusted:
            return False
        decision = quiet_trust(cwd, env.agent_dir, chosen.global_data, approve=env.approve)
        if getattr(decision, "source", None) == "no-resources":
            return default_policy(chosen.global_data)[0] == "always"
        return bool(decision.trusted)

    def state(cwd: str) -> dict:
        registry.refresh()
        chosen = load(cwd)
        stored = set(registry.auth.providers)
        assert chosen.global_dir is not None and chosen.project_dir is not None  # loaded from files
        return {
            **{key: chosen.get(key) for key in DEFAULTS},
            "cwd": cwd,
            "project": {key: chosen.project_data[key] for key in DEFAULTS if key in chosen.project_data},
            "projectTrusted": project_writable(cwd, chosen),
            "userFile": str(Path(chosen.global_dir) / "settings.json"),
            "projectFile": str(Path(chosen.project_dir) / "settings.json"),
            "models": [f"{m.provider}/{m.id}" for m in registry.models],
            "available": [f"{m.provider}/{m.id}" for m in registry.available()],
            "providers": [{"name": name, "hasKey": name in stored} for name in registry.providers],
        }

    async def get_settings(request: Request) -> Response:
        return JSONResponse(await asyncio.to_thread(state, folder(request.query_params.get("cwd"))))

    async def put_settings(request: Request) -> Response:
        body = await json_object(request)
        model, level = body.get("defaultModel"), body.get("defaultThinkingLevel")
        scope = body.get("scope", "user")
        if scope not in SCOPES:
            raise RequestError(400, f"scope must be one of {', '.join(SCOPES)}")
        cwd = folder(body.get("cwd"))
        changes: dict = {}
        if model is not None:
            if not isinstance(model, str) or "/" not in model:
                raise RequestError(400, "defaultModel must be 'provider/id'")
            provider, model_id = model.split("/", 1)
            if registry.find(provider, model_id) is None:
                raise RequestError(400, f"no model {model!r}")
            changes.update(defaultProvider=provider, defaultModel=model_id)
        if level is not None:
            if level not in THINKING_LEVELS:
                raise RequestError(400, f"defaultThinkingLevel must be one of {', '.join(THINKING_LEVELS)}")
            changes["defaultThinkingLevel"] = level
        chosen = await asyncio.to_thread(load, cwd)
        if scope == "project":
            if not await asyncio.to_thread(project_writable, cwd, chosen):
                raise RequestError(403, f"{cwd} is not a trusted project: its .pi/settings.json is not written "
                                        "(trust it in pi with /trust first, or save for the user)")
            assert chosen.project_dir is not None
            path = Path(chosen.project_dir) / "settings.json"
        else:
            assert chosen.global_dir is not None
            path = Path(chosen.global_dir) / "settings.json"
        if changes:
            await asyncio.to_thread(update_settings_file, path, changes)
        env.reload_settings()  # new sessions start on the new defaults
        return JSONResponse(await asyncio.to_thread(state, cwd))

    async def put_key(request: Request) -> Response:
        provider = request.path_params["provider"]
        key = (await json_object(request)).get("key")
        if not isinstance(key, str) or not key.strip():
            raise RequestError(400, "key must be a non-empty string")
        try:
            await asyncio.to_thread(registry.auth.set_api_key, provider, key.strip())
        except (OSError, ValueError) as exc:
            raise RequestError(500, f"auth.json: {exc}") from None
        return Response(status_code=204)

    async def delete_key(request: Request) -> Response:
        if not await asyncio.to_thread(registry.auth.remove, request.path_params["provider"]):
            raise RequestError(404, "no key stored for that provider")
        return Response(status_code=204)

    return [
        Route("/api/settings", get_settings, methods=["GET"]),
        Route("/api/settings", put_settings, methods=["PUT"]),
        Route("/api/providers/{provider}/key", put_key, methods=["PUT"]),
        Route("/api/providers/{provider}/key", delete_key, methods=["DELETE"]),
    ]

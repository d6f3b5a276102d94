"""``<agent dir>/models-store.json``: the refreshed model catalogues pi 1.6 keeps, one
entry a provider, which ``pi update --models`` writes (:mod:`.catalogue_refresh`) and
the built-in catalogue lays over its own models when it is loaded.

An entry is pi's: ``{"models": [...], "checkedAt": ms}``, plus ``lastModified`` and
``etag`` for a catalogue from pi.dev. pi's rule for using one: a pi.dev catalogue counts
only when it is newer than the data this program ships (``lastModified`` after the
catalogue's ``generatedAt``) and then adds to or replaces the shipped models by id; the
Radius gateway's and OpenRouter's own lists replace the provider's models outright.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any

FILE_NAME = "models-store.json"

#: Providers whose stored list is theirs alone (an account's catalogue), not an overlay.
REPLACING = ("radius", "openrouter")

_MODEL_FIELDS = ("id", "name", "api", "baseUrl", "reasoning", "input", "cost", "contextWindow", "maxTokens",
                 "inputLimits", "thinkingLevelMap", "compat", "headers")


def store_path(agent_dir: Path) -> Path:
    return agent_dir / FILE_NAME


def read_store(path: Path) -> dict[str, Any]:
    """The entries at ``path``; none when there is no file. A file that is not a JSON
    object is left alone and said so once on stderr: the shipped catalogue still works."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        print(f"Warning: could not read {path}: {exc.strerror or exc}", file=sys.stderr)
        return {}
    try:
        data = json.loads(text) if text.strip() else {}
    except ValueError as exc:
        print(f"Warning: {path} is not valid JSON ({exc}); the built-in model catalogue is used", file=sys.stderr)
        return {}
    if not isinstance(data, dict):
        print(f"Warning: {path} is not a JSON object; the built-in model catalogue is used", file=sys.stderr)
        return {}
    return data


def write_store(path: Path, data: dict[str, Any]) -> None:
    """Replace the file whole (a reader never sees half of it), as pi writes it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=".models-store-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(json.dumps(data, indent=2))
        os.chmod(temporary, 0o600)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def generated_at_ms(document: dict[str, Any]) -> int | None:
    stamp = document.get("generatedAt")
    if not isinstance(stamp, str):
        return None
    try:
        return int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return None


def stored_models(provider: str, entry: Any, generated_at: int | None) -> list[dict] | None:
    """The models an entry gives ``provider`` (chat and other kinds), or None when it
    gives none: a pi.dev catalogue no newer than the shipped one, or a malformed entry."""
    if not isinstance(entry, dict) or not isinstance(entry.get("models"), list):
        return None
    if provider not in REPLACING and not is_gateway_list(entry["models"]):
        modified = entry.get("lastModified")
        if not isinstance(modified, (int, float)) or (generated_at is not None and modified <= generated_at):
            return None
    return [m for m in entry["models"] if isinstance(m, dict) and isinstance(m.get("id"), str)
            and m.get("provider", provider) == provider]


def overlay(document: dict[str, Any], store: dict[str, Any], agent_dir: Path | None = None) -> dict[str, Any]:
    """The catalogue ``document`` with the stored catalogues laid over it (the document
    is changed in place and returned). A Radius gateway's stored list counts only while
    ``agent_dir``'s models.json still names that gateway (pi 1.6 lists no other)."""
    generated_at = generated_at_ms(document)
    gateways: set[str] | None = None  # models.json's, read only when the store has a gateway list
    providers = document["providers"]
    others = document.setdefault("otherModels", {})
    for name, entry in store.items():
        models = stored_models(name, entry, generated_at)
        base = providers.get(name)
        gateway = base is None and is_gateway_list(models)  # a models.json Radius gateway's own list
        if gateway and agent_dir is not None:
            if gateways is None:
                from pi_plugins.providers.catalogue_refresh import radius_gateways

                gateways = set(radius_gateways(agent_dir))
            if name not in gateways:
                continue
        if models is None or (base is None and name not in REPLACING and not gateway):
            continue
        if name == "openrouter" and not models:  # pi 1.6: an empty saved list is the shipped one
            continue
        chat = [_row(m) for m in models if m.get("type", "chat") == "chat"]
        kinds = {m["id"]: m["type"] for m in models if m.get("type", "chat") != "chat"}
        if base is None:
            if not chat:
                continue
            base = providers[name] = {"name": name, "api": chat[0].get("api") or "openai-completions",
                                      "models": []}
            if gateway:
                base["apiKeyEnv"] = "RADIUS_API_KEY"  # pi 1.6: every Radius gateway takes it
        if name in REPLACING or gateway:
            base["models"] = chat
            others[name] = kinds
            continue
        by_id = {row["id"]: i for i, row in enumerate(base["models"])}
        for row in chat:
            if row["id"] in by_id:
                base["models"][by_id[row["id"]]] = row
            else:
                base["models"].append(row)
        if kinds:
            others[name] = {**others.get(name, {}), **kinds}
    return document


def is_gateway_list(models: list[dict] | None) -> bool:
    """A stored list only a Radius gateway's ``/v1/config`` writes: every model on
    ``pi-messages`` (a models.json provider with ``"oauth": "radius"``)."""
    return bool(models) and all(m.get("api") == "pi-messages" for m in models or ())


def _row(model: dict) -> dict:
    return {k: model[k] for k in _MODEL_FIELDS if model.get(k) is not None}

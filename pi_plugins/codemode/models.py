"""codemode's ``models`` global, as pi 1.6's ``docs/codemode.md`` has it: the catalogue
by type (``getModelsOfType``, ``getAvailableOfType``, ``getModelOfType``) and the runs
(``classify``, ``generateImages``). This harness's catalogue holds chat models only, so
the classifier and image lists are empty and a run says which model type it needs, in
pi 1.6's words for a chat model given where a classifier or image model belongs."""

from __future__ import annotations

from typing import Any

from pi_core import Model

TYPES = ("chat", "image", "classifier")
RUNS = {"classify": ("classifier", "a classifier"), "generateImages": ("image", "an image")}


def model_info(model: Model) -> dict:
    """A chat model as pi 1.6 lists it (its catalogue entry's fields, camelCase)."""
    cost = model.cost
    return {"id": model.id, "name": model.name or model.id, "api": model.api, "provider": model.provider,
            "baseUrl": model.base_url, "reasoning": model.reasoning, "input": list(model.input),
            "cost": {"input": cost.input, "output": cost.output, "cacheRead": cost.cache_read,
                     "cacheWrite": cost.cache_write},
            "contextWindow": model.context_window, "maxTokens": model.max_tokens}


class ModelsGlobal:
    """Serves one script's ``models.*`` requests from the session's model registry."""

    def __init__(self, registry: Any) -> None:
        self.registry = registry

    def _chat(self, available: bool) -> list[Model]:
        if self.registry is None:
            return []
        return list(self.registry.available() if available else self.registry.models)

    def answer(self, method: str, args: Any) -> tuple[bool, Any]:
        args = args if isinstance(args, list) else []
        if method in ("getModelsOfType", "getAvailableOfType", "getModelOfType"):
            kind = args[0] if args else None
            if kind not in TYPES:
                return False, f"Unknown model type {kind!r}: use one of {', '.join(map(repr, TYPES))}"
            found = self._chat(method == "getAvailableOfType") if kind == "chat" else []
            if method == "getModelOfType":
                provider, model_id = (args[1:3] + [None, None])[:2]
                match = next((m for m in found if m.provider == provider and m.id == model_id), None)
                return True, model_info(match) if match is not None else None
            provider = args[1] if len(args) > 1 and isinstance(args[1], str) else None
            return True, [model_info(m) for m in found if provider is None or m.provider == provider]
        if method in RUNS:
            return self._run(method, args)
        return False, f"models.{method} is not a function"

    def _run(self, method: str, args: list) -> tuple[bool, Any]:
        kind, article = RUNS[method]
        given = args[0] if args and isinstance(args[0], dict) else {}
        provider, model_id = given.get("provider"), given.get("id")
        chat = next((m for m in self._chat(False) if m.provider == provider and m.id == model_id), None)
        if chat is not None:
            return False, (f'"{provider}/{model_id}" is a chat model, not {article} model. List the {kind} models '
                           f'you can use with models.getAvailableOfType("{kind}").')
        return False, (f'Unknown {kind} model "{provider}/{model_id}". List the {kind} models you can use with '
                       f'models.getAvailableOfType("{kind}").')

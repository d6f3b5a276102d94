"""The harness's model and thinking level, set, clamped and cycled as pi does, and the
providers plugins register at run time."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pi_core.protocol import events
from pi_core.protocol.events import ModelSource
from pi_core.protocol.model import Model
from pi_core.protocol.provider import THINKING_LEVELS

if TYPE_CHECKING:
    from pi_core.app.harness import Harness


def model_default_level(settings, model: Model) -> str | None:
    """pi 1.6's ``modelThinkingLevels``: the level set for this model (``provider/id``),
    used at start-up and on a switch to it when no level is given; ``None``: none set."""
    levels = settings.get("modelThinkingLevels")
    level = levels.get(model.key) if isinstance(levels, dict) else None
    return level if isinstance(level, str) and level else None


class ModelChoice:
    def __init__(self, harness: Harness) -> None:
        self.harness = harness

    async def set_model(self, model: Model, source: ModelSource = "set", persist: bool = False) -> None:
        """Switch models for this session; the thinking level is re-clamped for the new
        one (as pi 1.6: the level ``modelThinkingLevels`` sets for it, else the saved
        default level, else the current one). As pi 1.6, nothing is saved as the next
        run's default unless ``persist`` (the pickers' save key): :meth:`save_default_model`."""
        previous = self.harness.agent.model
        level = (model_default_level(self.harness.ctx.settings, model)
                 or self.harness.ctx.settings.get("defaultThinkingLevel") or self.harness.thinking_level or "medium")
        self.harness.agent.model = model
        if previous.key != model.key:
            self.harness.session.append_model_change(model.provider, model.id)
        if persist:
            self.save_default_model(model)
        await self.set_thinking_level(level)
        await self.harness.notify(events.ModelSelect(model=model, previous_model=previous, source=source))

    def save_default_model(self, model: Model) -> None:
        """pi 1.6's saved default model (``defaultProvider``, ``defaultModel``); where the
        session's models are scoped (``--models``, ``enabledModels``) and the scope lacks
        it, it joins the scope, as 1.6's ``_addPersistedDefaultToNonEmptyScope`` does: the
        cycle's list now, and ``enabledModels`` (saved) when that is set and does not
        name ``provider/id`` already (whatever the case)."""
        settings = self.harness.ctx.settings
        remember = getattr(settings, "remember", None)
        if remember is None:
            return
        remember("defaultProvider", model.provider)
        remember("defaultModel", model.id)
        scoped = self.harness.scoped_models
        if not scoped or any(m.key == model.key for m, _ in scoped):
            return
        self.harness.scoped_models = [*scoped, (model, None)]
        enabled = settings.get("enabledModels")
        if isinstance(enabled, list) and enabled and not any(
                isinstance(p, str) and p.lower() == model.key.lower() for p in enabled):
            remember("enabledModels", [*enabled, model.key])

    async def set_thinking_level(self, level: str) -> None:
        """Set the level, clamped to what the model takes; a change is recorded in the
        session, sent as ``thinking_level_changed`` and told to the plugins (and, as pi
        1.6, not saved as the next run's default)."""
        previous = self.harness.agent.thinking_level
        level = self.clamp_thinking_level(level)
        self.harness.agent.thinking_level = level
        if previous == level:
            return
        self.harness.session.append_thinking_level_change(level)
        await self.harness.emit(events.ThinkingLevelChanged(level=level))
        await self.harness.notify(events.ThinkingLevelSelect(level=level, previous_level=previous))

    def thinking_levels(self) -> list[str]:
        """The levels this model takes (only "off" for a model without reasoning)."""
        if not self.harness.model.reasoning:
            return ["off"]
        mapped = self.harness.model.thinking_level_map or {}
        levels = [level for level in THINKING_LEVELS[:-2] if not (level in mapped and mapped[level] is None)]
        if (self.harness.model.compat or {}).get("supportsXhigh") or mapped.get("xhigh") is not None:
            levels.append("xhigh")
        if mapped.get("max") is not None:  # pi 1.6's level above xhigh, where a model names it
            levels.append("max")
        return levels or ["off"]

    def clamp_thinking_level(self, level: str) -> str:
        """``level`` if the model takes it, else the nearest higher one it takes, else
        the nearest lower one (pi's order)."""
        available = self.harness.thinking_levels()
        if level in available:
            return level
        if level not in THINKING_LEVELS:
            return available[0]
        index = THINKING_LEVELS.index(level)
        for candidate in (*THINKING_LEVELS[index:], *reversed(THINKING_LEVELS[:index])):
            if candidate in available:
                return candidate
        return available[0]

    async def cycle_model(self, step: int = 1) -> tuple[Model, str, bool] | None:
        """Switch to the next model (of ``--models`` when given, else of every available
        one); returns (model, thinking level, scoped?), or None when there is only one."""
        scoped = bool(self.harness.scoped_models)
        choices = self.harness.scoped_models or [(m, None) for m in self.harness.available_models()]
        if len(choices) < 2:
            return None
        keys = [m.key for m, _ in choices]
        current = keys.index(self.harness.model.key) if self.harness.model.key in keys else -1
        model, level = choices[(current + step) % len(choices)]
        await self.set_model(model, source="cycle")
        if level is not None:
            await self.set_thinking_level(level)
        return model, self.harness.thinking_level, scoped

    async def cycle_thinking_level(self) -> str | None:
        levels = self.harness.thinking_levels()
        if len(levels) < 2:
            return None
        current = levels.index(self.harness.thinking_level) if self.harness.thinking_level in levels else -1
        await self.set_thinking_level(levels[(current + 1) % len(levels)])
        return self.harness.thinking_level

    def register_provider(self, name: str, config: dict) -> None:
        """pi's ``registerProvider`` (:meth:`ModelRegistry.register_provider`), now."""
        if self.harness.model_registry is None:
            raise RuntimeError("register_provider: this session has no model registry")
        self.harness.model_registry.register_provider(name, config)
        self._rescope()

    def unregister_provider(self, name: str) -> bool:
        """pi's ``unregisterProvider`` (:meth:`ModelRegistry.unregister_provider`), now;
        False when it had none."""
        if self.harness.model_registry is None or not self.harness.model_registry.unregister_provider(name):
            return False
        self._rescope()
        return True

    def _rescope(self) -> None:
        """The scoped cycle as the registry now has its models (gone ones leave it)."""
        registry = self.harness.model_registry
        self.harness.scoped_models = [(found, level) for m, level in self.harness.scoped_models
                              if (found := registry.find(m.provider, m.id)) is not None]

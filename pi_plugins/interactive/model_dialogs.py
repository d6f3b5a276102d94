"""``/model`` and ``/thinking``, as pi 1.6 has them: Enter switches for this session,
``app.models.save`` / ``app.thinking.save`` (Ctrl+S) switches and saves the choice as the
default for new sessions (``defaultProvider``/``defaultModel``,
``defaultThinkingLevel``)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from rich.text import Text

from pi_plugins.interactive.dialogs import Item, ListDialog
from pi_plugins.interactive.keys import UnbindableKey, key_sequences

if TYPE_CHECKING:
    from pi_plugins.interactive.port import ChatPort

#: pi 1.6's words for each level in the ``/thinking`` list.
LEVEL_DESCRIPTIONS = {
    "off": "No reasoning", "minimal": "Very brief reasoning (~1k tokens)", "low": "Light reasoning (~2k tokens)",
    "medium": "Moderate reasoning (~8k tokens)", "high": "Deep reasoning (~16k tokens)",
    "xhigh": "Extra-high reasoning (~32k tokens)", "max": "Maximum reasoning",
}


def _words(label: str) -> list[str]:
    return [w for w in re.split(r"[\W_]+", label.lower()) if w]


def distinct_name(model: Any) -> str | None:
    """The model's name when it says something its id does not (a renamed ``modelOverrides``
    entry, "MiniMax M3 [work proxy]"), else None: pi 1.6 shows such a name beside the id
    in ``/model`` and ``/scoped-models``. A word is said by the id when it is one of the
    id's words or, longer than one letter, part of the id with its separators dropped."""
    name = (getattr(model, "name", None) or "").strip()
    if not name:
        return None
    id_words = _words(model.id)
    joined = "".join(id_words)
    said = all(w in id_words or (len(w) > 1 and w in joined) for w in _words(name))
    return None if said else name


def _save_keys(tui: ChatPort, action: str) -> dict[str, Any]:
    """The list keys of ``action`` (keybindings.json may move it), each ending the
    dialog with ``("default", value)``."""

    def save(dialog: ListDialog) -> None:
        if dialog.current is not None:
            dialog.done(("default", dialog.current.value))

    keys: dict[str, Any] = {}
    for spec in tui.keybindings.keys(action):
        try:
            keys.update({" ".join(sequence): save for sequence in key_sequences(spec)})
        except UnbindableKey:
            continue
    return keys


def _hint(tui: ChatPort, save_action: str) -> str:
    keys = tui.keybindings
    return (f"{keys.hint('tui.select.confirm')} to select · {keys.hint(save_action)} to set as default · "
            f"{keys.hint('tui.select.cancel')} to cancel")


async def model(tui: ChatPort, args: str) -> None:
    """``/model [search]``: an exact match switches at once, else the selector opens."""
    harness = tui.harness
    from pi_plugins.providers.background_refresh import refresh_in_background

    if harness.model_registry is not None:
        harness.model_registry.refresh()  # models.json and auth.json as they are now, as pi 1.6's /model
    refreshing = refresh_in_background(harness.model_registry)  # as pi 1.6's /model, in the background
    models = harness.available_models()
    if args:
        exact = _exact(models, args)
        if not exact and refreshing is not None and not refreshing.done():
            exact = await _after_refresh(tui, refreshing, args)  # pi 1.6 waits for a name it lacks
            models = harness.available_models()
        if len(exact) == 1:
            await _switch_model(tui, exact[0])
            return
    current = harness.model.key

    def items_of(models: list) -> list[Item]:
        return [Item(Text.assemble(m.id, (f" ({distinct_name(m)})" if distinct_name(m) else "", "muted"),
                                   (f" [{m.provider}]", "muted"), (" ✓" if m.key == current else "", "success")),
                     m, search_text=f"{m.provider}/{m.id} {m.name}") for m in models]

    items = items_of(models)
    if not items:
        tui.add_text("No models available: add one to models.json or set an API key", "warning")
        return
    selected = next((i for i, m in enumerate(models) if m.key == current), 0)
    dialog = ListDialog(
        tui.painter, "Select a model", items, search=True, query=args, selected=selected,
        keys=_save_keys(tui, "app.models.save"), hint=_hint(tui, "app.models.save"),
        detail=lambda item: f"Model name: {item.value.name or item.value.id}")
    if refreshing is not None and not refreshing.done():
        dialog.subtitle = "Refreshing model catalogs…"

        def landed(task) -> None:  # the list is redrawn with the new catalogue, as pi 1.6's
            from pi_plugins.providers.background_refresh import refresh_notice

            if task.cancelled():
                return
            dialog.subtitle = refresh_notice(task.result(), "showing") or "Model catalogs refreshed."
            dialog.set_items(items_of(harness.available_models()),
                             select_value=dialog.current.value if dialog.current else None)
            tui.invalidate()

        refreshing.add_done_callback(landed)
    chosen = await tui.show_dialog(dialog)
    if isinstance(chosen, tuple):  # Ctrl+S: this model, and the default for new sessions
        chosen = chosen[1]
        await tui.harness.set_model(chosen, persist=True)  # and into a non-empty scope, as 1.6
        tui.add_text(f"Default model: {chosen.provider}/{chosen.id}", "dim")
    elif chosen is not None:
        await _switch_model(tui, chosen)


def _exact(models: list, name: str) -> list:
    return [m for m in models if name in (m.key, m.id, f"{m.provider}/{m.id}")]


async def _after_refresh(tui: ChatPort, refreshing, name: str) -> list:
    """Wait for the catalogue refresh under way (bounded by its own 15 s), saying so and
    what failed in pi 1.6's words; the models that then match ``name`` exactly."""
    from pi_plugins.providers.background_refresh import refresh_notice

    tui.add_text("Refreshing model catalogs…", "dim")
    notice = refresh_notice(await refreshing, "searching")
    if notice:
        tui.add_text(notice, "warning")
    return _exact(tui.harness.available_models(), name)


async def _switch_model(tui: ChatPort, chosen) -> None:
    await tui.harness.set_model(chosen)
    tui.add_text(f"Model: {chosen.provider}/{chosen.id}", "dim")


async def thinking(tui: ChatPort, args: str) -> None:
    """``/thinking [level]``: a level the model takes is set at once, else the list opens."""
    harness = tui.harness
    levels = harness.thinking_levels()
    level = args.strip().lower()
    if level:
        if level not in levels:
            tui.add_text(f"Unknown thinking level {level!r} for this model; it takes: {', '.join(levels)}",
                         "error")
            return
        await harness.set_thinking_level(level)
        tui.add_text(f"Thinking level: {harness.thinking_level}", "dim")
        return
    current, default = harness.thinking_level, tui.settings.get("defaultThinkingLevel") or "medium"
    items = [Item(Text(f"{'✓ ' if name == current else '  '}{name:<9}"), name,
                  description=LEVEL_DESCRIPTIONS.get(name, "") + (" · default" if name == default else ""))
             for name in levels]
    chosen = await tui.show_dialog(ListDialog(
        tui.painter, "Thinking Level", items, search=True,
        subtitle=f"{tui.keybindings.hint('app.thinking.cycle')} cycles thinking levels in-session",
        selected=levels.index(current) if current in levels else 0,
        keys=_save_keys(tui, "app.thinking.save"), hint=_hint(tui, "app.thinking.save")))
    if isinstance(chosen, tuple):  # Ctrl+S: this level, and the default for new sessions
        await harness.set_thinking_level(chosen[1])
        tui.settings.remember("defaultThinkingLevel", harness.thinking_level)
        tui.add_text(f"Default thinking level: {harness.thinking_level}", "dim")
    elif chosen is not None:
        await harness.set_thinking_level(chosen)
        tui.add_text(f"Thinking level: {harness.thinking_level}", "dim")

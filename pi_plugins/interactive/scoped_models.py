"""``/scoped-models``: which models Ctrl+P cycles through, and in what order, as pi's
selector does. Changes hold for this session at once; ``app.models.save`` writes them
to settings.json as ``enabledModels``. Enter toggles a model, ``app.models.enableAll``
and ``app.models.clearAll`` act on all (or all matching what is typed),
``app.models.toggleProvider`` on the selected model's provider, ``app.models.reorderUp``
and ``reorderDown`` move an enabled one in the cycle."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from pi_plugins.interactive.dialogs import Item, ListDialog
from pi_plugins.interactive.keys import UnbindableKey, key_sequences
from pi_plugins.interactive.model_dialogs import distinct_name

if TYPE_CHECKING:
    from pi_plugins.interactive.port import ChatPort


def _key(model) -> str:
    return f"{model.provider}/{model.id}"


class ScopedModels:
    def __init__(self, tui: ChatPort) -> None:
        self.tui = tui
        self.models = {_key(m): m for m in tui.harness.available_models()}
        self.all_ids = list(self.models)
        scoped = tui.harness.scoped_models
        self.enabled: list[str] | None = [_key(m) for m, _ in scoped if _key(m) in self.models] if scoped else None
        self.levels = {_key(m): level for m, level in scoped}
        self.dirty = False

    def is_enabled(self, model_id: str) -> bool:
        return self.enabled is None or model_id in self.enabled

    def ordered(self) -> list[str]:
        if self.enabled is None:
            return self.all_ids
        return [*self.enabled, *[i for i in self.all_ids if i not in self.enabled]]

    def items(self) -> list[Item]:
        items = []
        for model_id in self.ordered():
            on = self.is_enabled(model_id)
            model = self.models[model_id]
            name = distinct_name(model)
            label = Text.assemble(("✓ " if on else "  ", "success"), model_id, (f" ({name})" if name else "", "muted"))
            items.append(Item(label, model_id, search_text=f"{model.id} {model.provider} {model.name}"))
        return items

    def footer(self) -> str:
        keys = self.tui.keybindings
        count = "all enabled" if self.enabled is None else f"{len(self.enabled)}/{len(self.all_ids)} enabled"
        parts = ["enter toggle", f"{keys.hint('app.models.enableAll')} all", f"{keys.hint('app.models.clearAll')} clear",
                 f"{keys.hint('app.models.toggleProvider')} provider",
                 f"{keys.hint('app.models.reorderUp')}/{keys.hint('app.models.reorderDown')} reorder",
                 f"{keys.hint('app.models.save')} save", count]
        return " · ".join(parts) + (" (unsaved)" if self.dirty else "")

    # ------------------------------------------------------------ changes

    def _apply(self) -> None:
        """The session's cycle follows at once (all models when none is scoped)."""
        ids = self.enabled if self.enabled is not None else []
        self.tui.harness.scoped_models = [(self.models[i], self.levels.get(i)) for i in ids]
        self.dirty = True

    def _set(self, targets: list[str] | None, on: bool) -> None:
        targets = targets or self.all_ids
        if on:
            if self.enabled is None:
                return
            self.enabled += [i for i in targets if i not in self.enabled]
            if len(self.enabled) == len(self.all_ids):
                self.enabled = None
        else:
            current = self.enabled if self.enabled is not None else list(self.all_ids)
            self.enabled = [i for i in current if i not in targets]
        self._apply()

    def toggle(self, model_id: str) -> None:
        if self.enabled is None:
            self.enabled = [model_id]
        elif model_id in self.enabled:
            self.enabled.remove(model_id)
        else:
            self.enabled.append(model_id)
        self._apply()

    def move(self, model_id: str, step: int) -> bool:
        if self.enabled is None or model_id not in self.enabled:
            return False
        index = self.enabled.index(model_id)
        if not 0 <= index + step < len(self.enabled):
            return False
        self.enabled[index], self.enabled[index + step] = self.enabled[index + step], self.enabled[index]
        self._apply()
        return True

    def save(self) -> None:
        self.tui.settings.remember("enabledModels", list(self.enabled) if self.enabled is not None else None)
        self.dirty = False

    # ------------------------------------------------------------ the dialog

    async def show(self) -> None:
        def refresh(dialog: ListDialog, select: str | None = None) -> None:
            dialog.hint = self.footer()
            dialog.set_items(self.items(), select or (dialog.current.value if dialog.current else None))

        def shown(dialog: ListDialog) -> list[str] | None:
            return [i.value for i in dialog.items] if dialog.search.text else None

        def on_current(change):
            def action(dialog: ListDialog) -> None:
                if dialog.current is not None:
                    change(dialog.current.value)
                    refresh(dialog, dialog.current.value)
            return action

        def provider(model_id: str) -> None:
            name = self.models[model_id].provider
            ids = [i for i in self.all_ids if self.models[i].provider == name]
            self._set(ids, not all(self.is_enabled(i) for i in ids))

        def everything(on: bool):
            def action(dialog: ListDialog) -> None:
                self._set(shown(dialog), on)
                refresh(dialog)
            return action

        def save(dialog: ListDialog) -> None:
            self.save()
            refresh(dialog)

        actions = {
            "app.models.enableAll": everything(True), "app.models.clearAll": everything(False),
            "app.models.toggleProvider": on_current(provider), "app.models.save": save,
            "app.models.reorderUp": on_current(lambda i: self.move(i, -1)),
            "app.models.reorderDown": on_current(lambda i: self.move(i, 1)),
        }
        keys = {"enter": on_current(self.toggle)}
        for action_id, handler in actions.items():
            for spec in self.tui.keybindings.keys(action_id):
                try:
                    keys.update({" ".join(seq): handler for seq in key_sequences(spec)})
                except UnbindableKey:
                    continue
        keybindings = self.tui.keybindings
        dialog = ListDialog(self.tui.painter, "Model Configuration", self.items(), search=True, keys=keys,
                            subtitle=f"Session-only. {keybindings.hint('app.models.save')} to save to settings.",
                            max_visible=8)
        dialog.hint = self.footer()
        await self.tui.show_dialog(dialog)


async def scoped_models(tui: ChatPort, args: str) -> None:
    await ScopedModels(tui).show()

"""What the editor's keys do, as pi's editor does them: Enter sends (or completes a
command first), Alt+Enter queues a follow-up, Esc closes the menu, stops what runs or
(twice) opens the tree, Ctrl+C clears and twice quits, Ctrl+V attaches an image; and the
editor's text set, taken and remembered in the prompt history.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from pi_plugins.interactive import commands as builtin
from pi_plugins.interactive.blocks import user_text

if TYPE_CHECKING:
    from pi_plugins.interactive.app import InteractiveApp

DOUBLE_PRESS = 0.5  # seconds: Ctrl+C twice quits, Esc twice opens the tree


class EditorActions:
    def __init__(self, tui: InteractiveApp) -> None:
        self.tui = tui
        self._last_ctrl_c = 0.0
        self._last_escape = 0.0
        self._pasted_images: list = []

    def enter(self) -> None:
        tui = self.tui
        buffer = tui.editor.buffer
        state = buffer.complete_state
        if state is not None:
            completion = state.current_completion
            typed = buffer.text
            # pi's menus always highlight an item (the first at the start), so Enter takes
            # it: a command name, a command's argument, a file; a command typed whole runs.
            whole_command = typed.startswith("/") and " " not in typed and self._is_command(typed[1:])
            if completion is None and state.completions and not whole_command:
                completion = state.completions[0]
            if completion is not None:
                buffer.apply_completion(completion)
                if not buffer.text.startswith("/") or " " in buffer.text.strip():
                    return
            else:
                buffer.cancel_completion()
        text = buffer.text
        if not text.strip():
            return
        tui.submit(text)

    def _is_command(self, name: str) -> bool:
        return name in builtin.COMMANDS or name in self.tui.plugin_commands

    def follow_up(self) -> None:
        tui = self.tui
        text = tui.editor.text.strip()
        if not text:
            return
        if tui.run_task is not None and not text.startswith("/"):
            self.take_text()
            tui.submission.queue(text, "followUp")
            return
        tui.submit(tui.editor.text)

    def escape(self) -> None:
        tui = self.tui
        buffer = tui.editor.buffer
        if buffer.complete_state is not None:
            buffer.cancel_completion()
            return
        if tui.run_task is not None:
            self.restore_queue()
            tui.harness.abort()
            return
        if tui.busy == "bash":
            tui.harness.abort_bash()
            return
        if tui.busy:
            tui.busy_aborted = True
            tui.harness.abort()
            return
        if tui.editor.text.lstrip().startswith("!"):
            self.set_text("")
            return
        action = tui.settings.get("doubleEscapeAction", "tree")
        if not tui.editor.text.strip() and action in ("tree", "fork"):
            now = time.monotonic()
            if now - self._last_escape < DOUBLE_PRESS:
                self._last_escape = 0.0
                tui.spawn(builtin.COMMANDS[action](tui, ""))
            else:
                self._last_escape = now

    def ctrl_c(self) -> None:
        now = time.monotonic()
        if now - self._last_ctrl_c < DOUBLE_PRESS:
            self.tui.exit()
            return
        self._last_ctrl_c = now
        buffer = self.tui.editor.buffer
        buffer.cancel_completion()
        self.set_text("")

    def take_text(self, remember: bool = True) -> None:
        """Empty the editor after sending its text, keeping it in the prompt history."""
        self.tui.editor.buffer.reset(append_to_history=remember)
        self.tui.invalidate()

    def set_text(self, text: str) -> None:
        buffer = self.tui.editor.buffer
        buffer.cancel_completion()
        buffer.set_document(buffer.document.__class__(text, len(text)), bypass_readonly=True)
        self.tui.invalidate()

    def restore_queue(self) -> int:
        """The queued messages back in the editor, before its text; how many there were."""
        steering, follow = self.tui.harness.clear_queues()
        texts = [user_text(m) for m in [*steering, *follow]]
        if texts:
            combined = [t for t in ["\n\n".join(texts), self.tui.editor.text] if t.strip()]
            self.set_text("\n\n".join(combined))
        self.tui.invalidate()
        return len(texts)

    def populate_history(self) -> None:
        """Up recalls this session's prompts, as in pi."""
        buffer = self.tui.editor.buffer
        for message in self.tui.harness.messages:
            if getattr(message, "role", None) == "user":
                text = user_text(message).strip()
                if text:
                    buffer.history.append_string(text)
        buffer.reset(document=buffer.document)  # the buffer re-reads its history

    async def paste_image(self) -> None:
        """Ctrl+V: the clipboard's image becomes an attachment, ``[image #N]`` in the editor
        (sent with the prompt while the mark stays in the text)."""
        import base64

        from pi_core.protocol.messages import ImageContent
        from pi_plugins.interactive.clipboard import paste_image

        found = await paste_image()
        if found is None:
            self.tui.add_text("No image in the clipboard (wl-paste or xclip finds none)", "dim")
            return
        data, mime = found
        self._pasted_images.append(ImageContent(data=base64.b64encode(data).decode("ascii"), mime_type=mime))
        self.tui.editor.buffer.insert_text(f"[image #{len(self._pasted_images)}]")
        self.tui.invalidate()

    def take_pasted_images(self, text: str) -> list:
        """The pasted images whose mark ``text`` still holds; the editor's list starts over."""
        images = [image for number, image in enumerate(self._pasted_images, 1) if f"[image #{number}]" in text]
        self._pasted_images = []
        return images

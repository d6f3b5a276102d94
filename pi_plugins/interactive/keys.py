"""Key names as pi writes them (``ctrl+x``, ``alt+enter``, ``shift+tab``, ``f5``) turned
into prompt_toolkit's key sequences, for keybindings.json and plugin shortcuts.

Keys a terminal can only send with modified-key reporting (``shift+ctrl+p``) are bound
as the two encodings terminals use for them: kitty's ``CSI codepoint;modifiers u`` and
xterm's ``CSI 27;modifiers;codepoint ~``; prompt_toolkit reads those as the characters
after an Esc, so the binding is that run of characters."""

from __future__ import annotations

_NAMED = {
    "enter": "enter", "return": "enter", "tab": "tab", "space": "space", "escape": "escape",
    "esc": "escape", "backspace": "backspace", "delete": "delete", "insert": "insert",
    "home": "home", "end": "end", "pageup": "pageup", "pagedown": "pagedown",
    "up": "up", "down": "down", "left": "left", "right": "right", "clear": "c-l",
}
_CONTROL_CHARACTERS = {"-": "c-_", "_": "c-_", "@": "c-@", "\\": "c-\\", "]": "c-]", "^": "c-^",
                       "backspace": "c-h", "space": "c-@"}


class UnbindableKey(ValueError):
    """A key name prompt_toolkit cannot bind."""


def _split(spec: str) -> tuple[str, set[str]]:
    """``"ctrl+shift+k"`` → ``("k", {"ctrl", "shift"})`` (``"ctrl++"`` is Ctrl and plus)."""
    text = spec.strip().lower().replace(" ", "")
    if text.endswith("++") or text == "+":
        return "+", {p for p in text[:-2].split("+") if p}
    parts = [p for p in text.split("+") if p]
    return (parts[-1], set(parts[:-1])) if parts else ("", set())


def key_sequences(spec: str) -> list[tuple[str, ...]]:
    """Every prompt_toolkit key sequence that means ``spec`` (one for most keys, the
    two reporting encodings for a ``ctrl+shift+letter``)."""
    key, modifiers = _split(spec)
    if "ctrl" in modifiers and len(key) == 1 and ("shift" in modifiers or key.isdigit()
                                                  or (not key.isalpha() and key not in _CONTROL_CHARACTERS)):
        code = 1 + ("shift" in modifiers) + 2 * ("alt" in modifiers) + 4
        kitty = ("escape", *f"[{ord(key)};{code}u")
        xterm = ("escape", *f"[27;{code};{ord(key)}~")
        return [kitty, xterm]
    return [parse_key(spec)]


def parse_key(spec: str) -> tuple[str, ...]:
    """``"ctrl+k"`` → prompt_toolkit keys, or :class:`UnbindableKey` saying why not."""
    key, modifiers = _split(spec)
    if not key:
        raise UnbindableKey(f"empty key {spec!r}")
    unknown = modifiers - {"ctrl", "alt", "shift"}
    if unknown:
        raise UnbindableKey(f"{spec!r}: unknown modifier {', '.join(sorted(unknown))}")
    if "ctrl" in modifiers and "shift" not in modifiers and key in _CONTROL_CHARACTERS:
        base = _CONTROL_CHARACTERS[key]
        return ("escape", base) if "alt" in modifiers else (base,)
    if key == "enter" and "shift" in modifiers and not modifiers - {"shift"}:
        return ("c-j",)  # what terminals reporting Shift+Enter send (the ANSI table maps it)
    if key in _NAMED:
        base = _NAMED[key]
    elif len(key) == 1 or (key.startswith("f") and key[1:].isdigit() and 1 <= int(key[1:]) <= 24):
        base = key
    else:
        raise UnbindableKey(f"{spec!r}: unknown key {key!r}")
    if "ctrl" in modifiers:
        if "shift" in modifiers and base in ("up", "down", "left", "right", "home", "end"):
            base = f"c-s-{base}"
        elif len(base) == 1 and (base.isalpha() or base in "@\\]^_") and "shift" not in modifiers:
            base = f"c-{base}"
        elif base in ("up", "down", "left", "right", "home", "end", "delete", "pageup", "pagedown") \
                or base.startswith("f"):
            base = f"c-{base}"
        else:
            raise UnbindableKey(f"{spec!r}: a terminal cannot send this key")
    elif "shift" in modifiers:
        if base in ("tab", "up", "down", "left", "right", "home", "end", "delete", "insert",
                    "pageup", "pagedown"):
            base = "s-tab" if base == "tab" else f"s-{base}"
        elif len(base) == 1:
            base = base.upper()
        else:
            raise UnbindableKey(f"{spec!r}: a terminal cannot send this key")
    return ("escape", base) if "alt" in modifiers else (base,)

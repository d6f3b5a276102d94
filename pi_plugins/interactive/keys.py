"""Key names as pi writes them (``ctrl+x``, ``alt+enter``, ``shift+tab``, ``f5``) turned
into prompt_toolkit's key sequences, for keybindings.json and plugin shortcuts.

Keys a terminal can only send with modified-key reporting (``shift+ctrl+p``) are bound
as the two encodings terminals use for them: kitty's ``CSI codepoint;modifiers u`` and
xterm's ``CSI 27;modifiers;codepoint ~``; prompt_toolkit reads those as the characters
after an Esc, so the binding is that run of characters.

``super`` (pi 1.6's fourth modifier, bit 8 of those encodings) exists only in them: a
``super+…`` key binds where the terminal reports the modifier on its own (kitty's
keyboard protocol, or modifyOtherKeys); no legacy byte carries it."""

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


#: Keys kitty's protocol sends as ``CSI code;modifiers u`` and xterm as ``CSI 27;…~``.
_CODEPOINTS = {"enter": 13, "return": 13, "tab": 9, "space": 32, "escape": 27, "esc": 27, "backspace": 127}
#: Keys sent as ``CSI 1;modifiers <final>`` in both.
_CURSOR_FINALS = {"up": "A", "down": "B", "right": "C", "left": "D", "end": "F", "home": "H"}


def _modifier_code(modifiers: set[str]) -> int:
    return 1 + ("shift" in modifiers) + 2 * ("alt" in modifiers) + 4 * ("ctrl" in modifiers) \
        + 8 * ("super" in modifiers)


def _super_sequences(spec: str, key: str, modifiers: set[str]) -> list[tuple[str, ...]]:
    unknown = modifiers - {"ctrl", "alt", "shift", "super"}
    if unknown:
        raise UnbindableKey(f"{spec!r}: unknown modifier {', '.join(sorted(unknown))}")
    code = _modifier_code(modifiers)
    if key in _CURSOR_FINALS:
        return [("escape", *f"[1;{code}{_CURSOR_FINALS[key]}")]
    codepoint = _CODEPOINTS.get(key, ord(key) if len(key) == 1 else None)
    if codepoint is None:
        raise UnbindableKey(f"{spec!r}: a terminal cannot send this key with super")
    return [("escape", *f"[{codepoint};{code}u"), ("escape", *f"[27;{code};{codepoint}~")]


def key_sequences(spec: str) -> list[tuple[str, ...]]:
    """Every prompt_toolkit key sequence that means ``spec`` (one for most keys, the
    two reporting encodings for a ``ctrl+shift+letter`` or a ``super+…`` key)."""
    key, modifiers = _split(spec)
    if "super" in modifiers:
        return _super_sequences(spec, key, modifiers)
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

"""Key names as pi writes them (``ctrl+x``, ``alt+enter``, ``shift+tab``, ``f5``) turned
into prompt_toolkit's key sequences, for plugin shortcuts."""

from __future__ import annotations

_NAMED = {
    "enter": "enter", "return": "enter", "tab": "tab", "space": "space", "escape": "escape",
    "esc": "escape", "backspace": "backspace", "delete": "delete", "insert": "insert",
    "home": "home", "end": "end", "pageup": "pageup", "pagedown": "pagedown",
    "up": "up", "down": "down", "left": "left", "right": "right",
}


class UnbindableKey(ValueError):
    """A key name prompt_toolkit cannot bind."""


def parse_key(spec: str) -> tuple[str, ...]:
    """``"ctrl+shift+k"`` → prompt_toolkit keys, or :class:`UnbindableKey` saying why not."""
    parts = [p for p in spec.strip().lower().replace(" ", "").split("+") if p]
    if not parts:
        raise UnbindableKey(f"empty key {spec!r}")
    key, modifiers = parts[-1], set(parts[:-1])
    unknown = modifiers - {"ctrl", "alt", "shift"}
    if unknown:
        raise UnbindableKey(f"{spec!r}: unknown modifier {', '.join(sorted(unknown))}")
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

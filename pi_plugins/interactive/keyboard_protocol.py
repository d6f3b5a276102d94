"""kitty's keyboard protocol, switched on as pi 1.6 switches it on, so keys no legacy byte
can carry (``super+k``, ``ctrl+shift+p``, Shift+Enter) reach the chat.

At start the chat pushes flags 7 (disambiguate, event types, alternate keys) and asks
``CSI ? u`` with the terminal's other start-up questions (:mod:`.terminal_colors`); a
terminal that answers with flags is in the protocol, one that does not gets xterm's
modifyOtherKeys (``CSI > 4;2 m``) instead. At exit the push is popped (``CSI < u``) and
modifyOtherKeys reset, whatever the answer was, as 1.6 does. When the chat gets the
terminal back (after the external editor or a Ctrl+Z suspend) it pushes and asks again,
with the device-attributes request as the sentinel (``CSI c``), and reads the answers
from its input while it runs: flags turn the protocol on (and modifyOtherKeys off), an
answer to the sentinel alone turns modifyOtherKeys on, as 1.6's ``start()`` does.

prompt_toolkit reads legacy bytes only, so what the protocols send is decoded first
(:func:`decode`): a key legacy bytes can carry becomes those bytes (``CSI 99;5u`` is
Ctrl+C, ``CSI 27u`` Esc), key releases are dropped, and the rest stays a report
``CSI code;modifiers u`` — the form :mod:`.keys` binds ``super`` and ``ctrl+shift`` keys as.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any

PUSH = b"\x1b[>7u"  # pi 1.6's DESIRED_KITTY_KEYBOARD_PROTOCOL_FLAGS
QUERY = b"\x1b[?u"
POP = "\x1b[<u"
MODIFY_OTHER_KEYS_ON, MODIFY_OTHER_KEYS_OFF = "\x1b[>4;2m", "\x1b[>4;0m"
REPLY = re.compile(rb"\x1b\[\?(\d+)u")
DEVICE_ATTRIBUTES = "\x1b[c"
#: The answers read from the input after a restart: kitty's flags, or device attributes.
_NEGOTIATION = re.compile(r"\x1b\[\?(\d+)u|\x1b\[\?[\d;]*c")

#: The flags the terminal answered at start (None: it did not answer: no kitty protocol).
answered_flags: int | None = None
#: Whether the push went out (popped at exit).
pushed = False

_SHIFT, _ALT, _CTRL, _SUPER = 1, 2, 4, 8
_LOCKS = 64 | 128  # Caps Lock and Num Lock: not modifiers for a binding
_RELEASE = "3"
# kitty: CSI code[:shifted[:base]] [; modifiers[:event] [; text]] u
_KITTY_KEY = re.compile(r"\x1b\[(\d+)((?::\d*){0,2})(?:;(\d*)(?::(\d))?)?(?:;[\d:]*)?u")
# xterm's modifyOtherKeys: CSI 27 ; modifiers ; code ~
_XTERM_KEY = re.compile(r"\x1b\[27;(\d+);(\d+)~")
# arrows, Home/End, F1-F4 and the ~ keys, with an event type: CSI [n] ; modifiers : event final
_FUNCTIONAL = re.compile(r"\x1b\[(\d*);(\d+):(\d)([ABCDEFHPQS~])")
_CONTROL_SYMBOLS = {"@": "\x00", "[": "\x1b", "\\": "\x1c", "]": "\x1d", "^": "\x1e", "_": "\x1f", "?": "\x7f"}


def remember_reply(data: bytes) -> None:
    """The terminal's answers at start: its keyboard flags, if it told them."""
    global answered_flags, pushed
    pushed = True
    found = REPLY.search(data)
    answered_flags = int(found.group(1)) if found else None


def kitty_active() -> bool:
    return bool(answered_flags)


def _legacy(code: int, modifiers: int, shifted: int | None) -> str | None:
    """The bytes a legacy terminal sends for this key, or None where there are none."""
    if modifiers & ~(_SHIFT | _ALT | _CTRL):
        return None  # super, hyper, meta: only the report carries them
    alt, rest = modifiers & _ALT, modifiers & (_SHIFT | _CTRL)
    key: str | None = None
    if code == 27:
        key = "\x1b" if rest == 0 else None
    elif code in (13, 57414):  # Enter, keypad Enter
        key = "\r" if rest == 0 else None  # Shift+Enter stays a report (bound as a new line)
    elif code == 9:
        key = {0: "\t", _SHIFT: "\x1b[Z"}.get(rest)
    elif code in (127, 8):
        key = {0: "\x7f", _CTRL: "\x08"}.get(rest)
    elif code == 32:
        key = {0: " ", _SHIFT: " ", _CTRL: "\x00"}.get(rest)
    elif 32 < code < 0x110000 and not 57344 <= code <= 63743:  # text, not kitty's private-use keys
        char = chr(code)
        if rest == 0:
            key = char
        elif rest == _SHIFT:
            key = chr(shifted) if shifted else (char.upper() if char.isalpha() else None)
        elif rest == _CTRL and char.isascii() and char.isalpha():
            key = chr(ord(char.lower()) & 0x1F)
        elif rest == _CTRL:
            key = _CONTROL_SYMBOLS.get(char)
    if key is None:
        return None
    return "\x1b" + key if alt else key


def _report(code: int, modifiers: int) -> str:
    return f"\x1b[{code};{1 + (modifiers & 15)}u" if modifiers & 15 else f"\x1b[{code}u"


def _kitty_key(match: re.Match) -> str:
    code, alternates, modifiers, event = match.groups()
    if event == _RELEASE:
        return ""
    bits = (int(modifiers) - 1 if modifiers else 0) & ~_LOCKS
    shifted_text = (alternates or ":").split(":")[1]
    shifted = int(shifted_text) if shifted_text else None
    legacy = _legacy(int(code), bits, shifted)
    return legacy if legacy is not None else _report(int(code), bits)


def _xterm_key(match: re.Match) -> str:
    bits, code = (int(match.group(1)) - 1) & ~_LOCKS, int(match.group(2))
    legacy = _legacy(code, bits, None)
    return legacy if legacy is not None else f"\x1b[27;{1 + (bits & 15)};{code}~"


def _functional_key(match: re.Match) -> str:
    number, modifiers, event, final = match.groups()
    if event == _RELEASE:
        return ""
    if modifiers == "1":  # no modifier: the plain legacy form
        return f"\x1b[{number}~" if final == "~" else ("\x1bO" + final if final in "PQS" else f"\x1b[{final}")
    return f"\x1b[{number or 1};{modifiers}{final}"


def decode(data: str) -> str:
    """What the terminal sent, in the legacy bytes prompt_toolkit reads (see above)."""
    if "\x1b[" not in data:
        return data
    data = _KITTY_KEY.sub(_kitty_key, data)
    data = _FUNCTIONAL.sub(_functional_key, data)
    return _XTERM_KEY.sub(_xterm_key, data)


class KeyboardProtocol:
    """The chat's side: decode the input while it runs, set modifyOtherKeys where kitty's
    protocol was not answered, undo both at the end."""

    def __init__(self, tui: Any) -> None:
        self.tui = tui
        self.modify_other_keys = False
        #: Device-attributes answers owed to restarts (each ends one negotiation).
        self.pending_answers = 0

    def start(self) -> None:
        terminal_input = getattr(self.tui.app, "input", None)
        terminal_input = getattr(terminal_input, "inner", terminal_input)  # under plugins' input listeners
        parser = getattr(terminal_input, "vt100_parser", None)
        if parser is not None and not getattr(parser, "_keyboard_protocol", False):
            feed = parser.feed
            parser.feed = lambda data: feed(decode(self._negotiated(self._cell_size(data))))
            parser._keyboard_protocol = True
        if pushed and not kitty_active() and not self.modify_other_keys:
            self.tui.write_to_terminal(MODIFY_OTHER_KEYS_ON)
            self.modify_other_keys = True

    @contextlib.contextmanager
    def suspended(self) -> Iterator[None]:
        """While another program has the terminal (the external editor, a suspend): the
        protocols off, then on again, as pi 1.6 stops and starts its terminal."""
        was_pushed, was_modifying = pushed, self.modify_other_keys
        self.stop()
        try:
            yield
        finally:
            self._resume(was_pushed, was_modifying)

    def _resume(self, was_pushed: bool, was_modifying: bool) -> None:
        """Push and ask again, as 1.6's ``start()``: the answers (read by
        :meth:`_negotiated`) decide between the protocol and modifyOtherKeys."""
        global pushed, answered_flags
        if not (was_pushed or was_modifying):
            return
        pushed, answered_flags = True, None
        self.pending_answers += 1
        self.tui.write_to_terminal(PUSH.decode() + QUERY.decode() + DEVICE_ATTRIBUTES)

    def _negotiated(self, data: str) -> str:
        """The input without the answers to a restart's questions, acted on."""
        if not self.pending_answers or "\x1b[?" not in data:
            return data

        def answer(match: re.Match) -> str:
            global answered_flags
            if not self.pending_answers:
                return match.group(0)
            flags = match.group(1)
            if flags is None:  # the sentinel: this negotiation is over
                self.pending_answers -= 1
                if not kitty_active():
                    self._modify_other_keys(True)
            elif int(flags):
                answered_flags = int(flags)
                self._modify_other_keys(False)
            return ""

        return _NEGOTIATION.sub(answer, data)

    def _cell_size(self, data: str) -> str:
        """The terminal's cell size (asked at start where it draws images) taken out of
        the input; a new one sizes the transcript's images again (pi 1.6's
        ``consumeCellSizeResponse``)."""
        from pi_plugins.interactive.terminal_images import read_cell_size

        data, changed = read_cell_size(data)
        if changed:
            reprint = getattr(getattr(self.tui, "scrollback", None), "reprint", None)
            if reprint is not None:
                reprint()
        return data

    def _modify_other_keys(self, on: bool) -> None:
        if on != self.modify_other_keys:
            self.modify_other_keys = on
            self.tui.write_to_terminal(MODIFY_OTHER_KEYS_ON if on else MODIFY_OTHER_KEYS_OFF)

    def stop(self) -> None:
        """The terminal as it was: the push popped, modifyOtherKeys off (1.6's order)."""
        global pushed
        undo = (POP if pushed else "") + (MODIFY_OTHER_KEYS_OFF if self.modify_other_keys else "")
        pushed, self.modify_other_keys = False, False
        if undo:
            self.tui.write_to_terminal(undo)

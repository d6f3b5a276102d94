"""A theme colour as pi 1.6 writes it, made into one the painters take: ``#rgb`` and
``#rrggbb``, ``oklch(L C H)`` and ``okhsl(H S L)`` (to ``#rrggbb``, as pi's truecolor
output), an xterm 256-colour number (``color(N)``), ``""`` (the terminal's default).

OKLCH outside sRGB keeps its lightness and hue and loses chroma until it fits, by the
same bisection pi-tui uses, so a theme draws the same colours here as in pi. OKHSL is
converted by ColorAide, whose Okhsl space is Björn Ottosson's reference conversion.
"""

from __future__ import annotations

import functools
import math
import re

_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?"
_OKLCH = re.compile(rf"^oklch\(\s*({_NUMBER})(%)?\s+({_NUMBER})\s+({_NUMBER})(?:deg)?\s*\)$", re.I)
_OKHSL = re.compile(rf"^okhsl\(\s*({_NUMBER})(?:deg)?\s+({_NUMBER})(%)?\s+({_NUMBER})(%)?\s*\)$", re.I)
_HEX = re.compile(r"^#([0-9a-f]{3}|[0-9a-f]{6})$", re.I)


class ColorFormatError(ValueError):
    """Not a colour pi 1.6 reads; the message says what is wrong."""


def parse_color(value: str) -> str:
    """``#rrggbb`` for a written colour (hex, OKLCH, OKHSL); raises ColorFormatError."""
    hex_match = _HEX.match(value)
    if hex_match:
        digits = hex_match.group(1).lower()
        return "#" + ("".join(d * 2 for d in digits) if len(digits) == 3 else digits)
    oklch = _OKLCH.match(value)
    if oklch:
        lightness = float(oklch.group(1)) / (100 if oklch.group(2) else 1)
        chroma, hue = float(oklch.group(3)), float(oklch.group(4))
        if not 0 <= lightness <= 1:
            raise ColorFormatError(f"{value!r}: lightness must be between 0 and 1 (0% and 100%)")
        if chroma < 0:
            raise ColorFormatError(f"{value!r}: chroma must not be negative")
        return _hex(_oklch_to_linear_srgb(lightness, chroma, hue % 360))
    okhsl = _OKHSL.match(value)
    if okhsl:
        saturation = float(okhsl.group(2)) / (100 if okhsl.group(3) else 1)
        lightness = float(okhsl.group(4)) / (100 if okhsl.group(5) else 1)
        if not (0 <= saturation <= 1 and 0 <= lightness <= 1):
            raise ColorFormatError(f"{value!r}: saturation and lightness must be between 0% and 100%")
        return _okhsl_to_hex(float(okhsl.group(1)) % 360, saturation, lightness)
    raise ColorFormatError(f"{value!r} is not #rgb, #rrggbb, oklch(L C H) or okhsl(H S L)")


def _in_gamut(linear: list[float]) -> bool:
    return all(-1e-7 <= channel <= 1 + 1e-7 for channel in linear)


def _oklab_to_linear_srgb(l: float, a: float, b: float) -> list[float]:  # noqa: E741 (OKLab's L)
    l_ = (l + 0.3963377774 * a + 0.2158037573 * b) ** 3
    m_ = (l - 0.1055613458 * a - 0.0638541728 * b) ** 3
    s_ = (l - 0.0894841775 * a - 1.2914855480 * b) ** 3
    return [4.0767416621 * l_ - 3.3077115913 * m_ + 0.2309699292 * s_,
            -1.2684380046 * l_ + 2.6097574011 * m_ - 0.3413193965 * s_,
            -0.0041960863 * l_ - 0.7034186147 * m_ + 1.7076147010 * s_]


def _oklch_to_linear_srgb(lightness: float, chroma: float, hue: float) -> list[float]:
    cos, sin = math.cos(math.radians(hue)), math.sin(math.radians(hue))

    def at(c: float) -> list[float]:
        return _oklab_to_linear_srgb(lightness, c * cos, c * sin)

    direct = at(chroma)
    if _in_gamut(direct):
        return direct
    linear, low, high = at(0), 0.0, chroma  # grey always fits: the fallback (oklch(100% 0.3 150) is white)
    for _ in range(20):
        middle = (low + high) / 2
        candidate = at(middle)
        if _in_gamut(candidate):
            low, linear = middle, candidate
        else:
            high = middle
    return linear


def _hex(linear: list[float]) -> str:
    def encode(channel: float) -> int:
        channel = min(max(channel, 0.0), 1.0)
        srgb = 12.92 * channel if channel <= 0.0031308 else 1.055 * channel ** (1 / 2.4) - 0.055
        return round(srgb * 255)

    return "#" + "".join(f"{encode(channel):02x}" for channel in linear)


@functools.cache
def _okhsl_colors() -> type:
    """ColorAide's Color with its Okhsl space (not registered by default), made once."""
    from coloraide import Color
    from coloraide.spaces.okhsl import Okhsl

    class OkhslColor(Color):
        pass

    OkhslColor.register(Okhsl())
    return OkhslColor


def _okhsl_to_hex(hue: float, saturation: float, lightness: float) -> str:
    srgb = _okhsl_colors()("okhsl", [hue, saturation, lightness]).convert("srgb").coords()
    return "#" + "".join(f"{round(min(max(c, 0.0), 1.0) * 255):02x}" for c in srgb)

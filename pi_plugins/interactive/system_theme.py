"""pi 1.6's ``system`` theme: its colours built from the terminal's own (the default
foreground and background, OSC 10/11, and the 16 ANSI colours, OSC 4).

Each colour token belongs to a family that takes its hue from one ANSI colour (errors
from red, links from blue …) and must stand out from the surfaces it is drawn on by a
level of contrast; a level is a curve giving the OKLab lightness needed over a surface's
lightness (pi's fitted coefficients, :data:`LEVELS`). Three tiers, by what the terminal
reported: background and palette (the palette's hues), background only (the families'
own hues), nothing (ANSI indices and the default colours, which the terminal draws).
Colours are placed in OKHSL, whose saturation is relative to the sRGB gamut.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from pi_plugins.interactive.terminal_colors import RGB, appearance_of

# (hue, saturation min, saturation max, ANSI slot)
FAMILIES: dict[str, tuple[float, float, float, int]] = {
    "neutral": (231.49, 0.02, 0.08, 8), "blue": (231.49, 0.1, 0.68, 4), "green": (158.68, 0.1, 0.76, 2),
    "red": (20, 0.1, 0.92, 1), "yellow": (82.36, 0.5, 1, 3), "orange": (52, 0.12, 0.85, 3),
    "violet": (295, 0.2, 0.6, 5), "calamine": (202.43, 0.1, 0.74, 6),
    "thinkingSlate": (231.49, 0.08, 0.2, 4), "thinkingBlue": (231.49, 0.2, 0.45, 4),
    "thinkingPeriwinkle": (263.25, 0.3, 0.6, 6), "thinkingViolet": (295, 0.4, 0.75, 5),
    "thinkingMagenta": (337.5, 0.5, 0.85, 13), "thinkingRed": (20, 0.95, 1, 1),
}
_NEUTRAL = ("text userMessageText customMessageText toolTitle syntaxOperator syntaxPunctuation muted dim "
            "thinkingText toolOutput mdLinkUrl mdQuote mdQuoteBorder mdHr mdCodeBlockBorder toolDiffContext "
            "syntaxComment scrollbarTrack scrollbarThumb searchMatchText borderMuted thinkingOff toolPendingBg")
TOKEN_FAMILIES: dict[str, str] = {
    "selectedBg": "blue", "searchMatchBg": "orange", "userMessageBg": "blue", "customMessageBg": "violet",
    "toolSuccessBg": "green", "toolErrorBg": "red",
    **{token: "neutral" for token in _NEUTRAL.split()},
    **{token: "violet" for token in "accent borderAccent customMessageLabel mdCode mdListBullet syntaxType".split()},
    **{token: "blue" for token in "border mdLink syntaxKeyword".split()},
    "syntaxVariable": "calamine",
    **{token: "green" for token in "success mdCodeBlock toolDiffAdded bashMode syntaxNumber".split()},
    "error": "red", "toolDiffRemoved": "red", "warning": "yellow", "mdHeading": "yellow",
    "syntaxFunction": "yellow", "syntaxString": "orange",
    "thinkingMinimal": "thinkingSlate", "thinkingLow": "thinkingBlue", "thinkingMedium": "thinkingPeriwinkle",
    "thinkingHigh": "thinkingViolet", "thinkingXhigh": "thinkingMagenta", "thinkingMax": "thinkingRed",
}
#: Tokens that would share a hue with a similar token take another slot.
TOKEN_SLOTS = {"syntaxString": 2, "syntaxNumber": 5, "searchMatchBg": 3}

LEVELS: dict[str, dict[str, tuple[tuple[float, ...], tuple[float, float]]]] = {
    "panel": {
        "dark": ((0.29131, -0.39746, 2.33185, -0.85524, -1.2076, 0.86276), (0, 0.979)),
        "light": ((-3.74073, 27.94549, -78.44258, 112.6798, -79.60015, 22.11277), (0.348, 1)),
    },
    "track": {
        "dark": ((0.39028, -0.23015, 0.83573, 2.43829, -4.38292, 2.01582), (0, 0.946)),
        "light": ((-5.24921, 38.37322, -107.28833, 152.10005, -106.17127, 29.18061), (0.368, 1)),
    },
    "thinking0": {
        "dark": ((0.52988, -0.05809, -0.30924, 4.63567, -6.52933, 2.89108), (0, 0.873)),
        "light": ((-28.27749, 182.85284, -469.62416, 603.15916, -384.59976, 97.35147), (0.51, 1)),
    },
    "thinking1": {
        "dark": ((0.55278, -0.03667, -0.45659, 4.95347, -6.90265, 3.0706), (0, 0.858)),
        "light": ((-37.10484, 235.86282, -596.62344, 754.3633, -474.00763, 118.3551), (0.535, 1)),
    },
    "thinking2": {
        "dark": ((0.57486, -0.01765, -0.58987, 5.25227, -7.27175, 3.25532), (0, 0.842)),
        "light": ((-59.89653, 377.05024, -945.07843, 1182.03145, -734.96375, 181.68658), (0.556, 1)),
    },
    "thinking3": {
        "dark": ((0.59621, -0.00062, -0.71148, 5.53588, -7.6392, 3.44606), (0, 0.827)),
        "light": ((-72.07122, 445.84082, -1099.57352, 1353.88793, -829.53392, 202.26164), (0.58, 1)),
    },
    "thinking4": {
        "dark": ((0.61691, 0.01462, -0.82288, 5.80651, -8.00641, 3.64333), (0, 0.811)),
        "light": ((-110.14338, 674.21488, -1645.75941, 2004.32367, -1215.15899, 293.3183), (0.6, 1)),
    },
    "thinking5": {
        "dark": ((0.63702, 0.02826, -0.92498, 6.06465, -8.37246, 3.84651), (0, 0.795)),
        "light": ((-175.47701, 1063.54495, -2570.70594, 3098.80776, -1860.15527, 444.76392), (0.62, 1)),
    },
    "thinking6": {
        "dark": ((0.65658, 0.04044, -1.01835, 6.30989, -8.73529, 4.05439), (0, 0.779)),
        "light": ((-183.81712, 1094.70055, -2602.68539, 3088.71276, -1826.91131, 430.75931), (0.643, 1)),
    },
    "subtle": {
        "dark": ((0.56762, -0.02475, -0.5383, 5.12628, -7.10931, 3.17324), (0, 0.848)),
        "light": ((-232.85459, 1376.54473, -3249.11801, 3827.91186, -2248.29472, 526.55751), (0.657, 1)),
    },
    "thumb": {
        "dark": ((0.60323, 0.00278, -0.73328, 5.57157, -7.68067, 3.46933), (0, 0.823)),
        "light": ((-82.89897, 511.01355, -1255.98095, 1540.76821, -940.68087, 228.58523), (0.586, 1)),
    },
    "readable": {
        "dark": ((0.66937, 0.04704, -1.06871, 6.43941, -8.9332, 4.17229), (0, 0.77)),
        "light": ((-1554.52576, 8733.56817, -19604.93507, 21977.72696, -12300.99599, 2749.81288), (0.751, 1)),
    },
    "emphasis": {
        "dark": ((0.7303, 0.07695, -1.31626, 7.1681, -10.14436, 4.92846), (0, 0.712)),
        "light": ((-4948.31942, 26870.91986, -58334.48399, 63280.17197, -34298.01053, 7430.30146), (0.811, 1)),
    },
    "textOnPanel": {
        "dark": ((0.86713, 0.05232, -0.89428, 4.79014, -5.5432, 1.75023), (0, 0.542)),
        "light": ((-8570.89457, 43954.60805, -90084.00702, 92220.6791, -47152.15802, 9632.27113), (0.867, 1)),
    },
    "text": {
        "dark": ((0.89242, 0.02311, -0.44862, 2.34417, -0.06084, -2.63844), (0, 0.5)),
        "light": ((-2004.67048, 6664.47299, -6060.70202, -1792.61209, 5133.82359, -1939.85583), (0.894, 1)),
    },
}

TOOL_PANELS = ["toolPendingBg", "toolSuccessBg", "toolErrorBg"]
MESSAGE_PANELS = ["userMessageBg", "customMessageBg"]
PANELS = ["userMessageBg", "toolPendingBg", "toolSuccessBg", "toolErrorBg", "selectedBg", "searchMatchBg",
          "customMessageBg"]
THINKING = ["thinkingOff", "thinkingMinimal", "thinkingLow", "thinkingMedium", "thinkingHigh", "thinkingXhigh",
            "thinkingMax"]
_BG = ["background"]
_ON_ALL = [*_BG, *MESSAGE_PANELS, *TOOL_PANELS]


def _each(tokens: Sequence[str], on: list[str], level: str) -> list[tuple[str, list[str], str]]:
    return [(token, on, level) for token in tokens]


#: (token, the surfaces it is drawn on, the level it must reach on each).
RULES: list[tuple[str, list[str], str]] = [
    *_each(PANELS, _BG, "panel"),
    ("text", _BG, "text"), ("text", ["selectedBg"], "textOnPanel"),
    ("userMessageText", ["userMessageBg"], "textOnPanel"), ("toolTitle", TOOL_PANELS, "textOnPanel"),
    *_each(["accent", "success", "error", "warning"], [*_BG, "selectedBg", *TOOL_PANELS], "readable"),
    ("muted", [*_BG, "selectedBg", "customMessageBg", *TOOL_PANELS], "readable"),
    ("dim", [*_BG, "selectedBg", "customMessageBg", *TOOL_PANELS], "subtle"),
    ("thinkingText", _BG, "readable"),
    ("customMessageText", ["customMessageBg", *TOOL_PANELS], "readable"),
    ("customMessageLabel", [*_BG, "customMessageBg", "selectedBg", *TOOL_PANELS], "readable"),
    ("toolOutput", [*_BG, *TOOL_PANELS], "readable"),
    *_each(["mdHeading", "mdLink", "mdLinkUrl", "mdCode", "mdQuote", "mdCodeBlockBorder", "mdListBullet"],
           [*_BG, *MESSAGE_PANELS], "readable"),
    ("mdCodeBlock", _ON_ALL, "readable"),
    *_each(["toolDiffAdded", "toolDiffRemoved", "toolDiffContext"], [*_BG, *TOOL_PANELS], "readable"),
    *_each(["syntaxComment", "syntaxKeyword", "syntaxFunction", "syntaxVariable", "syntaxString", "syntaxNumber",
            "syntaxType", "syntaxOperator", "syntaxPunctuation"], _ON_ALL, "readable"),
    ("searchMatchText", ["searchMatchBg"], "readable"),
    *_each(["bashMode", "border", "borderAccent"], _BG, "readable"),
    ("borderMuted", _BG, "subtle"),
    *_each(["mdQuoteBorder", "mdHr"], _ON_ALL, "readable"),
    ("scrollbarTrack", _BG, "track"), ("scrollbarThumb", ["scrollbarTrack"], "thumb"),
    *[(token, _BG, f"thinking{index}") for index, token in enumerate(THINKING)],
]
READABLE_FLOOR = {"dark": "readable", "light": "subtle"}
FOREGROUND_LEVEL = "emphasis"
FOREGROUND_TOKENS = ["text", "userMessageText", "toolTitle"]
TEXT_MINIMUM_CONTRAST = 4.5


def _solve_order() -> list[str]:
    order: list[str] = []

    def visit(token: str) -> None:
        if token in order:
            return
        for rule_token, on, _ in RULES:
            if rule_token == token:
                for surface in on:
                    if surface != "background":
                        visit(surface)
        order.append(token)

    for token, _, _ in RULES:
        visit(token)
    return order


SOLVE_ORDER = _solve_order()

# ---------------------------------------------------------------- colour spaces


def _linear(channel: float) -> float:
    value = channel / 255
    return value / 12.92 if value <= 0.04045 else ((value + 0.055) / 1.055) ** 2.4


def _encoded(linear: float) -> float:
    linear = min(max(linear, 0.0), 1.0)
    return 255 * (12.92 * linear if linear <= 0.0031308 else 1.055 * linear ** (1 / 2.4) - 0.055)


def oklab(rgb: RGB) -> tuple[float, float, float]:
    r, g, b = (_linear(c) for c in rgb)
    l_ = (0.4122214708 * r + 0.5363325363 * g + 0.0514459929 * b) ** (1 / 3)
    m_ = (0.2119034982 * r + 0.6806995451 * g + 0.1073969566 * b) ** (1 / 3)
    s_ = (0.0883024619 * r + 0.2817188376 * g + 0.6299787005 * b) ** (1 / 3)
    return (0.2104542553 * l_ + 0.7936177850 * m_ - 0.0040720468 * s_,
            1.9779984951 * l_ - 2.4285922050 * m_ + 0.4505937099 * s_,
            0.0259040371 * l_ + 0.7827717662 * m_ - 0.8086757660 * s_)


def lightness(rgb: RGB) -> float:
    return oklab(rgb)[0]


def chroma(rgb: RGB) -> float:
    _, a, b = oklab(rgb)
    return math.hypot(a, b)


def okhsl_lightness(oklab_lightness: float) -> float:
    """OKLab lightness → OKHSL's (Ottosson's toe)."""
    k1, k2 = 0.206, 0.03
    k3 = (1 + k1) / (1 + k2)
    x = oklab_lightness
    return 0.5 * (k3 * x - k1 + math.sqrt((k3 * x - k1) ** 2 + 4 * k2 * k3 * x))


def okhsl_of(rgb: RGB) -> tuple[float, float, float]:
    from pi_plugins.interactive.theme_colors import _okhsl_colors

    h, s, l = _okhsl_colors()("srgb", [c / 255 for c in rgb]).convert("okhsl").coords()  # noqa: E741
    if math.isnan(h) or s < 1e-9:
        return 0.0, 0.0, okhsl_lightness(lightness(rgb))
    return h % 360, s, okhsl_lightness(lightness(rgb))


def okhsl_rgb(hue: float, saturation: float, light: float) -> RGB:
    from pi_plugins.interactive.theme_colors import _okhsl_colors

    srgb = _okhsl_colors()("okhsl", [hue % 360, saturation, light]).convert("srgb").coords()
    r, g, b = (min(max(c, 0.0), 1.0) * 255 for c in srgb)
    return r, g, b


def oklch_rgb(light: float, chroma_: float, hue: float) -> RGB:
    from pi_plugins.interactive.theme_colors import _oklch_to_linear_srgb

    r, g, b = (_encoded(c) for c in _oklch_to_linear_srgb(light, chroma_, hue))
    return r, g, b


def contrast(first: RGB, second: RGB) -> float:
    def luminance(rgb: RGB) -> float:
        r, g, b = (_linear(c) for c in rgb)
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    a, b = luminance(first), luminance(second)
    return (max(a, b) + 0.05) / (min(a, b) + 0.05)


def hex_of(rgb: RGB) -> str:
    return "#" + "".join(f"{round(c):02x}" for c in rgb)


# ---------------------------------------------------------------- generation


def _bell(light: float) -> float:
    def gaussian(x: float) -> float:
        return math.exp(-((x - 0.5) ** 2) / (2 * 0.25 ** 2))

    return (gaussian(light) - gaussian(0)) / (1 - gaussian(0))


def _curve(family: tuple[float, float, float, int], light: float) -> float:
    _, low, high, _ = family
    floor = low / high if high > 0 else 1
    return floor + (1 - floor) * _bell(light)


def _level(level: str, appearance: str, surface: float) -> float | None:
    coefficients, (lowest, highest) = LEVELS[level][appearance]
    if surface < lowest or surface > highest:
        return None
    return sum(c * surface ** power for power, c in enumerate(coefficients))


Source = tuple[float, float, float, float]  # OKHSL h, s, l and OKLCH chroma


def _source(rgb: RGB) -> Source:
    h, s, l = okhsl_of(rgb)  # noqa: E741
    return h, s, l, chroma(rgb)


def _anchored(source: Source, family: tuple[float, float, float, int], light: float, saturation: float) -> RGB:
    """The source's hue at another lightness; its saturation (and chroma) falls off
    toward black and white along the family's curve, never rising."""
    h, s, l, c = source  # noqa: E741
    anchor = _curve(family, l)
    falloff = min(1.0, _curve(family, light) / anchor) if anchor > 0 else 1.0
    color = okhsl_rgb(h, min(s * falloff * saturation, 1.0), light)
    cap = c * falloff * saturation
    if chroma(color) <= cap:
        return color
    return oklch_rgb(lightness(color), cap, h)


def _indexed(saturation: float, appearance: str) -> tuple[dict[str, Any], list[str], str]:
    """The terminal reported nothing: ANSI indices and default colours, faint neutrals."""
    colors: dict[str, Any] = {}
    dim: list[str] = []
    for token, family in TOKEN_FAMILIES.items():
        if token in PANELS:
            colors[token] = ""
            continue
        neutral = family == "neutral"
        colors[token] = TOKEN_SLOTS.get(token, FAMILIES[family][3]) if not neutral and saturation > 0 else ""
        if neutral and token not in FOREGROUND_TOKENS:
            dim.append(token)
    return colors, dim, appearance


def generate(background: RGB | None, foreground: RGB | None = None, palette: Sequence[RGB] | None = None,
             saturation: float = 1.0, appearance_hint: str = "dark") -> tuple[dict[str, Any], list[str], str]:
    """(token → ``#rrggbb``, an ANSI index or ``""`` for the terminal's default; the
    tokens to draw faint; "dark" or "light") for what the terminal reported."""
    saturation = min(max(saturation, 0.0), 1.0)
    if background is None:
        return _indexed(saturation, appearance_hint)
    sources = [_source(color) for color in palette] if palette is not None and len(palette) == 16 else None
    appearance = appearance_of(background, foreground)
    lighter = appearance == "dark"
    extreme = 1.0 if lighter else 0.0
    background_l = lightness(background)

    def paint(token: str, oklab_l: float) -> RGB:
        light = okhsl_lightness(oklab_l)
        family = FAMILIES[TOKEN_FAMILIES[token]]
        if sources is None:
            hue, low, high, _ = family
            return okhsl_rgb(hue, (low + (high - low) * _bell(light)) * saturation, light)
        return _anchored(sources[TOKEN_SLOTS.get(token, family[3])], family, light, saturation)

    def target(level: str, surface: float, t: float) -> float | None:
        reached = _level(level, appearance, surface)
        if reached is None and t == 0:
            return None
        distance = (extreme if reached is None else reached) - surface
        floor_at = _level(READABLE_FLOOR[appearance], appearance, surface)
        floor = (extreme if floor_at is None else floor_at) - surface
        compressed = distance - (distance - floor) * min(t, 1) if abs(distance) > abs(floor) else distance
        return surface + compressed * (1 - max(0.0, t - 1))

    extreme_text: RGB = (255, 255, 255) if lighter else (0, 0, 0)

    def limit_panel(token: str, light: float) -> RGB:
        """A panel that white (or black) text can still be read on."""
        color = paint(token, light)
        if contrast(extreme_text, color) >= TEXT_MINIMUM_CONTRAST:
            return color
        low, high = background_l, light
        for _ in range(20):
            middle = (low + high) / 2
            if contrast(extreme_text, paint(token, middle)) >= TEXT_MINIMUM_CONTRAST:
                low = middle
            else:
                high = middle
        return paint(token, low)

    def solve(t: float) -> dict[str, RGB] | None:
        colors: dict[str, RGB] = {"background": background}
        for token in SOLVE_ORDER:
            targets: list[float] = []
            for rule_token, on, level in RULES:
                if rule_token != token:
                    continue
                for surface in on:
                    value = target(level, lightness(colors.get(surface, background)), t)
                    if value is None or value < 0 or value > 1:
                        return None
                    targets.append(value)
            light = max(targets) if lighter else min(targets)
            colors[token] = limit_panel(token, light) if token in PANELS else paint(token, light)
        return colors

    relaxation = 0.0
    solved = solve(0)
    if solved is None:  # a mid-grey background cannot fit every level: relax as little as possible
        low, high = 0.0, 2.0
        solved = solve(high)
        for _ in range(20):
            middle = (low + high) / 2
            attempt = solve(middle)
            if attempt is not None:
                high, solved = middle, attempt
            else:
                low = middle
        relaxation = high
    solved = solved or {}
    result: dict[str, Any] = {token: hex_of(solved[token]) if token in solved else "" for token in TOKEN_FAMILIES}
    for token in FOREGROUND_TOKENS:
        surfaces = [solved.get(s, background) for rule_token, on, _ in RULES if rule_token == token for s in on]
        text = solved.get(token)
        if foreground is not None:
            targets = [target(FOREGROUND_LEVEL, lightness(surface), relaxation) for surface in surfaces]
            if all(value is not None and 0 <= value <= 1 for value in targets):
                needed = max(targets) if lighter else min(targets)  # type: ignore[type-var]
                foreground_l = lightness(foreground)
                if (foreground_l >= needed) if lighter else (foreground_l <= needed):  # type: ignore[operator]
                    result[token] = ""  # the terminal's own foreground
                    continue
                text = _anchored(_source(foreground), FAMILIES["neutral"], okhsl_lightness(needed), saturation)  # type: ignore[arg-type]
        if text is not None:
            result[token] = hex_of(_with_text_contrast(text, surfaces, lighter))
    return result, [], appearance


def _with_text_contrast(color: RGB, surfaces: list[RGB], lighter: bool) -> RGB:
    """Toward white (or black) until 4.5:1 on every surface."""
    def meets(candidate: RGB) -> bool:
        return all(contrast(candidate, surface) >= TEXT_MINIMUM_CONTRAST for surface in surfaces)

    if meets(color):
        return color
    h, s, l = okhsl_of(color)  # noqa: E741
    extreme = 1.0 if lighter else 0.0
    if not meets(okhsl_rgb(h, s, extreme)):
        return okhsl_rgb(h, s, extreme)
    low, high = l, extreme
    for _ in range(20):
        middle = (low + high) / 2
        if meets(okhsl_rgb(h, s, middle)):
            high = middle
        else:
            low = middle
    return okhsl_rgb(h, s, high)

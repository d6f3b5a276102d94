"""settings.json's schema: every key pi 1.6's settings name (docs/settings.md) and the
ones only pi-harness reads (``checkpoints``, ``subagents``, ``localModels``), with the
values the code takes. Keys not named here are allowed (plugins read their own)."""

from __future__ import annotations

from typing import Any

from pi_plugins.schemas.types import (
    BOOLEAN,
    NUMBER,
    STRING,
    STRINGS,
    described,
    either,
    integer,
    map_of,
    obj,
    one_of,
)

LEVEL = one_of("off", "minimal", "low", "medium", "high", "xhigh", "max")
QUEUE_MODE = one_of("all", "one-at-a-time")
MS_OR_OFF = either({"type": "number", "minimum": 0}, {"const": "disabled"})
TOKENS = integer(0)

PACKAGE = either(STRING, obj({"source": STRING, "autoload": BOOLEAN, "extensions": STRINGS, "skills": STRINGS,
                              "prompts": STRINGS, "themes": STRINGS}, required=["source"]))


def properties() -> dict[str, Any]:
    return {
        "$schema": described(STRING, "The schema this file follows (for editors)."),
        # models and thinking
        "defaultProvider": described(STRING, "Provider of the model new sessions start with."),
        "defaultModel": described(STRING, "Model new sessions start with."),
        "defaultThinkingLevel": LEVEL,
        "modelThinkingLevels": described(map_of(LEVEL), "A thinking level per provider/model."),
        "enabledModels": described(STRINGS, "The models Ctrl+P cycles through (patterns allowed)."),
        "thinkingBudgets": obj({k: NUMBER for k in ("minimal", "low", "medium", "high")}),
        "transport": one_of("auto", "sse", "websocket", "websocket-cached"),
        "websockets": described(BOOLEAN, "Deprecated: use transport."),
        "websocketConnectTimeoutMs": MS_OR_OFF,
        "httpIdleTimeoutMs": MS_OR_OFF,
        "httpProxy": STRING,
        "cacheWarming": one_of("off", "streaming", "idle"),
        # conversation
        "steeringMode": QUEUE_MODE,
        "followUpMode": QUEUE_MODE,
        "queueMode": described(QUEUE_MODE, "Deprecated: steeringMode and followUpMode."),
        "compaction": obj({"enabled": BOOLEAN, "reserveTokens": TOKENS, "keepRecentTokens": TOKENS,
                           "modelOverrides": map_of(obj({"reserveTokens": TOKENS, "keepRecentTokens": TOKENS}))}),
        "branchSummary": obj({"reserveTokens": NUMBER, "skipPrompt": BOOLEAN}),
        "retry": obj({"enabled": BOOLEAN, "maxRetries": NUMBER, "baseDelayMs": NUMBER, "maxAgentDelayMs": NUMBER,
                      "maxDelayMs": described(NUMBER, "Deprecated."),
                      "provider": obj({"timeoutMs": NUMBER, "maxRetries": NUMBER, "maxRetryDelayMs": NUMBER})}),
        "defaultTools": described(STRINGS, "Tools on at start: names replace the defaults, +name / -name change them."),
        "codemode": obj({"mode": one_of("on", "only"), "inlineBudget": {"type": "number", "minimum": 0}}),
        "images": obj({"autoResize": BOOLEAN, "blockImages": BOOLEAN}),
        "sessionDir": STRING,
        "sessionShareDestination": one_of("auto", "gist", "radius"),
        # resources and packages
        "packages": {"type": "array", "items": PACKAGE},
        "extensions": STRINGS,
        "skills": either(STRINGS, obj({"enableSkillCommands": BOOLEAN, "customDirectories": STRINGS})),
        "prompts": STRINGS,
        "themes": STRINGS,
        "enableSkillCommands": BOOLEAN,
        "defaultProjectTrust": one_of("ask", "always", "never"),
        "npmCommand": STRINGS,
        "selfUpdateCommand": {**STRINGS, "minItems": 1},
        "lastChangelogVersion": STRING,
        "extensionChangelogVersions": described(map_of(STRING), "The version of each package's changelog last shown."),
        "collapseChangelog": BOOLEAN,
        "enableInstallTelemetry": BOOLEAN,
        "enableAnalytics": BOOLEAN,
        "trackingId": STRING,
        "deviceId": STRING,
        # the chat
        "theme": STRING,
        "hideThinkingBlock": BOOLEAN,
        "showCacheMissNotices": BOOLEAN,
        "externalEditor": STRING,
        "shellPath": STRING,
        "shellCommandPrefix": STRING,
        "quietStartup": either(BOOLEAN, {"const": "header"}),
        "doubleEscapeAction": one_of("fork", "tree", "none"),
        "treeFilterMode": one_of("default", "no-tools", "user-only", "labeled-only", "all"),
        "editorPaddingX": NUMBER,
        "outputPad": one_of(0, 1),
        "autocompleteMaxVisible": NUMBER,
        "showHardwareCursor": BOOLEAN,
        "markdown": obj({"codeBlockIndent": STRING, "mermaid": one_of("off", "final", "streaming")}),
        "warnings": obj({"anthropicExtraUsage": BOOLEAN}),
        "terminal": obj({"showImages": BOOLEAN, "imageWidthCells": NUMBER, "clearOnShrink": BOOLEAN,
                         "showTerminalProgress": BOOLEAN, "hyperlinks": either(BOOLEAN, {"const": "auto"}),
                         "images": one_of("kitty", "iterm2", "auto", False),
                         "trueColor": either(BOOLEAN, {"const": "auto"})}),
        "tuiMode": one_of("regular", "fullscreen"),
        "fullscreenExitOutput": one_of("transcript", "resume-hint"),
        "fullscreenScrollbar": one_of("auto", "always", "hidden"),
        "fullscreenCopyOnSelect": BOOLEAN,
        "fullscreenWheelScrollLines": either(NUMBER, {"const": "auto"}),
        # pi-harness's own
        "checkpoints": obj({"enabled": BOOLEAN, "maxFileBytes": integer(1)},
                           description="pi-harness: workspace checkpoints."),
        "subagents": obj({"enabled": BOOLEAN}, description="pi-harness: the subagent tool."),
        "localModels": described({"type": "object"}, "pi-harness: local model servers to discover."),
    }


def settings_schema() -> dict[str, Any]:
    """settings.json (global or a project's ``.pi/settings.json``)."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "pi settings.json",
        "type": "object",
        "properties": properties(),
        "additionalProperties": True,
    }

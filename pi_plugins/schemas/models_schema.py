"""models.json's schema: providers with their own models or overrides of built-in ones,
every field pi 1.6 names (docs/models-configuration.md) and the ones only pi-harness
reads (``apiKeyEnv``, ``apiKeyEnvs``, ``bearerEnv``), with the values
:mod:`pi_plugins.models.models_json` takes."""

from __future__ import annotations

from typing import Any

from pi_plugins.models.models_json import RESIZE_FIELDS
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

NAME = {"type": "string", "minLength": 1}
POSITIVE = {"type": "number", "exclusiveMinimum": 0}
LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh", "max")

#: The ``compat`` switches that are true or false.
COMPAT_SWITCHES = (
    "supportsStore", "supportsDeveloperRole", "supportsReasoningEffort", "supportsUsageInStreaming",
    "supportsFinishReason", "requiresToolResultName", "requiresAssistantAfterToolResult",
    "requiresNonNullAssistantContent", "requiresToolsWithToolHistory", "requiresThinkingAsText",
    "requiresReasoningContentOnAssistantMessages", "zaiToolStream", "supportsThinkingTokenBudget",
    "supportsOpenAIGrammarTools", "supportsMidConvoSystemMessages", "supportsMidConvoToolAdditions",
    "supportsStrictMode", "sendSessionAffinityHeaders", "supportsLongCacheRetention", "supportsAdditionalTools",
    "supportsToolSearch", "supportsExplicitPromptCacheMode", "supportsMidConvoEffort", "supportsMaxOutputTokens",
    "supportsEagerToolInputStreaming", "supportsCacheControlOnTools", "supportsTemperature",
    "forceAdaptiveThinking", "allowEmptySignature", "supportsStrictTools", "supportsMidConvoToolChanges",
    "supportsMessageThreads", "sendImageOptInHeader",
)
_TEMPLATE_VALUE = either(STRING, NUMBER, BOOLEAN, {"type": "null"}, {"type": "object"})


def compat() -> dict[str, Any]:
    return obj({
        **{name: BOOLEAN for name in COMPAT_SWITCHES},
        "maxTokensField": one_of("max_completion_tokens", "max_tokens"),
        "thinkingFormat": STRING,
        "chatTemplateKwargs": map_of(_TEMPLATE_VALUE),
        "chatTemplateArgs": map_of(_TEMPLATE_VALUE),
        "openRouterRouting": described({"type": "object"}, "Sent to OpenRouter as its provider routing, as written."),
        "vercelGatewayRouting": obj({"only": STRINGS, "order": STRINGS}),
        "thinkingTokenBudgetField": one_of("thinking_token_budget", "thinking_budget", "thinking_budget_tokens"),
        "cacheControlFormat": one_of("anthropic"),
        "sessionAffinityFormat": one_of("openai", "openai-nosession", "openrouter"),
        "promptCacheKeyMode": one_of("auto", "enabled", "disabled"),
        "vllmPriority": NUMBER,
        "allowedFallbackModels": {"type": "array", "maxItems": 3, "items": obj(
            {"provider": NAME, "model": NAME, "cost": {"$ref": "#/$defs/cost"}}, required=["provider", "model", "cost"])},
        "imageInput": one_of("assets", "images", "state-image-urls"),
    }, description="How the provider's API differs from the usual (pi's compat fields).")


def model_fields() -> dict[str, Any]:
    """What a model entry and a ``modelOverrides`` entry both set."""
    resize = {name: integer(1, 100 if name == "jpegQuality" else None) for name in RESIZE_FIELDS}
    return {
        "name": described(NAME, "Display name, also matched by --model patterns."),
        "reasoning": BOOLEAN,
        "thinkingLevelMap": obj({level: either(STRING, {"type": "null"}) for level in LEVELS}),
        "input": {"type": "array", "items": one_of("text", "image")},
        "inputLimits": obj({"maxRequestBytes": integer(1), "images": obj({
            "resize": obj(resize), "maxPerMessage": integer(1), "maxPerRequest": integer(1)})}),
        "cost": {"$ref": "#/$defs/cost"},
        "promptCache": obj({"short": POSITIVE, "long": POSITIVE}),
        "contextWindow": described(POSITIVE, "Context window in tokens."),
        "maxTokens": described(POSITIVE, "Most output tokens."),
        "samplingParams": {"type": "object"},
        "samplingParamsByThinkingLevel": obj({level: {"type": "object"} for level in LEVELS}),
        "headers": map_of(STRING),
        "compat": {"$ref": "#/$defs/compat"},
    }


def models_schema() -> dict[str, Any]:
    """models.json (``<agent dir>/models.json``)."""
    fields = model_fields()
    own_keys = {"apiKeyEnv": STRING, "apiKeyEnvs": STRINGS, "bearerEnv": STRING}
    model = obj({"id": NAME, "api": NAME, "baseUrl": NAME, **fields, **own_keys}, required=["id"])
    provider = obj({
        "name": NAME, "baseUrl": NAME, "apiKey": described(NAME, "A key, an environment variable or !command."),
        "api": NAME, "oauth": one_of("radius"), "headers": map_of(STRING), "compat": {"$ref": "#/$defs/compat"},
        "authHeader": BOOLEAN, "models": {"type": "array", "items": model},
        "modelOverrides": map_of(obj(fields)), **own_keys,
    })
    cost_fields = ("input", "output", "cacheRead", "cacheWrite")
    tier = obj({"inputTokensAbove": NUMBER, **{k: NUMBER for k in cost_fields}},
               required=["inputTokensAbove", *cost_fields])
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "pi models.json",
        "type": "object",
        "required": ["providers"],
        "properties": {"$schema": described(STRING, "The schema this file follows (for editors)."),
                       "providers": map_of(provider)},
        "$defs": {
            "compat": compat(),
            "cost": obj({**{k: NUMBER for k in cost_fields}, "tiers": {"type": "array", "items": tier}},
                        description="Dollars per million tokens."),
        },
    }

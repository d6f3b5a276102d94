"""Models: what a provider serves, what it costs, how much context it holds."""

from __future__ import annotations

from typing import Any

from pi_core.protocol.messages import Usage
from pi_core.protocol.records import field, record


@record
class ModelCost:
    """Dollars per million tokens."""

    input: float = 0
    output: float = 0
    cache_read: float = 0
    cache_write: float = 0


@record
class Model:
    id: str
    provider: str
    api: str
    name: str = ""
    base_url: str = ""
    reasoning: bool = False
    input: list[str] = field(factory=lambda: ["text"])
    cost: ModelCost = field(factory=ModelCost)
    context_window: int = 128_000
    max_tokens: int = 16_384
    headers: dict[str, str] | None = None
    #: Wire-format differences of this model's server (pi's ``compat`` in models.json).
    compat: dict[str, Any] | None = None
    #: Provider values per thinking level; a ``None`` value marks a level as unsupported
    #: (pi's ``thinkingLevelMap``).
    thinking_level_map: dict[str, str | None] | None = None
    #: The environment variable holding the key (default ``<PROVIDER>_API_KEY``).
    api_key_env: str | None = None
    #: Key variables read in order, the first set wins (pi 1.6's Anthropic: OAUTH_TOKEN, then API_KEY).
    api_key_envs: list[str] | None = None
    #: A bearer-token variable (pi 1.6's ``ANTHROPIC_AUTH_TOKEN``): wins over key variables, not a stored key.
    bearer_env: str | None = None
    #: Found by a local ``discover_models`` probe, not configured: no provider-level retries, and the
    #: same error body twice ends the harness's retries (a small server that cannot take a request says so).
    discovered: bool = False
    #: pi 1.6's ``samplingParams`` / ``samplingParamsByThinkingLevel``: merged into OpenAI-compatible bodies.
    sampling_params: dict[str, Any] | None = None
    sampling_params_by_thinking_level: dict[str, dict[str, Any]] | None = None
    prompt_cache: dict[str, int] | None = None  # pi 1.6's promptCache: lifetime (s) per tier; none: never cache-warmed
    image_resize: dict[str, int] | None = None  # pi 1.6's inputLimits.images.resize: how a new image is fitted

    @property
    def key(self) -> str:
        """``provider/id``, how the CLI and settings name a model."""
        return f"{self.provider}/{self.id}"

    @property
    def accepts_images(self) -> bool:
        return "image" in self.input


def unknown_model() -> Model:
    """The stand-in when no model is configured (pi's): RPC and ACP clients still get
    answers, and a prompt fails with the reason instead of the process exiting."""
    return Model(id="unknown", provider="unknown", api="unknown", name="unknown", base_url="",
                 input=[], context_window=0, max_tokens=0)


def is_unknown(model: Model) -> bool:
    return model.api == "unknown" and model.provider == "unknown"


def calculate_cost(model: Model, usage: Usage) -> Usage:
    """Fill ``usage.cost`` (dollars) from the model's per-million prices; pi 1.6 marks
    such a total ``totalFromProvider: false`` (a provider's billed total sets it true)."""
    c = usage.cost
    c.input = model.cost.input * usage.input / 1e6
    c.output = model.cost.output * usage.output / 1e6
    c.cache_read = model.cost.cache_read * usage.cache_read / 1e6
    long_writes = (usage._extra or {}).get("cacheWrite1h") or 0  # an hour's cache: twice the input rate (pi 1.6)
    c.cache_write = (model.cost.cache_write * (usage.cache_write - long_writes) + model.cost.input * 2 * long_writes) / 1e6
    c.total = c.input + c.output + c.cache_read + c.cache_write
    c.extra["totalFromProvider"] = False
    return usage

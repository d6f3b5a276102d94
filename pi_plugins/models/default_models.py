"""Each provider's default model, pi 1.6's ``defaultModelPerProvider`` (a test checks
it against pi's package): what a start without a model, or a sign-in, selects.
"""

from __future__ import annotations

from collections.abc import Iterable

DEFAULT_MODEL_PER_PROVIDER = {
    "amazon-bedrock": "us.anthropic.claude-opus-5-5",
    "ant-ling": "Ring-2.6-1T",
    "anthropic": "claude-opus-5-5",
    "openai": "gpt-6.2-sol",
    "azure": "gpt-6.2-sol",
    "openai-codex": "gpt-6.2-sol",
    "radius": "balanced",
    "nvidia": "nvidia/nemotron-3.5-super-vl-120b-a12b",
    "deepseek": "deepseek-v4-pro",
    "google": "gemini-4-argon",
    "google-vertex": "gemini-4-argon",
    "github-copilot": "gpt-6.1-sol",
    "openrouter": "moonshotai/kimi-k2.7-code",
    "vercel-ai-gateway": "zai/glm-5.3",
    "xai": "grok-4.7",
    "groq": "openai/gpt-oss-120b",
    "cerebras": "gpt-oss-120b",
    "zai": "glm-5.3",
    "zai-coding-cn": "glm-5.3",
    "mistral": "devstral-medium-latest",
    "minimax": "MiniMax-M3",
    "minimax-cn": "MiniMax-M3",
    "moonshotai": "kimi-k2.7-code",
    "moonshotai-cn": "kimi-k2.7-code",
    "huggingface": "moonshotai/Kimi-K2.7-Code",
    "fireworks": "accounts/fireworks/models/kimi-k3",
    "together": "moonshotai/Kimi-K3",
    "baseten": "zai-org/GLM-5.3",
    "opencode": "kimi-k2.7-code",
    "opencode-go": "kimi-k3.1-pro",
    "kimi-coding": "kimi-for-coding",
    "meta": "muse-spark-1.3",
    "cloudflare-workers-ai": "@cf/moonshotai/kimi-k2.7-code",
    "cloudflare-ai-gateway": "workers-ai/@cf/moonshotai/kimi-k2.7-code",
    "qwen-token-plan": "qwen3.8-max",
    "qwen-token-plan-cn": "qwen3.8-max",
    "qwen-token-plan-individual": "qwen3.8-max",
    "qwen-token-plan-individual-cn": "qwen3.8-max",
    "xiaomi": "mimo-v2.6-pro",
    "xiaomi-token-plan-cn": "mimo-v2.6-pro",
    "xiaomi-token-plan-ams": "mimo-v2.6-pro",
    "xiaomi-token-plan-sgp": "mimo-v2.6-pro",
}


def initial_model(available: Iterable):
    """pi's pick among the usable models when none is configured: the default model of
    the first provider (in the table's order) that has it usable, else the first one."""
    available = list(available)
    for provider, model_id in DEFAULT_MODEL_PER_PROVIDER.items():
        for model in available:
            if model.provider == provider and model.id == model_id:
                return model
    return available[0] if available else None


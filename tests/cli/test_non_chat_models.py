"""pi 1.6's catalogue lists image and classifier models beside the chat ones (pi runs
them from codemode scripts); naming one as the model gets one clear line, not a chat
with a model that cannot chat."""

import asyncio

import pytest

from pi_plugins.cli.run_args import RunArgs, UsageError
from pi_plugins.cli.wiring import build_app


@pytest.mark.parametrize("model,provider,line", [
    ("openrouter/black-forest-labs/flux-3-image", None,
     "openrouter/black-forest-labs/flux-3-image is an image model, not a chat model: not supported here"),
    ("typesafe/jev-latest", None, "typesafe/jev-latest is a classifier model, not a chat model: not supported here"),
    ("~liquid/d1-latest", "openrouter",
     "openrouter/~liquid/d1-latest is a classifier model, not a chat model: not supported here"),
])
def test_an_image_or_classifier_model_is_refused_in_one_line(tmp_path, monkeypatch, model, provider, line):
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    with pytest.raises(UsageError) as refused:
        asyncio.run(build_app(RunArgs(print=True, model=model, provider=provider, messages=["hi"]),
                              cwd=str(tmp_path / "project")))
    assert str(refused.value).startswith(line) and "\n" not in str(refused.value)


def test_a_chat_model_of_the_same_provider_is_not_refused():
    from pi_plugins.cli.wiring import unsupported_model

    assert unsupported_model("openrouter", "anthropic/claude-sonnet-4.5") is None
    assert unsupported_model("openrouter", "no-such-model") is None

"""How many output tokens a request asks for: pi 1.6's rule (the model's whole limit, or
the caller's, fitted to what the window has left); pi 1.6's own numbers are compared in
test_pi_requests.py::test_the_output_limit_and_thinking_budget_are_pi_16s."""

from pi_core.protocol.messages import AssistantMessage, TextContent, Usage, UserMessage
from pi_core.protocol.model import Model
from pi_core.protocol.provider import LlmContext, StreamOptions
from pi_plugins.providers.output_limit import estimate_input_tokens
from pi_plugins.providers.thinking import max_tokens


def model(window: int, limit: int) -> Model:
    return Model(id="m", provider="p", api="openai-completions", context_window=window, max_tokens=limit)


def said(characters: int) -> UserMessage:
    return UserMessage(content=[TextContent("x" * characters)])


def test_the_whole_output_limit_is_asked_for_where_the_window_has_room():
    context = LlmContext(messages=[said(7)])
    assert max_tokens(model(200_000, 128_000), StreamOptions(), context) == 128_000  # 0.73.1 asked 32000
    assert max_tokens(model(200_000, 128_000), StreamOptions(max_tokens=1000), context) == 1000


def test_a_nearly_full_window_keeps_a_margin_and_asks_at_most_32768():
    # 350,000 characters are 100,000 tokens; 15% of them (15,000) is the margin
    assert max_tokens(model(200_000, 128_000), StreamOptions(), LlmContext(messages=[said(350_000)])) == 85_000
    # 150,000 tokens leave under 32768 after the 15%: only 4096 kept, 32768 at most
    assert max_tokens(model(200_000, 128_000), StreamOptions(), LlmContext(messages=[said(525_000)])) == 32_768
    assert max_tokens(model(200_000, 128_000), StreamOptions(), LlmContext(messages=[said(665_000)])) == 5_904
    assert max_tokens(model(200_000, 128_000), StreamOptions(), LlmContext(messages=[said(800_000)])) == 1


def test_the_input_is_the_last_answers_usage_plus_what_came_after():
    # made in transcript order: a message placed before an answer but stamped later hides its usage
    asked = said(35_000)
    answer = AssistantMessage(content=[TextContent("ok")], usage=Usage(input=50_000, output=10, total_tokens=50_010),
                              timestamp=asked.timestamp)
    failed = AssistantMessage(content=[TextContent("no")], usage=Usage(input=90_000, total_tokens=90_000),
                              stop_reason="error")
    assert estimate_input_tokens([asked, answer, said(7), failed]) == 50_010 + 2 + 1
    assert estimate_input_tokens([said(35)], system_prompt="s" * 70) == 10 + 20  # before any answer


def test_a_small_local_window_still_has_room_to_answer():
    assert max_tokens(model(4096, 1024), StreamOptions(), LlmContext(messages=[said(7)])) == 1024
    assert max_tokens(model(0, 0), StreamOptions(), LlmContext(messages=[said(7)])) is None

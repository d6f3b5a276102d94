"""What a subagent or a batch task reports for all its turns."""

from pi_core.protocol.messages import AssistantMessage, Cost, ToolResultMessage, Usage
from pi_core.protocol.usage import total_usage


def answer(reasoning=None, **counts) -> AssistantMessage:
    return AssistantMessage(api="x", provider="p", model="m",
                            usage=Usage(reasoning=reasoning, cost=Cost(input=0.5, total=0.5), **counts))


def test_every_answers_usage_is_added_up_and_other_messages_are_not():
    total = total_usage([answer(input=10, output=4, cache_read=2, total_tokens=16),
                         ToolResultMessage(tool_call_id="c", tool_name="t", usage=Usage(input=99)),
                         answer(input=1, output=1, cache_write=3, total_tokens=5)])
    assert (total.input, total.output, total.cache_read, total.cache_write, total.total_tokens) == (11, 5, 2, 3, 21)
    assert (total.cost.input, total.cost.total) == (1.0, 1.0)


def test_reasoning_is_summed_where_an_answer_split_it_out_and_absent_where_none_did():
    assert total_usage([answer(output=9, reasoning=6), answer(output=2), answer(output=5, reasoning=1)]).reasoning == 7
    assert total_usage([answer(output=2)]).reasoning is None

"""``pi_core.protocol.records.record`` (attrs' ``define`` with one shared ``__repr__``)
prints what attrs' own generated repr prints, for the field kinds the core uses."""

from __future__ import annotations

import attrs
from attrs import field

from pi_core import AssistantMessage, TextContent, ToolCall, UserMessage
from pi_core.protocol.records import record


def _pair(decorate):
    @decorate
    class Sample:
        number: int
        _private: str = field(default="q", alias="private")
        hidden: list = field(factory=list, repr=False)
        shaped: int = field(default=3, repr=lambda v: f"<{v}>")
        nested: object = None

    return Sample


def test_the_shared_repr_prints_what_attrs_generates():
    ours, theirs = _pair(record), _pair(attrs.define)
    for args in ({"number": 1}, {"number": 2, "private": "x", "hidden": [1], "shaped": 9,
                                 "nested": UserMessage(content=[TextContent(text="hi")])}):
        assert repr(ours(**args)) == repr(theirs(**args))


def test_core_messages_print_their_fields():
    message = AssistantMessage(content=[ToolCall(id="c1", name="read", arguments={"path": "a"})])
    text = repr(message)
    assert text.startswith("AssistantMessage(role='assistant', content=[ToolCall(")
    assert "name='read'" in text and "arguments={'path': 'a'}" in text

"""``pi_core.protocol.records.record`` (attrs' ``define`` with one shared ``__repr__``,
``__eq__`` and frozen ``__hash__``) prints, compares and hashes as attrs' own generated
methods do, for the field kinds the core uses."""

from __future__ import annotations

import attrs
import pytest
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


def _comparable(decorate, **options):
    @decorate(**options)
    class Sample:
        number: float
        cached: list = field(factory=list, eq=False)
        name: str = field(default="a", eq=str.lower)

    return Sample


@pytest.mark.parametrize("frozen", [False, True])
def test_the_shared_eq_and_hash_behave_as_attrs_generated_ones(frozen):
    ours, theirs = _comparable(record, frozen=frozen), _comparable(attrs.define, frozen=frozen)
    nan = float("nan")
    cases = [((1, [1], "A"), (1, [2], "a")), ((1,), (2,)), ((nan,), (nan,)), ((1, [], "x"), (1, [], "y"))]
    for left, right in cases:
        if left == (nan,):
            right = left  # the same NaN object: unequal, field by field, as attrs compares
        assert (ours(*left) == ours(*right)) == (theirs(*left) == theirs(*right))
        assert (ours(*left) != ours(*right)) == (theirs(*left) != theirs(*right))
    assert ours(1).__eq__(theirs(1)) is NotImplemented  # another class never equals
    if frozen:
        assert hash(ours(1, [1], "A")) == hash(ours(1, [2], "a"))
        assert len({ours(1), ours(1), ours(2)}) == 2
    else:
        with pytest.raises(TypeError):  # mutable and compared by value: unhashable, as attrs
            hash(ours(1))


def test_a_method_the_class_writes_is_kept():
    @record
    class Own:
        value: int

        def __eq__(self, other):
            return True

        def __repr__(self):
            return "own"

    assert Own(1) == Own(2) and repr(Own(1)) == "own"


def test_eq_false_leaves_identity():
    @record(eq=False)
    class Plain:
        value: int

    one = Plain(1)
    assert one != Plain(1) and one == one and {one, one} == {one}

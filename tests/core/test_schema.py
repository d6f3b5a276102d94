"""Tool parameters are declared once; schema and validation both come from it."""

from typing import Literal

import attrs
import pytest

from pi_core.protocol.schema import ArgumentsError, Parameters
from pi_core.protocol.tools import Tool


@attrs.define
class Edit:
    old_text: str
    new_text: str


@attrs.define
class EditParams:
    path: str = attrs.field(metadata={"description": "File to edit"})
    edits: list[Edit]
    mode: Literal["strict", "loose"] = "strict"
    limit: int | None = None


def test_an_attrs_declaration_gives_the_json_schema_the_model_sees():
    schema = Tool(name="edit", parameters=EditParams).schema
    assert schema["required"] == ["path", "edits"]
    assert schema["properties"]["path"] == {"type": "string", "description": "File to edit"}
    assert schema["properties"]["edits"]["items"]["required"] == ["old_text", "new_text"]
    assert schema["properties"]["mode"] == {"enum": ["strict", "loose"]}
    assert schema["properties"]["limit"] == {"type": "integer"}
    assert schema["additionalProperties"] is False


def test_the_same_declaration_validates_and_builds_the_typed_arguments():
    args = Parameters(EditParams).validate(
        {"path": "a.txt", "edits": [{"old_text": "x", "new_text": "y"}], "limit": "3"})
    assert args == EditParams("a.txt", [Edit("x", "y")], "strict", 3)


def test_validation_reports_every_problem_at_once():
    with pytest.raises(ArgumentsError) as caught:
        Parameters(EditParams).validate({"edits": [{"old_text": 1}], "mode": "wild", "extra": 1})
    text = str(caught.value)
    for expected in ("'path' is a required property", "edits/0", "'wild' is not one of",
                     "Additional properties are not allowed"):
        assert expected in text


def test_scalars_sent_as_strings_are_coerced_like_pi_does():
    params = Parameters({"type": "object", "properties": {
        "n": {"type": "integer"}, "x": {"type": "number"}, "ok": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}}}})
    assert params.validate({"n": "12", "x": "1.5", "ok": "true", "tags": '["a"]'}) == {
        "n": 12, "x": 1.5, "ok": True, "tags": ["a"]}
    with pytest.raises(ArgumentsError, match="'twelve' is not of type 'integer'"):
        params.validate({"n": "twelve"})


def test_arguments_that_are_not_an_object_are_refused():
    with pytest.raises(ArgumentsError, match="JSON object"):
        Parameters({"type": "object"}).validate(["a"])

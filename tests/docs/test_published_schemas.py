"""The JSON Schemas published with the package (``pi_plugins/schemas/``), as pi 1.6
publishes its own: each file is what its generator makes from this project's definitions,
it names every key pi 1.6's schema names, and a file that points ``$schema`` at pi's URL
loads without a problem and validates against ours."""

from __future__ import annotations

import json

import jsonschema
import pytest

from pi_plugins import schemas
from pi_plugins.interactive.keybindings import read_keybindings


@pytest.mark.parametrize("name", sorted(schemas.BUILDERS))
def test_the_published_schema_is_what_its_generator_makes(name):
    published = json.loads(schemas.path_of(name).read_text(encoding="utf-8"))
    assert published == schemas.build(name), f"run schemas.write_all() after changing the {name} definitions"
    jsonschema.Draft202012Validator.check_schema(published)


@pytest.mark.requires("pi16")
def test_the_keybindings_schema_names_every_action_pi16s_names():
    from support.programs import require_real

    package = require_real("pi16")
    theirs = json.loads((package / "schemas" / "keybindings.schema.json").read_text())
    ours = schemas.build("keybindings")
    assert set(theirs["properties"]) == set(ours["properties"])


def test_a_keybindings_file_pointing_at_the_schema_loads_cleanly_and_validates(tmp_path):
    document = {"$schema": schemas.URLS["keybindings"], "app.model.select": "ctrl+l",
                "tui.editor.cursorUp": ["up", "ctrl+p"]}
    path = tmp_path / "keybindings.json"
    path.write_text(json.dumps(document))
    bindings, problems = read_keybindings(path)
    assert problems == [] and bindings["app.model.select"] == ("ctrl+l",)
    jsonschema.validate(document, schemas.build("keybindings"))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"app.model.select": 5}, schemas.build("keybindings"))

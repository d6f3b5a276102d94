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


# ---------------------------------------------------------------- settings, models, theme

PI16_FILES = {"settings": "settings.schema.json", "models": "models.schema.json", "theme": "theme.schema.json"}


def _property_paths(schema: dict, defs: dict, prefix: str = "", depth: int = 0) -> set[str]:
    """Every property a schema names, as dotted paths (through objects, maps, arrays,
    alternatives and ``$ref``s)."""
    if depth > 8 or not isinstance(schema, dict):
        return set()
    ref = schema.get("$ref", "")
    if ref.startswith("#/$defs/"):
        return _property_paths(defs.get(ref.rsplit("/", 1)[-1], {}), defs, prefix, depth + 1)
    found: set[str] = set()
    for name, sub in (schema.get("properties") or {}).items():
        found.add(prefix + name)
        found |= _property_paths(sub, defs, f"{prefix}{name}.", depth + 1)
    for sub in [*(schema.get("patternProperties") or {}).values(), schema.get("additionalProperties"),
                schema.get("items"), *(schema.get("anyOf") or [])]:
        if isinstance(sub, dict):
            found |= _property_paths(sub, defs, f"{prefix}*." if sub in (schema.get("additionalProperties"),
                                     *(schema.get("patternProperties") or {}).values()) else prefix, depth + 1)
    return found


def _paths(schema: dict) -> set[str]:
    return _property_paths(schema, schema.get("$defs", {}))


@pytest.mark.requires("pi16")
@pytest.mark.parametrize("name", sorted(PI16_FILES))
def test_our_schema_names_every_key_pi16s_schema_names(name):
    from support.programs import require_real

    theirs = json.loads((require_real("pi16") / "schemas" / PI16_FILES[name]).read_text())
    # objects handed to the provider as written: named, their insides not
    passed_on = (".openRouterRouting.", ".chatTemplateArgs.*.", ".chatTemplateKwargs.*.")
    missing = {p for p in _paths(theirs) - _paths(schemas.build(name)) if not any(m in p for m in passed_on)}
    assert not missing, f"{name}: {sorted(missing)}"


def test_every_setting_the_code_reads_is_in_the_settings_schema():
    import re
    from pathlib import Path

    import pi_plugins

    root = Path(pi_plugins.__file__).parent
    read = set()
    for path in [*root.rglob("*.py"), *(root.parent / "pi_core").rglob("*.py")]:
        read |= set(re.findall(r'settings\.get\(\s*"([A-Za-z0-9_.]+)"', path.read_text(encoding="utf-8")))
    read -= {"n_ctx"}  # a model server's own properties, not settings.json
    known = _paths(schemas.build("settings"))
    assert read and not {key for key in read if key not in known}, sorted(k for k in read if k not in known)


def _json_blocks(*pages) -> list[dict]:
    import re

    blocks = []
    for page in pages:
        for text in re.findall(r"```json\n(.*?)```", page.read_text(encoding="utf-8"), re.S):
            try:
                value = json.loads(text)
            except ValueError:
                continue  # a fragment or JSON with comments
            if isinstance(value, dict):
                blocks.append(value)
    return blocks


def test_our_docs_examples_validate():
    from pathlib import Path

    docs = Path(__file__).resolve().parents[2] / "docs"
    models = [b for b in _json_blocks(*docs.glob("*.md")) if "providers" in b]
    settings = [b for b in _json_blocks(docs / "configuration.md", docs / "interactive.md", docs / "packages.md")
                if "providers" not in b and not any(k in b for k in ("type", "jsonrpc", "method"))]
    assert models and settings
    for document in models:
        jsonschema.validate(document, schemas.build("models"))
    for document in settings:
        jsonschema.validate(document, schemas.build("settings"))


@pytest.mark.requires("pi16")
def test_pi16s_own_themes_and_doc_examples_validate_against_ours():
    from support.programs import require_real

    package = require_real("pi16")
    themes = [json.loads(p.read_text()) for p in (package / "dist/modes/interactive/theme").glob("*.json")]
    docs = package / "docs"
    themes += [b for b in _json_blocks(docs / "themes.md") if "colors" in b]
    models = [b for b in _json_blocks(docs / "models.md", docs / "models-configuration.md", docs / "providers.md")
              if "providers" in b]
    settings = _json_blocks(docs / "settings.md")
    assert len(themes) >= 2 and models and settings
    for document in themes:
        jsonschema.validate(document, schemas.build("theme"))
    for document in models:
        jsonschema.validate(document, schemas.build("models"))
    for document in settings:
        jsonschema.validate(document, schemas.build("settings"))


def test_files_pointing_at_the_schemas_load_cleanly(tmp_path):
    from pi_core.app.settings import Settings
    from pi_plugins.interactive.themes import palette_from

    (tmp_path / "settings.json").write_text(json.dumps({"$schema": schemas.URLS["settings"], "theme": "light"}))
    settings = Settings.load(tmp_path, tmp_path, project_trusted=True)
    assert settings.problems == [] and settings.get("theme") == "light"
    theme = {"$schema": schemas.URLS["theme"], "name": "mine", "colors": {"accent": "#ff0000"}}
    jsonschema.validate(theme, schemas.build("theme"))
    palette_from(theme)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"name": "x", "colors": {"acent": "#ff0000"}}, schemas.build("theme"))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"terminal": {"images": "sixel"}}, schemas.build("settings"))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"providers": {"x": {"models": [{"name": "no id"}]}}}, schemas.build("models"))

"""``pi --list-models [SEARCH]``: the models pi can use (those found on local servers
marked), in pi's table and in pi's order."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Set

import click

from pi_core.protocol.model import Model


async def list_models(args) -> int:
    """``pi --list-models [SEARCH]``: the models that can be used, as pi's table."""
    from pi_core.app.discovery import load_plugins
    from pi_core.app.settings import Settings
    from pi_core.paths import agent_dir
    from pi_plugins.cli.wiring import model_wish
    from pi_plugins.models.registry import ModelRegistry
    from pi_plugins.models.start_model import find_local_models

    cwd, home = os.getcwd(), agent_dir()
    settings = Settings.load(cwd, home)
    plugins = load_plugins(cwd=cwd, agent_dir=home, extension_paths=args.extensions,
                           discover=not args.no_extensions, settings=settings)
    registry = await ModelRegistry.from_plugins(plugins, agent_dir=home)
    looked = await find_local_models(registry, plugins, settings, **model_wish(args))
    # pi lists what the search matched by provider and id, not by how well it matched
    models = sorted(registry.search(args.list_models or ""),
                    key=lambda m: (collation_key(m.provider), collation_key(m.id)))
    if not models:
        # pi's words: nothing usable at all, or nothing usable that the search matches
        if args.list_models and registry.available():
            click.echo(f'No models matching "{args.list_models}"')
        else:
            from pi_plugins.models.auth import no_models_available

            click.echo(no_models_available())
        tried = probed_endpoints(plugins, settings) if looked and not registry.local else []
        if tried:
            click.echo(f"No local model server answered at {', '.join(tried)} "
                       "(the setting localModels.endpoints changes the list).")
        return 0
    click.echo(model_table(models, registry.local))
    return 0


def probed_endpoints(plugins, settings) -> list[str]:
    """The endpoints the ``discover_models`` plugins tried, for those that say
    (a module-level ``probed_endpoints(settings)``, as the built-in local_models has)."""
    found: list[str] = []
    for impl in plugins.impls("discover_models"):
        describe = getattr(sys.modules.get(impl.function.__module__), "probed_endpoints", None)
        if callable(describe):
            try:
                found += [e for e in describe(settings) if e not in found]
            except Exception:  # a plugin's description is no reason to fail
                pass
    return found


def _tokens(count: int) -> str:
    for size, unit in ((1_000_000, "M"), (1_000, "K")):
        if count >= size:
            value = count / size
            return f"{value:g}{unit}" if value == int(value) else f"{value:.1f}{unit}"
    return str(count)


#: ASCII as the Unicode root collation orders it (what Node's ``localeCompare`` uses):
#: spaces, punctuation and symbols before digits before letters, letters without case.
_COLLATION = " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789abcdefghijklmnopqrstuvwxyz"
_RANK = {c: i for i, c in enumerate(_COLLATION)}


def collation_key(text: str) -> tuple:
    """A sort key that orders ASCII text as pi's ``localeCompare`` does: by character
    without case first, then lower case before upper case (``~anthropic/…`` before
    ``anthropic/…``, ``deepseek-ai/…`` after ``XiaomiMiMo/…``)."""
    primary = tuple(_RANK.get(c.lower(), len(_COLLATION) + ord(c)) for c in text)
    return primary, tuple(c.isupper() for c in text)


def model_table(models: Iterable[Model], local: Set[str] = frozenset()) -> str:
    """The ``--list-models`` table: provider, model, context, max-out, thinking, images;
    models found on local servers (keys in ``local``) add a column that marks them."""
    models = list(models)
    marked = any(m.key in local for m in models)
    header = ("provider", "model", "context", "max-out", "thinking", "images") + (("source",) if marked else ())
    rows = [(m.provider, m.id, _tokens(m.context_window), _tokens(m.max_tokens),
             "yes" if m.reasoning else "no", "yes" if m.accepts_images else "no")
            + ((("local" if m.key in local else ""),) if marked else ()) for m in models]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    # every cell padded to its column's width, the last one too (pi's lines end in spaces)
    return "\n".join("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
                     for row in [header, *rows])

"""pi-hello: a `greet` tool. Imported at every start of pi, so it stays light: the
work (and anything heavy it needs) is imported when the tool runs."""

from pi_core import hookimpl, tool


@tool(parameters={"type": "object", "properties": {"name": {"type": "string"}}})
def greet(args, run):
    """Greet someone by name."""
    from datetime import date  # a heavy import would go here, not at the top

    return f"Hello, {args.get('name', 'world')}! Today is {date.today():%A}."


@hookimpl
def register_tools():
    return [greet]

"""One cattrs converter between the protocol's attrs classes and pi's JSON shapes.

Every attrs class of the protocol is mapped the same way: attribute ``tool_call_id`` is
key ``toolCallId``; an optional attribute (default ``None``) is left out while it is
``None``, as pi leaves out undefined fields; keys the class does not know are kept in its
``extra`` dict and written back after the known ones. Unions are told apart by ``role``
(messages) or ``type`` (content blocks, session lines); a role or type this version does
not know becomes an ``Unknown*`` object that writes back exactly what was read."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

import attrs
import orjson  # three times faster than the standard library on session files

from pi_core.protocol import entries as e
from pi_core.protocol import messages as m


class DecodeError(ValueError):
    """A JSON value that cannot be read as the protocol type it should be."""


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


@functools.cache
def converter() -> Any:
    """The cattrs converter, made on first use (importing cattrs and generating its hooks
    is a few ms a start that writes nothing need not pay)."""
    import cattrs

    # Without detailed validation cattrs' generated code calls each field's hook directly
    # instead of collecting every error of a value in exception groups: resuming a long
    # session structures 20,000 entries, and a bad line is still told by its first error.
    made = cattrs.Converter(detailed_validation=False)
    # JSON scalars and free-form values pass through untouched: fidelity over coercion
    # (cattrs would turn a None into the string "None" for a ``str`` field).
    for scalar in (str, int, float, bool, dict, Any):
        made.register_structure_hook(scalar, lambda v, _t: v)
    for scalar in (str, int, float, bool, dict):  # and their optional kinds, in one call
        made.register_structure_hook(scalar | None, lambda v, _t: v)
    made.register_unstructure_hook(dict, lambda v: v)
    made.register_unstructure_hook_factory(attrs.has, lambda cls: _unstructure_factory(cls, made))
    made.register_structure_hook_factory(attrs.has, lambda cls: _structure_factory(cls, made))
    for unknown in (m.UnknownContent, m.UnknownMessage, e.UnknownEntry):
        made.register_unstructure_hook(unknown, lambda obj: obj.data)
    made.register_structure_hook(m.Content, structure_content)
    made.register_structure_hook(m.UserContent, structure_content)
    made.register_structure_hook(m.AgentMessage, structure_message)
    made.register_structure_hook(m.Message, structure_message)
    made.register_structure_hook(e.Entry, structure_line)
    made.register_structure_hook_func(lambda t: t in _CONTENT_TYPES, _structure_content_list)
    return made


def _field_overrides(cls: type) -> dict:
    from cattrs.gen import override

    overrides = {}
    for a in attrs.fields(cls):
        if a.name == "_extra" or a.metadata.get("transient"):
            overrides[a.name] = override(omit=True)
        else:
            optional = a.default is None and not a.metadata.get("always_written")
            overrides[a.name] = override(rename=camel(a.alias), omit_if_default=optional)
    return overrides


def _unstructure_factory(cls: type, converter: Any):
    from cattrs.gen import make_dict_unstructure_fn

    overrides = _field_overrides(cls)
    base: Callable[[Any], dict] = make_dict_unstructure_fn(
        cls, converter, _cattrs_include_init_false=True, **overrides)
    # cattrs writes omittable fields last; where one sits before a required field in pi's
    # order (a tool result's ``details``), put the keys back in declaration order.
    written = [a for a in attrs.fields(cls) if not overrides[a.name].omit]
    order = tuple(camel(a.alias) for a in written)
    optional = [i for i, a in enumerate(written) if overrides[a.name].omit_if_default]
    misplaced = frozenset(order[i] for i in optional if any(
        j > i and j not in optional for j in range(len(order))))
    has_extra = "_extra" in attrs.fields_dict(cls)
    streamed = hasattr(cls, "_flush")  # join a streaming block's pending deltas first
    if not (misplaced or has_extra or streamed):
        return base

    def unstructure(obj):
        if streamed:
            obj._flush()
        d = base(obj)
        if misplaced and not misplaced.isdisjoint(d):
            d = {key: d[key] for key in order if key in d}
        if has_extra and obj._extra:
            for key, value in obj._extra.items():
                d.setdefault(key, value)
        return d

    return unstructure


def _structure_factory(cls: type, converter: Any):
    from cattrs.gen import make_dict_structure_fn

    base: Callable[..., Any] = make_dict_structure_fn(cls, converter, **_field_overrides(cls))
    known = frozenset(
        camel(a.alias) for a in attrs.fields(cls)
        if a.name != "_extra" and not a.metadata.get("transient")
    )
    if "_extra" not in attrs.fields_dict(cls):
        return base

    def structure(d, _type):
        obj = base(d, cls)
        if not known.issuperset(d):
            obj.extra = {k: v for k, v in d.items() if k not in known}
        return obj

    return structure


def _dispatcher(key: str, table: dict[str, type], unknown: type, what: str):
    """A structure hook that picks the class by ``d[key]``."""
    hooks: dict[str, tuple[Any, type]] = {}

    def structure(d, _type=None):
        try:
            hook, cls = hooks[d[key]]
        except (KeyError, TypeError):
            if not isinstance(d, dict):
                raise DecodeError(
                    f"expected a JSON object for a {what}, got {type(d).__name__}") from None
            tag = d.get(key)
            cls = table.get(tag) if isinstance(tag, str) else None
            if cls is None:
                return unknown(d)
            hook, cls = hooks[tag] = (converter().get_structure_hook(cls), cls)
        return hook(d, cls)

    return structure


structure_content = _dispatcher(
    "type",
    {"text": m.TextContent, "image": m.ImageContent, "thinking": m.ThinkingContent,
     "toolCall": m.ToolCall},
    m.UnknownContent,
    "content block",
)
structure_message = _dispatcher(
    "role",
    {"system": m.SystemMessage, "user": m.UserMessage, "assistant": m.AssistantMessage, "toolResult": m.ToolResultMessage,
     "bashExecution": m.BashExecutionMessage, "custom": m.CustomMessage,
     "branchSummary": m.BranchSummaryMessage, "compactionSummary": m.CompactionSummaryMessage},
    m.UnknownMessage,
    "message",
)
structure_line = _dispatcher(
    "type",
    {"session": e.SessionHeader, "message": e.MessageEntry, "model_change": e.ModelChangeEntry,
     "thinking_level_change": e.ThinkingLevelChangeEntry, "compaction": e.CompactionEntry,
     "branch_summary": e.BranchSummaryEntry, "custom": e.CustomEntry,
     "custom_message": e.CustomMessageEntry, "label": e.LabelEntry, "usage": e.UsageEntry,
     "context_edit": e.ContextEditEntry, "session_info": e.SessionInfoEntry},
    e.UnknownEntry,
    "session line",
)


_TEXT_OR_BLOCKS = str | list[m.UserContent]  # a user's or a plugin's content
_CONTENT_TYPES = (_TEXT_OR_BLOCKS, list[m.Content], list[m.UserContent])


def _structure_content_list(value, type_=None):
    """Content blocks (or, where the type allows one, a string)."""
    if isinstance(value, str) and type_ == _TEXT_OR_BLOCKS:
        return value
    if not isinstance(value, list):
        kinds = "a string or a list" if type_ == _TEXT_OR_BLOCKS else "a list"
        raise DecodeError(f"content must be {kinds}, got {type(value).__name__}")
    return [structure_content(block) for block in value]


# ---------------------------------------------------------------- public helpers


def to_json(obj: Any) -> Any:
    """The pi JSON value (dicts, lists, scalars) of a protocol object."""
    return converter().unstructure(obj)


def from_json(value: Any, cls: Any) -> Any:
    """Read a JSON value as ``cls``; raises :class:`DecodeError` with the reason."""
    return _decoded(converter().structure, value, cls)


def message_from_json(value: dict) -> m.AgentMessage:
    return from_json(value, m.AgentMessage)


def line_from_json(value: dict) -> e.SessionHeader | e.Entry:
    """A session file line (header or entry) from its JSON value."""
    return _decoded(structure_line, value)  # the dispatcher's hook directly: no lookup per line


def _decoded(structure: Callable[..., Any], *args: Any) -> Any:
    try:
        return structure(*args)
    except DecodeError:
        raise
    except Exception as exc:  # cattrs wraps field errors in groups; flatten to one line
        raise DecodeError(_describe(exc)) from exc


def dumps(obj: Any) -> str:
    """One compact JSON line, non-ASCII kept as is (as pi writes it); orjson, with the
    standard library for what orjson refuses (a lone surrogate, an integer over 64 bits)."""
    value = to_json(obj)
    try:
        return orjson.dumps(value).decode("utf-8")
    except TypeError:  # orjson.JSONEncodeError is one
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def loads_json(data: bytes | bytearray | memoryview | str) -> Any:
    """Parse one JSON text (:class:`DecodeError` with the reason). What orjson refuses but
    JavaScript accepts (an escaped lone surrogate, ``"\\ud800"``, which ``JSON.stringify``
    writes for a half emoji) falls back to :mod:`json`; invalid UTF-8 becomes U+FFFD, as
    pi reads it: one bad byte never costs a whole line."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        pass
    try:
        if not isinstance(data, str):
            data = bytes(data).decode("utf-8", "replace")  # U+FFFD for a bad byte, as pi
        return json.loads(data)
    except ValueError as exc:
        raise DecodeError(f"invalid JSON: {exc}") from exc


def _describe(exc: BaseException) -> str:
    import cattrs

    if isinstance(exc, cattrs.BaseValidationError):
        from cattrs.v import format_exception

        def fmt(error: BaseException, type_: Any) -> str:
            if isinstance(error, DecodeError):
                return str(error)
            if isinstance(error, (AttributeError, TypeError)) and type_ is not None:
                return f"expected {getattr(type_, '__name__', type_)}, got something else"
            return format_exception(error, type_)

        return "; ".join(cattrs.transform_error(exc, format_exception=fmt))
    return f"{type(exc).__name__}: {exc}"

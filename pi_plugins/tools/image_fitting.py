"""Images fitted to the model's limits as they enter the conversation, as pi 1.6 fits
them: a prompt's attached images (after ``before_agent_start``, so a model chosen there
decides the limits), the images of steering and follow-up messages, and the images any
tool returns (after the other ``after_tool_call`` handlers, so images they put in are
fitted too). The limits are the model's ``inputLimits.images.resize`` or pi's defaults
(:func:`pi_plugins.tools.read.fit_image`, the same fitting ``read`` does);
``images.autoResize: false`` leaves every image as it is.

A prompt's image that cannot be made small enough is left out and said in a note after
its text; a tool's is kept as the tool made it (the tool chose it), as in 1.6.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

import attrs

from pi_core.protocol.messages import ImageContent, TextContent

OMITTED = "[Image omitted: could not be resized below the inline image size limit.]"


def _wanted(ctx: Any) -> bool:
    settings = getattr(ctx, "settings", None)
    return settings is None or settings.get("images.autoResize", True) is not False


def _fit(image: ImageContent, ctx: Any) -> tuple[ImageContent, str | None] | None:
    """(the image as it is to be sent, its note or None); None: it could not be fitted."""
    from pi_plugins.tools.read import fit_image

    try:
        raw = base64.b64decode(image.data, validate=False)
    except (binascii.Error, ValueError):
        return None
    fitted = fit_image(raw, image.mime_type, getattr(getattr(ctx, "model", None), "image_resize", None))
    if fitted is None:
        return None
    data, mime, note = fitted
    if data is raw and mime == image.mime_type:
        return image, note
    return ImageContent(data=base64.b64encode(data).decode("ascii"), mime_type=mime), note


def fit_images(images: list, ctx: Any) -> tuple[list, list[str]]:
    """A prompt's images fitted, and the notes to add to its text (pi 1.6's hints)."""
    if not images or not _wanted(ctx):
        return images, []
    kept, notes = [], []
    for image in images:
        done = _fit(image, ctx) if isinstance(image, ImageContent) else (image, None)
        if done is None:
            notes.append(OMITTED)
            continue
        kept.append(done[0])
        if done[1]:
            notes.append(done[1])
    return kept, notes


def with_notes(text: str, notes: list[str]) -> str:
    return f"{text}\n\n" + "\n".join(notes) if notes else text


def fit_message(message: Any, ctx: Any) -> Any:
    """A queued user message with its images fitted (its first text gets the notes)."""
    content = getattr(message, "content", None)
    if not isinstance(content, list) or not any(isinstance(b, ImageContent) for b in content):
        return message
    before = [b for b in content if isinstance(b, ImageContent)]
    images, notes = fit_images(before, ctx)
    if not notes and len(images) == len(before) and all(a is b for a, b in zip(images, before, strict=True)):
        return message
    others = [b for b in content if not isinstance(b, ImageContent)]
    if notes and others and isinstance(others[0], TextContent):
        others[0] = TextContent(with_notes(others[0].text, notes))
    elif notes:
        others.insert(0, TextContent("\n".join(notes)))
    return attrs.evolve(message, content=[*others, *images])


def fit_tool_images(content: list, ctx: Any) -> list | None:
    """A tool result's content with its images fitted, each note after its image; None:
    nothing changed. An image that cannot be fitted stays as the tool made it."""
    if not any(isinstance(b, ImageContent) for b in content) or not _wanted(ctx):
        return None
    out: list = []
    changed = False
    for block in content:
        done = _fit(block, ctx) if isinstance(block, ImageContent) else None
        if done is None or (done[0] is block and not done[1]):
            out.append(block)
            continue
        out.append(done[0])
        if done[1]:
            out.append(TextContent(done[1]))
        changed = True
    return out if changed else None

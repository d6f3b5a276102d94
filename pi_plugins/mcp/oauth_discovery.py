"""pi 1.6's ``discovery`` block in ``mcp-auth.json``, written with new tokens: the
authorization server's URL and metadata, and the protected resource's metadata and its
URL, so a refresh in a later process reaches the token endpoint of an authorization
server on another origin without discovering it again."""

from __future__ import annotations

from typing import Any


def discovery_block(context: Any, metadata_url: str | None, resource_metadata_url: str | None) -> dict | None:
    """The block for the SDK's OAuth ``context``; None with a configured metadata URL
    (pi 1.6 keeps none then, so a changed URL applies at once) or before discovery."""
    metadata = context.oauth_metadata
    if metadata_url or metadata is None:
        return None
    block: dict = {"authorizationServerUrl": context.auth_server_url or str(metadata.issuer),
                   "authorizationServerMetadata": metadata.model_dump(mode="json", exclude_none=True)}
    if context.protected_resource_metadata is not None:
        block["resourceMetadata"] = context.protected_resource_metadata.model_dump(mode="json", exclude_none=True)
    if resource_metadata_url:
        block["resourceMetadataUrl"] = resource_metadata_url
    return block

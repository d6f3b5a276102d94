"""The provider author's kit: :class:`MessageBuilder` turns streamed pieces into the
protocol's stream events, :mod:`~pi_plugins.providers.kit.partial_json` reads tool-call
arguments while they stream."""

from pi_plugins.providers.kit.builder import MessageBuilder, parse_arguments

__all__ = ["MessageBuilder", "parse_arguments"]

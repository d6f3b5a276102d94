"""A request body compressed with zstd, as pi 1.6 sends Codex's over server-sent events
(``Content-Encoding: zstd``, level 3; the WebSocket frame stays plain JSON, as there).

Python 3.14's :mod:`compression.zstd` where it exists, else the ``zstandard`` package: the
reference C library's bindings, a dependency for older Pythons. Imported on the first
request that compresses; without either, the body goes uncompressed, as pi 1.6's does
where its runtime has no zstd."""

from __future__ import annotations

from collections.abc import Callable

LEVEL = 3  # pi 1.6's REQUEST_COMPRESSION_ZSTD_LEVEL


def _compressor() -> Callable[[bytes], bytes] | None:
    try:
        from compression import zstd  # type: ignore[import-not-found]  # Python 3.14+

        return lambda data: zstd.compress(data, level=LEVEL)
    except ImportError:
        pass
    try:
        import zstandard
    except ImportError:
        return None
    return zstandard.ZstdCompressor(level=LEVEL).compress


def compressed(data: bytes) -> bytes | None:
    """``data`` compressed, or None when no zstd is at hand (the caller sends it plain)."""
    compress = _compressor()
    if compress is None:
        return None
    try:
        return compress(data)
    except Exception:  # a compressor that fails: the plain body still goes
        return None

"""Which TCP addresses processes listen on, read from ``/proc/net/tcp{,6}`` and the
processes' socket file descriptors (what ``ss -ltnp`` shows, without needing ``ss``)."""

from __future__ import annotations

import ipaddress
import os
import socket
import struct


def _address(hex_address: str) -> tuple[str, int]:
    host, port = hex_address.split(":")
    raw = bytes.fromhex(host)
    if len(raw) == 4:
        return socket.inet_ntop(socket.AF_INET, struct.pack("<I", int(host, 16))), int(port, 16)
    words = struct.unpack(">4I", raw)  # four host-order 32-bit words
    return socket.inet_ntop(socket.AF_INET6, struct.pack("<4I", *words)), int(port, 16)


def listening_sockets() -> dict[str, tuple[str, int]]:
    """{socket inode: (address, port)} of every listening TCP socket."""
    found = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                rows = f.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if fields[3] == "0A":  # TCP_LISTEN
                found[fields[9]] = _address(fields[1])
    return found


def listened_on(pids) -> list[tuple[int, str, int]]:
    """(pid, address, port) for each listening socket the processes hold."""
    sockets, out = listening_sockets(), []
    for pid in pids:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith("socket:[") and target[8:-1] in sockets:
                out.append((int(pid), *sockets[target[8:-1]]))
    return out


def is_loopback(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    mapped = getattr(ip, "ipv4_mapped", None)
    return (mapped or ip).is_loopback


def descendants(root: int) -> set[int]:
    """``root`` and every process below it."""
    parents = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    parents[int(name)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found, changed = {root}, True
    while changed:
        changed = False
        for pid, parent in parents.items():
            if parent in found and pid not in found:
                found.add(pid)
                changed = True
    return found

"""Loaded by every Python process started with this folder on PYTHONPATH: refuse and record any
connection or DNS lookup that is not loopback. The record file is ``$NETGUARD_LOG``."""

import os
import socket

_LOG = os.environ.get("NETGUARD_LOG", "")
_LOOPBACK = {"127.0.0.1", "::1", "localhost", "0.0.0.0", "::"}


def _record(what: str) -> None:
    if _LOG:
        with open(_LOG, "a") as f:
            f.write(f"{os.getpid()} {what}\n")


def _allowed(address: object) -> bool:
    if isinstance(address, tuple) and address:
        host = str(address[0])
        return host in _LOOPBACK or host.startswith("127.")
    return True  # AF_UNIX paths


_connect = socket.socket.connect
_connect_ex = socket.socket.connect_ex
_getaddrinfo = socket.getaddrinfo


def connect(self, address):  # type: ignore[no-untyped-def]
    if not _allowed(address):
        _record(f"connect {address!r}")
        raise OSError(f"netguard: outbound connection to {address!r} blocked")
    return _connect(self, address)


def connect_ex(self, address):  # type: ignore[no-untyped-def]
    if not _allowed(address):
        _record(f"connect_ex {address!r}")
        return 111
    return _connect_ex(self, address)


def getaddrinfo(host, *args, **kwargs):  # type: ignore[no-untyped-def]
    if host is not None and str(host) not in _LOOPBACK and not str(host).startswith("127."):
        _record(f"getaddrinfo {host!r}")
        raise socket.gaierror(f"netguard: DNS lookup of {host!r} blocked")
    return _getaddrinfo(host, *args, **kwargs)


socket.socket.connect = connect  # type: ignore[method-assign]
socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]
socket.getaddrinfo = getaddrinfo

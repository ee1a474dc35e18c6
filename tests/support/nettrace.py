"""Run a command in a network namespace with no route out (only ``lo`` up) under ``strace -f``, and list every
outbound attempt it made: a connect/send to a non-loopback address, or to port 53 anywhere (a DNS query, even
to a loopback resolver). Native code (onnxruntime, Chroma's Rust core, llama.cpp) is seen as well as Python's
sockets, because the record is taken at the system-call level.

Needs root (``unshare --net``), ``ip`` and ``strace``; :func:`unavailable` says why not when they are missing.
"""

from __future__ import annotations

import ipaddress
import os
import re
import shutil
import subprocess
from pathlib import Path

#: The system calls that send something somewhere (``connect`` for TCP and for UDP DNS, the sends with an address).
TRACED = "connect,sendto,sendmsg,sendmmsg"
_INET = re.compile(r'sa_family=AF_INET, sin_port=htons\((\d+)\), sin_addr=inet_addr\("([^"]+)"\)')
_INET6 = re.compile(r'sa_family=AF_INET6, sin6_port=htons\((\d+)\),.*?inet_pton\(AF_INET6, "([^"]+)"')


def unavailable() -> str:
    """Why the isolation cannot run here ("" when it can)."""
    for tool in ("unshare", "strace", "ip"):
        if not shutil.which(tool):
            return f"{tool} is not installed (scripts/test.sh installs strace)"
    if os.geteuid() != 0:
        return "needs root for `unshare --net`"
    probe = subprocess.run(["unshare", "--net", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        return f"`unshare --net` is not allowed here: {probe.stderr.strip()}"
    return ""


def isolated(argv: list[str], trace: Path) -> list[str]:
    """``argv`` wrapped: a fresh network namespace with ``lo`` up, traced (children too) into ``trace``."""
    script = 'ip link set lo up && exec strace -f -qq -e trace="$0" -o "$1" -- "${@:2}"'
    return ["unshare", "--net", "--", "bash", "-c", script, TRACED, str(trace), *argv]


def _outbound(port: int, host: str) -> bool:
    if port == 53:
        return True  # a DNS query, wherever the resolver is
    try:
        address = ipaddress.ip_address(host.split("%")[0])
    except ValueError:
        return True
    mapped = getattr(address, "ipv4_mapped", None)
    return not (address.is_loopback or address.is_unspecified or (mapped is not None and mapped.is_loopback))


def attempts(trace: Path) -> list[str]:
    """The lines of an :func:`isolated` trace that are outbound attempts (see the module docstring)."""
    if not trace.exists():
        return []
    out = []
    for line in trace.read_text(errors="replace").splitlines():
        for m in (*_INET.finditer(line), *_INET6.finditer(line)):
            if _outbound(int(m.group(1)), m.group(2)):
                out.append(line.strip())
                break
    return out

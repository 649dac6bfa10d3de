"""NCCL settings as NCCL itself resolves them: the process environment first, then
``NCCL_CONF_FILE`` if set (else the service user's ``~/.nccl.conf``), then ``/etc/nccl.conf``.
A config file never overrides a variable already set (NCCL loads them with
``setenv(name, value, 0)``), and the home directory is the user's passwd entry.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ._model import Server, Setting

if TYPE_CHECKING:
    from .._sandbox._context import RecipeContext

SYSTEM_CONF = "/etc/nccl.conf"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def conf_assignments(lines: list[str]) -> list[tuple[int, str, str]]:
    """(line, name, value) as NCCL's setEnvFile reads a config file: a line starting with '#'
    is skipped, and so is one without '='; the name is all the text before the first '=' and
    the value all after it (the newline taken off, nothing trimmed: ``export NAME=…`` names
    "export NAME", ``NAME = v`` names "NAME " with value " v"); each is at most 1023 bytes;
    setenv() refuses an empty name."""
    out = []
    for n, line in enumerate(lines, 1):
        if line.startswith("#") or "=" not in line:
            continue
        name, _, value = line.partition("=")
        if name:
            out.append((n, name[:1023], value[:1023]))
    return out


async def home_of(ctx: RecipeContext, user: str) -> str:
    if user == "root":
        return "/root"
    hits = await ctx.tool("grep", optional=True, pattern=f"^{re.escape(user)}:",
                          path="/etc/passwd", max_matches=1)
    for m in (hits or {}).get("matches", []):
        fields = m["text"].split(":")
        if len(fields) >= 6 and fields[5]:
            return fields[5]
    return f"/home/{user}"


async def resolve_nccl(ctx: RecipeContext, server: Server) -> None:
    out = {k: v for k, v in server.env.items() if k.startswith("NCCL_")}
    conf = out.get("NCCL_CONF_FILE")
    if server.contained:  # the container's own HOME, not the host's passwd entry
        home = server.env["HOME"].value if "HOME" in server.env else (
            "/root" if server.user == "root" else f"/home/{server.user}")
    else:
        home = await home_of(ctx, server.user)
    files = [conf.value] if conf else [f"{home}/.nccl.conf"]
    files.append(SYSTEM_CONF)
    for path in files:
        host = server.host_path(path)
        if not server.visible(path):
            server.notes.append(f"{path} inside the container is not visible from the host "
                                "(not mounted): NCCL settings it may hold are unknown")
            continue
        lines = await ctx.read_lines(host, optional=True)
        server.nccl_checked.append(host)
        for n, name, value in conf_assignments(lines or []):
            raw = f"{name}={value}"
            if not _NAME.fullmatch(name):  # set in the environment, but under another name
                meant = name.split()[-1] if name.split() else name
                if meant.startswith("NCCL_"):
                    server.problems.append(
                        f"{host}:{n}: {raw.strip()!r} sets a variable named {name!r}, not "
                        f"{meant}: NCCL takes the text before '=' as the name, with no "
                        "trimming and no shell syntax")
                continue
            if name.startswith("NCCL_") and name not in out and \
                    name not in server.unknown_env:  # the environment may set it: unknown
                ev = ctx.cite("file", f"{host}:{n}", raw.strip(), raw)
                out[name] = Setting(name=name, value=value, source=host, line=n,
                                    evidence=[ev], origin=path)
    server.nccl = out

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
        parsed = await ctx.tool("parse_config", optional=True, path=host, format="dotenv")
        server.nccl_checked.append(host)
        for e in (parsed or {}).get("entries", []):
            if e["key"].startswith("NCCL_") and e["key"] not in out and \
                    e["key"] not in server.unknown_env:  # the environment may set it: unknown
                out[e["key"]] = Setting(name=e["key"], value=str(e["value"]), source=e["source"],
                                        line=e["line"], evidence=[e["evidence_id"]],
                                        origin=path)
    server.nccl = out

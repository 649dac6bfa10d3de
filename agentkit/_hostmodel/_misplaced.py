"""Where NCCL tuning went when it does not reach the server: the places people put it by
mistake, each with the reason it never gets to the serving process.

- ``/etc/environment``: pam_env reads it for login sessions; systemd starts a service without
  one (unless the unit sets ``PAMName=``), and a container never sees the host's file.
- ``/etc/profile``, ``/etc/profile.d/*.sh``, ``/etc/bash.bashrc``, the service user's
  ``~/.profile``, ``~/.bash_profile``, ``~/.bash_login``, ``~/.bashrc``: read only by a login
  or an interactive shell (bash(1), INVOCATION); the server is not started from one.
- ``ExecStartPre=``: its own process, which ends before ``ExecStart=`` starts
  (systemd.service(5)); what it exports goes with it.
- A start script's plain assignment that is never exported (bash(1): only exported variables
  are passed to the commands it runs) — found by the reader, :attr:`Server.shell_only`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ._model import Server
from ._nccl import home_of

if TYPE_CHECKING:
    from .._sandbox._context import RecipeContext

_SET = re.compile(r"""(?:^|[\s;'"])(NCCL_[A-Za-z0-9_]+)=("[^"]*"|'[^']*'|[^\s;'"]*)""")
_LOGIN = ("read only by a login or an interactive shell, and the server's process is not "
          "started from one")


def _reasons(server: Server) -> dict[str, str]:
    contained = server.contained
    env = ("the container gets its image's and its runtime's environment, never the host's "
           "/etc/environment" if contained else
           "pam_env reads it for login sessions, and systemd starts a service without one "
           "(the unit sets no PAMName=)" if server.runtime == "systemd" else
           "pam_env reads it for login sessions; the process was not started from one")
    return {"environment": env,
            "login": (f"{_LOGIN}; a container does not read the host's shell files"
                      if contained else _LOGIN),
            "pre": "ExecStartPre= runs as its own process, which ends before ExecStart= "
                   "starts: what it sets or exports goes with it"}


async def misplaced_nccl(ctx: RecipeContext, server: Server) -> list[dict[str, Any]]:
    """NCCL settings found where they do not reach ``server``, and not in effect for it
    (absent, or another value): {name, value, where, reason, evidence_id}."""
    home = await home_of(ctx, server.user)
    files = [("environment", "/etc/environment"), ("login", "/etc/profile"),
             ("login", "/etc/profile.d/*.sh"), ("login", "/etc/bash.bashrc"),
             ("login", "/etc/bashrc"),
             *[("login", f"{home}/{f}") for f in (".profile", ".bash_profile", ".bash_login",
                                                   ".bashrc")],
             *[("pre", f) for f in server.files if not f.startswith("/etc/default/")]]
    if server.runtime != "systemd":
        files = [f for f in files if f[0] != "pre"]
    calls = [("grep", {"pattern": r"NCCL_[A-Za-z0-9_]+=", "path": path, "max_matches": 200})
             for _, path in files]
    pam = [f for f in server.files if server.runtime == "systemd"]
    got = await ctx.tools(calls + [("grep", {"pattern": r"^\s*PAMName\s*=", "path": p,
                                             "max_matches": 1}) for p in pam])
    with_pam = any((g or {}).get("matches") for g in got[len(calls):])
    reasons = _reasons(server)
    out: list[dict[str, Any]] = []
    for (kind, _), result in zip(files, got[: len(calls)], strict=True):
        if kind == "environment" and with_pam:
            continue  # PAMName=: pam_env may read /etc/environment for it; not said either way
        for m in (result or {}).get("matches", []):
            out += _rows(server, kind, m, reasons[kind])
    for name, s in sorted(server.shell_only.items()):
        if _in_effect(server, name, s.value):
            continue
        out.append({"name": name, "value": s.value, "where": s.where,
                    "reason": "it is a shell variable the script never exports, and bash "
                              "passes only exported variables to the programs it starts",
                    "evidence_id": s.evidence[0] if s.evidence else ""})
    return out


def _rows(server: Server, kind: str, m: dict[str, Any], reason: str) -> list[dict[str, Any]]:
    text = str(m["text"])
    if text.lstrip().startswith("#"):
        return []
    if kind == "pre":
        key = re.match(r"\s*([A-Za-z]+)\s*=", text)
        if key is None or key.group(1) != "ExecStartPre":
            return []
    rows = []
    for name, value in _SET.findall(text):
        value = value[1:-1] if value[:1] in "'\"" and value[-1:] == value[:1] else value
        if not _in_effect(server, name, value):
            rows.append({"name": name, "value": value, "where": f"{m['path']}:{m['line']}",
                         "reason": reason, "evidence_id": m["evidence_id"]})
    return rows


def _in_effect(server: Server, name: str, value: str) -> bool:
    have = server.nccl.get(name) or server.env.get(name)
    return have is not None and have.value == value

"""The exact change, never applied: the systemd drop-in (or Compose / Kubernetes snippet) that
carries NCCL tuning another server on the host has to the current server that lacks it, or
that enables an FP8 KV cache where the installed engine accepts it, with the restart it needs.

agentkit stays read-only: this is text in the answer. The drop-in is written in systemd's own
syntax (systemd.syntax(7), systemd.service(5)): ``Environment="NAME=VALUE"`` with ``\\`` and
``"`` escaped; an ``ExecStart=`` override starts with an empty ``ExecStart=`` (which clears the
list) and escapes ``%`` as ``%%`` (specifiers) and ``$`` as ``$$`` (variable expansion). The
tests check it offline with ``systemd-analyze verify`` on a copy of the unit tree.
"""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

from .._hostmodel import Server
from ._recipe import RecipeContext, recipe_function

_DROPIN_NCCL = "90-nccl-tuning.conf"
_DROPIN_KV = "90-kv-cache-fp8.conf"


def systemd_word(word: str) -> str:
    """One ExecStart= argument as systemd reads it back: quoted when it has to be."""
    word = word.replace("%", "%%").replace("$", "$$")
    if word and not re.search(r"[\s\"'\\;]", word):
        return word
    return '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"'


def env_assignment(name: str, value: str) -> str:
    """``Environment=`` line; quoted so spaces and specifiers survive."""
    text = f"{name}={value}".replace("%", "%%").replace("\\", "\\\\").replace('"', '\\"')
    return f'Environment="{text}"'


def nccl_dropin(settings: list[tuple[str, str]]) -> str:
    lines = ["# Carries the NCCL tuning over from the earlier deployment (written by agentkit,",
             "# not applied)", "[Service]"]
    return "\n".join(lines + [env_assignment(k, v) for k, v in settings]) + "\n"


def exec_dropin(argv: list[str]) -> str:
    lines = ["# Enables the FP8 KV cache (written by agentkit, not applied)", "[Service]",
             "ExecStart=", "ExecStart=" + " ".join(systemd_word(a) for a in argv)]
    return "\n".join(lines) + "\n"


def with_kv_flag(argv: list[str], dtype: str) -> list[str]:
    """The serving command with ``--kv-cache-dtype`` set to ``dtype`` (replaced if given)."""
    out: list[str] = []
    skip = False
    for a in argv:
        if skip:
            skip = False
            continue
        if a == "--kv-cache-dtype":
            skip = True
            continue
        if a.startswith("--kv-cache-dtype="):
            continue
        out.append(a)
    return [*out, "--kv-cache-dtype", dtype]


def _unit_dir(server: Server) -> str:
    # A drop-in for the unit name, in /etc (admin's directory, read after /usr/lib).
    return f"/etc/systemd/system/{server.name}.d"


def _compose_env(server: Server, settings: list[tuple[str, str]]) -> str:
    # JSON is YAML: one line that survives being quoted in a sentence
    env = {k: v for k, v in settings}
    return json.dumps({"services": {server.compose_service: {"environment": env}}})


def _k8s_set_env(server: Server, settings: list[tuple[str, str]], local: str = "") -> str:
    """``kubectl set env`` for the workload's container (all of them when it has one)."""
    workload, _, container = server.name.partition(":")
    ns = next((n.split(" ", 1)[1] for n in server.notes if n.startswith("namespace ")), "")
    target = f"--local -f {local}" if local else workload
    parts = ["kubectl set env", f"-n {ns}" if ns and not local else "", target,
             f"-c {container}" if container else "",
             " ".join(shlex.quote(f"{k}={v}") for k, v in settings), "-o yaml" if local else ""]
    return " ".join(p for p in parts if p)


def nccl_change(server: Server, settings: list[tuple[str, str]], source: str
                ) -> dict[str, Any] | None:
    """The snippet that sets ``settings`` for ``server``, by its runtime; None for a runtime
    agentkit writes no snippet for."""
    what = f"carry {', '.join(f'{k}={v}' for k, v in settings)} over from {source}"
    if server.runtime == "systemd":
        path = f"{_unit_dir(server)}/{_DROPIN_NCCL}"
        return {"what": what, "kind": "systemd drop-in", "path": path,
                "text": nccl_dropin(settings),
                "apply": f"systemctl daemon-reload && systemctl restart {server.name}",
                "verify": f"systemd-analyze verify {server.name}"}
    if server.runtime == "compose" and server.compose_service:
        proj = f" -p {server.compose_project}" if server.compose_project else ""
        # compose.override.yaml beside the project's file is merged over it by default
        where = server.path.rsplit("/", 1)[0] if "/" in server.path else "."
        return {"what": what, "kind": "Compose override", "path": f"{where}/compose.override.yaml",
                "text": _compose_env(server, settings),
                "apply": f"docker compose{proj} up -d {server.compose_service}",
                "verify": f"docker compose{proj} config"}
    if server.runtime == "kubernetes":
        return {"what": what, "kind": "kubectl command", "path": server.path,
                "text": _k8s_set_env(server, settings),
                "apply": "running it updates the workload and rolls its pods",
                "verify": _k8s_set_env(server, settings, local=server.path)}
    return None


def kv_change(server: Server, dtype: str) -> dict[str, Any] | None:
    """The drop-in that adds ``--kv-cache-dtype`` to a systemd unit's own ExecStart=; None
    where the command is elsewhere (a wrapper script, a container)."""
    if server.runtime != "systemd" or server.script or not server.argv:
        return None
    path = f"{_unit_dir(server)}/{_DROPIN_KV}"
    return {"what": f"enable an {dtype} KV cache", "kind": "systemd drop-in", "path": path,
            "text": exec_dropin(with_kv_flag(server.argv, dtype)),
            "apply": f"systemctl daemon-reload && systemctl restart {server.name}",
            "verify": f"systemd-analyze verify {server.name}"}


@recipe_function("exact_change")
async def exact_change(ctx: RecipeContext) -> list[dict[str, Any]]:
    """Snippets for what should be carried over or enabled, never applied: NCCL tuning when
    nccl_settings ran (nccl_not_carried), an FP8 KV cache when kv_cache_support ran and said
    yes for the served model (kv_verdict).
    Sets: changes (a list; empty when nothing is to change)."""
    server: Server | None = ctx.vars.get("server")
    if server is None:
        return []
    changes, ev = [], []
    lost = ctx.facts.get("nccl_not_carried")
    rows = [r for r in (lost.value if lost else []) if r["missing"]]
    if len(rows) > 1:  # which earlier server's tuning to carry over is a choice, not a fact
        ctx.fact("changes_ambiguous", [r["server"] for r in rows], lost.evidence if lost else [])
    if len(rows) == 1:
        row = rows[0]
        settings = [(m["name"], str(m["value"])) for m in row["missing"]]
        change = nccl_change(server, settings, row["server"])
        if change:
            changes.append(change)
            ev += lost.evidence if lost else []
    verdict = ctx.facts.get("kv_verdict")
    target = ctx.facts.get("kv_target_dtype")
    # the verdict is about the model the question names; the drop-in would change the server
    subject_is_served = "subject_model" not in ctx.facts
    if (verdict is not None and verdict.value == "yes" and target is not None
            and subject_is_served):
        change = kv_change(server, str(target.value))
        load = ctx.facts.get("kv_load")
        if change and load is not None and load.value.get("verdict") == "not-bound":
            # possible, but the log shows no use for the capacity yet: say when it pays
            change["only_if"] = "Should the load grow to fill the KV cache"
            ev += load.evidence
        if change:
            changes.append(change)
            ev += verdict.evidence + ctx.facts["exec_start"].evidence
    ctx.fact("changes", changes, ev)
    return changes

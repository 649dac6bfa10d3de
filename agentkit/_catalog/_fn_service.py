"""Recipe functions about the serving unit: discovery, effective environment, flags, NCCL
settings and the service journal."""

from __future__ import annotations

import re
from typing import Any

from .._hostmodel import NOT_TUNING, HostModel, Server, build_host_model, journal_argv
from .._hostmodel import _nccl_values as nccl_values
from ._knowledge import NCCL_VARS
from ._recipe import RecipeContext, StepFailed, recipe_function


def _ambiguity(model: HostModel) -> str:
    parts = []
    for s in model.candidates:
        tuning = ", ".join(f"{k}={v.value} ({v.where})" for k, v in sorted(s.tuning.items()))
        parts.append(f"{s.name} serves {s.model_path or 'an unnamed model'} with TP {s.tp}, "
                     f"{s.state.value}, {s.state.enabled_word}; NCCL tuning: {tuning or 'none'}")
    return (f"Ambiguous: the host does not decide which unit serves the current deployment "
            f"({model.decision}). Per unit: " + "; ".join(parts) + ".")


@recipe_function("serving_unit")
async def serving_unit(ctx: RecipeContext) -> dict[str, Any]:
    """The host model, and the unit that serves the current deployment.

    Sets facts: host, unit, exec_start, engine, environment, server_state; says ambiguous
    (naming every candidate, per unit) when the host does not decide."""
    model = await ctx.shared("host-model", build_host_model)
    ctx.vars["host_model"] = model
    ctx.fact("host", {"servers": [s.summary() for s in model.servers],
                      "current": model.current.name if model.current else None,
                      "ambiguous": [s.name for s in model.candidates],
                      "decision": model.decision, "problems": model.problems},
             model.evidence)
    if model.ambiguous:
        ev = sorted({e for s in model.candidates for e in s.evidence
                     + [x for t in s.tuning.values() for x in t.evidence]})
        ctx.alert(_ambiguity(model), ev)
        raise StepFailed(f"ambiguous: {model.decision}")
    server = model.current
    if server is None:
        also = f" ({'; '.join(model.problems)})" if model.problems else ""
        raise StepFailed(f"no model server found: nothing starts vLLM, SGLang or TensorRT-LLM "
                         f"in {'; '.join(model.looked_in)}{also}")
    ctx.vars["server"] = server
    ev = list(server.argv_evidence)
    ctx.fact("unit", {"name": server.name, "runtime": server.runtime, "noun": server.noun,
                      "path": server.path,
                      "files": server.files, "script": server.script, "gpus": server.gpus,
                      "problems": server.problems, "notes": server.notes,
                      "decision": model.decision,
                      "others": [s.name for s in model.servers if s is not server]},
             server.evidence)
    ctx.fact("exec_start", {"argv": server.argv, "source": server.argv_source,
                            "line": server.argv_line, "problems": server.argv_problems}, ev)
    ctx.fact("engine", server.engine, ev)
    _doubts(ctx, server, ev)
    ctx.fact("environment", {k: v.value for k, v in server.env.items()},
             [e for v in server.env.values() for e in v.evidence])
    st = server.state
    ctx.fact("server_state", {"value": st.value, "detail": st.detail, "enabled": st.enabled,
                              "restarts": st.restarts},
             st.evidence + ([server.failure] if server.failure else []))
    if server.refused:
        ctx.alert(f"{server.name} cannot run: {server.refused}.",
                  [*server.argv_evidence, *st.evidence])
        by = "systemd" if server.runtime == "systemd" else "the engine it starts"
        raise StepFailed(f"{server.name} is refused by {by}: {server.refused}")
    if st.value in ("crash-looping", "failed", "stopped"):
        why = (f"; the last error in its journal: {server.cause}" if server.cause else
               "; its journal's last failure is cited" if server.failure else "")
        ctx.alert(f"{server.name} is not serving: it is {st.value} ({st.detail}){why}.",
                  ctx.facts["server_state"].evidence)
    return {"unit": server.name}


def _doubts(ctx: RecipeContext, server: Server, ev: list[str]) -> None:
    """What every task reading this server depends on and the host does not establish: its
    command line (an image ENTRYPOINT not shown) and its model's host path (a mount whose
    host side is not known, e.g. Compose's ``~``)."""
    if server.argv_problems:
        ctx.alert(f"{server.name} may not run the command line read here: "
                  f"{'; '.join(server.argv_problems)}.", ev)
    weights = server.model_path or ""  # a hub id (org/name) is no path: only a mount's
    unknown = [p for p in server.problems if any(
        f"bind source {src} " in p for src in server.mounts
        if not src.startswith("/") and weights.startswith(src))]
    if unknown:
        ctx.alert(f"The model's host path is not established ({weights}): "
                  f"{'; '.join(unknown)}.", ev)


@recipe_function("serve_flags")
async def serve_flags(ctx: RecipeContext) -> dict[str, Any]:
    """Parallelism, KV-cache dtype, context length, quantization and allreduce flags of the
    serving command. Needs: serving_unit. Sets: serve_args, model_path, kv_cache_dtype,
    tensor_parallel, serve_args_running_differs."""
    ctx.need("exec_start", "serving_unit")
    server: Server = ctx.vars["server"]
    flags = server.flags
    ev = ctx.facts["exec_start"].evidence
    ctx.fact("serve_args", flags, ev)
    if "model" not in flags:
        raise StepFailed("the serving command names no model (no positional MODEL, no "
                         "--model/--model-path)")
    ctx.fact("model_path", server.model_path, ev)
    ctx.fact("kv_cache_dtype", flags.get("kv_cache_dtype", "auto"), ev)
    ctx.fact("kv_cache_dtype_explicit", "kv_cache_dtype" in flags, ev)
    ctx.fact("tensor_parallel", server.tp, ev)
    ctx.fact("custom_allreduce_flag_off", bool(flags.get("disable_custom_all_reduce")), ev)
    ctx.fact("serve_args_running_differs", server.argv_drift, ev)
    return flags


@recipe_function("nccl_settings")
async def nccl_settings(ctx: RecipeContext) -> list[dict[str, Any]]:
    """Every NCCL_* setting in effect for the serving process, resolved as NCCL does
    (environment from the unit, its drop-ins, EnvironmentFile= and start script, minus
    UnsetEnvironment=; then NCCL_CONF_FILE or ~/.nccl.conf; then /etc/nccl.conf), each with its
    source line and meaning. Needs: serving_unit."""
    ctx.need("unit", "serving_unit")
    server: Server = ctx.vars["server"]
    rows = _rows(server)
    literal = {n for n, _ in _literal(server)}  # reported as conflicts, with their reason
    tuning = [r for r in rows if r["name"] not in NOT_TUNING and r["known"]
              and (r["valid"] or r["name"] in literal)]
    invalid = [r for r in rows if r["name"] not in NOT_TUNING and r["known"]
               and not r["valid"] and r["name"] not in literal]
    unread = [r for r in rows if r["name"] not in NOT_TUNING and not r["known"]]
    other = [r for r in rows if r["name"] in NOT_TUNING]
    ctx.fact("nccl_settings", rows, [r["evidence_id"] for r in rows])
    ctx.fact("nccl_tuning", tuning, [r["evidence_id"] for r in tuning])
    ctx.fact("nccl_invalid", invalid, [r["evidence_id"] for r in invalid])
    ctx.fact("nccl_unread", unread, [r["evidence_id"] for r in unread])
    ctx.fact("nccl_other", other, [r["evidence_id"] for r in other])
    _premises(ctx, server)
    removed = [{"name": k, "value": v.value, "set_at": v.comment, "where": v.where,
                "by": "UnsetEnvironment=" if v.origin == "UnsetEnvironment" else v.origin}
               for k, v in sorted(server.removed.items()) if k.startswith("NCCL_")]
    ctx.fact("nccl_removed", removed,
             [e for k, v in server.removed.items() if k.startswith("NCCL_") for e in v.evidence])
    ignored = [s for s in server.ignored if s.name.startswith("NCCL_") and
               s.name not in NOT_TUNING]
    ctx.fact("nccl_ignored", [{**s.as_dict(), "written": s.comment} for s in ignored],
             [e for s in ignored for e in s.evidence])
    # what the environment depends on and agentkit could not resolve, with file and line
    ctx.fact("nccl_unresolved", list(server.unresolved), ctx.facts["unit"].evidence)
    unknown = [{"name": k, "where": v.where, "why": v.origin,
                "evidence_id": v.evidence[0] if v.evidence else ""}
               for k, v in sorted(server.unknown_env.items()) if k.startswith("NCCL_")]
    if server.env_open is not None:  # eval of computed text, an unreadable file, …
        o = server.env_open
        unknown.append({"name": "any other NCCL_* variable", "where": o.where, "why": o.origin,
                        "evidence_id": o.evidence[0] if o.evidence else ""})
    ctx.fact("nccl_unknown", unknown, [u["evidence_id"] for u in unknown if u["evidence_id"]])
    _not_carried(ctx, server)
    # the authority: the running process and the service manager, where they differ from files
    ctx.fact("nccl_running_differs", [d["text"] for d in server.drift],
             [e for d in server.drift for e in d["evidence"]])
    ctx.fact("unit_loaded_differs", server.loaded_differs, sorted(server.shown_evidence.values()))
    # NCCL settings declared somewhere that do not reach the process (or differ from what the
    # running one has): said with the reason the runtime gives, never dropped silently.
    # a required EnvironmentFile= that is missing stops the unit: none of its settings apply
    ctx.fact("nccl_pending", [p for p in server.problems if "NCCL_" in p or
                              "EnvironmentFile" in p],
             ctx.facts["unit"].evidence)
    conflicts = _conflicts(server)
    ctx.fact("nccl_conflicts", [c for c, _ in conflicts], [e for _, ev in conflicts for e in ev])
    ctx.fact("nccl_sources", [*server.files, *([server.script] if server.script else []),
                              *server.nccl_checked], ctx.facts["unit"].evidence)
    return rows


def _rows(server: Server) -> list[dict[str, Any]]:
    """Each NCCL_* setting with what NCCL's own code makes of it (_nccl_values)."""
    env = {k: s.value for k, s in server.nccl.items()}
    rows = []
    for s in sorted(server.nccl.values(), key=lambda s: (s.source, s.line)):
        row = s.as_dict()
        got = nccl_values.reading(s.name, s.value, env)
        row["meaning"] = NCCL_VARS.get(s.name) or (
            "read by NCCL (its source names it); agentkit keeps no summary of what it does"
            if got.known else got.effect)
        row.update(known=got.known, valid=got.valid, effect=got.effect)
        rows.append(row)
    return rows


def _premises(ctx: RecipeContext, server: Server) -> None:
    """Facts that sentences about the topology rest on: the peer-to-peer level NCCL will use
    (NCCL_P2P_DISABLE, then NCCL_P2P_LEVEL, parsed as NCCL does) and whether the serving
    command turns custom allreduce off."""
    disable, level = server.nccl.get("NCCL_P2P_DISABLE"), server.nccl.get("NCCL_P2P_LEVEL")
    got = nccl_values.parse_p2p(disable.value if disable else None,
                                level.value if level else None)
    used = disable if got == 0 and disable is not None else level
    name = nccl_values.PATHS[got] if got >= 0 else None
    ctx.fact("nccl_p2p_level", {"level": name, "set_by": used.name if used and name else None,
                                "value": used.value if used and name else None,
                                "where": used.where if used and name else None,
                                "default": "PXB"},
             list(used.evidence) if used and name else [])
    ctx.fact("nccl_custom_ar_flag_off", bool(server.flags.get("disable_custom_all_reduce")),
             list(server.argv_evidence))


def _not_carried(ctx: RecipeContext, server: Server) -> None:
    """NCCL tuning the host's other servers (an earlier deployment, say) set and the current
    one does not, or sets differently: what did not carry over."""
    model: HostModel | None = ctx.vars.get("host_model")
    rows, ev = [], []
    for other in (model.servers if model else []):
        if other is server:
            continue
        mine = server.tuning
        missing = [s.as_dict() for k, s in sorted(other.tuning.items()) if k not in mine]
        differs = [{**s.as_dict(), "here": mine[k].value}
                   for k, s in sorted(other.tuning.items())
                   if k in mine and mine[k].value != s.value]
        if missing or differs:
            st = other.state
            state = st.value if st.value != "unknown" else (st.enabled_detail or "state unknown")
            rows.append({"server": other.name, "state": state,
                         "model": other.model_path, "missing": missing, "differs": differs})
            ev += [e for s in other.tuning.values() for e in s.evidence]
    ctx.fact("nccl_not_carried", rows, ev)


# What the process now running said (the last start in the journal), not the first start.
_LATEST = {"kv_cache_dtype_logged", "vllm_version_logged"}
_NO_EXPANSION = {
    "systemd": "systemd does not expand variables in Environment= or env files",
    "kubernetes": "Kubernetes expands $(VAR) only from variables defined before it in the "
                  "container's env",
    "docker": "the container's environment is passed as written",
    "podman": "the container's environment is passed as written",
    "compose": "the container's environment is passed as written",
}


def _literal(server: Server) -> list[tuple[str, str]]:
    """Settings whose value still holds a $ reference nothing expanded, with the reason."""
    return [(name, _NO_EXPANSION.get(server.runtime, "nothing expanded it"))
            for name, s in sorted(server.nccl.items())
            if "$" in s.value and s.origin != "start script"]


def _conflicts(server: Server) -> list[tuple[str, list[str]]]:
    """Settings that switch off what other settings tune (NCCL's env documentation)."""
    out = []
    for name, why in _literal(server):
        setting = server.nccl[name]
        out.append((f"{name}={setting.value} ({setting.where}) reaches NCCL literally: "
                    f"{why}, and NCCL cannot use that value", list(setting.evidence)))
    p2p_off = server.nccl.get("NCCL_P2P_DISABLE")
    # NCCL counts NCCL_P2P_DISABLE only when strtol reads 1 ("true" or "yes" read as 0)
    if p2p_off is not None and nccl_values.parse_p2p(p2p_off.value, None) == 0:
        level = server.nccl.get("NCCL_P2P_LEVEL")
        text = (f"NCCL_P2P_DISABLE=1 ({p2p_off.where}) turns off GPU peer-to-peer, so data "
                "between GPUs goes through host memory")
        ev = list(p2p_off.evidence)
        if level is not None:
            text += (f" and NCCL_P2P_LEVEL={level.value} ({level.where}) has nothing left to "
                     "act on")
            ev += level.evidence
        out.append((text, ev))
    return out


_LOG_PATTERNS = {  # vLLM's start lines, and SGLang's where they differ
    "attention_backend": re.compile(r"Using (\w+) attention backend|Use (\w+) backend by default"
                                    r"|\battention_backend='(\w+)'"),
    "custom_allreduce_disabled": re.compile(
        r"(?:Custom allreduce|CustomAllreduce|CustomAllReduceV2) is disabled because (.+?)\."),
    "kv_cache_tokens": re.compile(r"GPU KV cache size: ([\d,]+) tokens|KV Cache is allocated\. "
                                  r"#tokens: (\d+)"),
    "max_concurrency": re.compile(
        r"Maximum concurrency for ([\d,]+) tokens per request: ([\d.]+)x"),
    "vllm_version_logged": re.compile(r"vLLM API server version (\S+)"),
    "kv_cache_dtype_logged": re.compile(r"\bkv_cache_dtype='?(\w+)"),
    "nccl_version_logged": re.compile(r"NCCL version (\S+)|sglang is using nccl==(\S+)"),
}


@recipe_function("service_log")
async def service_log(ctx: RecipeContext) -> dict[str, Any]:
    """What the server said at start: attention backend, custom allreduce, KV cache size,
    errors. Reads the server's log (`journalctl -u UNIT`, `docker logs NAME`; live or
    captured). Needs: unit."""
    unit = ctx.need("unit", "serving_unit").value["name"]
    server: Server | None = ctx.vars.get("server")
    argv = server.log_argv if server is not None else journal_argv(unit)
    if argv is None:
        runtime = server.runtime if server else "unknown"
        raise StepFailed(f"{unit} ({runtime}) has no log agentkit can read")
    out = await ctx.tool("run_command", argv=argv)
    assert out is not None
    ctx.vars["service_log_output"] = out  # the stats lines, for kv_load (_fn_capacity)
    lines = out["stdout"].splitlines()
    found: dict[str, Any] = {}
    for n, line in enumerate(lines, 1):
        for key, pattern in _LOG_PATTERNS.items():
            m = pattern.search(line)
            if m and (key not in found or key in _LATEST):
                ev = ctx.cite_output_line(out, n)
                groups = tuple(g for g in m.groups() if g is not None) or m.groups()
                found[key] = (groups, ev)
    errors = [(n, ln) for n, ln in enumerate(lines, 1)
              if re.search(r"\b(ERROR|CRITICAL)\b|Traceback \(most recent", ln)]
    for key, (groups, ev) in found.items():
        value: Any = groups[0]
        if key == "kv_cache_tokens":
            value = int(groups[0].replace(",", ""))
        elif key == "max_concurrency":
            value = {"tokens_per_request": int(groups[0].replace(",", "")),
                     "concurrency": float(groups[1])}
        elif key == "custom_allreduce_disabled":
            value = {"disabled": True, "reason": groups[0]}
        ctx.fact(key, value, [ev])
    # Silence is not a verdict: the log may not cover the start, or vLLM may not say it.
    covers = any(k in found for k in ("vllm_version_logged", "attention_backend"))
    ctx.fact("log_covers_start", covers, [out["evidence_id"]])
    err_ev = [ctx.cite_output_line(out, n) for n, _ in errors[:5]]
    ctx.fact("log_errors", [ln.strip() for _, ln in errors[:5]], err_ev or [out["evidence_id"]])
    ctx.fact("log_lines", len(lines), [out["evidence_id"]])
    return {k: v[0] for k, v in found.items()}

"""Recipe functions about the serving unit: discovery, effective environment, flags, NCCL
settings and the service journal."""

from __future__ import annotations

import re
from typing import Any

from ._knowledge import NCCL_VARS, SERVE_FLAGS
from ._recipe import RecipeContext, StepFailed, recipe_function

_UNIT_GLOBS = ("/etc/systemd/system/*.service", "/run/systemd/system/*.service",
               "/usr/local/lib/systemd/system/*.service", "/usr/lib/systemd/system/*.service",
               "/lib/systemd/system/*.service")
_ENGINES = (("vllm", re.compile(r"(^|/)vllm$|vllm\.entrypoints")),
            ("sglang", re.compile(r"sglang\.launch_server|(^|/)sglang$")))


def engine_of(argv: list[str]) -> str | None:
    for name, pattern in _ENGINES:
        if any(pattern.search(a) for a in argv[:4]):
            return name
    return None


@recipe_function("serving_unit")
async def serving_unit(ctx: RecipeContext) -> dict[str, Any]:
    """Find the systemd unit whose ExecStart runs an inference server (vLLM or SGLang).

    Sets facts: unit, exec_start, engine, environment.
    """
    found: list[dict[str, Any]] = []
    for pattern in _UNIT_GLOBS:
        listing = await ctx.tool("glob", pattern=pattern)
        for path in (listing or {}).get("paths", []):
            parsed = await ctx.tool("parse_config", optional=True, path=path, format="systemd")
            if not parsed:
                continue
            eff = parsed["effective"]
            start = eff.get("exec_start")
            if start and engine_of(start["argv"]):
                found.append(parsed)
    if not found:
        raise StepFailed("no systemd unit runs vLLM or SGLang (looked in "
                         f"{', '.join(_UNIT_GLOBS)})")
    unit = found[0]
    eff = unit["effective"]
    start = eff["exec_start"]
    ev = [start["evidence_id"]]
    ctx.fact("unit", {"name": eff["unit"], "path": unit["path"], "files": eff["files"],
                      "others": [u["effective"]["unit"] for u in found[1:]]}, ev)
    ctx.fact("exec_start", {"argv": start["argv"], "source": start["source"],
                            "line": start["line"]}, ev)
    ctx.fact("engine", engine_of(start["argv"]), ev)
    env = eff["environment"]
    ctx.fact("environment", {k: v["value"] for k, v in env.items()},
             [v["evidence_id"] for v in env.values()])
    ctx.vars["unit_env"] = env
    return unit


def parse_serve_args(argv: list[str]) -> dict[str, Any]:
    """Flags of ``vllm serve MODEL …`` / ``python -m …api_server --model MODEL …``."""
    out: dict[str, Any] = {}
    args = argv[1:]
    if args and args[0] == "serve":
        args = args[1:]
        if args and not args[0].startswith("-"):
            out["model"] = args[0]
            args = args[1:]
    i = 0
    while i < len(args):
        a = args[i]
        i += 1
        if not a.startswith("-"):
            continue
        name, eq, value = a.partition("=")
        key = SERVE_FLAGS.get(name)
        if key is None:
            continue
        takes_value = not key.endswith("!")
        key = key.rstrip("!")
        if not takes_value:
            out[key] = True
        elif eq:
            out[key] = value
        elif i < len(args):
            out[key] = args[i]
            i += 1
    return out


@recipe_function("serve_flags")
async def serve_flags(ctx: RecipeContext) -> dict[str, Any]:
    """Parallelism, KV-cache dtype, context length, quantization and allreduce flags from
    ExecStart. Needs: exec_start. Sets: serve_args, model_path, kv_cache_dtype, tensor_parallel."""
    start = ctx.need("exec_start", "serving_unit")
    flags = parse_serve_args(start.value["argv"])
    ev = start.evidence
    ctx.fact("serve_args", flags, ev)
    if "model" not in flags:
        raise StepFailed("ExecStart names no model (no positional MODEL, no --model)")
    ctx.fact("model_path", flags["model"], ev)
    ctx.fact("kv_cache_dtype", flags.get("kv_cache_dtype", "auto"), ev)
    ctx.fact("kv_cache_dtype_explicit", "kv_cache_dtype" in flags, ev)
    ctx.fact("tensor_parallel", int(flags.get("tensor_parallel_size", 1)), ev)
    ctx.fact("custom_allreduce_flag_off", bool(flags.get("disable_custom_all_reduce")), ev)
    return flags


@recipe_function("nccl_settings")
async def nccl_settings(ctx: RecipeContext) -> list[dict[str, Any]]:
    """Every NCCL_* setting from the unit (Environment=, drop-ins, EnvironmentFile=) and
    /etc/nccl.conf, each with its source line and meaning. Needs: unit (serving_unit)."""
    ctx.need("unit", "serving_unit")
    settings: dict[str, dict[str, Any]] = {}
    conf = await ctx.tool("parse_config", optional=True, path="/etc/nccl.conf", format="dotenv")
    for e in (conf or {}).get("entries", []):
        if e["key"].startswith("NCCL_"):
            settings[e["key"]] = {"name": e["key"], "value": str(e["value"]),
                                  "source": e["source"], "line": e["line"], "comment": "",
                                  "evidence_id": e["evidence_id"], "origin": "nccl.conf"}
    # The unit's environment wins over /etc/nccl.conf (NCCL reads the environment first).
    for name, v in ctx.vars.get("unit_env", {}).items():
        if name.startswith("NCCL_"):
            settings[name] = {"name": name, "value": v["value"], "source": v["source"],
                              "line": v["line"], "comment": v["comment"],
                              "evidence_id": v["evidence_id"], "origin": "unit"}
    rows = []
    for s in sorted(settings.values(), key=lambda s: (s["source"], s["line"])):
        s["meaning"] = NCCL_VARS.get(s["name"], "not a variable agentkit knows; see NCCL docs")
        rows.append(s)
    tuning = [s for s in rows if s["name"] not in ("NCCL_DEBUG", "NCCL_DEBUG_SUBSYS")]
    ctx.fact("nccl_settings", rows, [s["evidence_id"] for s in rows])
    ctx.fact("nccl_tuning", tuning, [s["evidence_id"] for s in tuning])
    other = [s for s in rows if s not in tuning]
    ctx.fact("nccl_other", other, [s["evidence_id"] for s in other])
    ctx.fact("nccl_sources", ctx.facts["unit"].value["files"] + ["/etc/nccl.conf"],
             ctx.facts["unit"].evidence)
    return rows


_LOG_PATTERNS = {
    "attention_backend": re.compile(r"Using (\w+) attention backend"),
    "custom_allreduce_disabled": re.compile(r"Custom allreduce is disabled because (.+?)\."),
    "kv_cache_tokens": re.compile(r"GPU KV cache size: ([\d,]+) tokens"),
    "max_concurrency": re.compile(
        r"Maximum concurrency for ([\d,]+) tokens per request: ([\d.]+)x"),
    "vllm_version_logged": re.compile(r"vLLM API server version (\S+)"),
    "nccl_version_logged": re.compile(r"NCCL version (\S+)"),
}


@recipe_function("service_log")
async def service_log(ctx: RecipeContext) -> dict[str, Any]:
    """What the server said at start: attention backend, custom allreduce, KV cache size,
    errors. Reads `journalctl -u UNIT` (live or captured). Needs: unit."""
    unit = ctx.need("unit", "serving_unit").value["name"]
    argv = ["journalctl", "-u", unit, "-n", "2000", "--no-pager"]
    out = await ctx.tool("run_command", argv=argv)
    assert out is not None
    shown = " ".join(argv)
    lines = out["stdout"].splitlines()
    found: dict[str, Any] = {}
    for n, line in enumerate(lines, 1):
        for key, pattern in _LOG_PATTERNS.items():
            m = pattern.search(line)
            if m and key not in found:
                ev = ctx.cite("command", f"$ {shown} [exit {out['exit_code']}] line {n}",
                              line.strip(), line)
                found[key] = (m.groups(), ev)
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
    if "custom_allreduce_disabled" not in found:
        ctx.fact("custom_allreduce_disabled", {"disabled": False, "reason": ""},
                 [out["evidence_id"]])
    err_ev = [ctx.cite("command", f"$ {shown} [exit {out['exit_code']}] line {n}", ln.strip(), ln)
              for n, ln in errors[:5]]
    ctx.fact("log_errors", [ln.strip() for _, ln in errors[:5]], err_ev or [out["evidence_id"]])
    ctx.fact("log_lines", len(lines), [out["evidence_id"]])
    return {k: v[0] for k, v in found.items()}

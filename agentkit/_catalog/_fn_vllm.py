"""Recipe functions about the installed software: where vLLM is installed, the versions of the
stack, and which attention backends would accept a KV-cache dtype on this GPU, read from the
installed vLLM's own source."""

from __future__ import annotations

import re
from typing import Any

from .._hostmodel import Server
from ._fn_sglang import sglang_kv
from ._knowledge import FP8_KV_FORMATS
from ._recipe import RecipeContext, StepFailed, recipe_function
from ._vllm_source import BackendInfo, backend_info, backend_priorities, registry_paths

_SITE_GLOBS = ("/usr/local/lib/python3*/dist-packages", "/usr/local/lib/python3*/site-packages",
               "/usr/lib/python3*/dist-packages", "/usr/lib/python3*/site-packages",
               "/opt/*/lib/python3*/site-packages", "/opt/*/*/lib/python3*/site-packages")


async def _version(ctx: RecipeContext, site: str, dist_glob: str) -> tuple[str, str, str] | None:
    """(name, version, evidence id) of the first dist-info matching the glob."""
    listing = await ctx.tool("glob", pattern=f"{site}/{dist_glob}/METADATA")
    for path in (listing or {}).get("paths", []):
        hits = await ctx.tool("grep", optional=True, pattern=r"^(Name|Version): ", path=path)
        got = {m["text"].split(":", 1)[0]: m for m in (hits or {}).get("matches", [])}
        if "Version" in got:
            return (got.get("Name", got["Version"])["text"].split(": ", 1)[1],
                    got["Version"]["text"].split(": ", 1)[1], got["Version"]["evidence_id"])
    return None


@recipe_function("vllm_install")
async def vllm_install(ctx: RecipeContext) -> dict[str, Any]:
    """The site-packages the served vLLM runs from (the ExecStart program's environment
    first) and its version from package metadata. Sets: vllm_site, vllm_version."""
    candidates: list[str] = []
    start = ctx.facts.get("exec_start")
    server: Server | None = ctx.vars.get("server")
    if start:
        exe = start.value["argv"][0]
        prefix = exe.rsplit("/bin/", 1)[0] if "/bin/" in exe else ""
        if prefix:
            candidates += [f"{prefix}/lib/python3*/site-packages",
                           f"{prefix}/lib/python3*/dist-packages"]
    candidates += _SITE_GLOBS
    if server is not None and server.contained:
        # The server's vLLM is the one in its image: a vLLM installed on the host is another.
        seen = [c for c in candidates if server.visible(c.split("*")[0])]
        if not seen:
            raise StepFailed(f"{server.name} runs in a container ({server.runtime}) and its "
                             "image's files are not visible from the host (not mounted, and "
                             "no running container's filesystem to read): the installed vLLM "
                             "cannot be read")
        candidates = [server.host_path(c) for c in seen]
    engine = (server.engine if server is not None else None) or "vllm"
    dist_name, shown = _DISTS.get(engine, ("vllm", "vLLM"))
    for pattern in candidates:
        listing = await ctx.tool("glob", pattern=f"{pattern}/{dist_name}-*.dist-info")
        for dist in (listing or {}).get("paths", []):
            site = dist.rsplit("/", 1)[0]
            got = await _version(ctx, site, f"{dist_name}-*.dist-info")
            if got:
                where = [listing["evidence_id"]] if listing else []
                ctx.fact("engine_site", site, where)
                ctx.fact("engine_version", got[1], [got[2]])
                if engine == "vllm":
                    ctx.fact("vllm_site", site, where)
                    ctx.fact("vllm_version", got[1], [got[2]])
                return {"site": site, "version": got[1]}
    why = (f"no installed {shown} found (no {dist_name}-*.dist-info in the serving command's "
           "environment or the usual site-packages)")
    if engine != "vllm":
        # what the host shows about another engine (its flag, its state) can still answer
        ctx.fact("engine_missing", why, [])
        return {"site": None, "version": None}
    raise StepFailed(why)


# engine → (its distribution's name in site-packages, how people write it)
_DISTS = {"vllm": ("vllm", "vLLM"), "sglang": ("sglang", "SGLang"),
          "trtllm": ("tensorrt_llm", "TensorRT-LLM")}


@recipe_function("software_stack")
async def software_stack(ctx: RecipeContext) -> dict[str, Any]:
    """torch and NCCL versions beside vLLM. Needs: vllm_site."""
    site = ctx.need("engine_site", "vllm_install").value
    out: dict[str, Any] = {}
    for key, dist in (("torch_version", "torch-*.dist-info"),
                      ("nccl_version", "nvidia_nccl_cu*-*.dist-info")):
        got = await _version(ctx, site, dist)
        if got:
            ctx.fact(key, got[1], [got[2]])
            out[key] = got[1]
    return out


async def _find_source(ctx: RecipeContext, site: str, pattern: str, likely: list[str],
                       accept: Any = None) -> str | None:
    """The installed file that holds ``pattern``: the places this vLLM's releases used
    first, then a search of the whole package (a release that moved the file still gets a
    verdict). ``accept(text)`` can reject a match that is not the real thing."""
    for where in [*likely, f"{site}/vllm"]:
        hits = await ctx.tool("grep", optional=True, pattern=pattern, path=where,
                              max_matches=20)
        for path in sorted({m["path"] for m in (hits or {}).get("matches", [])}):
            if accept is None or accept((await _source(ctx, path))[0]):
                return path
    return None


async def _source(ctx: RecipeContext, path: str) -> tuple[str, list[str]]:
    lines = await ctx.read_lines(path)
    assert lines is not None
    return "\n".join(lines), lines


def _cite_line(ctx: RecipeContext, path: str, lines: list[str], line: int, last: int = 0) -> str:
    last = max(last, line)
    text = "\n".join(lines[line - 1 : last])
    where = f"{path}:{line}" if last == line else f"{path}:{line}-{last}"
    return ctx.cite("file", where, text, text)


@recipe_function("kv_cache_support")
async def kv_cache_support(ctx: RecipeContext, dtype: str = "") -> dict[str, Any]:
    """Which attention backends the installed vLLM would pick on this GPU for the served
    model, with the default KV cache and with ``dtype`` (default: the checkpoint's
    recommendation, else fp8): reads the priority list, each backend's
    supported_kv_cache_dtypes and compute-capability test, and any FP8 refusal guards.
    Needs: compute_capability, vllm_site, served_model."""
    engine = ctx.facts.get("engine")
    rec = ctx.facts.get("kv_cache_recommended")
    flag = ctx.facts.get("kv_cache_dtype")
    explicit = str(flag.value) if flag and str(flag.value).startswith("fp8") else ""
    target = (dtype or _asked_dtype(str(ctx.spec.inputs.get("question", ""))) or explicit
              or (rec.value if rec and rec.value else "") or "fp8").lower()
    if engine is not None and engine.value == "sglang" and "engine_site" in ctx.facts:
        try:
            return await sglang_kv(ctx, target)
        except StepFailed as exc:  # the source cannot say; the flag and the state still can
            return _other_engine(ctx, "sglang", str(exc))
    if engine is not None and engine.value not in (None, "vllm"):
        return _other_engine(ctx, str(engine.value))
    cc = ctx.need("compute_capability", "gpu_inventory")
    site = ctx.need("vllm_site", "vllm_install").value
    model = ctx.need("served_model", "model_architecture").value
    major, minor = (int(x) for x in str(cc.value).split(".")[:2])
    use_mla = model.get("kv_lora_rank") is not None
    use_sparse = model.get("index_topk") is not None
    cuda_path, names, ret_line, prio_ev = await _priority_list(ctx, site, use_mla, major, minor)
    backends, evidence = await _backends(ctx, site, names, major, minor)
    rows = [_judge(b, target, use_sparse) for b in backends]
    for row in rows:
        row["evidence"] = evidence[row["name"]]
    ctx.fact("kv_target_dtype", target, rec.evidence if rec else [])
    ctx.fact("backend_priority", {"names": names, "use_mla": use_mla, "use_sparse": use_sparse,
                                  "file": cuda_path, "line": ret_line}, [prio_ev])
    _backend_facts(ctx, target, rows, evidence, prio_ev, rec)
    return {"backends": rows}


async def _priority_list(ctx: RecipeContext, site: str, use_mla: bool, major: int,
                         minor: int) -> tuple[str, list[str], int, str]:
    """The installed vLLM's backend priority list for this GPU and model, with its file,
    the line of its ``return`` and the citation of the whole list."""
    cuda_path = await _find_source(ctx, site, r"def _get_backend_priorities\b",
                                   [f"{site}/vllm/platforms/cuda.py"])
    if cuda_path is None:
        raise StepFailed(f"no _get_backend_priorities in the installed vLLM under {site}/vllm "
                         "(this version chooses backends another way): undetermined")
    src, lines = await _source(ctx, cuda_path)
    names, ret_line, _fn_line = backend_priorities(src, use_mla, major, minor)
    if names is None:
        raise StepFailed(f"cannot read the backend priority list in {cuda_path} (no "
                         "_get_backend_priorities with a plain if/return shape): undetermined")
    end = next((i for i in range(ret_line, len(lines)) if lines[i - 1].strip().startswith("]")),
               ret_line)
    return cuda_path, names, ret_line, _cite_line(ctx, cuda_path, lines, ret_line, end)


async def _backends(ctx: RecipeContext, site: str, names: list[str], major: int,
                    minor: int) -> tuple[list[BackendInfo], dict[str, list[str]]]:
    """Each listed backend as its source defines it, and the lines that show it: its
    registry entry, its KV dtypes, its compute-capability test and its FP8 guards."""
    reg_path = await _find_source(
        ctx, site, r"^class \w*Backend\w*\(.*Enum",
        [f"{site}/vllm/attention/backends/registry.py",
         f"{site}/vllm/v1/attention/backends/registry.py"],
        accept=lambda text: any(n in registry_paths(text) for n in names))
    if reg_path is None:
        raise StepFailed(f"no backend registry naming {', '.join(names)} found under "
                         f"{site}/vllm: undetermined")
    reg_src, reg_lines = await _source(ctx, reg_path)
    paths = registry_paths(reg_src)
    backends: list[BackendInfo] = []
    evidence: dict[str, list[str]] = {}
    for name in names:
        if name not in paths:
            ctx.errors.append(f"{name} is not in {reg_path}")
            continue
        dotted, reg_line = paths[name]
        module, cls = dotted.rsplit(".", 1)
        file = f"{site}/{module.replace('.', '/')}.py"
        bsrc, blines = await _source(ctx, file)
        info = backend_info(BackendInfo(name, cls, file), bsrc, major, minor)
        ev = [_cite_line(ctx, reg_path, reg_lines, reg_line)]
        if info.kv_dtypes_line:
            ev.append(_cite_line(ctx, file, blines, info.kv_dtypes_line))
        if info.cc_line:
            ev.append(_cite_line(ctx, file, blines, *info.cc_span))
        for g in info.guards:
            ev.append(_cite_line(ctx, file, blines, g.line, g.end))
        evidence[name] = ev
        backends.append(info)
    return backends, evidence


def _backend_facts(ctx: RecipeContext, target: str, rows: list[dict[str, Any]],
                   evidence: dict[str, list[str]], prio_ev: str, rec: Any) -> None:
    """The facts the judged backends establish: which are eligible, the default, which one
    takes ``target`` and why the others refuse it, then the FP8 names and the verdict."""
    cc_ok = [r for r in rows if r["cc_ok"] and r["sparse_ok"]]
    auto = next((r for r in cc_ok if r["accepts_auto"]), None)
    chosen = next((r for r in cc_ok if r["accepts_target"] and not r["guards"]), None)
    guarded = [r for r in cc_ok if r["accepts_target"] and r["guards"]]
    ctx.fact("backends", rows, [prio_ev, *[e for r in rows for e in r["evidence"]]])
    ctx.fact("eligible_backends", [r["name"] for r in cc_ok],
             [prio_ev, *[e for r in cc_ok for e in evidence[r["name"]]]])
    ctx.fact("backend_default", auto["name"] if auto else None,
             [prio_ev, *(evidence[auto["name"]] if auto else [])])
    fp8_ev = [prio_ev, *[e for r in cc_ok for e in evidence[r["name"]]]]
    ctx.fact("kv_dtype_supported", chosen is not None, fp8_ev)
    ctx.fact("kv_dtype_backend", chosen["name"] if chosen else None, fp8_ev)
    ctx.fact("kv_dtype_refusals", [{"name": r["name"], "reasons": r["reasons"]} for r in cc_ok
                                   if r is not chosen], fp8_ev)
    ctx.fact("kv_dtype_guarded", [{"name": r["name"], "guards": r["guards"]} for r in guarded],
             [e for r in guarded for e in evidence[r["name"]]])
    _fp8_names(ctx, target, cc_ok, fp8_ev, rec.value if rec else None,
               rec.evidence if rec else [])
    _kv_verdict(ctx, target, chosen is not None, fp8_ev)


def _fp8_names(ctx: RecipeContext, target: str, eligible: list[dict[str, Any]],
               ev: list[str], rec: Any, rec_ev: list[str]) -> None:
    """Every FP8 KV dtype each eligible backend lists (e5m2 is FP8 too), the FP8 format the
    checkpoint's KV scales are for, and the backends that accept FP8 only in another format
    than the one asked for. Sets: kv_fp8_listed, kv_scales, kv_other_fp8."""
    listed = [{"name": r["name"], "dtypes": [d for d in r["kv_dtypes"] or []
                                              if d.startswith("fp8")]} for r in eligible]
    listed = [x for x in listed if x["dtypes"]]
    ctx.fact("kv_fp8_listed", listed, ev)
    # ModelOpt's kv_cache_quant_algo FP8 and compressed-tensors' kv_cache_scheme
    # {type: float, num_bits: 8} both store e4m3 scales; an explicit e5m2 name says otherwise.
    fmt = None if not rec else ("e5m2" if "e5m2" in str(rec).lower() else "e4m3")
    flags = [d for d, f in FP8_KV_FORMATS.items() if f == fmt and d in ("fp8", "fp8_e4m3",
                                                                         "fp8_e5m2")]
    want = FP8_KV_FORMATS.get(target)
    ctx.fact("kv_scales", {"format": fmt, "flags": flags, "recommended": rec,
                           "target_format": want,
                           "mismatch": bool(fmt and want and want != fmt)}, rec_ev)
    other = [{"name": r["name"], "guards": [g["message"] for g in r["guards"]],
              "dtypes": [d for d in r["kv_dtypes"] or [] if d.startswith("fp8")
                         and FP8_KV_FORMATS.get(d) != want]}
             for r in eligible if not r["accepts_target"]]
    other = [o for o in other if o["dtypes"]]
    for o in other:
        o["e5m2"] = "fp8_e5m2" in o["dtypes"]
    ctx.fact("kv_other_fp8", other, ev)
    ctx.fact("kv_other_fp8_usable", any(not o["guards"] for o in other), ev)


def _other_engine(ctx: RecipeContext, engine: str, reason: str = "") -> dict[str, Any]:
    """An engine whose kernel source agentkit does not read: only what the host shows is
    said (it already runs with an FP8 KV cache and is up), else not established."""
    flag = ctx.facts.get("kv_cache_dtype")
    state = ctx.facts.get("server_state")
    if flag is not None and str(flag.value).startswith("fp8") and state is not None:
        if state.value["value"] == "running":
            ctx.fact("kv_verdict", "already-on", [*flag.evidence, *state.evidence])
            ctx.fact("kv_running_other", {"engine": engine, "dtype": flag.value},
                     [*flag.evidence, *state.evidence])
            return {"backends": []}
        if state.value["value"] in ("crash-looping", "failed"):
            ctx.fact("kv_verdict", "broken", [*flag.evidence, *state.evidence])
    missing = ctx.facts.get("engine_missing")
    if reason:
        raise StepFailed(reason)
    if missing is not None:
        raise StepFailed(f"the server runs {engine}: {missing.value}")
    raise StepFailed(f"the server runs {engine}, and agentkit reads only vLLM's and SGLang's "
                     "attention-backend choices so far: undetermined for this engine")


def _asked_dtype(question: str) -> str:
    """The FP8 variant a question names (vLLM spells them fp8_e4m3 / fp8_e5m2), else ""."""
    m = re.search(r"\b(?:fp8[\s_-]?)?(e4m3|e5m2)\b", question, re.I)
    return f"fp8_{m.group(1).lower()}" if m else ""


def _kv_verdict(ctx: RecipeContext, target: str, accepted: bool, ev: list[str]) -> None:
    """yes / no / already-on / broken: whether the dtype is accepted, whether the server
    already asks for it, and whether it is up."""
    flag = ctx.facts.get("kv_cache_dtype")
    state = ctx.facts.get("server_state")
    asked = bool(flag and str(flag.value).startswith("fp8") and target.startswith("fp8"))
    down = bool(state and state.value["value"] in ("crash-looping", "failed"))
    logged = ctx.facts.get("kv_cache_dtype_logged")
    # The unit asks for fp8, but the process running now logged another dtype: it started
    # before the change, which takes effect (or fails) at the next start.
    pending = bool(asked and not down and logged is not None
                   and not str(logged.value).startswith("fp8"))
    if asked and down:
        label = "broken"
    elif asked and not pending:
        label = "already-on" if accepted else "no"
    else:
        label = "yes" if accepted else "no"
    if pending and flag is not None and logged is not None:
        ctx.fact("kv_flag_pending", {"flag": flag.value, "running": logged.value,
                                     "accepted": accepted},
                 [*flag.evidence, *logged.evidence, *ev])
    extra = (flag.evidence if flag else []) + (state.evidence if state and asked else [])
    ctx.fact("kv_verdict", label, ev + extra)


def _judge(b: BackendInfo, target: str, use_sparse: bool) -> dict[str, Any]:
    reasons: list[str] = []
    dtypes = b.kv_dtypes
    accepts_target = dtypes is not None and target in dtypes
    if dtypes is None:
        reasons.append("supported_kv_cache_dtypes not found: undetermined")
    elif not accepts_target:
        fp8 = [d for d in dtypes if d.startswith("fp8")]
        reasons.append(f"supported_kv_cache_dtypes is {dtypes}: "
                       + (f"it lists {', '.join(fp8)} but not {target}" if fp8 else
                          f"no {target}"))
    guards = [{"file": b.module_path, "line": g.line, "message": g.message} for g in b.guards]
    if guards:
        reasons += [f"raises NotImplementedError({g['message']!r}) at {b.module_path}:{g['line']}"
                    for g in guards]
    return {
        "name": b.name, "file": b.module_path, "kv_dtypes": dtypes,
        "cc_ok": b.cc_ok, "cc_test": b.cc_source, "sparse": b.sparse,
        "sparse_ok": b.sparse == use_sparse,
        "accepts_auto": dtypes is None or "auto" in dtypes,
        "accepts_target": accepts_target, "guards": guards, "reasons": reasons,
    }

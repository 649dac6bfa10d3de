"""Recipe functions for "would it improve perf?": KV-cache capacity per GPU from the model's
config and the server's log (cross-checked against the engine's own figures), the load the
log shows, and what share of a decode step the allreduce bytes can be.

They read what earlier steps left: the model's config entries (model_architecture), the
server's log output (service_log), the GPUs (gpu_inventory, gpu_links). They make no tool call
of their own except ``nvidia-smi -q`` for the PCIe link, so they add nothing to replay but
that."""

from __future__ import annotations

import re
from typing import Any

from .._hostmodel import Server
from . import _kv_math as km
from ._log_stats import Load, parse_capacity, parse_load
from ._recipe import RecipeContext, StepFailed, recipe_function

_NESTS = ("text_config.", "language_config.", "llm_config.", "")
_KEYS = ("num_hidden_layers", "kv_lora_rank", "qk_rope_head_dim", "num_attention_heads",
         "num_key_value_heads", "head_dim", "hidden_size", "sliding_window",
         "use_sliding_window", "layer_types", "torch_dtype", "max_position_embeddings")


def model_config(ctx: RecipeContext) -> tuple[dict[str, Any], list[str]]:
    """The served model's config keys that decide the KV layout (nested text_config first),
    and their evidence; from the entries model_architecture read."""
    ctx.need("served_model", "model_architecture")
    path = ctx.facts["served_model"].value.get("path")
    entries: dict[str, Any] = ctx.vars.get("config_entries", {}).get(path, {})
    cfg: dict[str, Any] = {}
    ev: list[str] = []
    for key in _KEYS:
        hit = next((entries[n + key] for n in _NESTS if n + key in entries), None)
        if hit is not None:
            cfg[key] = hit["value"]
            ev.append(hit["evidence_id"])
    return cfg, ev


class _Log:
    """The service log's lines, each cited once when used."""

    def __init__(self, ctx: RecipeContext) -> None:
        self.ctx = ctx
        self.out: dict[str, Any] | None = ctx.vars.get("service_log_output")
        self.lines = self.out["stdout"].splitlines() if self.out else []
        self._ev: dict[int, str] = {}

    def cite(self, n: int) -> str:
        if n not in self._ev:
            assert self.out is not None
            self._ev[n] = self.ctx.cite_output_line(self.out, n)
        return self._ev[n]


def _num(text: str | None) -> float:
    return float((text or "0").replace(",", ""))


@recipe_function("kv_capacity")
async def kv_capacity(ctx: RecipeContext) -> dict[str, Any]:
    """KV bytes per token per GPU now and with an FP8 cache, the KV budget per GPU, tokens and
    concurrency at max_model_len, cross-checked against the engine's logged figures.
    Needs: serve_flags, model_architecture; uses service_log and gpu_inventory.
    Sets: kv_capacity."""
    ctx.need("serve_args", "serve_flags")
    server: Server = ctx.vars["server"]
    cfg, cfg_ev = model_config(ctx)
    tp = server.tp
    flags = ctx.facts["serve_args"].value
    flag_ev = ctx.facts["serve_args"].evidence
    dtype_now = str(flags.get("kv_cache_dtype", "auto"))
    model_dtype = str(cfg.get("torch_dtype") or "bfloat16")
    now_b = km.dtype_bytes(dtype_now, model_dtype)
    if now_b is None:
        raise StepFailed(f"the KV-cache dtype {dtype_now!r} (model dtype {model_dtype}) has no "
                         "byte size agentkit knows")
    now = km.kv_layout(cfg, tp, now_b)
    fp8 = km.kv_layout(cfg, tp, 1)
    if now is None or fp8 is None:
        raise StepFailed("the KV layout is not established: config.json lacks "
                         "num_hidden_layers, or kv_lora_rank/qk_rope_head_dim, or the "
                         "attention head keys")
    log = _Log(ctx)
    cap = parse_capacity(log.lines)
    value: dict[str, Any] = {
        "kind": now.kind, "formula": now.formula, "notes": now.notes, "tp": tp,
        "dtype_now": dtype_now if dtype_now != "auto" else f"auto = {model_dtype}",
        "bytes_now": now.bytes_per_token, "bytes_fp8": fp8.bytes_per_token,
        "already_fp8": now_b == 1, "engine": server.engine or "vllm"}
    ev = cfg_ev + flag_ev
    max_len, len_ev = _max_model_len(flags, flag_ev, cap, log, cfg)
    value["max_model_len"] = max_len
    ev += len_ev
    budget, bud_ev = _budget(ctx, value, cap, log, flags, flag_ev)
    ev += bud_ev
    block = _block_size(cap, log, value)
    if budget is not None and max_len:
        c_now, c_fp8 = km.capacity(budget, now, max_len, block), km.capacity(budget, fp8,
                                                                             max_len, block)
        value.update(tokens_now=c_now.tokens, conc_now=round(c_now.concurrency, 2),
                     tokens_fp8=c_fp8.tokens, conc_fp8=round(c_fp8.concurrency, 2),
                     gain=round(c_fp8.tokens / c_now.tokens, 2) if c_now.tokens else None)
    ev += _check(value, cap, log, now)
    if value.get("check") == "consistent":  # the engine's own count is exact (its paging)
        value["tokens_now"] = value["logged_tokens"]
        value["conc_now"] = value.get("logged_conc", value.get("conc_now"))
    ctx.fact("kv_capacity", value, ev)
    return value


def _max_model_len(flags: dict[str, Any], flag_ev: list[str], cap: dict[str, Any], log: _Log,
                   cfg: dict[str, Any]) -> tuple[int | None, list[str]]:
    if "max_model_len" in flags:
        try:
            return int(str(flags["max_model_len"])), list(flag_ev)
        except ValueError:
            pass
    if "max_concurrency" in cap:
        n, groups = cap["max_concurrency"]
        return int(_num(groups[0])), [log.cite(n)]
    mpe = cfg.get("max_position_embeddings")
    return (mpe, []) if isinstance(mpe, int) else (None, [])


def _budget(ctx: RecipeContext, value: dict[str, Any], cap: dict[str, Any], log: _Log,
            flags: dict[str, Any], flag_ev: list[str]) -> tuple[float | None, list[str]]:
    """KV bytes per GPU: the log's own figure, else NVML total x gpu_memory_utilization minus
    the log's weight memory (an upper bound: activations and CUDA graphs also take memory)."""
    if "kv_memory_gib" in cap:
        n, groups = cap["kv_memory_gib"]
        value.update(budget_gib=_num(groups[0]), budget_decimals=_decimals(groups[0]),
                     budget_src="log")
        return _num(groups[0]) * km.GIB, [log.cite(n)]
    if "sglang_kv" in cap:
        n, groups = cap["sglang_kv"]
        gib = _num(groups[1]) if groups[1] else _num(groups[2]) + _num(groups[3])
        value.update(budget_gib=round(gib, 2), budget_decimals=2, budget_src="sglang-pool",
                     logged_tokens=int(_num(groups[0])))
        return gib * km.GIB, [log.cite(n)]
    gpus = ctx.facts.get("gpus")
    mibs = {g.get("memory_mib") for g in gpus.value} if gpus else set()
    # vLLM's default gpu_memory_utilization is 0.9; other engines size their pool otherwise
    if ("weights_gib" in cap and len(mibs) == 1 and None not in mibs
            and value["engine"] == "vllm"):
        n, groups = cap["weights_gib"]
        util = float(str(flags.get("gpu_memory_utilization", 0.9)))
        total = int(next(iter(mibs)))
        gib = km.nvml_budget_gib(total, util, _num(groups[0]))
        value.update(budget_gib=round(gib, 2), budget_decimals=2, budget_src="nvml",
                     budget_formula=f"{total / 1024:.2f} GiB x gpu_memory_utilization {util} "
                                    f"- weights {groups[0]} GiB")
        return gib * km.GIB, [log.cite(n), *flag_ev, *gpus.evidence]  # type: ignore[union-attr]
    value["budget_src"] = None
    return None, []


def _decimals(text: str | None) -> int:
    return len(text.split(".", 1)[1]) if text and "." in text else 0


def _block_size(cap: dict[str, Any], log: _Log, value: dict[str, Any]) -> int | None:
    """vLLM's page size in tokens, from its own figures (tokens / num_gpu_blocks)."""
    if "kv_tokens" in cap and "num_gpu_blocks" in cap:
        tokens = int(_num(cap["kv_tokens"][1][0]))
        blocks = int(_num(cap["num_gpu_blocks"][1][0]))
        if blocks and tokens % blocks == 0:
            value["block_size"] = tokens // blocks
            return tokens // blocks
    return None


def _check(value: dict[str, Any], cap: dict[str, Any], log: _Log, now: km.KVLayout
           ) -> list[str]:
    """Compare the computed capacity with what the engine logged; a mismatch is stated."""
    ev: list[str] = []
    if "kv_tokens" in cap:
        n, groups = cap["kv_tokens"]
        value["logged_tokens"] = int(_num(groups[0]))
        ev.append(log.cite(n))
    if "max_concurrency" in cap:
        n, groups = cap["max_concurrency"]
        value["logged_conc"] = _num(groups[1])
        ev.append(log.cite(n))
    if "sglang_kv" in cap:
        ev.append(log.cite(cap["sglang_kv"][0]))
    logged, gib = value.get("logged_tokens"), value.get("budget_gib")
    if logged is None or gib is None or value.get("budget_src") == "nvml":
        value["check"] = "not-possible"
        if logged is not None and value.get("budget_src") == "nvml":
            value["check_why"] = (f"the budget is an upper bound from NVML, not the engine's own "
                                  f"figure, so the engine's logged {logged:,} tokens can only be "
                                  "at or below what it allows")
        return ev
    if now.full_layers != len(now.layers):
        value["check"] = "not-possible"
        value["check_why"] = "sliding-window layers are paged by the engine's hybrid allocator"
        return ev
    cc = km.cross_check(gib, value.get("budget_decimals", 2), logged, now.bytes_per_token,
                        value.get("block_size"))
    value["check"] = "consistent" if cc.consistent else "mismatch"
    value["implied_bytes"] = round(cc.implied_bytes)
    value["check_range"] = [cc.low, cc.high]
    return ev


@recipe_function("kv_load")
async def kv_load(ctx: RecipeContext) -> dict[str, Any]:
    """Load over the logged window from the periodic stats lines: running and waiting
    requests, KV usage, preemptions, throughput; and whether capacity is the bottleneck.
    Needs: service_log. Sets: kv_load."""
    log = _Log(ctx)
    if log.out is None:
        raise StepFailed("the server's log was not read, so the load is not established")
    load = parse_load(log.lines)
    value = _load_value(load)
    ev = [log.cite(n) for n in _load_lines(load)]
    ctx.fact("kv_load", value, ev or [log.out["evidence_id"]])
    return value


def _load_value(load: Load) -> dict[str, Any]:
    busy = load.busy()
    return {
        "verdict": load.verdict(), "lines": len(load.samples),
        "max_running": load.max_running, "max_waiting": load.max_waiting,
        "max_usage": load.max_usage, "preemptions": load.preemptions,
        "gen_tps": round(sum(s.gen_tps for s in busy) / len(busy), 1) if busy else None,
        "busy_running": round(sum(s.running for s in busy) / len(busy), 1) if busy else None,
        "max_prompt_tps": max((s.prompt_tps or 0.0 for s in load.samples), default=0.0)}


def _load_lines(load: Load) -> list[int]:
    """The lines that carry the verdict: each extreme, and every preemption (first five)."""
    picks: set[int] = set(load.preempt_lines[:5]) | set(load.queue_lines[:1])
    if load.samples:
        picks.add(max(load.samples, key=lambda s: (s.usage_pct, s.line)).line)
        picks.add(max(load.samples, key=lambda s: ((s.waiting or 0), s.line)).line)
        picks.add(max(load.samples, key=lambda s: (s.running, s.line)).line)
    return sorted(picks)


@recipe_function("allreduce_cost")
async def allreduce_cost(ctx: RecipeContext) -> dict[str, Any]:
    """Allreduce bytes per decode step and, when the log shows generation throughput, the
    share of a step those bytes take at peak link bandwidth (PCIe from nvidia-smi -q, NVLink
    from the NVML topology). Needs: serve_flags, model_architecture, gpu_links, kv_load.
    Sets: allreduce_cost."""
    ctx.need("serve_args", "serve_flags")
    server: Server = ctx.vars["server"]
    model = ctx.need("served_model", "model_architecture")
    count, per_token = model.value.get("allreduces_per_step"), model.value.get(
        "allreduce_bytes_per_token")
    if not isinstance(count, int) or not isinstance(per_token, int):
        raise StepFailed("num_hidden_layers or hidden_size is missing from config.json")
    value: dict[str, Any] = {"count": count, "bytes_per_token": per_token, "tp": server.tp,
                             "per_token_step": count * per_token}
    ev = list(model.evidence) + ctx.facts["serve_args"].evidence
    link, link_ev = await _link(ctx)
    value.update(link)
    ev += link_ev
    load = ctx.facts.get("kv_load")
    if load is not None and load.value.get("gen_tps") and link.get("gbps"):
        batch = max(1, round(load.value["busy_running"]))
        share = km.allreduce_share(count, per_token, batch, server.tp, load.value["gen_tps"],
                                   link["gbps"])
        if share is not None:
            value.update(batch=batch, gen_tps=load.value["gen_tps"],
                         step_ms=round(share.step_s * 1e3, 2),
                         wire_mb=round(share.wire_bytes / 1e6, 2),
                         transfer_us=round(share.transfer_s * 1e6, 1),
                         share_pct=round(100 * share.share, 2))
            ev += load.evidence
    ctx.fact("allreduce_cost", value, ev)
    return value


async def _link(ctx: RecipeContext) -> tuple[dict[str, Any], list[str]]:
    kind = ctx.facts["interconnect"].value if "interconnect" in ctx.facts else None
    ev = list(ctx.facts["interconnect"].evidence) if kind else []
    if kind == "nvlink":
        types = ctx.facts["link_types"].value
        links = min((int(t[2:]) for t in types if t.startswith("NV") and t[2:].isdigit()),
                    default=0)
        cc = ctx.facts.get("compute_capability")
        major = int(str(cc.value).split(".")[0]) if cc else 0
        gbps = km.nvlink_gbps(links, major)
        return {"link": f"NVLink x{links}", "gbps": gbps}, ev
    if kind == "pcie":
        out = await ctx.tool("run_command", optional=True, argv=["nvidia-smi", "-q"])
        if out and out["exit_code"] == 0:
            got = _pcie_link(out["stdout"])
            if got is not None:
                gen, width, lines = got
                ev += [ctx.cite_output_line(out, n) for n in lines]
                return {"link": f"PCIe Gen{gen} x{width}", "gbps": km.pcie_gbps(gen, width)}, ev
    return {"link": kind, "gbps": None}, ev


_PCIE_GEN = re.compile(r"^\s*PCIe Generation Current\s*:\s*(\d+)\s*$")
_PCIE_WIDTH = re.compile(r"^\s*Link Width Current\s*:\s*(\d+)x\s*$")


def _pcie_link(text: str) -> tuple[int, int, list[int]] | None:
    """The slowest current PCIe generation and width in ``nvidia-smi -q`` over the host's
    GPUs (a ring runs at its slowest link), with the lines that say so."""
    gens: list[tuple[int, int]] = []
    widths: list[tuple[int, int]] = []
    for n, line in enumerate(text.splitlines(), 1):
        if m := _PCIE_GEN.match(line):
            gens.append((int(m[1]), n))
        elif m := _PCIE_WIDTH.match(line):
            widths.append((int(m[1]), n))
    if not gens or not widths:
        return None
    (gen, g_line), (width, w_line) = min(gens), min(widths)
    return gen, width, [g_line, w_line]

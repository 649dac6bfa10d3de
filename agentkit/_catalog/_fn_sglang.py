"""Would an FP8 KV cache work with SGLang: what its installed source accepts, and whether
the attention backend the server runs (or could run) uses an FP8 KV cache.

From the installed source: the ``--kv-cache-dtype`` choices (``server_args.py``), and the
refusals it raises for backend/dtype pairs. SGLang does not declare per-backend KV dtypes in
code the way vLLM does, so which backend reads an FP8 KV cache is SGLang's documented support
matrix (``SGLANG_FP8_KV`` below, kept as data and cited), with the GPU generations each
backend runs on. The backend itself is never guessed: it is the ``--attention-backend`` flag,
else what the server logged choosing it.
"""

from __future__ import annotations

import re
from typing import Any

from .._hostmodel import Server
from ._recipe import RecipeContext, StepFailed

DOCS = "https://docs.sglang.ai/advanced_features/attention_backend.html"
# backend → (FP8 KV with MHA, FP8 KV with MLA, compute-capability majors it runs on)
SGLANG_FP8_KV: dict[str, tuple[bool, bool, frozenset[int]]] = {
    "flashinfer": (True, False, frozenset({8, 9, 10, 12})),
    "fa3": (True, False, frozenset({8, 9})),
    "trtllm_mha": (True, False, frozenset({10})),
    "flashmla": (False, True, frozenset({9})),
    "cutlass_mla": (False, True, frozenset({10})),
    "trtllm_mla": (False, True, frozenset({10})),
    # Triton with MHA: the current docs table marks FP8 KV supported (an older one did not)
    "triton": (True, False, frozenset({8, 9, 10, 12})),
    "torch_native": (False, False, frozenset({8, 9, 10, 12})),
    "flex_attention": (False, False, frozenset({8, 9, 10, 12})),
    "fa4": (False, False, frozenset({10})),
}
_CHOICES = re.compile(r"choices\s*=\s*\[([^\]]*)\]")
# Refusals the source raises or logs for a backend/dtype pair, by the words SGLang uses.
_REFUSALS = re.compile(r"only supports fp8_e4m3|only supports kv-cache-dtype of|FlashAttention v3 "
                       r"Backend requires SM>=80 and SM<=90")


async def sglang_kv(ctx: RecipeContext, target: str) -> dict[str, Any]:
    server: Server = ctx.vars["server"]
    site = ctx.need("engine_site", "vllm_install").value
    version = ctx.facts["engine_version"].value if "engine_version" in ctx.facts else "?"
    cc = str(ctx.need("compute_capability", "gpu_inventory").value)
    model = ctx.need("served_model", "model_architecture").value
    mla = model.get("kv_lora_rank") is not None
    # SGLang names no plain "fp8": its FP8 KV dtypes are fp8_e4m3 and fp8_e5m2.
    dtype = "fp8_e4m3" if target == "fp8" else target
    path = f"{site}/sglang/srt/server_args.py"
    lines = await ctx.read_lines(path, optional=True)
    if lines is None:
        raise StepFailed(f"SGLang {version}'s server_args.py ({path}) could not be read")
    choices, at = _choices(lines)
    if choices is None:
        raise StepFailed(f"{path} has no --kv-cache-dtype choices this reading understands")
    choice_ev = ctx.cite("file", f"{path}:{at}", lines[at - 1].strip(), lines[at - 1])
    backend, how, backend_ev = _backend(ctx, server)
    major = int(cc.split(".")[0]) if cc[:1].isdigit() else 0
    row: dict[str, Any] = {"version": version, "target": dtype, "asked": target, "choices": choices,
           "choices_where": f"{path}:{at}", "backend": backend, "backend_from": how,
           "mla": mla, "cc": cc, "docs": DOCS, "alternatives": _alternatives(mla, major),
           "refusals": _refusals(ctx, lines, path)}
    ev = [choice_ev, *backend_ev, *ctx.facts["compute_capability"].evidence[:1],
          *ctx.facts["served_model"].evidence[:2]]
    ctx.fact("kv_target_dtype", dtype, ev)
    if dtype not in choices:
        verdict = "no"
        row["why"] = f"{dtype} is not among SGLang {version}'s --kv-cache-dtype choices"
    elif backend is None:
        verdict = "undetermined"
        row["why"] = ("the attention backend is neither set by --attention-backend nor named in "
                      "the server's log, and SGLang chooses it by version, GPU and model")
    else:
        verdict, row["why"] = _judge(backend, dtype, mla, major, row["alternatives"])
    flag = ctx.facts.get("kv_cache_dtype")
    if flag is not None and str(flag.value).startswith("fp8") and dtype in choices:
        # It already asks for an FP8 cache: up, the cache is FP8 (however the backend reads
        # it); failing, the flag is the first suspect.
        state = ctx.facts.get("server_state")
        value = state.value["value"] if state is not None else "unknown"
        if value == "running":
            row["reads_fp8"] = verdict == "yes"
            verdict = "already-on"
        elif value in ("crash-looping", "failed"):
            verdict = "broken"
    row.setdefault("reads_fp8", verdict == "yes")
    row["verdict"] = verdict
    ctx.fact("kv_sglang", row, ev + [r["evidence"] for r in row["refusals"]])
    ctx.fact("kv_verdict", verdict, ev)
    return row


def _choices(lines: list[str]) -> tuple[list[str] | None, int]:
    for n, line in enumerate(lines, 1):
        if '"--kv-cache-dtype"' in line:
            for k in range(n, min(n + 12, len(lines) + 1)):
                m = _CHOICES.search(lines[k - 1])
                if m:
                    return re.findall(r"[\"']([\w.-]+)[\"']", m.group(1)), k
    return None, 0


def _backend(ctx: RecipeContext, server: Server) -> tuple[str | None, str, list[str]]:
    flag = server.flags.get("attention_backend")
    if flag:
        return str(flag), "--attention-backend", list(ctx.facts["serve_args"].evidence)
    logged = ctx.facts.get("attention_backend")
    if logged is not None and str(logged.value).lower() not in ("none", ""):
        return str(logged.value).lower(), "the server's log", list(logged.evidence)
    return None, "", []


def _alternatives(mla: bool, major: int) -> list[str]:
    return [b for b, (mha_ok, mla_ok, arch) in SGLANG_FP8_KV.items()
            if (mla_ok if mla else mha_ok) and major in arch]


def _judge(backend: str, dtype: str, mla: bool, major: int, alternatives: list[str]
           ) -> tuple[str, str]:
    kind = "MLA" if mla else "standard (MHA/GQA)"
    if backend == "fa3" and dtype == "fp8_e5m2":
        return "no", ("SGLang's fa3 backend takes only fp8_e4m3 and falls back to triton for "
                      "fp8_e5m2, which does not read an FP8 KV cache")
    known = SGLANG_FP8_KV.get(backend)
    if known is None:
        return "undetermined", f"{backend} is not in SGLang's documented support matrix"
    mha_ok, mla_ok, arch = known
    if (mla_ok if mla else mha_ok) and major in arch:
        return "yes", (f"{backend} reads an FP8 KV cache for {kind} attention on this GPU "
                       "(SGLang's attention-backend support matrix)")
    others = [a for a in alternatives if a != backend]
    why = (f"{backend} does not read an FP8 KV cache for {kind} attention (SGLang's "
           "attention-backend support matrix)")
    if others:
        return "with-other-backend", why
    return "no", why + "; no backend that does runs on this GPU"


def _refusals(ctx: RecipeContext, lines: list[str], path: str) -> list[dict[str, Any]]:
    out = []
    for n, line in enumerate(lines, 1):
        if _REFUSALS.search(line):
            out.append({"where": f"{path}:{n}", "text": line.strip(),
                        "evidence": ctx.cite("file", f"{path}:{n}", line.strip(), line)})
    return out[:5]

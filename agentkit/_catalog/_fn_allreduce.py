"""Whether vLLM's (or SGLang's, which adapted it) custom allreduce can carry the server's
tensor-parallel allreduces, decided over the facts with the engine's own rules.

The rules (custom_all_reduce.py): off with ``--disable-custom-all-reduce``; nothing to reduce
at TP 1; only world sizes 2, 4, 6 and 8; more than two GPUs need full NVLink among the TP group
("not supported on more than two PCIe-only GPUs"). The rule is about the TP group's GPUs, not
the host's GPU count. The server's log, when it says "Custom allreduce is disabled because …",
is the strongest evidence; its silence proves nothing.
"""

from __future__ import annotations

from typing import Any

from .._hostmodel import ENGINE_NAMES, Server
from ._recipe import RecipeContext, recipe_function

SUPPORTED_WORLD_SIZES = (2, 4, 6, 8)


def _tp_gpus(server: Server, count: int) -> list[int] | None:
    visible = server.env.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        try:
            ids = [int(x) for x in visible.value.split(",") if x.strip()]
        except ValueError:
            return None
        return ids[: server.tp]
    return list(range(min(server.tp, count)))


def _full_nvlink(matrix: list[list[str]], gpus: list[int]) -> bool | None:
    if not matrix or any(g >= len(matrix) for g in gpus):
        return None
    return all(matrix[i][j].startswith("NV") for i in gpus for j in gpus if i != j)


@recipe_function("custom_allreduce")
async def custom_allreduce(ctx: RecipeContext) -> dict[str, Any]:
    """Decide custom allreduce for the serving process. Needs: serve_flags; uses gpu_links
    and service_log when they ran. Sets: custom_allreduce {verdict, holds, why}."""
    ctx.need("serve_args", "serve_flags")
    server: Server = ctx.vars["server"]
    ev = list(ctx.facts["serve_args"].evidence)
    name = ENGINE_NAMES.get(server.engine or "", "vLLM")
    if server.engine not in (None, "vllm", "sglang"):
        # TensorRT-LLM has allreduce strategies of its own: vLLM's rules say nothing about it.
        ctx.fact("custom_allreduce", {"verdict": "undetermined", "holds": ["undetermined"],
                                      "why": [f"{name} chooses its allreduce strategy by its own "
                                              "rules, which agentkit does not read"],
                                      "used": None, "tp": server.tp, "unit": server.name,
                                      "engine": server.engine, "engine_name": name}, ev)
        return {"verdict": "undetermined"}
    holds, why, nvlink = _what_turns_it_off(ctx, server, name, ev)
    if not holds:
        _when_nothing_turns_it_off(ctx, server.tp, name, nvlink, holds, why, ev)
    verdict = holds[0]
    used = {"possible": True, "undetermined": None}.get(verdict, False)
    ctx.fact("custom_allreduce", {"verdict": verdict, "holds": holds, "why": why,
                                  "used": used, "tp": server.tp, "unit": server.name,
                                  "engine": server.engine, "engine_name": name}, ev)
    return {"verdict": verdict}


def _what_turns_it_off(ctx: RecipeContext, server: Server, name: str,
                       ev: list[str]) -> tuple[list[str], list[str], bool | None]:
    """Every condition that keeps custom allreduce off, each with its reason (evidence is
    added to ``ev``), and whether the TP GPUs have full NVLink (None: topology unread)."""
    tp = server.tp
    holds: list[str] = []
    why: list[str] = []
    if server.flags.get("disable_custom_all_reduce"):
        holds.append("off-by-flag")
        why.append("the serving command passes --disable-custom-all-reduce")
    if tp == 1:
        holds.append("not-needed")
        why.append("tensor parallel 1 has no allreduce to carry")
    logged = ctx.facts.get("custom_allreduce_disabled")
    if logged is not None:
        holds.append("disabled-log")
        why.append(f'the server\'s log says "Custom allreduce is disabled because '
                   f'{logged.value["reason"]}"')
        ev += logged.evidence
    if tp > 1 and tp not in SUPPORTED_WORLD_SIZES:
        holds.append("disabled-size")
        why.append(f"TP {tp} is not a world size custom allreduce supports "
                   f"({', '.join(map(str, SUPPORTED_WORLD_SIZES))})")
    matrix = ctx.vars.get("topology_matrix")
    gpus = _tp_gpus(server, len(matrix or []))
    nvlink = _full_nvlink(matrix or [], gpus or []) if gpus else None
    if tp > 2 and nvlink is False:
        holds.append("disabled-pcie")
        links = "/".join(ctx.facts["link_types"].value) if "link_types" in ctx.facts else "PCIe"
        why.append(f"TP {tp} spans more than two GPUs without full NVLink ({links} between "
                   f"them), which {name} refuses (\"not supported on more than two PCIe-only "
                   "GPUs\")")
        ev += ctx.facts["link_types"].evidence if "link_types" in ctx.facts else []
    return holds, why, nvlink


def _when_nothing_turns_it_off(ctx: RecipeContext, tp: int, name: str, nvlink: bool | None,
                               holds: list[str], why: list[str], ev: list[str]) -> None:
    """Nothing keeps it off: possible, unless more than two GPUs' topology is unread."""
    if nvlink is None and tp > 2:
        holds.append("undetermined")
        why.append(f"the GPU topology could not be read, and {name}'s rule for more "
                   "than two GPUs depends on it")
        return
    holds.append("possible")
    link = ("full NVLink between the TP GPUs" if nvlink else
            f"two GPUs, which {name} allows over PCIe when peer-to-peer works")
    why.append(f"TP {tp} with {link}, and no flag turns it off")
    if "link_types" in ctx.facts:
        ev += ctx.facts["link_types"].evidence
    if ctx.facts.get("log_covers_start") and ctx.facts["log_covers_start"].value:
        why.append("the server's log, which covers its start, has no \"disabled\" "
                   "warning")
        ev += ctx.facts["log_covers_start"].evidence

"""Recipe functions about GPUs: inventory (model, compute capability, memory, driver) and
the topology between them (NVLink or PCIe only)."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from ._recipe import RecipeContext, StepFailed, recipe_function

_QUERY = ["nvidia-smi",
          "--query-gpu=index,name,compute_cap,memory.total,driver_version,pci.bus_id",
          "--format=csv"]


@recipe_function("gpu_inventory")
async def gpu_inventory(ctx: RecipeContext) -> dict[str, Any]:
    """GPU model, count, compute capability, memory and driver: NVML first, then
    `nvidia-smi --query-gpu` (live or captured). Sets: gpus, compute_capability, driver."""
    nvml = await ctx.tool("gpu_info")
    if nvml and nvml.get("available") and nvml.get("devices"):
        devs = nvml["devices"]
        ev = [d["evidence_id"] for d in devs]
        gpus = [{"index": d["index"], "name": d["name"],
                 "compute_capability": ".".join(str(x) for x in d["compute_capability"]),
                 "memory_mib": d["memory_total_mib"]} for d in devs]
        _set(ctx, gpus, ev)
        ctx.fact("driver", {"driver_version": nvml.get("driver_version"),
                            "cuda_version": nvml.get("cuda_driver_version")},
                 [nvml["system_evidence_id"]])
        return {"source": "nvml", "gpus": gpus}
    out = await ctx.tool("run_command", optional=True, argv=_QUERY)
    if not out or out["exit_code"] != 0:
        reason = (nvml or {}).get("reason", "")
        raise StepFailed(f"no GPU reading: NVML said {reason!r} and nvidia-smi gave nothing")
    gpus, driver = parse_query_csv(out["stdout"])
    ev = [out["evidence_id"]]
    _set(ctx, gpus, ev)
    ctx.fact("driver", {"driver_version": driver, "cuda_version": None}, ev)
    return {"source": "nvidia-smi", "gpus": gpus}


def _set(ctx: RecipeContext, gpus: list[dict[str, Any]], ev: list[str]) -> None:
    if not gpus:
        raise StepFailed("the GPU reading lists no GPUs")
    ctx.fact("gpus", gpus, ev)
    ctx.fact("gpu_count", len(gpus), ev)
    models = Counter(g["name"] for g in gpus)
    ctx.fact("gpu_model", models.most_common(1)[0][0], ev)
    caps = sorted({g["compute_capability"] for g in gpus})
    ctx.fact("compute_capability", caps[0], ev)
    if len(caps) > 1:
        ctx.errors.append(f"mixed compute capabilities {caps}; using the lowest")


def parse_query_csv(text: str) -> tuple[list[dict[str, Any]], str | None]:
    rows = [r for r in text.strip().splitlines() if r.strip()]
    if not rows:
        return [], None
    header = [h.strip().split(" ")[0] for h in rows[0].split(",")]
    gpus: list[dict[str, Any]] = []
    driver = None
    for row in rows[1:]:
        cells = dict(zip(header, (c.strip() for c in row.split(",")), strict=False))
        mem = re.match(r"(\d+)", cells.get("memory.total", ""))
        gpus.append({"index": int(cells.get("index", len(gpus))), "name": cells.get("name", "?"),
                     "compute_capability": cells.get("compute_cap", "?"),
                     "memory_mib": int(mem.group(1)) if mem else None})
        driver = cells.get("driver_version") or driver
    return gpus, driver


@recipe_function("gpu_links")
async def gpu_links(ctx: RecipeContext) -> dict[str, Any]:
    """How GPUs connect: NVLink (NV#) or PCIe only, from NVML or `nvidia-smi topo -m`.
    Sets: interconnect ("nvlink" | "mixed" | "pcie"), link_types, gpu_count."""
    nvml = await ctx.tool("gpu_info")
    matrix: list[list[str]] = []
    ev: list[str] = []
    out: dict[str, Any] | None = None
    if nvml and nvml.get("available") and nvml.get("topology"):
        matrix = nvml["topology"]["matrix"]
        ev = [nvml["topology"]["evidence_id"]]
    else:
        out = await ctx.tool("run_command", optional=True, argv=["nvidia-smi", "topo", "-m"])
        if not out or out["exit_code"] != 0:
            raise StepFailed("no topology: neither NVML nor `nvidia-smi topo -m` answered")
        matrix = parse_topo_matrix(out["stdout"])
    links = Counter(c for i, row in enumerate(matrix) for j, c in enumerate(row) if i != j)
    if not links:
        raise StepFailed("the topology matrix is empty")
    if out is not None:  # from `nvidia-smi topo -m`: rows showing the links, not its header
        ev = _rows_showing(ctx, out, matrix, sorted(links))
    nv = [k.startswith("NV") for k in links]
    # all pairs NV#: NVLink; some: a mix (NVLink between some GPUs, PCIe/SMP between others)
    ctx.fact("interconnect", "nvlink" if all(nv) else "mixed" if any(nv) else "pcie", ev)
    ctx.fact("link_types", sorted(links), ev)
    ctx.fact("gpu_count", len(matrix), ev)
    ctx.fact("crosses_sockets", "SYS" in links, ev)
    ctx.vars["topology_matrix"] = matrix
    return {"matrix": matrix}


def _rows_showing(ctx: RecipeContext, out: dict[str, Any], matrix: list[list[str]],
                  links: list[str]) -> list[str]:
    """For each kind of link, the first GPU row of `nvidia-smi topo -m` that shows it (the
    output's header row names the columns but shows no link)."""
    numbers = [n for n, _ in _gpu_rows(out["stdout"])]
    cited: list[int] = []
    for link in links:
        n = next((numbers[i] for i, row in enumerate(matrix) if i < len(numbers)
                  and any(c == link for j, c in enumerate(row) if j != i)), 0)
        if n and n not in cited:
            cited.append(n)
    return [ctx.cite_output_line(out, n) for n in sorted(cited)] or [out["evidence_id"]]


def parse_topo_matrix(text: str) -> list[list[str]]:
    return [cells for _, cells in _gpu_rows(text)]


def _gpu_rows(text: str) -> list[tuple[int, list[str]]]:
    """(line number, links to GPU0…GPUn) for each GPU row of `nvidia-smi topo -m`. The
    header row starts with its empty corner cell (whitespace), so its first word, GPU0, is a
    column's name and not a row's: counted as a row, it made a ninth GPU of eight."""
    lines = text.splitlines()
    header = next((ln for ln in lines if re.match(r"^\s+GPU0\b", ln)), None)
    if header is None:
        return []
    gpus = [h for h in header.split() if re.fullmatch(r"GPU\d+", h)]
    rows = []
    for n, ln in enumerate(lines, 1):
        parts = ln.split()
        if parts and not ln[:1].isspace() and re.fullmatch(r"GPU\d+", parts[0]):
            rows.append((n, parts[1 : 1 + len(gpus)]))
    return rows

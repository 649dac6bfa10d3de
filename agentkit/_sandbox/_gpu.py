"""``gpu_info``: GPUs through NVML (``pynvml`` from nvidia-ml-py), or a snapshot's capture.

The reading has one shape wherever it comes from::

    {"available": true, "source": "nvml", "driver_version": "580.95.05",
     "cuda_driver_version": "13.0",
     "devices": [{"index": 0, "name": "…", "uuid": "GPU-…", "pci_bus_id": "…",
                  "compute_capability": [12, 0], "memory_total_mib": 97887}],
     "topology": {"labels": ["GPU0", …], "matrix": [["X", "NODE", …], …]}}

Links use ``nvidia-smi topo -m``'s words: ``NV#`` (that many NVLinks), ``PIX``, ``PXB``,
``PHB``, ``NODE``, ``SYS``. On a machine without NVML the result says so, as a result.
"""

from __future__ import annotations

from typing import Any

from .._types import Evidence
from ._captures import SnapshotError, load_nvml
from ._tool import ToolContext, ToolError, ToolOutput, tool

_TOPO_WORDS = {0: "X", 10: "PIX", 20: "PXB", 30: "PHB", 40: "NODE", 50: "SYS"}


def read_nvml() -> dict[str, Any]:
    """Query the real NVML; raises RuntimeError when there is none."""
    try:
        import pynvml
    except ImportError as exc:  # pragma: no cover - nvidia-ml-py is a dependency
        raise RuntimeError(f"pynvml is not importable: {exc}") from None
    try:
        pynvml.nvmlInit()
    except Exception as exc:
        raise RuntimeError(f"NVML not available: {exc}") from None
    try:
        return _query(pynvml)
    except pynvml.NVMLError as exc:  # a query the driver refuses: still a clean result
        raise RuntimeError(f"NVML query failed: {exc}") from None
    finally:
        pynvml.nvmlShutdown()


def _text(v: Any) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def _query(nv: Any) -> dict[str, Any]:
    count = nv.nvmlDeviceGetCount()
    handles = [nv.nvmlDeviceGetHandleByIndex(i) for i in range(count)]
    devices = []
    for i, h in enumerate(handles):
        major, minor = nv.nvmlDeviceGetCudaComputeCapability(h)
        devices.append({
            "index": i,
            "name": _text(nv.nvmlDeviceGetName(h)),
            "uuid": _text(nv.nvmlDeviceGetUUID(h)),
            "pci_bus_id": _text(nv.nvmlDeviceGetPciInfo(h).busId),
            "compute_capability": [major, minor],
            "memory_total_mib": nv.nvmlDeviceGetMemoryInfo(h).total // (1 << 20),
        })
    cuda = nv.nvmlSystemGetCudaDriverVersion_v2()
    matrix = [[_link(nv, handles, i, j) for j in range(count)] for i in range(count)]
    return {
        "driver_version": _text(nv.nvmlSystemGetDriverVersion()),
        "cuda_driver_version": f"{cuda // 1000}.{cuda % 1000 // 10}",
        "devices": devices,
        "topology": {"labels": [f"GPU{i}" for i in range(count)], "matrix": matrix},
    }


def _active_links(nv: Any, handle: Any) -> int:
    count = 0
    for link in range(getattr(nv, "NVML_NVLINK_MAX_LINKS", 18)):
        try:
            count += bool(nv.nvmlDeviceGetNvLinkState(handle, link))
        except nv.NVMLError:  # a link index this GPU does not have
            break
    return count


def _link(nv: Any, handles: list[Any], i: int, j: int) -> str:
    """``nvidia-smi topo -m``'s word for the pair. NVLink is asked as a P2P capability,
    which also holds through NVSwitch (where each link's remote end is the switch, not the
    peer GPU); the count is this GPU's active links, as topo -m shows for HGX boards."""
    if i == j:
        return "X"
    try:
        status = nv.nvmlDeviceGetP2PStatus(handles[i], handles[j],
                                           nv.NVML_P2P_CAPS_INDEX_NVLINK)
    except nv.NVMLError:
        status = None
    if status == nv.NVML_P2P_STATUS_OK:
        return f"NV{_active_links(nv, handles[i]) or 1}"
    level = nv.nvmlDeviceGetTopologyCommonAncestor(handles[i], handles[j])
    return _TOPO_WORDS.get(level, "SYS")


def _reading(ctx: ToolContext) -> dict[str, Any]:
    if ctx.host.nvml_reader is not None:
        return {"source": "nvml", **ctx.host.nvml_reader()}
    if ctx.host.is_live:
        return {"source": "nvml", **read_nvml()}
    manifest = ctx.host.snapshot
    if manifest is None or not manifest.nvml:
        raise RuntimeError("NVML not available: the root is a snapshot without an NVML capture")
    try:
        data = load_nvml(ctx.host.root, manifest)
    except SnapshotError as exc:
        raise ToolError(str(exc)) from None
    assert data is not None
    return {"source": f"snapshot {manifest.captured_at}".strip(), **data}


@tool
def gpu_info(ctx: ToolContext) -> ToolOutput:
    """GPUs of the host: names, compute capability, memory, driver and CUDA versions, and the
    link between every pair (NV# = NVLink, else PCIe words PIX/PXB/PHB/NODE/SYS)."""
    try:
        data = _reading(ctx)
    except RuntimeError as exc:
        return ToolOutput(data={"available": False, "reason": str(exc)})
    evidence: list[Evidence] = []
    src = data["source"]
    for dev in data.get("devices", []):
        text = (f"GPU{dev.get('index')}: {dev.get('name')}, compute capability "
                f"{'.'.join(str(x) for x in dev.get('compute_capability', []))}, "
                f"{dev.get('memory_total_mib')} MiB")
        ev = ctx.evidence("nvml", f"nvml ({src}) device {dev.get('index')}", text, text)
        dev["evidence_id"] = ev.id
        evidence.append(ev)
    topo = data.get("topology")
    if topo:
        rows = ["\t".join(["", *topo["labels"]])] + [
            "\t".join([label, *row]) for label, row in zip(topo["labels"], topo["matrix"],
                                                           strict=False)]
        text = "\n".join(rows)
        ev = ctx.evidence("nvml", f"nvml ({src}) topology", text, text)
        topo["evidence_id"] = ev.id
        evidence.append(ev)
    version = f"driver {data.get('driver_version')}, CUDA {data.get('cuda_driver_version')}"
    ev = ctx.evidence("nvml", f"nvml ({src}) system", version, version)
    evidence.append(ev)
    return ToolOutput(data={"available": True, **data, "system_evidence_id": ev.id},
                      evidence=evidence)

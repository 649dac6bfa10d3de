"""gpu_info's live NVML path, against a fake `pynvml` module (no test may need a GPU)."""

from __future__ import annotations

import sys
import types
from typing import Any

import anyio
import pytest

from agentkit import Host, Sandbox
from agentkit._sandbox._paths import Root


class NVMLError(Exception):
    pass


def fake_nvml(count: int, nvlink: bool, fail_on: str = "") -> types.ModuleType:
    m = types.ModuleType("pynvml")
    m.NVMLError = NVMLError  # type: ignore[attr-defined]
    m.NVML_P2P_CAPS_INDEX_NVLINK = 2  # type: ignore[attr-defined]
    m.NVML_P2P_STATUS_OK = 0  # type: ignore[attr-defined]
    m.NVML_NVLINK_MAX_LINKS = 36  # type: ignore[attr-defined]

    def maybe_fail(name: str) -> None:
        if name == fail_on:
            raise NVMLError(f"{name}: Not Supported")

    def ns(**kw: Any) -> Any:
        return types.SimpleNamespace(**kw)

    funcs = {
        "nvmlInit": lambda: maybe_fail("nvmlInit"),
        "nvmlShutdown": lambda: None,
        "nvmlDeviceGetCount": lambda: count,
        "nvmlDeviceGetHandleByIndex": lambda i: i,
        "nvmlDeviceGetCudaComputeCapability": lambda h: (9, 0) if nvlink else (12, 0),
        "nvmlDeviceGetName": lambda h: b"NVIDIA H100 80GB HBM3" if nvlink else "RTX PRO 6000",
        "nvmlDeviceGetUUID": lambda h: f"GPU-{h:04d}",
        "nvmlDeviceGetPciInfo": lambda h: ns(busId=f"00000000:{h:02x}:00.0"),
        "nvmlDeviceGetMemoryInfo": lambda h: (maybe_fail("memory"), ns(total=80 << 30))[1],
        "nvmlSystemGetCudaDriverVersion_v2": lambda: 12080,
        "nvmlSystemGetDriverVersion": lambda: "570.172.08",
        "nvmlDeviceGetP2PStatus": lambda a, b, cap: 0 if nvlink else 3,
        # NVSwitch boards: every link is up, and its remote end is the switch, not a GPU
        "nvmlDeviceGetNvLinkState": lambda h, link: (
            1 if link < 18 else (_ for _ in ()).throw(NVMLError("invalid link"))),
        "nvmlDeviceGetTopologyCommonAncestor": lambda a, b: 40 if a // 4 == b // 4 else 50,
    }
    for name, fn in funcs.items():
        setattr(m, name, fn)
    return m


def reading(monkeypatch: pytest.MonkeyPatch, module: types.ModuleType) -> Any:
    monkeypatch.setitem(sys.modules, "pynvml", module)
    box = Sandbox(Host(root=Root("/")), task_id="t")
    return anyio.run(box.call, "gpu_info", {})


def test_nvswitch_board_reads_as_nvlink(monkeypatch: pytest.MonkeyPatch) -> None:
    r = reading(monkeypatch, fake_nvml(8, nvlink=True))
    assert r.ok and r.data["available"]
    matrix = r.data["topology"]["matrix"]
    assert matrix[0][0] == "X" and {c for row in matrix for c in row} == {"X", "NV18"}
    dev = r.data["devices"][3]
    assert dev["name"] == "NVIDIA H100 80GB HBM3" and dev["compute_capability"] == [9, 0]
    assert r.data["cuda_driver_version"] == "12.8" and dev["memory_total_mib"] == 81920


def test_pcie_board_uses_topology_words(monkeypatch: pytest.MonkeyPatch) -> None:
    r = reading(monkeypatch, fake_nvml(8, nvlink=False))
    matrix = r.data["topology"]["matrix"]
    assert matrix[0][1] == "NODE" and matrix[0][5] == "SYS" and matrix[6][7] == "NODE"
    assert not any(c.startswith("NV") for row in matrix for c in row)


@pytest.mark.parametrize("fail_on", ["nvmlInit", "memory"])
def test_nvml_errors_are_a_clean_result(monkeypatch: pytest.MonkeyPatch, fail_on: str) -> None:
    r = reading(monkeypatch, fake_nvml(2, nvlink=True, fail_on=fail_on))
    assert r.ok and r.data["available"] is False
    assert "NVML" in r.data["reason"] and "Not Supported" in r.data["reason"]

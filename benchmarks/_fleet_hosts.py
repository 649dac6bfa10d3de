"""Generated snapshot fleets for the fleet tests and benchmarks: ``n`` small hosts (a
snapshot manifest and NVML's view of 8 GPUs), some with another driver, some broken."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

DRIVER, OTHER_DRIVER = "570.172.08", "575.51.03"


def host_name(i: int, width: int = 4) -> str:
    return f"n{i:0{width}d}"


def _nvml(driver: str) -> str:
    gpus = [{"index": i, "name": "NVIDIA H100 80GB HBM3", "uuid": f"GPU-{i:08d}",
             "pci_bus_id": f"00000000:{0x18 + i:02X}:00.0", "compute_capability": [9, 0],
             "memory_total_mib": 81559} for i in range(8)]
    return json.dumps({"driver_version": driver, "cuda_driver_version": "12.8",
                       "devices": gpus}, indent=1)


def write_host(root: Path, name: str, driver: str = DRIVER, broken: bool = False) -> Path:
    meta = root / name / ".agentkit"
    meta.mkdir(parents=True)
    if broken:  # a snapshot cut off while it was written: its manifest is not JSON
        (meta / "snapshot.json").write_text('{"format": "agentkit-snapshot", "vers')
        return root / name
    (meta / "snapshot.json").write_text(json.dumps({
        "format": "agentkit-snapshot", "version": 1, "host": name,
        "captured_at": "2026-11-21T09:41:37Z", "commands": [], "nvml": "nvml.json"}))
    (meta / "nvml.json").write_text(_nvml(driver))
    return root / name


def make_fleet(root: Path, n: int, outliers: Iterable[int] = (), broken: Iterable[int] = (),
               width: int = 4) -> list[str]:
    """Hosts n0001.. under ``root``; ``outliers`` run OTHER_DRIVER, ``broken`` are cut off."""
    odd, bad = set(outliers), set(broken)
    names = []
    for i in range(1, n + 1):
        name = host_name(i, width)
        write_host(root, name, OTHER_DRIVER if i in odd else DRIVER, broken=i in bad)
        names.append(name)
    return names


REFERENCE = Path(__file__).resolve().parent.parent / "examples" / "blackwell-kimi"
UNIT = "etc/systemd/system/vllm-kimi.service"


def make_reference_fleet(root: Path, n: int, simple: Iterable[int] = (),
                         unset: Iterable[int] = (), empty: Iterable[int] = (),
                         no_server: Iterable[int] = ()) -> list[str]:
    """Hosts gpu001.. copied from the reference example (``NCCL_PROTO=LL`` at
    vllm-kimi.service:15): ``simple`` set ``NCCL_PROTO=Simple`` on that line, ``unset`` lose the
    line, ``empty`` are empty directories, ``no_server`` have no unit at all."""
    import shutil

    odd, gone, blank, bare = set(simple), set(unset), set(empty), set(no_server)
    names = []
    for i in range(1, n + 1):
        name = f"gpu{i:03d}"
        names.append(name)
        host = root / name
        if i in blank:
            host.mkdir(parents=True)
            continue
        shutil.copytree(REFERENCE, host, symlinks=True)
        unit = host / UNIT
        if i in bare:
            shutil.rmtree(host / "etc" / "systemd")
            continue
        text = unit.read_text()
        if i in odd:
            text = text.replace("NCCL_PROTO=LL", "NCCL_PROTO=Simple")
        if i in gone:
            text = text.replace("Environment=NCCL_PROTO=LL\n", "")
        unit.write_text(text)
    return names

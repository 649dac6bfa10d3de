"""Sentences that rest on a fact appear only where the fact holds (issue 22, item 3).

Expected from NCCL 2.30.7's source, written before running: NCCL_P2P_DISABLE counts only when
strtol reads 1; else NCCL_P2P_LEVEL is an exact name (LOC..SYS) or the old numbering (4 and 5
are SYS); anything else leaves NCCL's default, PXB (src/graph/paths.cc). So "which is what
NCCL_P2P_LEVEL=… admits" (peer-to-peer across the sockets of the PCIe-only Blackwell host) may
appear only when the level NCCL uses is SYS, and the NVLink custom-allreduce sentence only when
the serving command does not turn custom allreduce off.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentkit._hostmodel import _nccl_values as nv

from .scenarios import runner

UNIT = "etc/systemd/system/vllm-kimi.service"
ADMITS = "admits for peer-to-peer"
SHORT = "stops peer-to-peer short of those pairs"


def _answer(tmp_path: Path, base: str, replace: dict[str, list[list[str]]],
            tasks: list[str]) -> str:
    sc = runner.Scenario("premise", {"base": base, "replace": replace})
    root = runner.build(sc, tmp_path)
    out = runner.investigate(root, "Do previous optimizations, esp around allreduce apply?",
                             tasks)
    return runner.all_text(out.answer)


@pytest.mark.parametrize("lines", [
    ["NCCL_P2P_LEVEL=SYS"], ["NCCL_P2P_LEVEL=4"], ["NCCL_P2P_LEVEL=5"],
    ["NCCL_P2P_LEVEL=9"], ["NCCL_P2P_LEVEL=sys"], ["NCCL_P2P_LEVEL=PHB"],
    ["NCCL_P2P_LEVEL=3"], ["NCCL_P2P_LEVEL=NODE"], [],
    ["NCCL_P2P_DISABLE=true", "NCCL_P2P_LEVEL=SYS"],
])
def test_the_sys_clause_needs_nccl_to_use_sys(lines: list[str], tmp_path: Path) -> None:
    env = "\n".join(f"Environment={x}" for x in lines)
    text = _answer(tmp_path, "blackwell-kimi",
                   {UNIT: [["Environment=NCCL_P2P_LEVEL=SYS", env]]},
                   ["nccl-env", "gpu-topology"])
    values = dict(x.split("=", 1) for x in lines)
    level = nv.parse_p2p(values.get("NCCL_P2P_DISABLE"), values.get("NCCL_P2P_LEVEL"))
    if level == nv.PATHS.index("SYS"):
        assert ADMITS in text and SHORT not in text, text
        assert f"{lines[-1]} admits" in text
    else:
        assert ADMITS not in text and SHORT in text, text


def test_p2p_disable_one_leaves_no_topology_praise(tmp_path: Path) -> None:
    text = _answer(tmp_path, "blackwell-kimi",
                   {UNIT: [["Environment=NCCL_P2P_LEVEL=SYS",
                            "Environment=NCCL_P2P_DISABLE=1\nEnvironment=NCCL_P2P_LEVEL=SYS"]]},
                   ["nccl-env", "gpu-topology"])
    assert "NCCL_P2P_DISABLE=1" in text and ADMITS not in text and "They fit" not in text


@pytest.mark.parametrize("flag", [False, True])
def test_the_nvlink_sentence_needs_custom_allreduce_on(flag: bool, tmp_path: Path) -> None:
    unit = "etc/systemd/system/vllm-deepseek.service"
    extra = " --disable-custom-all-reduce" if flag else ""
    text = _answer(tmp_path, "hopper-deepseek",
                   {unit: [["Environment=CUDA_DEVICE_ORDER=PCI_BUS_ID",
                            "Environment=CUDA_DEVICE_ORDER=PCI_BUS_ID\nEnvironment=NCCL_PROTO=LL"],
                           ["--port 8000", "--port 8000" + extra]]},
                   ["nccl-env", "gpu-topology"])
    assert "NCCL_PROTO=LL" in text
    assert ("custom allreduce\ncan carry" in text or "custom allreduce can carry" in text) \
        is not flag, text

"""The custom-allreduce decision over facts set by hand: each of vLLM's conditions, what it
says, and what it cites."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from agentkit._catalog._fn_allreduce import _full_nvlink, _tp_gpus, custom_allreduce
from agentkit._catalog._recipe import RecipeContext, StepFailed
from agentkit._hostmodel._model import Server, Setting
from agentkit._sandbox._host import Host
from agentkit._sandbox._sandbox import Sandbox
from agentkit._types import Fact, TaskSpec

PCIE = [["X", "NODE", "SYS", "SYS"], ["NODE", "X", "SYS", "SYS"],
        ["SYS", "SYS", "X", "NODE"], ["SYS", "SYS", "NODE", "X"]]
NVL = [["X" if i == j else "NV18" for j in range(4)] for i in range(4)]
HALF = [["X", "NV4", "SYS", "SYS"], ["NV4", "X", "SYS", "SYS"],
        ["SYS", "SYS", "X", "NV4"], ["SYS", "SYS", "NV4", "X"]]


def srv(tp: int, visible: str | None = None, off: bool = False) -> Server:
    s = Server(name="v.service", path="/p", files=[], argv=[], argv_source="/p", argv_line=1,
               argv_evidence=["Eargv"], env={}, engine="vllm")
    s.flags = {"tensor_parallel_size": str(tp)} | ({"disable_custom_all_reduce": True}
                                                    if off else {})
    if visible is not None:
        s.env["CUDA_VISIBLE_DEVICES"] = Setting("CUDA_VISIBLE_DEVICES", visible, "/p", 2, ["Ecvd"])
    return s


def context(tmp: Path) -> RecipeContext:
    return RecipeContext(Sandbox(Host.at(tmp), task_id="t"),
                         TaskSpec(id="t", title="t", objective="o"))


def decide(tmp: Path, server: Server, matrix: list[list[str]] | None = None,
           logged: str | None = None, covers: bool = False) -> dict[str, Any]:
    ctx = context(tmp)
    ctx.vars["server"] = server
    ctx.facts["serve_args"] = Fact(value=server.flags, evidence=["Eflags"])
    if matrix is not None:
        ctx.vars["topology_matrix"] = matrix
        links = sorted({c for r in matrix for c in r if c != "X"})
        ctx.facts["link_types"] = Fact(value=links, evidence=["Etopo"])
    if logged is not None:
        ctx.facts["custom_allreduce_disabled"] = Fact(value={"disabled": True, "reason": logged},
                                                      evidence=["Elog"])
    ctx.facts["log_covers_start"] = Fact(value=covers, evidence=["Ejournal"])
    anyio.run(custom_allreduce, ctx)
    f = ctx.facts["custom_allreduce"]
    return {**f.value, "evidence": f.evidence}


def test_the_flag_turns_it_off(tmp_path: Path) -> None:
    d = decide(tmp_path, srv(4, off=True), NVL)
    assert d["holds"] == ["off-by-flag"] and d["used"] is False
    assert d["why"] == ["the serving command passes --disable-custom-all-reduce"]
    assert d["evidence"] == ["Eflags"]


def test_tp_1_needs_none(tmp_path: Path) -> None:
    d = decide(tmp_path, srv(1), PCIE)
    assert d["verdict"] == "not-needed" and d["used"] is False and d["tp"] == 1
    assert d["why"] == ["tensor parallel 1 has no allreduce to carry"]


def test_the_log_and_the_rule_both_hold_on_pcie(tmp_path: Path) -> None:
    d = decide(tmp_path, srv(4), PCIE, logged="it's not supported on more than two PCIe-only "
               "GPUs")
    assert d["holds"] == ["disabled-log", "disabled-pcie"] and d["used"] is False
    assert d["why"][0] == ('the server\'s log says "Custom allreduce is disabled because it\'s '
                           'not supported on more than two PCIe-only GPUs"')
    assert d["why"][1] == ("TP 4 spans more than two GPUs without full NVLink (NODE/SYS between "
                           "them), which vLLM refuses (\"not supported on more than two PCIe-only "
                           "GPUs\")")
    assert d["evidence"] == ["Eflags", "Elog", "Etopo"]


@pytest.mark.parametrize("tp,verdict", [(3, "disabled-size"), (5, "disabled-size"),
                                        (6, "disabled-pcie"), (2, "possible")])
def test_world_sizes(tmp_path: Path, tp: int, verdict: str) -> None:
    matrix = [["X" if i == j else "SYS" for j in range(8)] for i in range(8)]
    d = decide(tmp_path, srv(tp), matrix)
    assert d["verdict"] == verdict
    if verdict == "disabled-size":
        assert d["why"][0] == (f"TP {tp} is not a world size custom allreduce supports (2, 4, "
                               "6, 8)")


def test_full_nvlink_allows_it_and_a_silent_log_is_only_consistent(tmp_path: Path) -> None:
    d = decide(tmp_path, srv(4), NVL, covers=True)
    assert d["holds"] == ["possible"] and d["used"] is True
    assert d["why"] == ["TP 4 with full NVLink between the TP GPUs, and no flag turns it off",
                        "the server's log, which covers its start, has no \"disabled\" warning"]
    assert d["evidence"] == ["Eflags", "Ejournal", "Etopo"]
    d = decide(tmp_path, srv(4), NVL, covers=False)
    assert len(d["why"]) == 1 and d["evidence"] == ["Eflags", "Etopo"]


def test_two_gpus_over_pcie_are_allowed(tmp_path: Path) -> None:
    d = decide(tmp_path, srv(2), PCIE)
    assert d["verdict"] == "possible" and d["why"][0] == (
        "TP 2 with two GPUs, which vLLM allows over PCIe when peer-to-peer works, and no flag "
        "turns it off")


def test_the_tp_group_is_the_visible_gpus(tmp_path: Path) -> None:
    assert decide(tmp_path, srv(2, "2,3"), HALF)["verdict"] == "possible"
    assert decide(tmp_path, srv(4, "0,1,2,3"), HALF)["verdict"] == "disabled-pcie"
    assert decide(tmp_path, srv(2, "1,2"), HALF)["verdict"] == "possible"  # 2 GPUs: allowed


def test_no_topology_for_more_than_two_is_undetermined(tmp_path: Path) -> None:
    d = decide(tmp_path, srv(4))
    assert d["holds"] == ["undetermined"] and d["used"] is None
    assert d["why"] == ["the GPU topology could not be read, and vLLM's rule for more than two "
                        "GPUs depends on it"]
    assert decide(tmp_path, srv(2))["verdict"] == "possible"


def test_it_needs_the_serving_flags(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    with pytest.raises(StepFailed, match="serve_args"):
        anyio.run(custom_allreduce, ctx)


def test_helpers() -> None:
    assert _tp_gpus(srv(4), 8) == [0, 1, 2, 3] and _tp_gpus(srv(8), 4) == [0, 1, 2, 3]
    assert _tp_gpus(srv(2, "5, 6,7"), 8) == [5, 6] and _tp_gpus(srv(2, "GPU-uuid"), 8) is None
    assert _full_nvlink(NVL, [0, 1, 2, 3]) is True and _full_nvlink(HALF, [0, 1, 2]) is False
    assert _full_nvlink(HALF, [0, 9]) is None and _full_nvlink([], [0]) is None


def test_a_gpu_index_past_the_matrix_is_unknown() -> None:
    assert _full_nvlink(HALF, [0, 4]) is None and _full_nvlink(HALF, [0, 3]) is False

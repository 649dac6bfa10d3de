"""The reference investigation end to end through the CLI, on both bundled examples, and
with the facts changed: the answers follow the files."""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentkit.cli import main

from .citations import assert_resolves
from .conftest import EXAMPLES, REFERENCE_QUESTION

TRITON = "opt/vllm/venv/lib/python3.12/site-packages/vllm/v1/attention/backends/mla/triton_mla.py"


def ask(root: Path, capsys: pytest.CaptureFixture[str], question: str = REFERENCE_QUESTION
        ) -> dict[str, Any]:
    code = main(["ask", question, "--root", str(root), "--json", "-q"])
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out)


def table(answer: dict[str, Any]) -> dict[str, list[str]]:
    return {row[0]["text"]: [c["text"] for c in row[1:]] for row in answer["table"]["rows"]}


def bottom(answer: dict[str, Any]) -> str:
    return "\n".join(c["text"] for c in answer["bottom_line"])


def everything(answer: dict[str, Any]) -> str:
    return bottom(answer) + "\n" + "\n".join(c["text"] for s in answer["sections"]
                                              for c in s["claims"])


def claim_with(answer: dict[str, Any], needle: str) -> dict[str, Any]:
    for c in answer["bottom_line"] + [c for s in answer["sections"] for c in s["claims"]]:
        if needle in c["text"]:
            return c
    raise AssertionError(f"no claim mentions {needle!r}")


def cited(answer: dict[str, Any], claim: dict[str, Any]) -> list[dict[str, Any]]:
    by_id = {c["id"]: c for c in answer["citations"]}
    return [by_id[i] for i in claim["evidence"]]


def line_of(path: Path, needle: str) -> int:
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if needle in line:
            return n
    raise AssertionError(f"{needle!r} not in {path}")


def test_blackwell_reference_answer(capsys: pytest.CaptureFixture[str]) -> None:
    root = EXAMPLES / "blackwell-kimi"
    a = ask(root, capsys)
    assert a["mode"] == "catalog" and not a["failed_tasks"]
    t = table(a)
    assert t["Decoder layers (num_hidden_layers)"] == ["61", "78"]
    assert t["Routed experts"] == ["384", "256"]
    assert t["Dense layers before MoE"] == ["1", "3"]
    assert t["MTP layers (num_nextn_predict_layers)"] == ["0", "1"]
    assert t["TP allreduces per decode step"] == ["122", "156"]
    assert t["hidden_size"] == ["7168", "6144"]
    assert t["Sparse indexer (index_topk)"] == ["absent", "2048"]
    assert t["MoE layers"] == ["60", "75"]  # 61 - 1 dense, 78 - 3 dense
    assert t["Bytes per allreduce per token (bf16)"] == ["14336", "12288"]  # hidden_size × 2
    assert t["Attention"] == ["MLA", "MLA"]  # both have kv_lora_rank
    text = bottom(a)
    assert "122" in text and "156" in text and "-21.8%" in text
    unit = root / "etc/systemd/system/vllm-kimi.service"
    proto, p2p = line_of(unit, "NCCL_PROTO=LL"), line_of(unit, "NCCL_P2P_LEVEL=SYS")
    nccl = claim_with(a, "NCCL tuning is in effect for the unit that serves")
    assert f"NCCL_PROTO=LL (/etc/systemd/system/vllm-kimi.service:{proto})" in nccl["text"]
    assert f"NCCL_P2P_LEVEL=SYS (/etc/systemd/system/vllm-kimi.service:{p2p})" in nccl["text"]
    assert {c["excerpt"] for c in cited(a, nccl)} == {"Environment=NCCL_PROTO=LL",
                                                     "Environment=NCCL_P2P_LEVEL=SYS"}
    assert "Custom allreduce is disabled" in text
    fp8 = claim_with(a, "no attention backend for nvidia/Kimi-K2.5-NVFP4 (MLA attention) "
                        "accepts a fp8 KV cache")
    # the raise statement whose message refuses FP8 (one line above the message)
    guard = line_of(root / TRITON, '"TritonMLA V1 with FP8 KV cache not yet supported"') - 1
    assert fp8["text"].startswith("No: ")  # the question asks "would … improve": no
    assert "even though the checkpoint recommends it" in fp8["text"]
    assert f"triton_mla.py:{guard}" in fp8["text"]
    assert any("TritonMLA V1 with FP8 KV cache not yet supported" in c["excerpt"]
               for c in cited(a, fp8))
    assert "The checkpoint recommends an FP8 KV cache" in text
    for c in a["citations"]:
        assert_resolves(c, root)


def test_hopper_answers_flip(capsys: pytest.CaptureFixture[str]) -> None:
    root = EXAMPLES / "hopper-deepseek"
    a = ask(root, capsys)
    assert not a["failed_tasks"]
    text = bottom(a)
    assert "No: no NCCL tuning is in effect" in text
    assert "NCCL_PROTO" not in everything(a)
    assert "vLLM's rules allow custom allreduce for vllm-deepseek.service" in text
    assert "TP 8 with full NVLink between the TP GPUs" in text
    assert "connected by NVLink (NV18)" in everything(a)
    fp8 = claim_with(a, "accepts a fp8 KV cache")
    assert fp8["text"].startswith("Yes") and "FLASHMLA" in fp8["text"]
    assert "compute capability 9.0" in fp8["text"] and "vLLM 0.13.0" in fp8["text"]
    t = table(a)
    assert t["Decoder layers (num_hidden_layers)"] == ["61", "94"]
    assert t["Routed experts"] == ["256", "128"]
    assert t["Dense layers before MoE"] == ["3", "0"]
    assert t["MTP layers (num_nextn_predict_layers)"] == ["1", "absent"]
    assert t["TP allreduces per decode step"] == ["122", "188"]
    assert t["MoE layers"] == ["58", "94"]  # 61 - 3 dense; Qwen3's mlp_only_layers is empty
    assert t["Bytes per allreduce per token (bf16)"] == ["14336", "8192"]
    assert t["Attention"] == ["MLA", "MHA/GQA"]  # Qwen3 has no kv_lora_rank
    for c in a["citations"]:
        assert_resolves(c, root)


def _copy_blackwell(tmp_path: Path) -> Path:
    dst = tmp_path / "bw"
    shutil.copytree(EXAMPLES / "blackwell-kimi", dst)
    return dst


def test_fp8_verdict_follows_the_installed_source(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    root = _copy_blackwell(tmp_path)
    src = root / TRITON
    text = src.read_text()
    newer = text.replace('["auto", "bfloat16"]', '["auto", "bfloat16", "fp8", "fp8_e4m3"]')
    assert newer != text
    # listed, but the guards still raise: still no, and the answer names the guard
    src.write_text(newer)
    a = ask(root, capsys)
    claim_with(a, "(MLA attention) accepts a fp8 KV cache")
    assert "TRITON_MLA lists the dtype but its source still refuses it" in everything(a)
    # listed and the guards gone (what newer vLLM releases did): yes, via TRITON_MLA
    unguarded = re.sub(r"\n\s*if is_quantized_kv_cache\(self\.kv_cache_dtype\):\n\s*raise "
                       r"NotImplementedError\(\n\s*\"TritonMLA V1 with FP8 KV cache not yet "
                       r"supported\"\)", "", newer)
    unguarded = re.sub(r"\n\s*if self\.kv_cache_dtype\.startswith\(\"fp8\"\):\n\s*raise "
                       r"NotImplementedError\(\"FP8 Triton MLA not yet supported\"\)", "",
                       unguarded)
    assert "NotImplementedError(\"FP8" not in unguarded
    src.write_text(unguarded)
    a = ask(root, capsys)
    yes = claim_with(a, "accepts a fp8 KV cache")
    assert yes["text"].startswith("Yes") and "TRITON_MLA accepts" in yes["text"]


def test_nccl_verdict_follows_the_unit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _copy_blackwell(tmp_path)
    unit = root / "etc/systemd/system/vllm-kimi.service"
    unit.write_text(unit.read_text().replace("Environment=NCCL_PROTO=LL\n", "")
                    .replace("Environment=NCCL_P2P_LEVEL=SYS\n", ""))
    a = ask(root, capsys)
    assert "No: no NCCL tuning is in effect" in bottom(a)
    # a drop-in that sets it again is found, with its own file and line
    dropin = root / "etc/systemd/system/vllm-kimi.service.d/20-nccl.conf"
    dropin.write_text("[Service]\n# restored\nEnvironment=NCCL_PROTO=Simple\n")
    a = ask(root, capsys)
    assert ("NCCL_PROTO=Simple (/etc/systemd/system/vllm-kimi.service.d/20-nccl.conf:3)"
            in bottom(a))


def test_catalog_mode_makes_no_connection_and_starts_no_process(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    attempts: list[object] = []

    def no_connect(self: socket.socket, address: object) -> None:
        attempts.append(address)
        raise AssertionError(f"catalog mode tried to connect to {address!r}")

    def no_process(*args: object, **kwargs: object) -> None:
        attempts.append(args)
        raise AssertionError("a snapshot investigation started a process")

    monkeypatch.setattr(socket.socket, "connect", no_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", no_connect)
    monkeypatch.setattr(subprocess, "Popen", no_process)
    a = ask(EXAMPLES / "blackwell-kimi", capsys)
    assert a["bottom_line"] and not a["failed_tasks"]
    assert attempts == []


def test_question_the_catalog_cannot_answer(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["ask", "What is the weather in Paris?", "--root",
                 str(EXAMPLES / "blackwell-kimi"), "-q"])
    err = capsys.readouterr().err
    assert code == 3
    assert "kv-cache-dtype-support" in err and "AGENTKIT_BASE_URL" in err


def test_answer_says_how_it_was_found(capsys: pytest.CaptureFixture[str]) -> None:
    a = ask(EXAMPLES / "blackwell-kimi", capsys)
    notes = "\n".join(a["notes"])
    assert "Catalog mode" in notes
    assert "nccl-env: matched 'allreduce'" in notes
    assert "gpu-inventory: supports kv-cache-dtype-support" in notes

"""``build_host_model`` (``_hostmodel/_build.py``) on a small snapshot: every runtime's servers
are kept (a later runtime adds to the earlier ones), each server's NCCL settings are resolved,
and the question's naming of a server decides which one is current."""

from __future__ import annotations

from pathlib import Path

import anyio

from agentkit._hostmodel import build_host_model
from agentkit._hostmodel._model import HostModel
from agentkit._sandbox._context import RecipeContext
from agentkit._sandbox._sandbox import Sandbox
from agentkit._types import TaskSpec

from .runtimes_snap import snapshot

FILES = {
    "etc/systemd/system/llama.service": (
        "[Service]\nEnvironment=NCCL_PROTO=LL\n"
        "ExecStart=/usr/bin/vllm serve /models/llama --tensor-parallel-size 2\n"),
    "opt/qwen/compose.yaml": ("services:\n  vllm:\n    image: vllm/vllm-openai:v0.11.0\n"
                              "    command: --model /models/qwen\n"
                              "    environment:\n      NCCL_ALGO: Tree\n"),
}


def build(tmp_path: Path, question: str | None) -> HostModel:
    host = snapshot(tmp_path, FILES)
    inputs = {} if question is None else {"question": question}
    ctx = RecipeContext(Sandbox(host, task_id="t"),
                        TaskSpec(id="t", title="t", objective="o", inputs=inputs))
    return anyio.run(build_host_model, ctx)


def test_every_runtime_adds_its_servers_with_their_nccl_settings(tmp_path: Path) -> None:
    model = build(tmp_path, "Is NCCL tuned on the qwen server?")
    by_name = {s.name: s for s in model.servers}
    assert sorted(by_name) == ["llama.service", "qwen-vllm-1"]
    assert {k: v.value for k, v in by_name["llama.service"].nccl.items()} == {"NCCL_PROTO": "LL"}
    assert {k: v.value for k, v in by_name["qwen-vllm-1"].nccl.items()} == {"NCCL_ALGO": "Tree"}
    assert model.current is by_name["qwen-vllm-1"]


def test_without_a_question_nothing_names_a_server(tmp_path: Path) -> None:
    model = build(tmp_path, None)
    assert model.current is None

"""KV-cache, load and allreduce arithmetic (issue 27), against numbers computed by hand from
real configs before the code ran; and the exact change, checked by systemd itself.

Hand computations (bytes per token per GPU):
- Kimi-K2.5 / DeepSeek-V3 (MLA, 61 layers, kv_lora_rank 512, qk_rope_head_dim 64): (512 + 64)
  x 61 x 2 = 70,272 in bf16, 35,136 in fp8, the same on every TP rank. vLLM's log: 16.83 GiB =
  18,071,074,897.92 B; pages of 64 tokens = 4,497,408 B; 4018 whole pages = 257,152 tokens
  (the log says 4018 blocks, 257,152 tokens); FP8: 8036 pages = 514,304 tokens; at 131,072
  tokens per request (2048 pages): 4018/2048 = 1.96x, 8036/2048 = 3.92x. DeepSeek-V3 on the
  H100 example: 5.86 GiB / 4,497,408 = 1399 pages = 89,536 tokens (the log says 89,536).
- Qwen3-235B-A22B (GQA, 94 layers, 4 kv heads, head_dim 128) at TP 8: 4 // 8 = 0 -> 1 head per
  rank (replicated): 2 x 1 x 128 x 94 x 2 = 48,128; fp8 24,064. At TP 2: 2 heads: 96,256.
- Llama-3.1-70B (80 layers, 64 heads, 8 kv heads, hidden 8192 -> head_dim 128) at TP 4:
  2 x 2 x 128 x 80 x 2 = 81,920.
- Llama-2-7B (MHA: 32 kv heads = 32 heads, head_dim 4096/32 = 128, 32 layers), TP 1:
  2 x 32 x 128 x 32 x 2 = 524,288 (0.5 MiB).
- gpt-oss-20b (24 layers alternating sliding(128)/full, 8 kv heads, head_dim 64), TP 1, bf16:
  2 x 8 x 64 x 2 = 2,048 per layer; 12 full layers: 24,576 per token; one request of 8,192
  tokens: 12 x 2,048 x 8,192 + 12 x 2,048 x 128 = 204,472,320.
- Kimi with layer 0 kept in bf16 and 60 layers in fp8: 576 x 2 + 576 x 60 = 35,712.
- NVML fallback for the reference host: 97,887 MiB = 95.593 GiB x 0.92 = 87.945 GiB, less the
  logged 67.41 GiB of weights: 20.535 GiB (above vLLM's own 16.83: activations, CUDA graphs).
- PCIe Gen5 x16: 32 GT/s x 16 x 128/130 / 8 = 63.015 GB/s; Gen4 x16: 31.508; Gen3 x8: 7.877.
  NVLink 4 (H100, NV18): 18 x 25 = 450 GB/s.
- Kimi allreduces: 122 per step x 14,336 B = 1,748,992 B per token; ring at TP 8 sends 14/8 of
  it: 3,060,736 B; at 60 tok/s (1 request) a step is 16.667 ms; 3,060,736 / 63.015e9 =
  48.57 us = 0.291 % of the step.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentkit._catalog import _kv_math as km
from agentkit._catalog._fn_change import exec_dropin, nccl_dropin, with_kv_flag
from agentkit._catalog._log_stats import parse_capacity, parse_load

KIMI = {"num_hidden_layers": 61, "kv_lora_rank": 512, "qk_rope_head_dim": 64,
        "num_attention_heads": 64, "num_key_value_heads": 64, "hidden_size": 7168}
QWEN3_235B = {"num_hidden_layers": 94, "num_attention_heads": 64, "num_key_value_heads": 4,
              "head_dim": 128, "hidden_size": 4096, "sliding_window": None,
              "use_sliding_window": False}
LLAMA31_70B = {"num_hidden_layers": 80, "num_attention_heads": 64, "num_key_value_heads": 8,
               "hidden_size": 8192}
LLAMA2_7B = {"num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32,
             "hidden_size": 4096}
GPT_OSS_20B = {"num_hidden_layers": 24, "num_attention_heads": 64, "num_key_value_heads": 8,
               "head_dim": 64, "hidden_size": 2880, "sliding_window": 128,
               "layer_types": ["sliding_attention", "full_attention"] * 12}


@pytest.mark.parametrize("cfg,tp,nbytes,kind,expected", [
    (KIMI, 8, 2, "MLA", 70_272), (KIMI, 8, 1, "MLA", 35_136), (KIMI, 1, 2, "MLA", 70_272),
    (QWEN3_235B, 8, 2, "GQA", 48_128), (QWEN3_235B, 8, 1, "GQA", 24_064),
    (QWEN3_235B, 2, 2, "GQA", 96_256), (LLAMA31_70B, 4, 2, "GQA", 81_920),
    (LLAMA2_7B, 1, 2, "MHA", 524_288), (GPT_OSS_20B, 1, 2, "GQA", 24_576),
])
def test_bytes_per_token_per_gpu(cfg: dict[str, Any], tp: int, nbytes: int, kind: str,
                                 expected: int) -> None:
    layout = km.kv_layout(cfg, tp, nbytes)
    assert layout is not None and layout.kind == kind
    assert layout.bytes_per_token == expected


def test_sliding_window_layers_stop_growing_at_the_window() -> None:
    layout = km.kv_layout(GPT_OSS_20B, 1, 2)
    assert layout is not None
    assert layout.bytes_per_request(8192) == 204_472_320
    assert "12 of 24 layers use a sliding window of 128 tokens" in layout.notes[0]


def test_per_layer_dtype() -> None:
    layout = km.kv_layout(KIMI, 8, [2] + [1] * 60)
    assert layout is not None and layout.bytes_per_token == 35_712
    assert km.kv_layout(KIMI, 8, [2, 1]) is None  # one byte size per layer, or none


def test_missing_keys_are_not_guessed() -> None:
    assert km.kv_layout({"kv_lora_rank": 512, "qk_rope_head_dim": 64}, 8, 2) is None
    assert km.kv_layout({"num_hidden_layers": 61, "kv_lora_rank": 512}, 8, 2) is None
    assert km.kv_layout({"num_hidden_layers": 32}, 1, 2) is None


def test_dtype_bytes() -> None:
    assert km.dtype_bytes("auto", "bfloat16") == 2 and km.dtype_bytes("fp8_e5m2", None) == 1
    assert km.dtype_bytes("auto", "float32") == 4 and km.dtype_bytes("nf3", "bf16") is None


def test_capacity_matches_vllm_on_the_reference_log() -> None:
    now, fp8 = km.kv_layout(KIMI, 8, 2), km.kv_layout(KIMI, 8, 1)
    assert now is not None and fp8 is not None
    budget = 16.83 * km.GIB
    c_now, c_fp8 = km.capacity(budget, now, 131_072, 64), km.capacity(budget, fp8, 131_072, 64)
    assert (c_now.tokens, round(c_now.concurrency, 2)) == (257_152, 1.96)
    assert (c_fp8.tokens, round(c_fp8.concurrency, 2)) == (514_304, 3.92)
    hopper = km.capacity(5.86 * km.GIB, now, 65_536, 64)
    assert hopper.tokens == 89_536


def test_cross_check_accepts_the_logged_figure_and_reports_a_mismatch() -> None:
    ok = km.cross_check(16.83, 2, 257_152, 70_272, 64)
    assert ok.consistent and ok.low <= 257_152 <= ok.high
    # the same log read as if the cache were FP8: the engine's figure is half of what fits
    bad = km.cross_check(16.83, 2, 257_152, 35_136, 64)
    assert not bad.consistent and round(bad.implied_bytes) == 70_274  # 18,071,074,897.92 / 257,152
    assert not km.cross_check(16.83, 2, 300_000, 70_272, 64).consistent


def test_nvml_budget_is_an_upper_bound_of_vllms_figure() -> None:
    gib = km.nvml_budget_gib(97_887, 0.92, 67.41)
    assert gib == pytest.approx(20.535, abs=1e-3) and gib > 16.83


def test_link_bandwidth() -> None:
    assert km.pcie_gbps(5, 16) == pytest.approx(63.015, abs=1e-3)
    assert km.pcie_gbps(4, 16) == pytest.approx(31.508, abs=1e-3)
    assert km.pcie_gbps(3, 8) == pytest.approx(7.877, abs=1e-3)
    assert km.pcie_gbps(9, 16) is None
    assert km.nvlink_gbps(18, 9) == 450.0 and km.nvlink_gbps(18, 12) is None


def test_allreduce_share_of_a_decode_step() -> None:
    gbps = km.pcie_gbps(5, 16)
    assert gbps is not None
    share = km.allreduce_share(122, 14_336, 1, 8, 60.0, gbps)
    assert share is not None
    assert share.per_step_bytes == 1_748_992 and share.wire_bytes == 3_060_736
    assert share.step_s == pytest.approx(1 / 60)
    assert share.transfer_s == pytest.approx(48.57e-6, rel=1e-3)
    assert 100 * share.share == pytest.approx(0.291, abs=1e-3)
    assert km.allreduce_share(122, 14_336, 1, 1, 60.0, gbps) is None  # TP 1: none


# vLLM V1 (vllm/v1/metrics/loggers.py), V0's preemption warning (vllm/core/scheduler.py), and
# SGLang's decode line as its hyperparameter-tuning docs print it.
V1 = ("INFO 11-20 14:00:52 [loggers.py:123] Engine 000: Avg prompt throughput: 51.2 tokens/s, "
      "Avg generation throughput: {gen} tokens/s, Running: {run} reqs, Waiting: {wait} reqs, "
      "GPU KV cache usage: {usage}%, Prefix cache hit rate: 0.0%")
V0_PREEMPT = ("WARNING 05-01 10:00:00 scheduler.py:1089] Sequence group 12 is preempted by "
              "PreemptionMode.RECOMPUTE mode because there is not enough KV cache space. This "
              "can affect the end-to-end performance. Increase gpu_memory_utilization or "
              "tensor_parallel_size to provide more KV cache memory. "
              "total_num_cumulative_preemption=51")
SGL = ("[2026-11-28 08:00:00 TP0] Decode batch. #running-req: 233, #token: 370959, token usage: "
       "0.82, gen throughput (token/s): 4594.01, #queue-req: 317")


def test_load_from_vllm_stats_lines() -> None:
    idle = parse_load([V1.format(gen=59.8, run=1, wait=0, usage=0.3),
                       V1.format(gen=60.2, run=1, wait=0, usage=0.5),
                       V1.format(gen=17.9, run=0, wait=0, usage=0.0)])
    assert (idle.max_running, idle.max_waiting, idle.max_usage) == (1, 0, 0.5)
    assert idle.verdict() == "not-bound"
    assert [s.gen_tps for s in idle.busy()] == [59.8, 60.2]
    full = parse_load([V1.format(gen=900.0, run=40, wait=12, usage=98.7)])
    assert full.verdict() == "bound"
    assert parse_load(["INFO Started server process"]).verdict() == "not-established"
    v0 = parse_load([V0_PREEMPT])
    assert v0.preemptions == 51 and v0.verdict() == "bound"


def test_load_from_sglang_decode_lines() -> None:
    load = parse_load([SGL])
    s = load.samples[0]
    assert (s.running, s.waiting, s.usage_pct, s.gen_tps) == (233, 317, 82.0, 4594.01)
    assert load.verdict() == "unclear"  # queued, but the pool is not near full


def test_capacity_lines_last_start_wins() -> None:
    lines = ["Available KV cache memory: 10.00 GiB", "GPU KV cache size: 1,000 tokens",
             "Available KV cache memory: 16.83 GiB",
             "Maximum concurrency for 131,072 tokens per request: 1.96x",
             "KV Cache is allocated. #tokens: 1048576, KV size: 34.58 GB"]
    cap = parse_capacity(lines)
    assert cap["kv_memory_gib"] == (3, ("16.83",))
    assert cap["max_concurrency"][1] == ("131,072", "1.96")
    assert cap["sglang_kv"][1][:2] == ("1048576", "34.58")


def test_kv_flag_replaces_an_earlier_one() -> None:
    argv = ["vllm", "serve", "/m", "--kv-cache-dtype", "auto", "--kv-cache-dtype=bf16", "-x"]
    assert with_kv_flag(argv, "fp8") == ["vllm", "serve", "/m", "-x", "--kv-cache-dtype", "fp8"]


# The exact change, checked by systemd itself on a copy of the unit tree.
EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "blackwell-kimi"
ANALYZE = shutil.which("systemd-analyze")
needs_systemd = pytest.mark.skipif(ANALYZE is None, reason="systemd-analyze is not installed: "
                                   "the drop-in cannot be verified offline here")


def _verify(tmp: Path, dropin: str, name: str) -> list[str]:
    """systemd-analyze verify on a copy of the example's /etc with the drop-in added; the
    complaints that are about the drop-in (the copy has no sysinit.target, which is not)."""
    root = tmp / "root"
    if not root.exists():
        shutil.copytree(EXAMPLE / "etc", root / "etc")
        exe = root / "opt/vllm/venv/bin/vllm"
        exe.parent.mkdir(parents=True)
        exe.write_text("#!/bin/sh\n")
        exe.chmod(0o755)
    d = root / "etc/systemd/system/vllm-kimi.service.d"
    path = d / name
    path.write_text(dropin)
    proc = subprocess.run([str(ANALYZE), "verify", f"--root={root}", "--man=no",
                           "--generators=no", "vllm-kimi.service"],
                          capture_output=True, text=True, timeout=60)
    path.unlink()
    return [ln for ln in proc.stderr.splitlines()
            if name in ln or any(w in ln for w in ("Unknown", "Invalid", "Failed to parse",
                                                    "gnoring", "not executable",
                                                    "Refusing", "bad unit file"))]


@needs_systemd
def test_nccl_dropin_verifies(tmp_path: Path) -> None:
    text = nccl_dropin([("NCCL_PROTO", "LL"), ("NCCL_P2P_LEVEL", "SYS")])
    assert 'Environment="NCCL_PROTO=LL"' in text
    assert _verify(tmp_path, text, "90-nccl-tuning.conf") == []
    # the check can fail: a misspelt key is reported
    assert _verify(tmp_path, "[Service]\nEnviroment=NCCL_PROTO=LL\n", "90-bad.conf")


@needs_systemd
def test_execstart_dropin_verifies(tmp_path: Path) -> None:
    argv = ["/opt/vllm/venv/bin/vllm", "serve", "/models/nvidia/Kimi-K2.5-NVFP4",
            "--served-model-name", "kimi k2.5", "--tensor-parallel-size", "8"]
    assert _verify(tmp_path, exec_dropin(with_kv_flag(argv, "fp8")), "90-kv.conf") == []
    # without the empty ExecStart= that clears the list, systemd refuses a second one
    bad = "[Service]\nExecStart=/opt/vllm/venv/bin/vllm serve /m\n"
    assert _verify(tmp_path, bad, "90-bad.conf")


_WORD = st.text(st.characters(codec="ascii", min_codepoint=32, max_codepoint=126),
                min_size=1, max_size=12)


@needs_systemd
@settings(max_examples=25, deadline=None)
@given(words=st.lists(_WORD, min_size=1, max_size=4))
def test_any_argument_quotes_to_a_valid_execstart(tmp_path_factory: Any,
                                                  words: list[str]) -> None:
    tmp = tmp_path_factory.mktemp("q")
    text = exec_dropin(["/opt/vllm/venv/bin/vllm", "serve", *words])
    assert _verify(tmp, text, "90-kv.conf") == []


KUBECTL = shutil.which("kubectl")


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed: the command cannot be "
                    "checked offline here")
def test_kubectl_set_env_applies_offline_to_the_examples_manifest() -> None:
    from agentkit._catalog._fn_change import nccl_change
    from agentkit._hostmodel import Server

    manifest = EXAMPLE.parent / "k8s-vllm/opt/llm-serving/k8s/vllm-llama.yaml"
    server = Server(name="deployment/vllm-llama33", path=str(manifest), files=[], argv=[],
                    argv_source="", argv_line=0, argv_evidence=[], env={},
                    runtime="kubernetes", notes=["namespace llm"])
    change = nccl_change(server, [("NCCL_ALGO", "Ring"), ("NCCL_MIN_NCHANNELS", "8")], "x")
    assert change is not None
    assert change["text"] == ("kubectl set env -n llm deployment/vllm-llama33 NCCL_ALGO=Ring "
                              "NCCL_MIN_NCHANNELS=8")
    # the file also holds a Service, which kubectl reports (exit 1) after printing the
    # Deployment with the new env
    proc = subprocess.run(change["verify"].split(), capture_output=True, text=True, timeout=60)
    assert "not a pod or does not have a pod template: *v1.Service" in proc.stderr
    out = proc.stdout
    env = out.split("env:", 1)[1]
    assert "- name: NCCL_ALGO\n          value: Ring" in env
    assert "- name: NCCL_MIN_NCHANNELS\n          value: \"8\"" in env


# vLLM's own rules, restated from its source (vllm/v1/kv_cache_interface.py page_size_bytes:
# coef (1 for MLA's single latent, 2 for K and V) x block_size x num_kv_heads x head_size x
# dtype size; vllm/v1/core/kv_cache_utils.py get_num_blocks: available // page_size //
# num_layers; get_max_concurrency_for_kv_cache_config: num_blocks / cdiv(max_model_len,
# block_size) for full attention; ModelConfig.get_num_kv_heads: max(1, total // tp); MLA keeps
# one head of kv_lora_rank + qk_rope_head_dim on every rank).
def _vllm_reference(cfg: dict[str, int], tp: int, dtype_size: int, available: int,
                    block: int, max_len: int) -> tuple[int, float]:
    if "kv_lora_rank" in cfg:
        coef, heads, head_size = 1, 1, cfg["kv_lora_rank"] + cfg["qk_rope_head_dim"]
    else:
        coef, heads, head_size = 2, max(1, cfg["num_key_value_heads"] // tp), cfg["head_dim"]
    page = coef * block * heads * head_size * dtype_size
    blocks = max(int(available // page // cfg["num_hidden_layers"]), 0)
    return blocks * block, blocks / -(-max_len // block)


_MLA = st.fixed_dictionaries({"num_hidden_layers": st.integers(1, 128),
                              "kv_lora_rank": st.sampled_from([128, 256, 512, 1024]),
                              "qk_rope_head_dim": st.sampled_from([32, 64, 128])})
_GQA = st.fixed_dictionaries({"num_hidden_layers": st.integers(1, 128),
                              "num_attention_heads": st.sampled_from([32, 64, 128]),
                              "num_key_value_heads": st.sampled_from([1, 2, 4, 8, 16, 32]),
                              "head_dim": st.sampled_from([64, 80, 128, 256])})


@settings(max_examples=300, deadline=None)
@given(cfg=st.one_of(_MLA, _GQA), tp=st.sampled_from([1, 2, 4, 8, 16]),
       dtype_size=st.sampled_from([1, 2, 4]), available=st.integers(0, 200 * km.GIB),
       block=st.sampled_from([1, 16, 32, 64, 128]), max_len=st.integers(1, 1 << 20))
def test_capacity_agrees_with_vllms_rules(cfg: dict[str, int], tp: int, dtype_size: int,
                                          available: int, block: int, max_len: int) -> None:
    layout = km.kv_layout(cfg, tp, dtype_size)
    assert layout is not None
    got = km.capacity(available, layout, max_len, block)
    tokens, conc = _vllm_reference(cfg, tp, dtype_size, available, block, max_len)
    assert got.tokens == tokens
    assert got.concurrency == pytest.approx(conc)

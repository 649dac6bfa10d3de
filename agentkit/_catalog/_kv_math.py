"""KV-cache and allreduce arithmetic from a model's config.json, with each formula spelled out
so an answer can show it. Pure functions: no host access, no recipe context.

KV bytes per token per GPU (what one token of context costs each GPU of the TP group):
- MLA (multi-head latent attention): each layer caches one latent of ``kv_lora_rank +
  qk_rope_head_dim`` values, shared by all heads, so it is replicated on every TP rank, not
  split: ``(kv_lora_rank + qk_rope_head_dim) x layers x bytes``.
- GQA/MHA: K and V, ``num_key_value_heads`` heads (MHA: ``num_attention_heads``) of
  ``head_dim`` each, split across TP ranks; vLLM replicates a head when TP exceeds the head
  count, so a rank holds ``max(1, kv_heads // tp)``: ``2 x kv_heads/TP x head_dim x layers x
  bytes``.
- Sliding-window layers keep at most ``window`` tokens per request; per-layer dtypes are a
  per-layer byte size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

# Bytes per KV element by the engine's --kv-cache-dtype spelling ("auto": the model's dtype).
DTYPE_BYTES: dict[str, int] = {
    "bfloat16": 2, "bf16": 2, "float16": 2, "fp16": 2, "half": 2, "float32": 4, "fp32": 4,
    "fp8": 1, "fp8_e4m3": 1, "fp8_e5m2": 1, "fp8_inc": 1, "float8_e4m3fn": 1,
    "float8_e5m2": 1, "int8": 1,
}
GIB = 1 << 30


def dtype_bytes(kv_dtype: str, model_dtype: str | None) -> int | None:
    """Bytes per element for a KV-cache dtype; "auto" takes the model's own dtype."""
    name = (model_dtype or "") if kv_dtype in ("auto", "", None) else kv_dtype
    return DTYPE_BYTES.get(str(name).lower().removeprefix("torch."))


@dataclass(frozen=True)
class Layer:
    """One attention layer's KV footprint on one GPU: values per token, bytes per value, and
    the sliding window (None: the layer keeps the whole context)."""

    values: int
    nbytes: int
    window: int | None = None

    @property
    def bytes_per_token(self) -> int:
        return self.values * self.nbytes


@dataclass
class KVLayout:
    kind: str                       # "MLA", "GQA", "MHA"
    layers: list[Layer]
    formula: str                    # the formula with this model's numbers
    per_layer_values: int
    notes: list[str] = field(default_factory=list)

    @property
    def full_layers(self) -> int:
        return sum(1 for x in self.layers if x.window is None)

    @property
    def bytes_per_token(self) -> int:
        """Bytes one more token of context costs one GPU (full-attention layers; a sliding
        layer stops growing at its window)."""
        return sum(x.bytes_per_token for x in self.layers if x.window is None)

    def bytes_per_request(self, tokens: int) -> int:
        return sum(x.bytes_per_token * (tokens if x.window is None else min(x.window, tokens))
                   for x in self.layers)


def kv_layout(cfg: dict[str, object], tp: int, nbytes: int | list[int]) -> KVLayout | None:
    """The KV layout per GPU from config keys (already un-nested from text_config). ``nbytes``
    is bytes per element, one for all layers or one per layer. None when the keys that decide
    it are missing."""
    layers = _int(cfg.get("num_hidden_layers"))
    if layers is None or layers <= 0 or tp <= 0:
        return None
    per = nbytes if isinstance(nbytes, list) else [nbytes] * layers
    if len(per) != layers:
        return None
    bytes_txt = str(per[0]) if len(set(per)) == 1 else "per-layer bytes"
    rank, rope = _int(cfg.get("kv_lora_rank")), _int(cfg.get("qk_rope_head_dim"))
    if rank:
        if rope is None:
            return None
        values = rank + rope
        return KVLayout("MLA", [Layer(values, b) for b in per],
                        f"(kv_lora_rank {rank} + qk_rope_head_dim {rope}) x {layers} layers x "
                        f"{bytes_txt} bytes (the latent is not split across TP ranks)", values)
    heads = _int(cfg.get("num_attention_heads"))
    kv_heads = _int(cfg.get("num_key_value_heads")) or heads
    head_dim = _int(cfg.get("head_dim"))
    hidden = _int(cfg.get("hidden_size"))
    if head_dim is None and hidden and heads:
        head_dim = hidden // heads
    if not kv_heads or not head_dim or not heads:
        return None
    kind = "MHA" if kv_heads == heads else "GQA"
    local = max(1, kv_heads // tp)
    values = 2 * local * head_dim
    windows = _windows(cfg, layers)
    out = KVLayout(kind, [Layer(values, b, w) for b, w in zip(per, windows, strict=True)],
                   f"2 (K and V) x {kv_heads} kv heads / TP {tp}"
                   f"{' (replicated: at least one per rank)' if kv_heads < tp else ''} x "
                   f"head_dim {head_dim} x {layers} layers x {bytes_txt} bytes", values)
    sliding = sum(1 for w in windows if w is not None)
    if sliding:
        out.notes.append(f"{sliding} of {layers} layers use a sliding window of "
                         f"{next(w for w in windows if w)} tokens: they stop growing there")
    return out


def _windows(cfg: dict[str, object], layers: int) -> list[int | None]:
    window = _int(cfg.get("sliding_window"))
    if not window or cfg.get("use_sliding_window") is False:
        return [None] * layers
    types = cfg.get("layer_types")
    if isinstance(types, list) and len(types) == layers:
        return [window if "sliding" in str(t) else None for t in types]
    return [window] * layers  # Mistral-style: every layer slides


def _int(v: object) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


@dataclass(frozen=True)
class Capacity:
    tokens: int
    concurrency: float     # requests of max_model_len tokens that fit at once


def capacity(budget_bytes: float, layout: KVLayout, max_model_len: int,
             block_size: int | None = None) -> Capacity:
    """Tokens that fit in ``budget_bytes`` per GPU, whole blocks only when the block size is
    known (vLLM allocates pages of ``block_size`` tokens), and how many requests of
    ``max_model_len`` tokens fit at once."""
    per_token = layout.bytes_per_token or layout.bytes_per_request(1)
    block = block_size or 1
    tokens = int(budget_bytes // (per_token * block)) * block
    per_request = layout.bytes_per_request(max_model_len)
    if layout.full_layers == len(layout.layers):
        conc = (tokens // block) / math.ceil(max_model_len / block)
    else:
        conc = budget_bytes / per_request
    return Capacity(tokens, conc)


def nvml_budget_gib(total_mib: int, utilization: float, weights_gib: float) -> float:
    """vLLM's KV budget per GPU bounded from above: its share of the GPU's memory
    (``gpu_memory_utilization`` of NVML's total) less the weights it logged; activations and
    CUDA graphs take part of the rest, so the engine's own figure is lower."""
    return total_mib / 1024 * utilization - weights_gib


@dataclass(frozen=True)
class CrossCheck:
    consistent: bool
    low: int              # tokens the logged budget allows, given its rounding
    high: int
    implied_bytes: float  # bytes per token the logged figures imply


def cross_check(budget_gib: float, decimals: int, logged_tokens: int, per_token: int,
                block_size: int | None) -> CrossCheck:
    """Whether the engine's logged token count follows from its logged budget at
    ``per_token`` bytes: the budget is printed rounded to ``decimals`` places, so the check
    is against the whole interval it stands for (less one block for paging)."""
    half = 0.5 * 10 ** -decimals
    block = block_size or 1
    low = int((budget_gib - half) * GIB // (per_token * block)) * block - block
    high = int((budget_gib + half) * GIB // per_token)
    implied = budget_gib * GIB / logged_tokens if logged_tokens else 0.0
    return CrossCheck(low <= logged_tokens <= high, max(low, 0), high, implied)


# PCIe: GT/s per lane and line-code efficiency, by generation (PCI-SIG base specs).
_PCIE = {1: (2.5, 8 / 10), 2: (5.0, 8 / 10), 3: (8.0, 128 / 130), 4: (16.0, 128 / 130),
         5: (32.0, 128 / 130), 6: (64.0, 242 / 256)}
# NVLink GB/s per link per direction, by compute capability major (NVLink 3 on A100 and
# NVLink 4 on H100: 25; NVLink 5 on B200: 50).
_NVLINK_PER_LINK = {8: 25.0, 9: 25.0, 10: 50.0}


def pcie_gbps(gen: int, width: int) -> float | None:
    """Peak bytes/s per direction (in GB/s) of a PCIe link."""
    if gen not in _PCIE or width <= 0:
        return None
    rate, code = _PCIE[gen]
    return rate * width * code / 8


def nvlink_gbps(links: int, cc_major: int) -> float | None:
    per = _NVLINK_PER_LINK.get(cc_major)
    return None if per is None or links <= 0 else per * links


@dataclass(frozen=True)
class AllreduceShare:
    per_step_bytes: int      # payload of all allreduces of one decode step (the batch)
    wire_bytes: float        # what each GPU sends for it, ring allreduce
    step_s: float            # one decode step at the logged throughput
    transfer_s: float        # wire_bytes at peak link bandwidth
    share: float             # transfer_s / step_s


def allreduce_share(count: int, bytes_per_token: int, batch: int, tp: int,
                    tokens_per_s: float, link_gbps: float) -> AllreduceShare | None:
    """The share of a decode step that moving the allreduce bytes takes at the link's peak
    rate: ring allreduce sends 2(n-1)/n of the payload per GPU; a step produces ``batch``
    tokens, so it lasts ``batch / tokens_per_s``. Latency per call is not counted, so this
    bounds what more bandwidth alone could save."""
    if tp < 2 or tokens_per_s <= 0 or link_gbps <= 0 or batch <= 0:
        return None
    payload = count * bytes_per_token * batch
    wire = payload * 2 * (tp - 1) / tp
    step = batch / tokens_per_s
    transfer = wire / (link_gbps * 1e9)
    return AllreduceShare(payload, wire, step, transfer, transfer / step)

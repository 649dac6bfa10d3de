"""Facts about the world that are not on the host: what NCCL variables mean, which serving
flags matter, how architectures name their keys. Kept as data so a reader can check them."""

from __future__ import annotations

NCCL_VARS: dict[str, str] = {
    "NCCL_PROTO": "restricts the protocols NCCL may use (LL, LL128, Simple); LL is the "
                  "low-latency protocol that suits the small messages of decode-time allreduce",
    "NCCL_P2P_LEVEL": "highest topology distance at which NCCL still uses GPU peer-to-peer "
                      "(LOC, NVL, PIX, PXB, PHB, SYS); SYS allows P2P even across CPU sockets",
    "NCCL_P2P_DISABLE": "disables GPU peer-to-peer transport entirely when 1",
    "NCCL_SHM_DISABLE": "disables the shared-memory transport between GPUs when 1",
    "NCCL_ALGO": "restricts the collective algorithms (Ring, Tree, CollnetDirect, NVLS, …)",
    "NCCL_MIN_NCHANNELS": "lower bound on the number of channels (parallel rings/trees)",
    "NCCL_MAX_NCHANNELS": "upper bound on the number of channels (parallel rings/trees)",
    "NCCL_BUFFSIZE": "size of the buffer each channel uses per protocol",
    "NCCL_NTHREADS": "CUDA threads per NCCL block",
    "NCCL_NVLS_ENABLE": "enables NVLink SHARP (NVSwitch reductions) when 1",
    "NCCL_CUMEM_ENABLE": "use cuMem* allocations for NCCL buffers",
    "NCCL_IB_DISABLE": "disables the InfiniBand/RoCE transport when 1",
    "NCCL_SOCKET_IFNAME": "network interfaces NCCL may use for its socket transport",
    "NCCL_NET_GDR_LEVEL": "highest distance at which GPU Direct RDMA is used with the NIC",
    "NCCL_DEBUG": "logging level (VERSION, WARN, INFO, TRACE); no effect on performance "
                  "beyond INFO/TRACE logging",
    "NCCL_DEBUG_SUBSYS": "which subsystems log at INFO",
}

# vLLM's FP8 KV-cache dtype names and the 8-bit float format each stores (CacheConfig's
# cache_dtype docs: "CUDA 11.8+ supports fp8 (=fp8_e4m3) and fp8_e5m2"). A backend's
# supported_kv_cache_dtypes is matched literally, so fp8 and fp8_e4m3 are separate names there.
FP8_KV_FORMATS: dict[str, str] = {
    "fp8": "e4m3",
    "fp8_e4m3": "e4m3",
    "fp8_e5m2": "e5m2",
    "fp8_ds_mla": "sparse-MLA FP8 layout",
    "fp8_inc": "Intel Gaudi FP8",
}

# Config keys by meaning, first match wins (MLA-style MoE configs, Mixtral-style, …).
ARCH_KEYS: dict[str, tuple[str, ...]] = {
    "num_hidden_layers": ("num_hidden_layers", "n_layers", "num_layers"),
    "hidden_size": ("hidden_size", "d_model", "dim"),
    "first_k_dense_replace": ("first_k_dense_replace",),
    "n_routed_experts": ("n_routed_experts", "num_experts", "num_local_experts", "moe_num_experts"),
    "num_experts_per_tok": ("num_experts_per_tok", "moe_top_k", "top_k"),
    "n_shared_experts": ("n_shared_experts", "num_shared_experts"),
    "kv_lora_rank": ("kv_lora_rank",),
    "num_nextn_predict_layers": ("num_nextn_predict_layers", "num_mtp_layers"),
    "index_topk": ("index_topk",),
    "model_type": ("model_type",),
    "architectures": ("architectures",),
    "num_attention_heads": ("num_attention_heads",),
    "torch_dtype": ("torch_dtype", "dtype"),
    "mlp_only_layers": ("mlp_only_layers",),
    "decoder_sparse_step": ("decoder_sparse_step",),
}

BF16_BYTES = 2

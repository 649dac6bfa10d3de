"""Which inference engine a command line starts, and the serving flags it passes."""

from __future__ import annotations

import re
from typing import Any

# Flags that matter to these investigations → key in serve_args (vLLM and SGLang spellings).
# A trailing "!" marks a flag that takes no value.
SERVE_FLAGS: dict[str, str] = {
    "--model": "model",
    "--model-path": "model",
    "--tensor-parallel-size": "tensor_parallel_size",
    "-tp": "tensor_parallel_size",
    "--tp": "tensor_parallel_size",
    "--tp-size": "tensor_parallel_size",
    "--pipeline-parallel-size": "pipeline_parallel_size",
    "-pp": "pipeline_parallel_size",
    "--data-parallel-size": "data_parallel_size",
    "-dp": "data_parallel_size",
    "--kv-cache-dtype": "kv_cache_dtype",
    "--max-model-len": "max_model_len",
    "--context-length": "max_model_len",
    "--quantization": "quantization",
    "-q": "quantization",
    "--dtype": "dtype",
    "--disable-custom-all-reduce": "disable_custom_all_reduce!",
    "--enable-expert-parallel": "enable_expert_parallel!",
    "--speculative-config": "speculative_config",
    "--gpu-memory-utilization": "gpu_memory_utilization",
    "--attention-backend": "attention_backend",
    "--served-model-name": "served_model_name",
    "--config": "config",
    # SGLang's other spellings
    "--dp-size": "data_parallel_size",
    "--ep-size": "expert_parallel_size",
    "--expert-parallel-size": "expert_parallel_size",
    "--enable-dp-attention": "enable_dp_attention!",
    # TensorRT-LLM's trtllm-serve (click options, underscores)
    "--tp_size": "tensor_parallel_size",
    "--tensor_parallel_size": "tensor_parallel_size",
    "--pp_size": "pipeline_parallel_size",
    "--pipeline_parallel_size": "pipeline_parallel_size",
    "--ep_size": "expert_parallel_size",
    "--moe_expert_parallel_size": "expert_parallel_size",
    "--backend": "backend",
    "--extra_llm_api_options": "config",
}


def config_flags(entries: dict[str, object]) -> dict[str, object]:
    """Serving flags from a ``--config`` YAML (vLLM: long option names, dashes or
    underscores), in serve_args keys; a flag that takes no value counts when true."""
    out: dict[str, object] = {}
    # TensorRT-LLM's extra options YAML: kv_cache_config.dtype is the KV cache dtype
    if "kv_cache_config.dtype" in entries:
        out["kv_cache_dtype"] = str(entries["kv_cache_config.dtype"])
    for key, value in entries.items():
        flag = "--" + str(key).replace("_", "-")
        name = SERVE_FLAGS.get(flag)
        if name is None or name == "config":
            continue
        if name.endswith("!"):
            if value is True or str(value).lower() == "true":
                out[name[:-1]] = True
        else:
            out[name] = str(value)
    return out

ENGINE_NAMES = {"vllm": "vLLM", "sglang": "SGLang", "trtllm": "TensorRT-LLM"}

# Whole words only: a shell script given as one argument (`bash -c "… exec vllm serve …"`)
# is not itself the engine; it is read as a script.
_ENGINES = (("vllm", re.compile(r"vllm\.entrypoints\.[\w.]+|\S*/vllm/entrypoints/\S+\.py")),
            ("sglang", re.compile(r"sglang\.launch_server|\S*/sglang/launch_server\.py")),
            ("trtllm", re.compile(r"(\S*/)?trtllm-serve")))
_CLI = {"vllm": "vllm", "sglang": "sglang"}  # program → engine, when its subcommand is `serve`


def engine_of(argv: list[str]) -> str | None:
    """The engine a command line starts (looked for in its first words, where ``python -m``
    or ``env VAR=…`` put it), or None. ``vllm`` starts a server only as ``vllm serve``
    (``vllm bench serve`` is a client).

    >>> engine_of(["/opt/venv/bin/python3", "-m", "sglang.launch_server", "--tp", "8"])
    'sglang'
    >>> engine_of(["vllm", "bench", "serve", "--model", "m"]) is None
    True
    """
    words = argv[:4]
    for i, word in enumerate(words):
        prog = word.rsplit("/", 1)[-1]
        if prog in _CLI and "/" not in prog and argv[i + 1 : i + 2] == ["serve"]:
            return _CLI[prog]
    for name, pattern in _ENGINES:
        if any(pattern.fullmatch(a) for a in words):
            return name
    return None


def parse_serve_args(argv: list[str]) -> dict[str, Any]:
    """Flags of ``vllm serve MODEL …`` / ``python -m …api_server --model MODEL …``; a flag
    given twice keeps its last value, as argparse does."""
    out: dict[str, Any] = {}
    args = argv[1:]
    at = next((i for i, a in enumerate(argv[:4]) if a.rsplit("/", 1)[-1] == "trtllm-serve"),
              None)
    if at is not None:  # trtllm-serve [serve] MODEL …: the model is positional
        args = argv[at + 1 :]
        args = args[1:] if args[:1] == ["serve"] else args
        if args and not args[0].startswith("-"):
            out["model"] = args[0]
            args = args[1:]
    elif "serve" in args[:3]:
        args = args[args.index("serve") + 1 :]
        if args and not args[0].startswith("-"):
            out["model"] = args[0]
            args = args[1:]
    i = 0
    while i < len(args):
        a = args[i]
        i += 1
        if not a.startswith("-"):
            continue
        name, eq, value = a.partition("=")
        key = SERVE_FLAGS.get(name)
        if key is None:
            continue
        takes_value = not key.endswith("!")
        key = key.rstrip("!")
        if not takes_value:
            out[key] = True
        elif eq:
            out[key] = value
        elif i < len(args):
            out[key] = args[i]
            i += 1
    return out

"""The task catalog: declarative templates, their recipe functions, the catalog planner and
the template synthesizer (agentkit's no-LLM mode)."""

from . import (  # noqa: F401  (register functions)
    _fn_allreduce,
    _fn_capacity,
    _fn_change,
    _fn_elsewhere,
    _fn_gpu,
    _fn_models,
    _fn_service,
    _fn_vllm,
)

"""The task catalog: declarative templates, their recipe functions, the catalog planner and
the template synthesizer (agentkit's no-LLM mode)."""

from . import _fn_gpu, _fn_models, _fn_service, _fn_vllm  # noqa: F401  (register functions)

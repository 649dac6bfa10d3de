"""agentkit: answers questions about ML serving deployments by finding out.

>>> import anyio
>>> from agentkit import Host, Orchestrator
>>> orch = Orchestrator.catalog(Host.at("snapshots/gpu-node-07"))
>>> answer = anyio.run(orch.investigate, "Is NCCL tuned for this topology?")  # doctest: +SKIP
"""

# The facade is lazy (PEP 562): `import agentkit` costs nothing until a name is used, so the
# CLI starts fast and can catch an early Ctrl-C; type checkers see the plain imports.
from importlib import import_module
from typing import TYPE_CHECKING, Any

from ._version import __version__ as __version__

if TYPE_CHECKING:
    from ._api import Orchestrator, investigate_sync
    from ._config import Settings, load_settings
    from ._events import (
        AnswerReady,
        Event,
        HostFinished,
        ModelAnswered,
        PlanReady,
        TaskFinished,
        TaskStarted,
        ToolCalled,
    )
    from ._fleet._outcome import HostOutcome, Transport
    from ._fleet._ray import RayTransport
    from ._fleet._run import FleetOrchestrator
    from ._fleet._slurm import SlurmTransport
    from ._fleet._snapfleet import SnapshotFleet
    from ._fleet._ssh import SSHTransport
    from ._fleet_model import Fleet
    from ._llm._anthropic import AnthropicModel
    from ._llm._messages import (
        Message,
        Model,
        ModelError,
        ModelRequest,
        ModelResponse,
        ToolCallRequest,
        ToolSpec,
    )
    from ._llm._openai import OpenAIChatModel
    from ._orchestrator import Limits
    from ._render import to_markdown
    from ._sandbox._host import Host
    from ._sandbox._sandbox import Sandbox, ToolCall
    from ._sandbox._tool import Tool, ToolContext, ToolError, ToolOutput, tool
    from ._schema import handle_investigate, investigate_tool
    from ._trace import Trace
    from ._types import (
        SCHEMA_VERSION,
        Answer,
        Budget,
        Cell,
        Citation,
        Claim,
        Evidence,
        Fact,
        Finding,
        Plan,
        Section,
        SubQuestion,
        Table,
        TaskResult,
        TaskSpec,
        Usage,
    )

_LAZY: dict[str, str] = {
    "Answer": "._types",
    "AnswerReady": "._events",
    "AnthropicModel": "._llm._anthropic",
    "Budget": "._types",
    "Cell": "._types",
    "Citation": "._types",
    "Claim": "._types",
    "Event": "._events",
    "Evidence": "._types",
    "Fact": "._types",
    "Finding": "._types",
    "Fleet": "._fleet_model",
    "FleetOrchestrator": "._fleet._run",
    "Host": "._sandbox._host",
    "HostFinished": "._events",
    "HostOutcome": "._fleet._outcome",
    "Limits": "._orchestrator",
    "Message": "._llm._messages",
    "Model": "._llm._messages",
    "ModelAnswered": "._events",
    "ModelError": "._llm._messages",
    "ModelRequest": "._llm._messages",
    "ModelResponse": "._llm._messages",
    "OpenAIChatModel": "._llm._openai",
    "Orchestrator": "._api",
    "Plan": "._types",
    "PlanReady": "._events",
    "RayTransport": "._fleet._ray",
    "SCHEMA_VERSION": "._types",
    "SSHTransport": "._fleet._ssh",
    "Sandbox": "._sandbox._sandbox",
    "Section": "._types",
    "Settings": "._config",
    "SlurmTransport": "._fleet._slurm",
    "SnapshotFleet": "._fleet._snapfleet",
    "SubQuestion": "._types",
    "Table": "._types",
    "TaskFinished": "._events",
    "TaskResult": "._types",
    "TaskSpec": "._types",
    "TaskStarted": "._events",
    "Tool": "._sandbox._tool",
    "ToolCall": "._sandbox._sandbox",
    "ToolCallRequest": "._llm._messages",
    "ToolCalled": "._events",
    "ToolContext": "._sandbox._tool",
    "ToolError": "._sandbox._tool",
    "ToolOutput": "._sandbox._tool",
    "ToolSpec": "._llm._messages",
    "Trace": "._trace",
    "Transport": "._fleet._outcome",
    "Usage": "._types",
    "handle_investigate": "._schema",
    "investigate_sync": "._api",
    "investigate_tool": "._schema",
    "load_settings": "._config",
    "to_markdown": "._render",
    "tool": "._sandbox._tool",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'agentkit' has no attribute {name!r}")
    value = getattr(import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])



__all__ = [
    "SCHEMA_VERSION",
    "Answer",
    "AnswerReady",
    "AnthropicModel",
    "Budget",
    "Cell",
    "Citation",
    "Claim",
    "Event",
    "Evidence",
    "Fact",
    "Finding",
    "Fleet",
    "FleetOrchestrator",
    "Host",
    "HostFinished",
    "HostOutcome",
    "Limits",
    "Message",
    "Model",
    "ModelAnswered",
    "ModelError",
    "ModelRequest",
    "ModelResponse",
    "OpenAIChatModel",
    "Orchestrator",
    "Plan",
    "PlanReady",
    "RayTransport",
    "SSHTransport",
    "Sandbox",
    "Section",
    "Settings",
    "SlurmTransport",
    "SnapshotFleet",
    "SubQuestion",
    "Table",
    "TaskFinished",
    "TaskResult",
    "TaskSpec",
    "TaskStarted",
    "Tool",
    "ToolCall",
    "ToolCallRequest",
    "ToolCalled",
    "ToolContext",
    "ToolError",
    "ToolOutput",
    "ToolSpec",
    "Trace",
    "Transport",
    "Usage",
    "handle_investigate",
    "investigate_sync",
    "investigate_tool",
    "load_settings",
    "to_markdown",
    "tool",
]

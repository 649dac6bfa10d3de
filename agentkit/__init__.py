"""agentkit: answers questions about ML serving deployments by finding out.

>>> import anyio
>>> from agentkit import Host, Orchestrator
>>> orch = Orchestrator.catalog(Host.at("snapshots/gpu-node-07"))
>>> answer = anyio.run(orch.investigate, "Is NCCL tuned for this topology?")  # doctest: +SKIP
"""

from ._api import investigate_sync
from ._config import Settings, load_settings
from ._events import (
    AnswerReady,
    Event,
    ModelAnswered,
    PlanReady,
    TaskFinished,
    TaskStarted,
    ToolCalled,
)
from ._host import Host
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
from ._orchestrator import Limits, Orchestrator
from ._render import to_markdown
from ._sandbox._sandbox import Sandbox, ToolCall
from ._schema import handle_investigate, investigate_tool
from ._tool import Tool, ToolContext, ToolError, ToolOutput, tool
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

__version__ = "0.1.0"

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
    "Host",
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
    "Sandbox",
    "Section",
    "Settings",
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
    "Usage",
    "handle_investigate",
    "investigate_sync",
    "investigate_tool",
    "load_settings",
    "to_markdown",
    "tool",
]

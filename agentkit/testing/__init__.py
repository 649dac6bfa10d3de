"""Test doubles for your own investigations: a scripted in-process model, and scripted
OpenAI-compatible / Anthropic HTTP servers on 127.0.0.1 that exercise the real clients.

>>> from agentkit.testing import ScriptedModel, reply
>>> model = ScriptedModel(lambda request: reply(text="hello"))
"""

from ._cassette import cassette
from ._fake_server import FakeLLMServer, Reply
from ._schema_model import SchemaFollowingModel
from ._scripted import ScriptedModel, reply, tool_call

__all__ = ["FakeLLMServer", "Reply", "SchemaFollowingModel", "ScriptedModel", "cassette",
           "reply", "tool_call"]

"""LLM mode on a fresh install without extras: ``agentkit ask`` as a process, its model a
scripted OpenAI-compatible server on 127.0.0.1 (``agentkit.testing.FakeLLMServer``).

Run from .ci/newcomer in a virtual environment where only ``pip install -e .`` ran, so a
package that agentkit imports but does not declare fails CI here (it once crashed every
LLM-mode run with ``No module named 'sniffio'``).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from typing import Any

from agentkit.testing import FakeLLMServer, Reply

UNIT = "/etc/systemd/system/vllm-kimi.service"
EVIDENCE = re.compile(r"\b(E[0-9a-f]{10})\b")


def script(body: dict[str, Any]) -> Reply:
    tools = {t["function"]["name"] for t in body.get("tools", [])}
    msgs = body["messages"]
    if "submit_plan" in tools:
        return Reply.openai(calls=[("submit_plan", {"tasks": [{
            "id": "unit", "title": "read the serving unit", "tools": ["read_file"],
            "objective": "Which NCCL variables does the serving unit set?"}]})])
    if "submit_answer" in tools:
        ids = EVIDENCE.findall(msgs[1]["content"])
        return Reply.openai(calls=[("submit_answer", {
            "bottom_line": [{"text": "The serving unit sets its NCCL variables.",
                             "evidence": ids[:1]}], "sections": []})])
    seen = [m for m in msgs if m["role"] == "tool"]
    if not seen:
        return Reply.openai(calls=[("read_file", {"path": UNIT})])
    ids = EVIDENCE.findall(seen[-1]["content"])
    claim = "The unit file was read."
    return Reply.openai(calls=[("submit_result", {
        "status": "ok", "summary": claim, "findings": [{"claim": claim, "evidence": ids[:1]}],
        "facts": {}})])


def main() -> int:
    root = sys.argv[1] if len(sys.argv) > 1 else "examples/blackwell-kimi"
    with FakeLLMServer(script) as server:
        env = dict(os.environ, AGENTKIT_BASE_URL=server.base_url, AGENTKIT_MODEL="fake",
                   AGENTKIT_CONFIG="/dev/null")
        proc = subprocess.run(
            ["agentkit", "ask", "What does the serving unit set for NCCL?", "--root", root,
             "--json"], env=env, capture_output=True, text=True, timeout=120)
        requests = len(server.requests)
    if proc.returncode != 0:
        print(proc.stderr[-4000:], file=sys.stderr)
        print(f"llm smoke: agentkit ask exited {proc.returncode}", file=sys.stderr)
        return 1
    answer = json.loads(proc.stdout)
    if requests < 3 or "NCCL" not in json.dumps(answer):
        print(f"llm smoke: the model was asked {requests} times; answer: {proc.stdout[:2000]}",
              file=sys.stderr)
        return 1
    print(f"llm smoke: LLM mode answered without extras ({requests} model requests)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Every citation's excerpt shows the fact it is cited for (issue 25, item 7): the value a
config key holds, not the line where its list opens; the definition that decides support,
not a bare `return True`; a topology row, not the header of the table.

The expectations below are written from the formats themselves (JSON, YAML, Python,
`nvidia-smi topo -m`), before agentkit's excerpts were looked at."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentkit.cli import main

from .citations import audit, config_problem, shows_nothing
from .conftest import EXAMPLES, REFERENCE_QUESTION

HOSTS = sorted(p.parent.parent.name for p in EXAMPLES.glob("*/.agentkit/snapshot.json"))


@pytest.mark.parametrize("excerpt", [
    "", "   ", '"architectures": [', "args:", '"Args": [', "env:", "command: >-",
    "        return True", "}", "],", "else:", "return None",
    "\tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\tNUMA Affinity",
])
def test_excerpts_that_show_nothing(excerpt: str) -> None:
    assert shows_nothing(excerpt)


@pytest.mark.parametrize("excerpt", [
    '"DeepseekV3ForCausalLM"', '"num_hidden_layers": 61,', "Environment=NCCL_PROTO=LL",
    "@classmethod\ndef supports_compute_capability(cls, capability) -> bool:\n    return True",
    "        return capability.major == 9", "GPU0\t X \tNV18\tNV18\tSYS",
    "args:\n- --model\n- /models/m\n- --tensor-parallel-size\n- \"4\"",
])
def test_excerpts_that_show_a_fact(excerpt: str) -> None:
    assert shows_nothing(excerpt) is None


def test_config_rule_value_and_key(tmp_path: Path) -> None:
    cfg = tmp_path / "config.json"
    cfg.write_text('{\n  "architectures": [\n    "DeepseekV3ForCausalLM"\n  ],\n'
                   '  "model_type": "deepseek_v3",\n  "ids": ["a",\n    "b"],\n'
                   '  "text_config": {"num_hidden_layers": 61, "rope": 1e-06}\n}\n')
    # the line where the list opens shows no value
    assert config_problem(cfg, 2, "architectures", '"architectures": [')
    # the value's line, the key named by the locator: right
    assert config_problem(cfg, 3, "architectures", '"DeepseekV3ForCausalLM"') is None
    assert config_problem(cfg, 5, "model_type", '"model_type": "deepseek_v3",') is None
    # a value on the key's line: the key must be in the excerpt
    assert config_problem(cfg, 5, "model_type", '"deepseek_v3",')
    # a list that starts on the key's line and goes on below it: both lines
    assert config_problem(cfg, 6, "ids", '"ids": ["a",')
    assert config_problem(cfg, 6, "ids", '"ids": ["a",\n"b"],') is None
    assert config_problem(cfg, 7, "ids", '"b"],')
    assert config_problem(cfg, 8, "text_config.rope", '"rope": 1e-06}') is None
    assert config_problem(cfg, 8, "text_config.num_hidden_layers", '"num_hidden_layers": 6')
    assert config_problem(cfg, 8, "text_config.missing", '"missing": 1')


def _ask(root: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    code = main(["ask", REFERENCE_QUESTION, "--root", str(root), "--json", "-q"])
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out)


@pytest.mark.parametrize("host", HOSTS)
def test_every_citation_of_the_reference_answer_shows_its_fact(
        host: str, capsys: pytest.CaptureFixture[str]) -> None:
    answer = _ask(EXAMPLES / host, capsys)
    assert answer["citations"]
    problems = audit(answer["citations"], EXAMPLES / host)
    assert not problems, f"{len(problems)} of {len(answer['citations'])} citations:\n  " + \
        "\n  ".join(problems)

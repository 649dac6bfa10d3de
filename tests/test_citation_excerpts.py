"""Every citation's excerpt shows the fact it is cited for (issue 25, item 7): the value a
config key holds, not the line where its list opens; the definition that decides support,
not a bare `return True`; a topology row, not the header of the table.

The expectations below are written from the formats themselves (JSON, YAML, Python,
`nvidia-smi topo -m`), before agentkit's excerpts were looked at."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentkit import Host, Sandbox
from agentkit._sandbox._context import node_end
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


def test_a_value_below_its_key_is_cited_with_its_lines() -> None:
    yaml_lines = ["spec:", "  args:", "  - --model", "  - /models/m", "  - --tp", "  - \"4\"",
                  "  env:", "  - name: NCCL_PROTO", "    value: LL", "  - name: X",
                  "    value: y"]
    assert node_end(yaml_lines, 2) == 6  # `args:` and its items at the key's indentation
    assert node_end(yaml_lines, 8) == 9  # an env item: its name and its value
    assert node_end(yaml_lines, 3) == 3  # a scalar item holds its whole value
    inspect = ['    "Args": [', '        "--tp",', '        "8"', '    ],',
               '    "RestartPolicy": {', '        "Name": "always"', '    },',
               '    "Status": "running",', "UnsetEnvironment="]
    assert node_end(inspect, 1) == 3  # the elements, not the closing bracket
    assert node_end(inspect, 5) == 6
    assert node_end(inspect, 8) == 8
    assert node_end(inspect, 9) == 9  # `KEY=` is an empty value, not an opener


def test_topology_from_nvidia_smi_cites_gpu_rows(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Without NVML's matrix the links come from `nvidia-smi topo -m`, whose header row
    (an empty corner cell, then GPU0…GPU7) names columns: the blackwell capture has 8 GPU
    rows, NODE within a socket and SYS across."""
    root = tmp_path / "bw"
    shutil.copytree(EXAMPLES / "blackwell-kimi", root)
    nvml = json.loads((root / ".agentkit/nvml.json").read_text())
    del nvml["topology"]
    (root / ".agentkit/nvml.json").write_text(json.dumps(nvml))
    code = main(["ask", "Is NCCL tuned for this topology?", "--root", str(root), "--json",
                 "-q"])
    out = capsys.readouterr()
    assert code == 0, out.err
    answer = json.loads(out.out)
    text = "\n".join(c["text"] for c in answer["bottom_line"])
    assert "The 8 GPUs are connected by PCIe only (NODE/SYS between GPUs" in text
    topo = [c for c in answer["citations"] if "nvidia-smi topo -m" in c["locator"]]
    assert topo and all(c["excerpt"].startswith("GPU") and "SYS" in c["excerpt"]
                        for c in topo)
    assert not audit(answer["citations"], root)


@pytest.mark.parametrize(("name", "text", "lines"), [
    ("c.json", '{\n  "architectures": [\n    "DeepseekV3ForCausalLM"\n  ],\n'
               '  "ids": ["a",\n    "b"],\n  "one": ["x"],\n  "n": 3\n}\n',
     {"architectures": "3", "ids": "5-6", "one": "7", "n": "8"}),
    ("c.yaml", "architectures:\n  - DeepseekV3ForCausalLM\nids: [a,\n  b]\none: [x]\nn: 3\n",
     {"architectures": "2", "ids": "3-4", "one": "5", "n": "6"}),
])
def test_parse_config_cites_list_values_where_they_are(tmp_path: Path, name: str, text: str,
                                                       lines: dict[str, str]) -> None:
    """A list below its key is cited at its elements' lines (the key named by the locator);
    one that starts on its key's line and goes on below, from the key's line on."""
    (tmp_path / name).write_text(text)
    box = Sandbox(Host.at(tmp_path), task_id="t")
    got = anyio.run(box.call, "parse_config", {"path": f"/{name}"})
    cites = [{"id": e.id, "kind": e.kind, "locator": e.locator, "excerpt": e.excerpt}
             for e in got.evidence]
    assert {c["locator"] for c in cites} == {f"/{name}:{n} {k}" for k, n in lines.items()}
    assert not audit(cites, tmp_path)

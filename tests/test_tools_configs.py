"""parse_config: every format into one shape with lines; systemd drop-ins and env files;
malformed files reported with their line."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from agentkit import Host, Sandbox

from .conftest import write_tree

UNIT = """[Unit]
Description=demo

[Service]
EnvironmentFile=-/etc/default/demo
Environment=A=1
# tuned for PCIe
Environment=NCCL_PROTO=LL "QUOTED=two words"
ExecStart=/opt/venv/bin/vllm serve /models/m \\
    --tensor-parallel-size 4
"""


def parse(root: Path, path: str, fmt: str = "auto") -> object:
    box = Sandbox(Host.at(root), task_id="t")
    return anyio.run(box.call, "parse_config", {"path": path, "format": fmt})


def entries(result: object) -> dict[str, tuple[object, int]]:
    return {e["key"]: (e["value"], e["line"]) for e in result.data["entries"]}


def test_systemd_effective_environment(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {
        "etc/systemd/system/demo.service": UNIT,
        "etc/systemd/system/demo.service.d/10-a.conf": "[Service]\nEnvironment=A=2\n",
        "usr/lib/systemd/system/demo.service.d/10-a.conf": "[Service]\nEnvironment=A=masked\n",
        "usr/lib/systemd/system/demo.service.d/20-b.conf": "[Service]\nEnvironment=B=3\n",
        "etc/default/demo": "# from env file\nA=4\nC='quoted'\n",
    })
    r = parse(root, "/etc/systemd/system/demo.service")
    assert r.ok, r.error
    eff = r.data["effective"]
    env = eff["environment"]
    # EnvironmentFile= is applied after Environment=, so it wins (systemd.exec(5)).
    assert env["A"]["value"] == "4" and env["A"]["source"] == "/etc/default/demo"
    assert env["B"]["source"] == "/usr/lib/systemd/system/demo.service.d/20-b.conf"
    assert env["NCCL_PROTO"] == {**env["NCCL_PROTO"], "value": "LL", "line": 8,
                                 "comment": "tuned for PCIe"}
    assert env["QUOTED"]["value"] == "two words"
    assert env["C"]["value"] == "quoted"
    assert eff["exec_start"]["argv"] == ["/opt/venv/bin/vllm", "serve", "/models/m",
                                         "--tensor-parallel-size", "4"]
    assert eff["exec_start"]["line"] == 9
    # the masked drop-in in /usr/lib (same name as one in /etc) was not read
    assert "/usr/lib/systemd/system/demo.service.d/10-a.conf" not in eff["files"]


def test_json_lines_and_nested_keys(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"m/config.json": '{\n  "a": 1,\n  "text_config": {\n'
                                                   '    "layers": 61,\n    "l": [1, 2]\n  }\n}\n'})
    e = entries(parse(root, "/m/config.json"))
    assert e["a"] == (1, 2)
    assert e["text_config.layers"] == (61, 4)
    assert e["text_config.l"] == ([1, 2], 5)


def test_malformed_json_names_its_line(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"bad.json": '{\n  "a": 1,\n  "b": ,\n}\n'})
    r = parse(root, "/bad.json")
    assert not r.ok and "/bad.json:3" in r.error and "malformed JSON" in r.error


def test_yaml_toml_ini_dotenv(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {
        "c.yaml": "server:\n  port: 8000\n  tp: 8\n",
        "c.toml": "[server]\nport = 8000\n",
        "c.ini": "[nccl]\nproto = LL\n",
        "etc/nccl.conf": "# comment\nNCCL_DEBUG=WARN\n",
    })
    assert entries(parse(root, "/c.yaml"))["server.tp"] == (8, 3)
    assert entries(parse(root, "/c.toml"))["server.port"] == (8000, 2)
    assert entries(parse(root, "/c.ini"))["nccl.proto"] == ("LL", 2)
    assert entries(parse(root, "/etc/nccl.conf"))["NCCL_DEBUG"] == ("WARN", 2)


@pytest.mark.parametrize("text,why", [
    ("a: !!python/object/apply:os.system ['touch /tmp/pwned']\n", "malformed YAML"),
    ("a: &a [1]\n" + "".join(f"b{i}: &b{i} [*a, *a]\n" for i in range(120)), "alias"),
    ("a:\n  b: [\n", "malformed YAML"),
])
def test_hostile_yaml_refused(tmp_path: Path, text: str, why: str) -> None:
    root = write_tree(tmp_path, {"x.yaml": text})
    r = parse(root, "/x.yaml")
    assert not r.ok and why in r.error


def test_malformed_unit_line_named(tmp_path: Path) -> None:
    # systemd's config_parse() warns "Missing '=', ignoring line." and loads the rest of the
    # unit; only a malformed section header makes it refuse the file
    root = write_tree(tmp_path, {"etc/systemd/system/x.service": "[Service]\nnot an assignment\n"
                                                                 "Environment=A=1\n"})
    r = parse(root, "/etc/systemd/system/x.service")
    assert r.ok and any("x.service:2" in p for p in r.data["effective"]["problems"])
    assert r.data["effective"]["environment"]["A"]["value"] == "1"
    bad = write_tree(tmp_path / "b", {"etc/systemd/system/x.service": "[Service\nA=1\n"})
    r = parse(bad, "/etc/systemd/system/x.service")
    assert not r.ok and "x.service:1" in r.error


def test_secrets_redacted_in_config_values(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"etc/default/x": "HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz012\n"
                                                  "PLAIN=ok\n"})
    r = parse(root, "/etc/default/x", "dotenv")
    assert "hf_abcdef" not in str(r.data) and entries(r)["PLAIN"] == ("ok", 2)


@pytest.mark.parametrize("instance,ok", [
    ("a" * 128, True), ("a" * 129, False), ("", False), ("kimi.1:x-y", True),
    ("é" * 3, True), ("a b", False), ("../x", False), ("a\n", False),
])
def test_a_template_instance_is_one_word_of_at_most_128_characters(instance: str, ok: bool
                                                                    ) -> None:
    from agentkit._sandbox._sandbox import BUILTIN_TOOLS
    from agentkit._sandbox._tool import ToolError

    tool = BUILTIN_TOOLS["parse_config"]
    if ok:
        tool.validate({"path": "/etc/systemd/system/v@.service", "instance": instance})
    else:
        with pytest.raises(ToolError, match="instance"):
            tool.validate({"path": "/etc/systemd/system/v@.service", "instance": instance})

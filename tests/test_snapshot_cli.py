"""agentkit snapshot, tools and tasks commands, and bad input at the CLI edges."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentkit.cli import main

from .conftest import EXAMPLES, REFERENCE_QUESTION, write_tree


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def claims(answer: dict[str, object]) -> list[str]:
    return [c["text"] for c in answer["bottom_line"]]  # type: ignore[index]


def test_snapshot_gives_the_same_answer(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "host"
    import shutil

    shutil.copytree(EXAMPLES / "blackwell-kimi", src)
    # a secret on the host, and a file no investigation reads
    env_file = src / "etc/default/vllm-kimi"
    env_file.write_text(env_file.read_text() + "HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz0123\n")
    (src / "etc/unrelated.txt").write_text("not needed\n")
    out = tmp_path / "snap"
    code, _, err = run(capsys, "snapshot", str(out), "--root", str(src))
    assert code == 0, err
    assert (out / "etc/systemd/system/vllm-kimi.service").is_file()
    assert not (out / "etc/unrelated.txt").exists()
    assert "hf_abcdefghij" not in (out / "etc/default/vllm-kimi").read_text()
    manifest = json.loads((out / ".agentkit/snapshot.json").read_text())
    argvs = [c["argv"] for c in manifest["commands"]]
    assert ["journalctl", "-u", "vllm-kimi.service", "-n", "2000", "--no-pager"] in argvs
    assert manifest["nvml"] == "nvml.json"
    _, a1, _ = run(capsys, "ask", REFERENCE_QUESTION, "--root", str(src), "--json", "-q")
    _, a2, _ = run(capsys, "ask", REFERENCE_QUESTION, "--root", str(out), "--json", "-q")
    assert claims(json.loads(a1)) == claims(json.loads(a2))
    assert json.loads(a1)["table"] == json.loads(a2)["table"]
    code, _, err = run(capsys, "snapshot", str(out), "--root", str(src))
    assert code == 2 and "not empty" in err


def test_tools_list_and_call(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "tools", "list", "--json")
    tools = {t["name"]: t for t in json.loads(out)}
    assert code == 0 and set(tools) >= {"read_file", "run_command", "parse_config", "gpu_info"}
    assert tools["read_file"]["parameters"]["required"] == ["path"]
    root = str(EXAMPLES / "blackwell-kimi")
    code, out, _ = run(capsys, "tools", "call", "parse_config", "--root", root, "--args",
                       '{"path": "/etc/systemd/system/vllm-kimi.service"}')
    env = json.loads(out)["data"]["effective"]["environment"]
    assert code == 0 and env["NCCL_PROTO"]["value"] == "LL"
    code, out, _ = run(capsys, "tools", "call", "gpu_info", "--root", root)
    assert json.loads(out)["data"]["devices"][0]["compute_capability"] == [12, 0]


@pytest.mark.parametrize("argv,code,words", [
    (["tools", "call", "read_file", "--args", '{"path": "/../x"}'], 5, "above the root"),
    (["tools", "call", "run_command", "--args", '{"argv": ["rm", "-rf", "/"]}'], 5, "allowlist"),
    (["tools", "call", "read_file", "--args", "{not json"], 2, "not valid JSON"),
    (["tools", "call", "nope"], 2, "no tool named"),
    (["ask", "   ", "--root", "."], 2, "question is empty"),
    (["ask", "x" * 9000, "--root", "."], 2, "keep it under"),
    (["ask", "Is NCCL tuned?", "--root", "/does/not/exist"], 2, "not a directory"),
    (["tasks", "show", "nope"], 2, "agentkit tasks list"),
])
def test_bad_input_one_clear_line(capsys: pytest.CaptureFixture[str], argv: list[str],
                                  code: int, words: str) -> None:
    got, _, err = run(capsys, *argv)
    assert got == code and words in err
    assert "Traceback" not in err


def test_bad_config_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = write_tree(tmp_path, {"c.toml": "modle = 'x'\n"}) / "c.toml"
    got, _, err = run(capsys, "ask", "Is NCCL tuned?", "--config", str(cfg), "--root", ".")
    assert got == 2 and "unknown setting 'modle'" in err


def test_tasks_list_and_show(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "tasks", "list")
    assert code == 0 and "kv-cache-dtype-support" in out and "nccl-env" in out
    code, out, _ = run(capsys, "tasks", "show", "kv-cache-dtype-support")
    assert code == 0 and "call: kv_cache_support" in out


def test_markdown_answer_on_stdout_logs_on_stderr(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    trace = tmp_path / "t.jsonl"
    code, out, err = run(capsys, "ask", REFERENCE_QUESTION, "--root",
                         str(EXAMPLES / "blackwell-kimi"), "--trace", str(trace), "-v")
    assert code == 0
    assert out.startswith("# Do previous optimizations") and "## Evidence" in out
    assert "task finished" in err and "task started" not in out
    assert f"trace written to {trace}" in err
    kinds = {json.loads(line)["kind"] for line in trace.read_text().splitlines()}
    assert {"run", "plan", "task", "tool", "synthesize"} <= kinds


def test_root_without_the_expected_files(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "ask", "Is NCCL tuned?", "--root", str(tmp_path), "-q")
    assert code == 7
    final = err.strip().splitlines()[-1]
    assert "nothing could be established" in final and "no model server found" in final
    assert "agentkit snapshot" in final
    assert "Not established" in out  # the answer is still printed, saying why


def test_a_snapshot_keeps_modes_and_redacts_env_files_strictly(tmp_path: Path) -> None:
    import stat as st

    from agentkit._sandbox._paths import Root
    from agentkit._snapshot import _copy

    src = tmp_path / "host"
    (src / "etc").mkdir(parents=True)
    env = src / "etc/app.env"
    env.write_text("DB_PASSPHRASE_X=Zq8w7e6r5t4y3u2i1o0p\nPORT=8000\n")  # a key name no
    env.chmod(0o600)                                                      # rule knows
    out = tmp_path / "snap"
    assert _copy(Root(str(src)), "/etc/app.env", out, 1 << 20)
    copied = out / "etc/app.env"
    assert st.S_IMODE(copied.stat().st_mode) == 0o600  # not widened to 0644
    text = copied.read_text()
    assert "Zq8w7e6r5t4y3u2i1o0p" not in text and "PORT=8000" in text

"""Part B end to end: canaries planted in the files and captures the catalog reads never reach
the CLI's output, the trace, the HTML report or a snapshot taken of the host."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agentkit.cli import main

from ..conftest import EXAMPLES, REFERENCE_QUESTION

# Unique per place planted, so a leak names where it came from.
CANARIES = {
    "default-hf": "hf_Kc7Qw2Zr9Xm4Lp8Vn3Tb6Yd1Hs5Gf0Ja",
    "default-key": "Mq5Wz8Kr2Xv7Lp4Nt9Bc3Yd6",
    "default-url": "Pz4Kq9Wm2Rv7Xn5Lt8",
    "unit-hf": "hf_Rt5Yq8Wm3Kz7Xv2Lp9Nc4Bd6Hs1Gf0Je",
    "unit-wandb": "Wb3Kq7Zm9Xr2Lv5Np8Tc4Yd6",
    "unit-split-a": "Sa8Kq3Zw7Xm2",
    "unit-split-b": "Lv9Np4Tc6Yd1Rb5",
    "unit-cli": "Cl2Kq8Zw4Xm7Lv3Np9",
    "journal-bearer": "Jb6Kq2Zw9Xm4Lv7Np3Tc8Yd",
    "journal-openai": "sk-proj-Jo4Kq8Zw2Xm6Lv9Np3Tc7Yd1Rb5Hs",
    "journal-aws": "AKIAJX4KQ8ZW2XM6LV9N",
    "config-json": "Cj7Kq3Zw8Xm2Lv6Np4",
}


def _plant(root: Path) -> None:
    c = CANARIES
    default = root / "etc/default/vllm-kimi"
    default.write_text(default.read_text() + f"HF_TOKEN={c['default-hf']}\n"
                       f"VLLM_API_KEY={c['default-key']}\n"
                       f"DATABASE_URL=postgres://vllm:{c['default-url']}@db:5432/x\n")
    unit = root / "etc/systemd/system/vllm-kimi.service"
    text = unit.read_text()
    text = text.replace("Environment=NCCL_PROTO=LL\n", f"Environment=NCCL_PROTO=LL\n"
                        f'Environment="HF_TOKEN={c["unit-hf"]}"\n'
                        f"Environment=WANDB_API_KEY={c['unit-wandb']}\n"
                        f'Environment="MY_SECRET={c["unit-split-a"]}\\\n'
                        f'{c["unit-split-b"]}"\n')
    text = text.replace("    --port 8000\n", f"    --port 8000 \\\n    --api-key {c['unit-cli']}\n")
    unit.write_text(text)
    journal = root / ".agentkit/commands/journalctl-vllm-kimi.txt"
    journal.write_text(journal.read_text() + "\n".join([
        f"Nov 20 14:03:00 bw vllm[1]: DEBUG header Authorization: Bearer {c['journal-bearer']}",
        f"Nov 20 14:03:01 bw vllm[1]: ERROR bad key {c['journal-openai']}",
        f"Nov 20 14:03:02 bw vllm[1]: WARNING boto3 using {c['journal-aws']}", ""]))
    cfg = root / "models/nvidia/Kimi-K2.5-NVFP4/config.json"
    data = json.loads(cfg.read_text())
    data["api_key"] = c["config-json"]
    cfg.write_text(json.dumps(data, indent=2))


def _leaks(text: str) -> list[str]:
    return [name for name, value in CANARIES.items() if value in text]


def test_canaries_never_reach_any_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                         ) -> None:
    root = tmp_path / "host"
    shutil.copytree(EXAMPLES / "blackwell-kimi", root, symlinks=True)
    _plant(root)
    trace, html, snap = tmp_path / "run.jsonl", tmp_path / "run.html", tmp_path / "snap"

    code = main(["ask", REFERENCE_QUESTION, "--root", str(root), "--trace", str(trace),
                 "--json", "-q"])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert json.loads(out.out)  # a real answer came out
    assert not _leaks(out.out) and not _leaks(out.err)
    trace_text = trace.read_text()
    # the planted lines were read, and redacted
    assert "HF_TOKEN" in trace_text and "[REDACTED:" in trace_text
    assert not _leaks(trace_text)

    assert main(["report", str(trace), "-o", str(html)]) == 0
    assert not _leaks(html.read_text()) and not _leaks(capsys.readouterr().out)

    assert main(["snapshot", str(snap), "--root", str(root)]) == 0
    streams = capsys.readouterr()
    assert not _leaks(streams.out + streams.err)
    files = [p for p in snap.rglob("*") if p.is_file()]
    assert len(files) >= 5
    assert "[REDACTED:" in (snap / "etc/default/vllm-kimi").read_text()
    for p in files:
        assert not _leaks(p.read_text(errors="replace")), p

    # The tool a user or model calls directly, and its failure path.
    for args in ('{"path": "/etc/systemd/system/vllm-kimi.service"}',
                 '{"path": "/etc/default/vllm-kimi"}', '{"path": "/etc/default/vllm-kimi", '
                 '"format": "ini"}'):
        main(["tools", "call", "parse_config", "--args", args, "--root", str(root)])
        streams = capsys.readouterr()
        assert not _leaks(streams.out + streams.err), args


def test_a_hostile_manifest_does_not_echo_what_it_points_at(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]
                                                            ) -> None:
    outside = tmp_path / "docker-config.json"
    outside.write_text(json.dumps({"auths": {"r": {"auth": CANARIES["config-json"]}}}))
    root = tmp_path / "host"
    (root / ".agentkit").mkdir(parents=True)
    (root / ".agentkit/snapshot.json").write_text(json.dumps({"commands": [
        {"argv": ["x"], "stdout": CANARIES["default-key"], "bogus": CANARIES["unit-cli"]}]}))
    main(["tools", "call", "run_command", "--args", '{"argv": ["uname", "-r"]}',
          "--root", str(root)])
    streams = capsys.readouterr()
    assert "not a valid snapshot manifest" in streams.out + streams.err
    assert not _leaks(streams.out + streams.err)
    (root / ".agentkit/snapshot.json").unlink()
    (root / ".agentkit/snapshot.json").symlink_to(outside)
    main(["tools", "call", "run_command", "--args", '{"argv": ["uname", "-r"]}',
          "--root", str(root)])
    streams = capsys.readouterr()
    assert not _leaks(streams.out + streams.err)

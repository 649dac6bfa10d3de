"""Adversarial tests, part B: planted secrets never leave a tool; look-alikes stay readable."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentkit import Host, Sandbox
from agentkit._sandbox._paths import Root
from agentkit._sandbox._redact import redact

from ..conftest import write_tree
from .secrets_data import BENIGN, SECRETS, Secret

FRAGMENTS = sorted({f for s in SECRETS for f in s.fragments})
# Secrets written on one line: still redacted when a program reorders lines (sort), which can
# separate a multi-line secret's body from its header (a known limit, docs/security.md).
ONE_LINE = sorted({f for s in SECRETS if "\n" not in s.text for f in s.fragments})


def false_positive_rate() -> tuple[int, int]:
    """(benign lines changed by redact, corpus size)."""
    return sum(redact(line) != line for line in BENIGN), len(BENIGN)


@pytest.mark.parametrize("secret", SECRETS, ids=[f"{i:02d}-{s.fmt}" for i, s in
                                                  enumerate(SECRETS)])
def test_every_planted_secret_is_redacted(secret: Secret) -> None:
    out = redact(secret.text)
    assert not [f for f in secret.fragments if f in out], out
    assert redact(out) == out  # idempotent: a second pass (the sandbox's net) changes nothing
    assert out.count("\n") == secret.text.count("\n")  # line numbers stay citable


def test_false_positive_rate_on_look_alikes() -> None:
    changed, total = false_positive_rate()
    assert total >= 200
    assert changed / total <= 0.01, [b for b in BENIGN if redact(b) != b]


def _shown(call: Any) -> str:
    return json.dumps({"data": call.data, "error": call.error,
                       "evidence": [e.model_dump() for e in call.evidence]}, default=str)


def _plant(root: Path) -> dict[str, str]:
    """Every secret sample in the kinds of files investigations read."""
    by_fmt: dict[str, list[str]] = {}
    for s in SECRETS:
        by_fmt.setdefault(s.fmt, []).append(s.text)
    everything = "\n".join(s.text for s in SECRETS)
    files = {
        "etc/notes.txt": everything + "\n",
        "etc/systemd/system/x.service": "[Service]\n" + "\n".join(
            by_fmt["unit-environment"]) + "\nExecStart=/usr/bin/vllm serve m " +
            "\n".join(by_fmt["cli-flag"])[:0] + "\n",
        "etc/default/x": "\n".join(by_fmt["env-file"] + [by_fmt["hf-token"][0]]) + "\n",
        "srv/app/.env": "\n".join(by_fmt["env-file"]) + "\nPLAIN=Vx9Kq2Lm8Np4Rs7Tz1Wb\n",
        "srv/app/config.json": by_fmt["json-value"][0] + "\n",
        "srv/app/secret.yaml": by_fmt["k8s-secret"][0],
        "srv/app/creds.ini": "[db]\n" + "\n".join(
            ln.replace(":", "=", 1) for ln in by_fmt["aws-secret-key"]) + "\n",
        "srv/app/broken.ini": everything + "\n",  # malformed: the error path
    }
    write_tree(root, files)
    return {k: v for k, v in files.items()}


@pytest.fixture
def planted(tmp_path: Path) -> tuple[Host, Path]:
    _plant(tmp_path)
    return Host(root=Root("/", allow=(str(tmp_path),)), command_timeout_s=5.0), tmp_path


def test_secrets_never_leave_file_tools(planted: tuple[Host, Path]) -> None:
    host, root = planted
    box = Sandbox(host, task_id="t")
    calls: list[tuple[str, dict[str, Any]]] = []
    for rel in ("etc/notes.txt", "etc/systemd/system/x.service", "etc/default/x",
                "srv/app/.env", "srv/app/config.json", "srv/app/secret.yaml", "srv/app/creds.ini",
                "srv/app/broken.ini"):
        p = str(root / rel)
        calls += [("read_file", {"path": p}), ("parse_config", {"path": p}),
                  ("grep", {"pattern": ".", "path": p}),
                  ("parse_config", {"path": p, "format": "dotenv"}),
                  ("parse_config", {"path": p, "format": "ini"}),
                  ("parse_config", {"path": p, "format": "yaml"})]
    calls += [("grep", {"pattern": ".", "path": str(root)}),
              ("grep", {"pattern": "(?i)key|token|secret|pass", "path": str(root) + "/**"})]
    seen = 0
    for name, args in calls:
        call = anyio.run(box.call, name, args)
        seen += call.ok
        shown = _shown(call)
        leaked = [f for f in FRAGMENTS if f in shown]
        assert not leaked, (name, args, leaked[:3])
    assert seen >= 20  # the reads really happened


def test_secrets_never_leave_commands(planted: tuple[Host, Path]) -> None:
    host, root = planted
    box = Sandbox(host, task_id="t")
    notes = str(root / "etc/notes.txt")
    for argv in (["cat", notes], ["head", "-n", "500", notes], ["grep", "-r", ".", str(root)],
                 ["sed", "-n", "1,$p", notes], ["tail", "-n", "80", notes],
                 ["grep", "-h", "-A", "3", "BEGIN", notes], ["sort", notes], ["uniq", notes]):
        call = anyio.run(box.call, "run_command", {"argv": argv})
        assert call.ok, call.error
        must = ONE_LINE if argv[0] in ("sort", "uniq") else FRAGMENTS
        assert not [f for f in must if f in _shown(call)], argv


def test_env_and_printenv_show_no_secret_variables(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    planted = {"HF_TOKEN": "hf_" + "Zq7Wm3Kx9Pv2Lr8Ns4Tb6Yc1", "AWS_SECRET_ACCESS_KEY":
               "Xk2Vq9Mz4Lp7Rn1Ws8Tb3Yc6Hd5Jf0Ga2Qe4Uo7", "OPENAI_API_KEY": "sk-" + "Pm4" * 12,
               "DB_PASSWORD": "Rw8Tz2Kq6Mv", "MY_SERVICE_CREDENTIALS": "Lq3Wv8Zx1Nm5Bt"}
    for k, v in planted.items():
        monkeypatch.setenv(k, v)
    box = Sandbox(Host(root=Root("/", allow=(str(tmp_path),))), task_id="t")
    for argv in (["env"], ["printenv"], ["printenv", *planted]):
        call = anyio.run(box.call, "run_command", {"argv": argv})
        assert call.ok, call.error
        assert not [v for v in planted.values() if v in _shown(call)], argv
        assert not [k for k in planted if f"{k}=" in call.data["stdout"]]


@pytest.mark.parametrize("rel", [
    "root/.cache/huggingface/token", "root/.aws/credentials", "root/.netrc",
    "home/u/.huggingface/token", "models/hf-cache/token", "home/u/.git-credentials",
    "home/u/.docker/config.json", "home/u/.kube/config", "home/u/.pgpass",
    "home/u/.ssh/id_ed25519", "srv/tls/server.key", "srv/tls/client.pem",
    "var/run/secrets/kubernetes.io/serviceaccount/token",
])
def test_known_credential_files_are_refused(tmp_path: Path, rel: str) -> None:
    secret = "hf_" + "Tq8Wv3Lm9Kx2Np7Rz4Bc" + rel.replace("/", "")[:4]
    write_tree(tmp_path, {rel: f"[default]\naws_secret_access_key = {secret}\n{secret}\n"})
    box = Sandbox(Host.at(tmp_path), task_id="t")
    for name, args in (("read_file", {"path": "/" + rel}), ("grep", {"pattern": ".",
                       "path": "/" + rel}), ("parse_config", {"path": "/" + rel,
                                                               "format": "ini"})):
        call = anyio.run(box.call, name, args)
        assert secret not in _shown(call) and "Tq8Wv3Lm9Kx2Np7Rz4Bc" not in _shown(call)
    assert "credential file" in anyio.run(box.call, "read_file", {"path": "/" + rel}).error


def test_dotenv_files_are_fully_redacted(tmp_path: Path) -> None:
    write_tree(tmp_path, {"app/.env": "PLAIN=Vx9Kq2Lm8Np4Rs7Tz1Wb\nPORT=8000\nDEBUG=true\n"})
    call = anyio.run(Sandbox(Host.at(tmp_path), task_id="t").call, "read_file",
                     {"path": "/app/.env"})
    assert call.ok and "Vx9Kq2Lm8Np4Rs7Tz1Wb" not in _shown(call)
    assert "PORT=8000" in call.data["text"] and "DEBUG=true" in call.data["text"]


def test_custom_tool_output_is_redacted_by_the_sandbox(tmp_path: Path) -> None:
    from agentkit import ToolContext, tool

    @tool
    def leaky(ctx: ToolContext) -> dict[str, Any]:
        """Returns a secret, as a buggy user tool might."""
        return {"nested": [{"v": SECRETS[0].text}], "s": SECRETS[3].text}

    box = Sandbox(Host.at(tmp_path), task_id="t", tools={"leaky": leaky})
    call = anyio.run(box.call, "leaky", {})
    assert call.ok and not [f for f in FRAGMENTS if f in _shown(call)]


def test_redaction_of_huge_single_lines_is_fast() -> None:
    import time
    for text in ("x" * 500_000, "a_" * 250_000, "token=" * 80_000, ("k" * 999 + "\n") * 500):
        start = time.monotonic()
        redact(text)
        assert time.monotonic() - start < 2.0, text[:10]


def test_no_secret_fragment_is_in_the_benign_corpus() -> None:
    # Guards the corpus itself: a fragment there would make the FP measurement meaningless.
    joined = "\n".join(BENIGN)
    assert not [f for f in FRAGMENTS if f in joined]


def test_a_secret_among_many_clean_strings_is_still_redacted(tmp_path: Path) -> None:
    # the sandbox clears a tool's strings together in one pass: a single secret anywhere
    # (ASCII or not, deep or shallow) must still send every string through redaction
    from agentkit import ToolContext, tool

    clean = [f"GPU-{i:08d}" for i in range(40)]

    @tool
    def mixed(ctx: ToolContext) -> dict[str, Any]:
        """Clean readings with one secret hidden among them."""
        return {"gpus": [{"uuid": u, "name": "NVIDIA H100"} for u in clean],
                "deep": {"x": [("ok", SECRETS[0].text)]}, "é": f"café {SECRETS[3].text}"}

    box = Sandbox(Host.at(tmp_path), task_id="t", tools={"mixed": mixed})
    call = anyio.run(box.call, "mixed", {})
    assert call.ok and not [f for f in FRAGMENTS if f in _shown(call)]
    assert [g["uuid"] for g in call.data["gpus"]] == clean  # the clean ones untouched
    assert call.data["deep"]["x"][0][0] == "ok" and call.data["é"].startswith("café ")

"""``serving_processes``: the processes that run an inference engine, as the kernel shows them
(``/proc/<pid>``), or a snapshot's capture of them.

The process environment is the ground truth of what is in effect, whatever a unit file or a
manifest says now. It is also where secrets live, so only variables an investigation needs
are returned (by name: NCCL, CUDA, the engines' own, a few more), and any whose name says
key, token, secret or password has its value withheld; everything returned is redacted.
"""

from __future__ import annotations

import json
import os
from typing import Any

from .. import _regex as re  # re, its compiled patterns kept on disk (_regex.py)
from .._bounded import loads_json
from ._captures import SnapshotError, read_capture
from ._redact import redact
from ._redact._cli import _OPAQUE
from ._redact._keys import SECRET_KEY, SHORT_PASSWORD_FLAG, credential_like
from ._tool import ToolContext, ToolError, ToolOutput, tool

ENGINE = re.compile(r"(^|/)(vllm|trtllm-serve|sglang)$|vllm\.entrypoints|sglang\.launch_server")
_ENV_NAMES = re.compile(r"(NCCL|CUDA|NVIDIA|VLLM|SGLANG|TORCH|PYTORCH|TRTLLM|TLLM|HF|OMP)_\w+|"
                        r"HOME|USER|CUDA_VISIBLE_DEVICES|LD_PRELOAD")
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSW|PASSPHRASE|AUTH|CRED|COOKIE|SESSION|"
                          r"PRIVATE|ATTEST|SIGNING|CERT|"
                          # short words only as a whole part of the name: VLLM_PW, HF_HUB_PWD
                          r"(?:^|_)(?:PW|PWD|PASS|PIN|SALT|HMAC|LICEN[CS]E|PAT|PSK|BEARER|"
                          r"JWT|OTP|DSN)(?:_|$)", re.I)
# A flag whose value is secret (--api-key V, --ssl-keyfile-password V, --hf-token V): argv
# holds the flag and the value as two elements, and each alone looks harmless.
_SECRET_FLAG = re.compile(rf"--?(?:{SECRET_KEY}|(?:\w+[-_])*(?:key|auth|pass))", re.I)
_MAX_PROCS = 64
CAPTURE = "processes.json"


def _read(path: str, limit: int = 1 << 20) -> bytes:
    with open(path, "rb") as f:
        return f.read(limit)


# Short flags that take a password in common tools (sshpass/docker login -p, redis-cli -a,
# -P, -k): withheld when the value looks like a credential, not a port or a path.
_SHORT_FLAG = re.compile(SHORT_PASSWORD_FLAG)
# `--api-key $VLLM_API_KEY` as written in a script: a reference, not the key
_REFERENCE = re.compile(r"\$\{?[A-Za-z_]\w*\}?")
# Flags whose next element is read with the flag by the text net: -u user:password,
# -e NAME=value, -H "Cookie: …"
_PAIRED = {"-u", "--user", "-e", "--env", "-H", "--header", "--from-literal"}


def redact_argv(argv: list[str]) -> list[str]:
    """Each element redacted, and the element after a secret-naming flag withheld.

    >>> redact_argv(["sshpass", "-p", "Sp7Hh1Pp5Aa9", "ssh", "-p", "22", "h"])
    ['sshpass', '-p', '[withheld]', 'ssh', '-p', '22', 'h']
    """
    out = []
    for i, a in enumerate(argv):
        flag = argv[i - 1] if i > 0 else ""
        if flag in _PAIRED:
            out.append(redact(f"{flag} {a}")[len(flag) + 1:])
            continue
        # a value may start with a dash; the next long option (--no-auth --port) is not one
        after_flag = (_SECRET_FLAG.fullmatch(flag) is not None and not a.startswith("--")
                      and not _REFERENCE.fullmatch(a)) or (
            _SHORT_FLAG.fullmatch(flag) is not None and credential_like(a))
        out.append("[withheld]" if after_flag or _OPAQUE.fullmatch(a) else redact(a))
    return out


def engine_argv(argv: list[str]) -> bool:
    return any(ENGINE.search(a) for a in argv[:4])


def _cgroup_owner(text: str) -> dict[str, str]:
    """Who started the process, from its cgroup path: a systemd unit, a container, a pod.

    The path is systemd's hierarchy's (``0::`` on cgroup v2, ``name=systemd`` on v1; a
    controller's line may name another cgroup), and the unit is the innermost one: a user's
    service sits below ``user@UID.service`` (its manager, not the starter), a sub-cgroup of
    a delegated unit below the unit. A scope innermost (a login session, a terminal) means
    no service started it."""
    path = _systemd_path(text)
    if m := re.search(r"(?:docker|libpod)-([0-9a-f]{12,64})\.scope|/docker/([0-9a-f]{64})",
                      path):
        return {"kind": "container", "id": (m.group(1) or m.group(2))[:12]}
    if m := re.search(r"kubepods.*?pod([0-9a-f_-]{36})", path):
        return {"kind": "pod", "id": m.group(1).replace("_", "-")}
    units = [p for p in path.split("/") if p.endswith((".service", ".scope"))]
    if not units or not units[-1].endswith(".service"):
        return {}
    owner = {"kind": "unit", "id": units[-1]}
    if len(units) > 1 and re.fullmatch(r"user@\d+\.service", units[-2]):
        owner["manager"] = units[-2]  # a user unit (systemctl --user), not a system one
    return owner


def _systemd_path(text: str) -> str:
    lines = [line.split(":", 2) for line in text.splitlines() if line.count(":") >= 2]
    for wanted in ("name=systemd", ""):  # v1's named hierarchy, else the unified one
        for _, controllers, path in lines:
            if controllers == wanted:
                return path
    return lines[0][2] if len(lines) == 1 else ""


def _process(pid: int) -> dict[str, Any] | None:
    base = f"/proc/{pid}"
    try:
        argv = [a.decode("utf-8", "replace") for a in _read(f"{base}/cmdline").split(b"\0")]
    except OSError:
        return None
    argv = [a for a in argv if a] if argv and argv[-1] == "" else argv
    if not argv or not engine_argv(argv):
        return None
    info: dict[str, Any] = {"pid": pid, "argv": redact_argv(argv)}
    try:
        stat = _read(f"{base}/stat").decode()
        info["ppid"] = int(stat.rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        info["ppid"] = None
    try:
        info["cwd"] = os.readlink(f"{base}/cwd")
    except OSError:
        info["cwd"] = None
    try:
        info["started_by"] = _cgroup_owner(_read(f"{base}/cgroup").decode("utf-8", "replace"))
    except OSError:
        info["started_by"] = {}
    try:
        raw = _read(f"{base}/environ", 4 << 20).split(b"\0")
        env = {}
        for item in raw:
            name, eq, value = item.decode("utf-8", "replace").partition("=")
            if eq and _ENV_NAMES.fullmatch(name):
                env[name] = "[withheld]" if _SECRET_NAME.search(name) else redact(value)
        info["env"], info["env_readable"] = env, True
    except OSError as exc:  # another user's process: the environment is theirs
        info["env"], info["env_readable"] = {}, False
        info["env_error"] = exc.strerror or str(exc)
    return info


def list_live() -> list[dict[str, Any]]:
    found = []
    for name in sorted(os.listdir("/proc"), key=lambda n: (len(n), n)):
        if name.isdigit():
            proc = _process(int(name))
            if proc is not None:
                found.append(proc)
                if len(found) >= _MAX_PROCS:
                    break
    return found


@tool
def serving_processes(ctx: ToolContext) -> ToolOutput:
    """Processes running vLLM, SGLang or TensorRT-LLM: argv, the environment variables that
    matter (NCCL_*, CUDA_*, the engine's own; secrets withheld), cwd, parent, and what started
    each (systemd unit, container, pod)."""
    if ctx.host.is_live:
        procs, source = list_live(), "live /proc"
    else:
        manifest = ctx.host.snapshot
        if manifest is None or not manifest.processes:
            raise ToolError("the root is a snapshot without a capture of serving processes")
        try:
            procs = loads_json(read_capture(ctx.host.root, manifest.processes))
        except (SnapshotError, ValueError) as exc:
            raise ToolError(f"the snapshot's process capture cannot be read: {exc}") from None
        if not isinstance(procs, list):
            raise ToolError("the snapshot's process capture must be a JSON list")
        source = f"snapshot {manifest.captured_at}".strip()
    text = json.dumps(procs, indent=1, sort_keys=True)
    ev = ctx.evidence("command", f"serving processes ({source})", text[:400], text)
    return ToolOutput(data={"processes": procs, "source": source, "evidence_id": ev.id},
                      evidence=[ev])

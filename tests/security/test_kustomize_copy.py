"""Red team round 4, K-A: ``kubectl kustomize DIR`` read host files by itself and re-encoded them.

Each attempt of the independent red team's categories ``kustomize-transform`` and
``hardlink-masked`` that got a planted canary out is ported here (the planted files and the
one call, rewritten for pytest; the red team's harness stays outside the repository). Before
the fix every one printed its canary (raw or base64): kustomize opened the files a
kustomization names itself, past the deny-list, the content and inode checks and the
redaction a read_file gets, and ``binaryData``, ``envs:``, a Secret patched into a ConfigMap or
``replacements`` hid the secret from the output rules. Now kustomize builds from a copy in
which each file was read as read_file reads it (_kustomize.py): a refused file is absent.

Expected facts, from kustomize's documented semantics (kubectl.docs.kubernetes.io, "Kustomize"
reference): a ``configMapGenerator`` ``files:`` source that is not valid UTF-8 becomes
``binaryData`` (base64), ``envs:`` makes one key per ``KEY=value`` line, a missing source is an
error naming it, and ``../`` reaches a base beside the overlay. The leak check decodes every
run of base64 characters, so an encoded canary counts as a leak.
"""

from __future__ import annotations

import base64
import contextlib
import os
import re
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentkit import Host, Sandbox
from agentkit._sandbox import _kernel
from tests.security.test_kernel_layer import as_kernel_home

pytestmark = [
    pytest.mark.skipif(_kernel._probe(_kernel.BWRAP) is not None,
                       reason=f"the kernel layer cannot run here: {_kernel._probe(_kernel.BWRAP)}"),
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
]

CANARY = "Qk7vR2mZ9xLw4TnB8pYs"  # 20 letters and digits, as the red team's canaries
_B64RUN = re.compile(r"[A-Za-z0-9+/=\s]{24,}")


def leaked(text: str, canary: str = CANARY) -> bool:
    """The canary, or any 10 characters of it, in the text or in a base64 decoding of it."""
    texts = [text]
    for run in _B64RUN.finditer(text):
        chunk = re.sub(r"\s", "", run.group(0))
        for off in range(4):
            c = chunk[off:][: (len(chunk) - off) // 4 * 4]
            with contextlib.suppress(ValueError):
                texts.append(base64.b64decode(c).decode("latin-1"))
    return any(canary[i:i + 10] in t for t in texts for i in range(len(canary) - 9))


def pem(body: str) -> str:
    lines = [body[i:i + 64] for i in range(0, len(body), 64)]
    return ("-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(lines) +
            "\n-----END OPENSSH PRIVATE KEY-----\n")


PEM = pem("b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ" + CANARY + "AAAAMwAAAAtzc2gtZWQyNTUxOQ")


@pytest.fixture
def place(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A directory outside /tmp (which a live sandbox empties) standing for a host place an
    attacker can write to, with a home beside it whose credentials the kernel layer knows."""
    path = Path.home() / f".agentkit-kust-{uuid.uuid4().hex[:8]}"
    (path / "home").mkdir(parents=True)
    with as_kernel_home(monkeypatch, path / "home", path):
        yield path


def plant(d: Path, files: dict[str, str | bytes]) -> Path:
    for rel, data in files.items():
        p = d / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, bytes):
            p.write_bytes(data)
        else:
            p.write_text(data)
    return d


def kustomize(d: Path | str, root: Path | str = "/") -> Any:
    host = Host.at(root, sandbox="kernel")
    return anyio.run(Sandbox(host, task_id="t").call, "run_command",
                     {"argv": ["kubectl", "kustomize", str(d)]})


def shown(call: Any) -> str:
    return str(call.data) + call.error


GEN_FILES = "configMapGenerator:\n- name: b\n  files:\n  - {}\n"
REPLACE = """configMapGenerator:
- name: src
  envs: [app.env]
resources: [dst.yaml]
replacements:
- source: {{kind: ConfigMap, name: src, fieldPath: data.{key}}}
  targets:
  - select: {{kind: ConfigMap, name: dst}}
    fieldPaths: [{target}]
"""
DST = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dst\n  labels:\n    team: x\n"
       "data:\n  note: x\n")
DEPLOY = ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n"
          "    metadata:\n      annotations:\n        checksum: x\n")

# (name, kustomization and files) of each kustomize-transform attempt on a live root
ATTEMPTS: dict[str, dict[str, str | bytes]] = {
    "binaryData of a private key (an invalid UTF-8 byte appended)": {
        "kustomization.yaml": GEN_FILES.format("id_ed25519"),
        "id_ed25519": PEM.encode() + b"\xff"},
    "envs: of a plain ASCII private key (lines become keys)": {
        "kustomization.yaml": "configMapGenerator:\n- name: b\n  envs:\n  - id_ed25519\n",
        "id_ed25519": PEM},
    "binaryData of a .env with DB_PASSWORD": {
        "kustomization.yaml": GEN_FILES.format("app.env"),
        "app.env": f"DB_PASSWORD={CANARY}\nHF_TOKEN=hf_{CANARY}xyzxyz\n".encode() + b"\xfe"},
    "binaryData of an htpasswd file": {
        "kustomization.yaml": GEN_FILES.format("users"),
        "users": f"admin:$apr1$abcdefgh${CANARY}\n".encode() + b"\xff"},
    "secretGenerator, then a JSON6902 patch turns the Secret into a ConfigMap": {
        "kustomization.yaml": "secretGenerator:\n- name: s\n  files:\n  - password.txt\n"
                              "patches:\n- target: {kind: Secret, name: s}\n  patch: |-\n"
                              "    - op: replace\n      path: /kind\n      value: ConfigMap\n",
        "password.txt": CANARY},
    "replacements copy DB_PASSWORD into another ConfigMap's data.note": {
        "kustomization.yaml": REPLACE.format(key="DB_PASSWORD", target="data.note"),
        "app.env": f"DB_PASSWORD={CANARY}\n", "dst.yaml": DST},
    "replacements copy API_SECRET into metadata.labels": {
        "kustomization.yaml": REPLACE.format(key="API_SECRET", target="metadata.labels.team"),
        "app.env": f"API_SECRET={CANARY}\n", "dst.yaml": DST},
    "replacements copy a generated Secret's base64 value into a Deployment annotation": {
        "kustomization.yaml": "secretGenerator:\n- name: s\n  literals:\n  - token=placeholder\n"
                              "  files:\n  - pw=password.txt\nresources: [dst.yaml]\n"
                              "replacements:\n- source: {kind: Secret, name: s, fieldPath: "
                              "data.pw}\n  targets:\n  - select: {kind: Deployment, name: d}\n"
                              "    fieldPaths: [spec.template.metadata.annotations.checksum]\n",
        "password.txt": CANARY, "dst.yaml": DEPLOY},
    "a kustomization planted above /etc/default reads the unit's env file": {
        "kustomization.yaml": "configMapGenerator:\n- name: x\n  files:\n  - default/vllm-kimi\n",
        "default/vllm-kimi": f"HF_TOKEN=hf_{CANARY}Zz\nVLLM_API_KEY={CANARY}\n".encode()
                             + b"\x80"},
    "envs/files of a .env (its value leaves the .env rule)": {
        "kustomization.yaml": "configMapGenerator:\n- name: e\n  envs:\n  - .env\n"
                              "- name: f\n  files:\n  - .env\n",
        ".env": f"FEATURE_SALTY={CANARY}\n"},
    "files refused by name (tls.key and token)": {
        "kustomization.yaml": GEN_FILES.format("tls.key") + "  - token\n",
        "tls.key": PEM.replace("OPENSSH", "RSA").encode() + b"\xff",
        "token": f"{CANARY}\n"},
}
# Attempts that did not leak before the fix either: they must stay closed
CONTROLS: dict[str, dict[str, str | bytes]] = {
    "data of a private key (plain)": {"kustomization.yaml": GEN_FILES.format("id_ed25519"),
                                      "id_ed25519": PEM},
    "secretGenerator alone": {"kustomization.yaml": "secretGenerator:\n- name: s\n  files:\n"
                                                    "  - password.txt\n",
                              "password.txt": CANARY},
}


@pytest.mark.parametrize("name", [*ATTEMPTS, *CONTROLS])
def test_kustomize_transform_gets_no_secret_out(place: Path, name: str) -> None:
    d = plant(place / "k", {**ATTEMPTS, **CONTROLS}[name])
    assert not leaked(shown(kustomize(d))), name


@pytest.mark.parametrize("where", ["etc/kust", "root/.ssh"])
def test_snapshot_kustomization_gets_no_key_out(tmp_path: Path, where: str) -> None:
    """On a snapshot root: a key beside the kustomization, and a kustomization inside the
    snapshot's own /root/.ssh (the live masks do not cover a snapshot's copy of it)."""
    key = "id_rsa" if where == "etc/kust" else "id_ed25519"
    plant(tmp_path / where, {"kustomization.yaml": GEN_FILES.format(key),
                             key: PEM.encode() + b"\xff"})
    assert not leaked(shown(kustomize("/" + where, root=tmp_path)))


def _home_secret(place: Path, rel: str, data: str | bytes) -> Path:
    src = plant(place / "home", {rel: data}) / rel
    _kernel._existing_secrets.cache_clear()
    _kernel._inodes.cache_clear()
    return src


@pytest.mark.parametrize(("rel", "data", "source"), [
    (".ssh/id_ed25519", PEM, "envs"),
    (".pgpass", f"db.internal:5432:*:postgres:{CANARY}\n", "files"),
    (".gnupg/private-keys-v1.d/ABCD.key",
     b"(11:private-key(3:rsa(1:n257:\x00\xc1" + CANARY.encode() + b"\xff\xfe)))", "files"),
])
def test_hard_link_to_a_masked_credential_is_left_out(place: Path, rel: str,
                                                      data: str | bytes, source: str) -> None:
    src = _home_secret(place, rel, data)
    d = plant(place / "k", {"kustomization.yaml":
                            f"configMapGenerator:\n- name: x\n  {source}:\n  - data.bin\n"})
    os.link(src, d / "data.bin")
    call = kustomize(d)
    assert not leaked(shown(call))
    assert any("left-out" in n and "data.bin" in n for n in call.data.get("withheld", []))


def test_hard_link_to_etc_shadow_is_left_out(place: Path) -> None:
    d = plant(place / "k", {"kustomization.yaml": GEN_FILES.format("users.db")})
    try:
        os.link("/etc/shadow", d / "users.db")
        hashes = [ln.split(":")[1] for ln in Path("/etc/shadow").read_text().splitlines()]
    except OSError as exc:
        pytest.skip(f"cannot link or read /etc/shadow here: {exc}")
    out = shown(kustomize(d))
    assert "root:" not in out
    assert "left-out" in out and "users.db" in out
    assert not any(len(h) > 12 and h[-20:] in out for h in hashes)


# ---- what the host model needs still builds, as kubectl itself builds it (differential)

BENIGN: dict[str, str] = {
    "base/kustomization.yaml": "resources: [deploy.yaml, svc.yaml]\n"
                               "configMapGenerator:\n- name: nccl\n  envs: [nccl.env]\n"
                               "  files: [conf/engine.yaml, args=conf/args.txt]\n",
    "base/deploy.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: vllm\n"
                        "spec:\n  replicas: 1\n  template:\n    spec:\n      containers:\n"
                        "      - name: vllm\n        image: vllm/vllm-openai:v0.6.3\n"
                        "        args: [--tensor-parallel-size, '8']\n",
    "base/svc.yaml": "apiVersion: v1\nkind: Service\nmetadata:\n  name: vllm\nspec:\n"
                     "  ports:\n  - port: 8000\n",
    "base/nccl.env": "# tuned for H100\nNCCL_PROTO=LL128\nNCCL_IB_HCA=mlx5\n",
    "base/conf/engine.yaml": "max_model_len: 32768\ngpu_memory_utilization: 0.92\n",
    "base/conf/args.txt": "--enable-prefix-caching\n",
    "comp/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\n"
                               "kind: Component\nlabels:\n- pairs: {tier: gpu}\n",
    "prod/kustomization.yaml": "namePrefix: prod-\nresources: [../base]\n"
                               "components: [../comp]\npatches:\n- path: replicas.yaml\n"
                               "patchesStrategicMerge: [image.yaml]\n"
                               "replacements:\n- path: repl.yaml\n",
    "prod/replicas.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: vllm\n"
                          "spec:\n  replicas: 4\n",
    "prod/image.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: vllm\n"
                       "spec:\n  template:\n    metadata:\n      annotations: {pinned: 'yes'}\n",
    "prod/repl.yaml": "source: {kind: Service, name: vllm, fieldPath: metadata.name}\n"
                      "targets:\n- select: {kind: Deployment}\n"
                      "  fieldPaths: [metadata.annotations.service]\n"
                      "  options: {create: true}\n",
}


@pytest.mark.parametrize("target", ["prod", "base"])
def test_a_benign_tree_builds_as_kubectl_builds_it(place: Path, target: str) -> None:
    """The copy is the tree as kustomize would read it: the output is kubectl's own, on the
    host's files, byte for byte (overlay through ``../``, component, generators' files and
    envs with a ``key=path`` source, patches, a strategic merge file, replacements file)."""
    plant(place / "t", BENIGN)
    d = place / "t" / target
    real = subprocess.run(["kubectl", "kustomize", str(d)], capture_output=True, text=True,
                          check=True).stdout
    call = kustomize(d)
    assert call.ok, call.error
    assert call.data["stdout"] == real
    assert not [n for n in call.data["withheld"] if n.startswith("left-out")]


def test_a_symlink_in_the_tree_is_copied_as_a_regular_file(place: Path, tmp_path: Path) -> None:
    """The copy holds regular files and directories only; a link's target is read through the
    resolver (links followed inside the root) and its text written at the link's name."""
    from agentkit._sandbox._kustomize import copy_tree
    from agentkit._sandbox._paths import Root

    plant(place / "t", BENIGN)
    (place / "t/base/svc.yaml").rename(place / "t/svc-real.yaml")
    (place / "t/base/svc.yaml").symlink_to(place / "t/svc-real.yaml")
    copy_dir, _ = copy_tree(Root("/"), str(place / "t/prod"), str(tmp_path))
    assert copy_dir.startswith(str(tmp_path))
    kinds = [os.lstat(os.path.join(top, n)).st_mode for top, dirs, files in os.walk(tmp_path)
             for n in dirs + files]
    assert kinds and not [m for m in kinds if (m & 0o170000) not in (0o100000, 0o040000)]
    assert "kind: Service" in (tmp_path / "root" / str(place / "t/base/svc.yaml")[1:]).read_text()


@pytest.mark.parametrize(("kustomization", "why"), [
    ("resources:\n- github.com/kubernetes-sigs/kustomize//examples/helloWorld\n", "remote"),
    ("resources:\n- git::file:///srv/repo//base\n", "remote"),
    ("resources:\n- https://example.com/cm.yaml\n", "remote"),
    ("resources:\n- /etc/kubernetes/manifests\n", "absolute"),
    ("configMapGenerator:\n- name: x\n  files: [/etc/passwd]\n", "absolute"),
    ("generators:\n- gen.yaml\n", "plugins"),
    ("transformers:\n- t.yaml\n", "plugins"),
    ("helmCharts:\n- name: x\n  repo: file:///nonexistent\n", "Helm"),
])
def test_a_reference_out_of_the_copy_is_refused(place: Path, kustomization: str,
                                                why: str) -> None:
    d = plant(place / "k", {"kustomization.yaml": kustomization, "gen.yaml": "kind: X\n",
                            "t.yaml": "kind: X\n"})
    call = kustomize(d)
    assert not call.ok and "refused" in call.error and why in call.error


def test_a_dotdot_above_the_root_is_refused(tmp_path: Path) -> None:
    plant(tmp_path / "k", {"kustomization.yaml": "resources:\n- ../../../x.yaml\n"})
    call = kustomize("/k", root=tmp_path)
    assert not call.ok and "refused" in call.error


def test_a_secret_generator_keeps_its_keys_not_its_values(place: Path) -> None:
    """A Secret's data may be patched into another kind, so what a secretGenerator reads (its
    files, envs and literals) reaches kustomize with each value withheld, key kept."""
    d = plant(place / "k", {"kustomization.yaml": "secretGenerator:\n- name: s\n"
                            f"  envs: [db.env]\n  literals: [note={CANARY}]\n"
                            "  options: {disableNameSuffixHash: true}\n",
                            "db.env": f"DB_USER={CANARY}\n"})
    call = kustomize(d)
    assert call.ok, call.error
    out = call.data["stdout"]
    assert "DB_USER:" in out and "note:" in out and not leaked(out)


def test_a_build_naming_too_many_files_is_refused(place: Path) -> None:
    """Refused files count too: each costs a look-up before kustomize runs."""
    names = "".join(f"  - missing-{i}.txt\n" for i in range(600))
    d = plant(place / "k", {"kustomization.yaml": f"configMapGenerator:\n- name: x\n  files:\n"
                                                  f"{names}"})
    call = kustomize(d)
    assert not call.ok and "more than 500 files" in call.error


def test_an_empty_kustomization_fails_as_kubectl_fails(place: Path) -> None:
    d = plant(place / "k", {"kustomization.yaml": ""})
    real = subprocess.run(["kubectl", "kustomize", str(d)], capture_output=True, text=True)
    call = kustomize(d)
    assert call.ok, call.error
    assert call.data["exit_code"] == real.returncode and call.data["stdout"] == real.stdout
    assert "kustomization.yaml is empty" in real.stderr + call.data["stderr"]


_KEYS = ["NCCL_PROTO", "NCCL_IB_HCA", "VLLM_PORT", "MODEL_NAME", "TP_SIZE", "CUDA_VISIBLE_DEVICES"]
_VALUES = ["LL128", "mlx5_0", "8000", "kimi-k2", "8", "0,1,2,3", "simple", "ring"]


@settings(max_examples=8, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(env=st.dictionaries(st.sampled_from(_KEYS), st.sampled_from(_VALUES), min_size=1),
       forms=st.sets(st.sampled_from(["envs", "files", "keyed", "literals"]), min_size=1),
       prefix=st.sampled_from(["", "prod-", "gpu-"]), hash_off=st.booleans())
def test_generated_benign_trees_build_as_kubectl_builds_them(
        place: Path, env: dict[str, str], forms: set[str], prefix: str, hash_off: bool) -> None:
    """Differential, on generated benign generators: the copy changes nothing kubectl builds."""
    text = "".join(f"{k}={v}\n" for k, v in env.items())
    gen = "configMapGenerator:\n- name: cfg\n"
    gen += "  envs: [app.env]\n" if "envs" in forms else ""
    gen += "  files: [conf/app.txt]\n" if "files" in forms else ""
    gen += "  files: [renamed=conf/app.txt]\n" if "keyed" in forms and "files" not in forms \
        else ""
    gen += f"  literals: [{', '.join(f'{k}={v}' for k, v in env.items())}]\n" \
        if "literals" in forms else ""
    gen += "  options: {disableNameSuffixHash: true}\n" if hash_off else ""
    d = plant(place / f"g{uuid.uuid4().hex[:6]}", {
        "kustomization.yaml": (f"namePrefix: {prefix}\n" if prefix else "") + gen,
        "app.env": text, "conf/app.txt": text})
    real = subprocess.run(["kubectl", "kustomize", str(d)], capture_output=True, text=True)
    call = kustomize(d)
    assert call.ok, call.error
    assert (call.data["exit_code"], call.data["stdout"]) == (real.returncode, real.stdout)


def test_a_keyed_secret_source_builds_with_its_key(place: Path) -> None:
    """``files: [pw=password.txt]`` reads as ``pw=<password>`` to the redactor; it is a data
    key and a file name, so the build names the key as kubectl does, the value withheld."""
    d = plant(place / "k", {"kustomization.yaml": "secretGenerator:\n- name: s\n  files:\n"
                            "  - pw=password.txt\n  options: {disableNameSuffixHash: true}\n",
                            "password.txt": CANARY})
    real = subprocess.run(["kubectl", "kustomize", str(d)], capture_output=True, text=True,
                          check=True).stdout
    call = kustomize(d)
    assert call.ok and call.data["exit_code"] == 0, call.data
    out = call.data["stdout"]
    assert "  pw: " in real and "  pw: " in out and not leaked(out)

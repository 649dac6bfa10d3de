"""Arena, fake home, canaries, secrets, child processes and listener for the red-team harness.

Paths are set by :func:`init`: the arena under a fresh ``tempfile.mkdtemp()`` (the kernel layer
empties /tmp, so files there are reachable only as bound operands), the fake home and the
"outside" directory under a fresh, uniquely named directory in ``outside_tmp()`` (outside /tmp on
purpose). :func:`cleanup` removes both.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import zlib
from pathlib import Path

BASE = Path("/nonexistent-redteam-arena")
FH = Path("/nonexistent-redteam-home")
HOME = FH / "home"  # the fake home the kernel masks (registered with _kernel._homes)
HOME2 = FH / "home2"  # a home the kernel does not know (an LDAP/NSS user, a container's home)
OUT = FH / "outside"  # plain files outside the allow list
B = FH / "srv"  # an allowed dir outside /tmp
A = BASE / "allowed"  # an allowed dir inside /tmp
M = BASE / "markers"
SNAP = BASE / "snap"
VOL = BASE / "volatile"  # race targets (excluded from change check)
GITOUT = OUT / "otherrepo"


def init() -> None:
    """Choose fresh locations for this run (call before build())."""
    global BASE, FH, HOME, HOME2, OUT, B, A, M, SNAP, VOL, GITOUT
    BASE = Path(tempfile.mkdtemp(prefix="agentkit-redteam-"))
    FH = Path(tempfile.mkdtemp(prefix="agentkit-redteam-", dir=outside_tmp()))
    HOME, HOME2, OUT, B = FH / "home", FH / "home2", FH / "outside", FH / "srv"
    A, M, SNAP, VOL = BASE / "allowed", BASE / "markers", BASE / "snap", BASE / "volatile"
    GITOUT = OUT / "otherrepo"


def outside_tmp() -> str:
    """Where the trees that must lie outside /tmp go (the kernel layer empties /tmp): never the
    real home. ``AGENTKIT_REDTEAM_DIR``, else the repository's ignored ``build/`` directory."""
    where = os.environ.get("AGENTKIT_REDTEAM_DIR") or str(
        Path(__file__).resolve().parents[3] / "build" / "redteam"
    )
    os.makedirs(where, exist_ok=True)
    return where


def cleanup() -> None:
    """Remove the arena and the fake home (also after a failure)."""
    for d in (BASE, FH):
        if d.exists() and ("agentkit-redteam-" in d.name):
            subprocess.run(["chmod", "-R", "u+rwX", str(d)], check=False, capture_output=True)
            shutil.rmtree(d, ignore_errors=True)


CANARY_OUT = "RTCANARYOUTSIDE9f3a1c7e5b"
CANARY_OUT_TMP = "RTCANARYOUTTMP2b8d4f6a1c"
CANARY_EVIL = "RTCANARYEVILSIBLING77c1d0"
CANARY_AGENT_ENV = "RTAGENTENVSECRET4e5f6a7b8c"
CANARY_CHILD_ENV = "RTCHILDENVSECRET1a2b3c4d5e"
CANARY_TCP = "RTTCPLISTENERCANARY6d7e8f9"
CANARY_GITOUT = "RTGITOUTSIDEBLOB3c5e7a9b1d"
HOME_CANARIES: dict[str, str] = {}

# secrets planted INSIDE allowed files: no fragment >= 12 chars may appear
SECRETS: dict[str, str] = {}


def _sec(name: str, value: str) -> str:
    SECRETS[name] = value
    return value


def _body(tag: str, i: int) -> str:
    """A base64-looking line unique to (tag, i): no 12-character fragment is shared between
    two planted secrets, so a leak is labelled with the secret that leaked (the first
    harness's PEM bodies shared a prefix and every PEM leak was reported under every PEM)."""
    import base64
    import hashlib

    raw = hashlib.sha512(f"{tag}/{i}".encode()).digest()
    return base64.b64encode(raw).decode().replace("+", "Q").replace("/", "z")[:60]


def _pem(tag: str, kind: str = "RSA PRIVATE KEY") -> tuple[str, str]:
    body = [_body(tag, i) for i in range(3)]
    for i, b in enumerate(body):
        _sec(f"pem-{tag}-{i}", b)
    return f"-----BEGIN {kind}-----\n" + "\n".join(body) + f"\n-----END {kind}-----\n", tag


def secret_files() -> dict[str, str]:
    """name -> content of files with secrets, planted in {A}/sec and {B}/sec."""
    f: dict[str, str] = {}
    f["vllm.service"] = (
        "[Unit]\nDescription=vLLM\n[Service]\n"
        f'Environment="HF_TOKEN={_sec("unit-hf", "hf_Qm7Rt2Yx9Wv4Lp8Kz3Nb6Hd1Fs5Gj0Ac")}"\n'
        f"Environment=VLLM_API_KEY={_sec('unit-apikey', 'Zp4Xk8Wm2Qr6Tv9Ny3Bh7Lc1Jd5Fg0S')}\n"
        "ExecStart=/usr/bin/vllm serve m --api-key "
        f"{_sec('unit-flag', 'Kf3Hs7Lq1Wx5Pz9Mv2Rb6Tn0Yc4Ud8')} --port 8000\n"
    )
    f["cont.service"] = (
        "[Service]\nExecStart=/usr/bin/python3 -m vllm.entrypoints.openai.api_server \\\n"
        "    --model m \\\n    --api-key \\\n"
        f"    {_sec('unit-cont', 'Ry6Tb2Nx8Qm4Wk0Pv7Lz3Hc9Jd5Fs1G')} \\\n    --port 8000\n"
    )
    f["app.env"] = (
        f"DB_HOST=db.internal\nSTRIPE={_sec('env-stripe', 'Zk29fjQpLx82mVnB4tW7Ua5c')}\n"
        f"OPENAI_API_KEY={_sec('env-openai', 'sk-proj-Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr9St')}\n"
        f"export SERVICE_TOKEN={_sec('env-tok', 'Tq5Wr8Ye1Uo4Ip7As0Df3Gh6Jk')}\n"
    )
    f[".env"] = f"WANDB={_sec('dotenv-wandb', 'Wb4Nd8Xk2Lm6Qp0Rt3Yv7Zs1Hc5')}\nPORT=8000\n"
    f["default-vllm"] = (
        f"HF_TOKEN={_sec('default-hf', 'hf_Lp3Ks9Jd7Hf5Gg1Aa2Ss4Dd6Ff8')}\n"
        f"API_KEY_1={_sec('default-suffix', 'Xy7Uv3Wt9Rs5Qp1On8Ml4Kj2Ih')}\n"
        f"MYSQL_PWD={_sec('default-pwd', 'Mq8Sl2Pw6Dx4Zc9Vb1Nm7Ty3Gh')}\n"
        f"SECRET_KEY_BASE={_sec('default-base', 'Sk5Eb8Ya3Se7Rt1Yu4Io9Pl2Kj')}\n"
    )
    pem, _ = _pem("CFG1")
    f["server.yaml"] = "server:\n  port: 443\n  tls_key: |\n" + "".join(
        "    " + line + "\n" for line in pem.splitlines()
    )
    pem2, _ = _pem("JSN2")
    f["sa.json"] = (
        json.dumps({"type": "service_account", "private_key": pem2, "client_email": "x@y.iam"})
        + "\n"
    )
    pem3, _ = _pem("PGP3", "PGP PRIVATE KEY BLOCK")
    f["backup.asc"] = pem3
    pem4, _ = _pem("OSH4", "OPENSSH PRIVATE KEY")
    f["deploy_key"] = pem4
    f["aws.ini"] = (
        "[default]\naws_access_key_id = AKIAQWERTYUIOPASDFGH\n"
        f"aws_secret_access_key = {_sec('aws-secret', 'wJalrXUtnFMI7K7MDENGbPxRfiCYq3k9Lm2Zx8')}\n"
        f"aws_session_token = {_sec('aws-session', 'FwoGZXIvYXdzEJr8Qk3Lm9Np2Rt7Vx4Yz1')}\n"
    )
    f["secret.yaml"] = (
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ntype: Opaque\ndata:\n"
        f"  db-url: {_sec('k8s-data', 'cG9zdGdyZXM6Ly9hZG1pbkBkYjo1NDMyL3Byb2Q=')}\n"
        f"stringData:\n  api: {_sec('k8s-string', 'Kx8Ld3Mw7Nq1Pr5Ts9Uv2Wy6Zb')}\n"
    )
    f["secret-quoted.yaml"] = (
        'apiVersion: v1\nkind: "Secret"\nmetadata:\n  name: db\ndata:\n'
        f"  cert: {_sec('k8s-quoted', 'TUlJQ2NlcnRpZmljYXRlYm9keXNlY3JldA')}\n"
    )
    f["secret-block.yaml"] = (
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: tls\nstringData:\n  conf: |\n"
        f"    upstream_auth {_sec('k8s-block', 'Bk7Lc2Md9Ne4Of1Pg6Qh3Ri8Sj')}\n"
    )
    f["secret-list.yaml"] = (
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Secret\n"
        f"  data:\n    key: {_sec('k8s-list', 'TGlzdFNlY3JldFZhbHVlMTIzNDU2Nzg')}\n"
    )
    f["secret.json"] = (
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "data": {"tls.crt": _sec("k8s-json", "SnNvblNlY3JldENlcnRWYWx1ZTk4NzY1")},
            }
        )
        + "\n"
    )
    f["quote.json"] = '{"password": "ab\\"' + _sec("json-quote", "cdEFghIJklMNopQRstUV12") + '"}\n'
    f["comma.yaml"] = f"password: ab,{_sec('yaml-comma', 'cdEFghIJklMNopQRst34')}\n"
    f["nextline.yaml"] = f"api_key: >\n  {_sec('yaml-folded', 'Fo7Ld3Ed9Ya1Ml5Va3Lu8E')}\n"
    f["docker.json"] = (
        json.dumps(
            {
                "auths": {
                    "registry.example": {
                        "auth": _sec("docker-auth", "dXNlcjpSZWdpc3RyeVBhc3N3b3JkOTg3")
                    }
                }
            }
        )
        + "\n"
    )
    f["pgpass.bak"] = f"db.internal:5432:prod:admin:{_sec('pgpass', 'Pg4Ss8Ww2Oo6Rr0Dd3')}\n"
    f["vault-token.txt"] = _sec("vault", "hvs.CAESIVt3Xk9Lm2Qp7Rz4Wn8Yb") + "\n"
    f["netrc.txt"] = (
        f"machine api.example.com\n  login bob\n  password {_sec('netrc', 'Nr5Ct8Pw2Lq6Zx9Vb')}\n"
    )
    f["bearer.conf"] = (
        f"headers:\n  Authorization: Bearer {_sec('bearer', 'Br3Ea7Re1Rt5Ok9En2Xx4Yy')}\n"
    )
    f["dburl.conf"] = f"url = postgres://admin:{_sec('dburl', 'Ur8Lp4Ss1Ww7Dd3Qq')}@db:5432/x\n"
    f["dash.service"] = (
        f"[Service]\nExecStart=/usr/bin/srv --api-key -{_sec('dash-flag', 'Da5Sh9Fl2Ag6Va1Lu')}\n"
    )
    return f


def home_files() -> dict[str, str]:
    """fake home credential files (relative path -> content with a unique canary)."""

    def c(tag: str) -> str:
        flat = tag.upper().replace("/", "").replace(".", "").replace("-", "")
        v = f"RTHOME{flat}{zlib.crc32(tag.encode()) % 10**8:08d}"
        HOME_CANARIES[tag] = v
        return v

    return {
        ".ssh/id_rsa": f"-----BEGIN OPENSSH PRIVATE KEY-----\n{c('ssh')}\n"
        "-----END OPENSSH PRIVATE KEY-----\n",
        ".ssh/config": f"Host x\n  IdentityFile ~/.ssh/{c('sshcfg')}\n",
        ".aws/credentials": f"[default]\naws_secret_access_key = {c('aws')}\n",
        ".netrc": f"machine h login u password {c('netrc')}\n",
        ".pgpass": f"h:5432:db:u:{c('pgpass')}\n",
        ".docker/config.json": json.dumps({"auths": {"r": {"auth": c("docker")}}}),
        ".kube/config": f"users:\n- name: u\n  user:\n    token: {c('kube')}\n",
        ".vault-token": c("vault") + "\n",
        ".git-credentials": f"https://u:{c('gitcred')}@github.com\n",
        ".config/gh/hosts.yml": f"github.com:\n    oauth_token: {c('gh')}\n",
        ".npmrc": f"//registry.npmjs.org/:_authToken={c('npm')}\n",
        ".pypirc": f"[pypi]\nusername = __token__\npassword = {c('pypi')}\n",
        ".bash_history": f"vault login {c('bashhist')}\nls\n",
        ".cache/huggingface/token": c("hftoken") + "\n",
        ".gnupg/private-keys-v1.d/AB.key": f"(private-key (rsa (n #00{c('gnupg')}#)))\n",
        ".config/rclone/rclone.conf": f"[s3]\ntype = s3\nsecret_access_key = {c('rclone')}\n",
        ".password-store/email.gpg": c("passstore") + "\n",
        ".config/gcloud/credentials.db": c("gcloud") + "\n",
        ".azure/accessTokens.json": c("azure") + "\n",
        ".terraform.d/credentials.tfrc.json": json.dumps(
            {"credentials": {"app.terraform.io": {"token": c("tf")}}}
        ),
        ".local/share/keyrings/login.keyring": c("keyring") + "\n",
        ".config/containers/auth.json": json.dumps({"auths": {"q": {"auth": c("podauth")}}}),
        ".mysql_history": f"SET PASSWORD = '{c('mysqlhist')}';\n",
        ".python_history": f"openai.api_key='{c('pyhist')}'\n",
    }


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "HOME": "/"},
    ).stdout.strip()


def build() -> None:
    for d in (A, M, SNAP, VOL, OUT, B, HOME, BASE / "outside"):
        d.mkdir(parents=True)
    (OUT / "canary.txt").write_text(CANARY_OUT + "\n")
    (OUT / "sub").mkdir()
    (OUT / "sub" / "c2.txt").write_text(CANARY_OUT + "\n")
    (BASE / "outside" / "canary.txt").write_text(CANARY_OUT_TMP + "\n")
    evil = Path(f"{A}-evil")
    evil.mkdir()
    (evil / "canary.txt").write_text(CANARY_EVIL + "\n")
    Path(f"{B}-evil").mkdir()
    (Path(f"{B}-evil") / "canary.txt").write_text(CANARY_EVIL + "\n")
    for rel, text in home_files().items():
        p = HOME / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    for base in (A, B):
        (base / "a.txt").write_text("alpha\nbeta\n")
        sec = base / "sec"
        sec.mkdir()
        for name, text in secret_files().items():
            (sec / name).write_text(text)
        (base / "link").symlink_to(OUT / "canary.txt")
        (base / "linktmp").symlink_to(BASE / "outside" / "canary.txt")
        (base / "dirlink").symlink_to(OUT)
        (base / "homelink").symlink_to(HOME)
        (base / "rel").symlink_to(os.path.relpath(OUT / "canary.txt", base))
        (base / "evil-rel").symlink_to(f"../{base.name}-evil/canary.txt")
        (base / "loop").symlink_to("loop")
        (base / "chain1").symlink_to("chain2")
        (base / "chain2").symlink_to(str(OUT / "canary.txt"))
        (base / "proclink").symlink_to("/proc/self/environ")
        (base / "devlink").symlink_to("/dev/zero")
        (base / "rootlink").symlink_to("/")
        os.mkfifo(base / "fifo")
        (base / "sub").mkdir()
        (base / "sub" / "x.txt").write_text("x\n")
        # credential content under innocent names: links, hardlinks, a bind-like dir link
        creds = base / "creds"
        creds.mkdir()
        for rel in home_files():
            flat = rel.replace("/", "_").lstrip(".")
            (creds / f"sym_{flat}").symlink_to(HOME / rel)
            if base == B:  # same filesystem as the home
                os.link(HOME / rel, creds / f"hard_{flat}")
        (creds / "awsdir").symlink_to(HOME / ".aws")
        (creds / "sshdir").symlink_to(HOME / ".ssh")
    # resource fixtures (in A only)
    (A / "big9m.txt").write_bytes((b"line of text\n") * (9 << 20 // 13 + 1))
    with open(A / "sparse.bin", "wb") as fh:
        fh.truncate(64 << 30)
    with open(A / "sparse.txt", "wb") as fh:
        fh.truncate(3 << 30)
        fh.seek((3 << 30) - 10)
        fh.write(b"tail\n")
    deep = A / "deep"
    cur = deep
    for _ in range(200):
        cur = cur / "d"
    cur.mkdir(parents=True)
    (cur / "leaf.txt").write_text("leaf\n")
    wide = A / "wide"
    wide.mkdir()
    for i in range(1500):
        (wide / f"f{i}.txt").write_text(f"line {i}\n")
    (A / "longline.txt").write_text("a" * 200000 + "\n")
    (A / "manylines.txt").write_text("x\n" * 2_000_000)
    # a big k8s Secret: the `kind: Secret` header is more than 2 MiB before the last value
    bulk = "".join(f"  k{i}: {'QUJD' * 10}\n" for i in range(60000))
    (A / "sec" / "big-secret.yaml").write_text(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: big\ndata:\n"
        + bulk
        + f"  last: {_sec('k8s-tail', 'TGFzdFZhbHVlQWZ0ZXIyTWlCd2luZG93')}\n"
    )
    # big PEM window edge: BEGIN inside the head window, body continuing past 2 MiB
    (A / "sec" / "big-head.pem.txt").write_text(
        "x" * ((2 << 20) - 40)
        + "\n-----BEGIN RSA PRIVATE KEY-----\n"
        + _sec("pem-window", "Wd9Xw2Yv7Zu4At1Bs8Cr5Dq3Ep6F")
        + "\n-----END RSA PRIVATE KEY-----\n"
    )
    # terminal / markup payloads
    (A / "ansi.txt").write_text(
        "normal \x1b]52;c;SGVsbG8=\x07 \x1b[2J\x1b[31mRED\x1b[0m \x1b]8;;http://evil/\x1b\\click\x1b]8;;\x1b\\\n"
    )
    (A / "markup.txt").write_text("[link=file:///etc/passwd]x[/link] [bold red]RICHMARKUP[/] [/]\n")
    (A / "bidi.txt").write_text("safe \u202e txt.exe \u2066hidden\u2069\n")
    # unicode file names
    (A / "caf\u00e9.txt").write_text("nfc\n")
    (A / "cafe\u0301.txt").write_text("nfd\n")
    # config bombs
    cfg = A / "cfg"
    cfg.mkdir()
    lol = "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [" + ",".join([f"*{chr(97 + i)}"] * 9) + "]\n"
        for i in range(9)
    )
    (cfg / "lol.yaml").write_text(lol)
    (cfg / "alias99.yaml").write_text(
        "a: &a [" + ",".join(["x"] * 2000) + "]\n" + "".join(f"k{i}: *a\n" for i in range(99))
    )
    (cfg / "recursive.yaml").write_text("a: &a [*a]\n")
    (cfg / "recmap.yaml").write_text("a: &a {b: *a}\n")
    (cfg / "merge.yaml").write_text(
        "a: &a {x: 1}\n"
        + "".join(
            f"m{i}: &m{i} {{<<: [*{'a' if i == 0 else f'm{i - 1}'}, "
            f"*{'a' if i == 0 else f'm{i - 1}'}]}}\n"
            for i in range(60)
        )
    )
    (cfg / "deep.yaml").write_text("[" * 5000 + "]" * 5000 + "\n")
    (cfg / "deepmap.yaml").write_text(
        "".join("  " * i + f"k{i}:\n" for i in range(3000)) + "  " * 3000 + "v\n"
    )
    (cfg / "deep.json").write_text("[" * 100000 + "]" * 100000)
    (cfg / "deepobj.json").write_text('{"a":' * 50000 + "1" + "}" * 50000)
    (cfg / "bigint.json").write_text('{"n": ' + "9" * 200000 + "}")
    (cfg / "bigint.yaml").write_text("n: " + "9" * 200000 + "\n")
    (cfg / "bigint.toml").write_text("n = " + "9" * 200000 + "\n")
    (cfg / "hexint.yaml").write_text("n: 0x" + "f" * 100000 + "\n")
    (cfg / "sexagesimal.yaml").write_text("n: " + ":".join(["59"] * 20000) + "\n")
    (cfg / "float.json").write_text('{"n": 1e999999, "m": NaN, "o": -Infinity}')
    (cfg / "deep.toml").write_text("a = " + "[" * 5000 + "]" * 5000 + "\n")
    (cfg / "deeptbl.toml").write_text("a = " + "{b = " * 3000 + "1" + "}" * 3000 + "\n")
    (cfg / "manykeys.toml").write_text("".join(f"k{i} = {i}\n" for i in range(100000)))
    (cfg / "python.yaml").write_text(
        "a: !!python/object/apply:os.system ['touch " + str(M / "yamlpy") + "']\n"
    )
    (cfg / "pyname.yaml").write_text("a: !!python/name:os.system\n")
    (cfg / "binary.yaml").write_text("a: !!binary " + "QUJD" * 100 + "\n")
    (cfg / "set.yaml").write_text("a: !!set {" + ",".join(f"k{i}" for i in range(100000)) + "}\n")
    (cfg / "timestamp.yaml").write_text("a: 99999-12-31\nb: 2001-13-45T99:99:99\n")
    (cfg / "dup.yaml").write_text("a: 1\na: 2\n" * 1000)
    (cfg / "ini.ini").write_text(
        "[s]\n" + "".join(f"a{i} = %(a{i + 1})s%(a{i + 1})s\n" for i in range(40))
    )
    (cfg / "manysect.ini").write_text("".join(f"[s{i}]\nk=v\n" for i in range(60000)))
    (cfg / "dupsect.ini").write_text("[s]\nk=1\n[s]\nk=2\n")
    (cfg / "nosect.ini").write_text("k=1\n")
    (cfg / "cont.service").write_text("[Service]\nEnvironment=" + "A=1 \\\n" * 20000 + "\n")
    (cfg / "big.env").write_text("A=" + "x" * 400000 + "\n")
    (cfg / "bom.json").write_bytes(b'\xef\xbb\xbf{"a": 1}')
    (cfg / "utf16.json").write_bytes('{"a": 1}'.encode("utf-16"))
    (cfg / "tag.yaml").write_text("a: !custom x\n")
    (cfg / "anchor-key.yaml").write_text("? &k [a, b]\n: 1\n? *k\n: 2\n")
    (cfg / "complex-key.yaml").write_text("? {a: 1}\n: x\n? [1, 2]\n: y\n")
    (cfg / "nul.json").write_bytes(b'{"a": "\\u0000"}')
    (cfg / "surrogate.json").write_text('{"a": "\\ud800"}')
    (cfg / "secret-in-config.yaml").write_text("db:\n  password: " + SECRETS["aws-secret"] + "\n")
    (cfg / "huge-line.yaml").write_text("a: " + "b" * 500000 + "\n")
    _build_git()
    _build_snapshot()
    build_new()


def _build_git() -> None:
    GITOUT.mkdir()
    _git(GITOUT, "init", "-q", ".")
    (GITOUT / "s.txt").write_text(CANARY_GITOUT + "\n")
    _git(GITOUT, "add", "-A")
    _git(GITOUT, "commit", "-q", "-m", "outside")
    blob = _git(GITOUT, "rev-parse", "HEAD:s.txt")
    (FH / "blobsha").write_text(blob)
    for base in (A, B):
        g = base / "repo"
        g.mkdir()
        _git(g, "init", "-q", ".")
        for name in (".env", "secret.yaml", "server.yaml", "deploy_key", "vllm.service"):
            (g / name).write_text(secret_files()[name])
        (g / "a.txt").write_text("one\n")
        _git(g, "add", "-A")
        _git(g, "commit", "-q", "-m", "init")
        _git(g, "tag", "v1")
        (g / "a.txt").write_text("two\n")  # dirty worktree
        # hostile: links below the top level of .git
        h = base / "hrepo"
        h.mkdir()
        _git(h, "init", "-q", ".")
        (h / "a.txt").write_text("x\n")
        _git(h, "add", "-A")
        _git(h, "commit", "-q", "-m", "x")
        (h / ".git" / "info").mkdir(exist_ok=True)
        (h / ".git" / "info" / "grafts").symlink_to(OUT / "canary.txt")
        d = blob[:2]
        (h / ".git" / "objects" / d).symlink_to(GITOUT / ".git" / "objects" / d)
        (h / ".git" / "refs" / "heads" / "evil").symlink_to(OUT / "canary.txt")
        (h / ".git" / "logs").mkdir(exist_ok=True)
        # config.worktree smuggling and parser confusion
        for i, cfg in enumerate(
            [
                '\ufeff[diff "x"]\n\ttextconv = touch {M}\n',
                '[core]\n\trepositoryformatversion = 0\n[remote "o"]\n\turl = a\\\n'
                '[diff "x"]\n\ttextconv = touch {M}\n',
                '[remote "o"] url = a\n[diff "x"]\ntextconv = touch {M}\n',
                "[core]\n\tbare = false\r[core]\r\tfsmonitor = touch {M}\n",
                '[remote "o"]\n\turl = a\n\x0b[diff "x"]\n\ttextconv = touch {M}\n',
                "[include]\n\tpath = {OUTC}\n",
                "[extensions]\n\tworktreeConfig = true\n",
            ]
        ):
            r = base / f"crepo{i}"
            r.mkdir()
            _git(r, "init", "-q", ".")
            (r / "a.txt").write_text("1\n")
            (r / ".gitattributes").write_text("* diff=x filter=x\n")
            _git(r, "add", "-A")
            _git(r, "commit", "-q", "-m", "1")
            (r / "a.txt").write_text("2\n")
            with open(r / ".git" / "config", "a", encoding="utf-8") as fh:
                fh.write(
                    cfg.replace("{M}", str(M / f"crepo{i}")).replace(
                        "{OUTC}", str(OUT / "canary.txt")
                    )
                )
            if i == 6:
                (r / ".git" / "config.worktree").write_text(
                    f'[diff "x"]\n\ttextconv = touch {M / "wt"}\n'
                )


def _build_snapshot() -> None:
    (SNAP / "etc").mkdir()
    (SNAP / "etc" / "ok.txt").write_text("ok\n")
    (SNAP / "etc" / "abs").symlink_to(OUT / "canary.txt")
    (SNAP / "etc" / "up").symlink_to("../" * 12 + str(OUT / "canary.txt").lstrip("/"))
    (SNAP / "etc" / "dirup").symlink_to("../..")
    (SNAP / "etc" / "proc").symlink_to("/proc/self/environ")
    (SNAP / "etc" / "homelink").symlink_to(HOME)
    (SNAP / "etc" / "fifo").unlink(missing_ok=True)
    os.mkfifo(SNAP / "etc" / "fifo")
    os.link(HOME / ".vault-token", SNAP / "etc" / "hard-vault")
    (SNAP / "etc" / "sec.env").write_text(secret_files()["app.env"])
    (SNAP / "etc" / "secret.yaml").write_text(secret_files()["secret.yaml"])
    (SNAP / "etc" / "race.txt").write_text("clean\n")
    (SNAP / ".agentkit").mkdir()
    (SNAP / ".agentkit" / "leak.txt").symlink_to(OUT / "canary.txt")
    (SNAP / ".agentkit" / "snapshot.json").write_text(
        json.dumps(
            {
                "format": "agentkit-snapshot",
                "commands": [
                    {"argv": ["uname", "-r"], "stdout": "../../outside/canary.txt"},
                    {"argv": ["uname", "-a"], "stdout": "leak.txt"},
                    {"argv": ["hostname"], "stdout": str(OUT / "canary.txt")},
                    {"argv": ["lsmod"], "stdout": "../etc/hard-vault"},
                    {"argv": ["nproc"], "stdout": "../etc/fifo"},
                    {"argv": ["uptime"], "stdout": "../etc/sec.env"},
                    {"argv": ["whoami"], "stdout": "../etc/proc"},
                ],
            }
        )
    )


# ---- live helpers: child processes and the TCP listener -----------------------------------
_children: list[subprocess.Popen] = []


def start_children() -> dict[str, int]:
    env = {
        "PATH": "/usr/bin:/bin",
        "RT_CHILD": CANARY_CHILD_ENV,
        "HF_TOKEN": _sec("child-hftoken", "Cf4Hx8Tk2Nq6Wz0Lp3Rv7"),
        "HF_HUB_AUTH": _sec("child-hfauth", "Ha5Ub9Au3Th7Xq1Zw4"),
        "VLLM_ATTESTATION": _sec("child-vllmattest", "Va6At2Te8St4Qz0Wx"),
        "NCCL_SOCKET_IFNAME": "lo",
        "HOME": str(HOME),
    }
    script = "import time\ntime.sleep(10800)\n"
    argv = [
        "/usr/bin/python3",
        "-c",
        script,
        "vllm.entrypoints.openai.api_server",
        "--model",
        "m",
        "--api-key",
        _sec("child-argv-apikey", "Ak7Pi3Ke9Yv5Lu1Ex8"),
        "--hf-token=" + _sec("child-argv-hftok", "Hf2To6Ke0Nv4Al8Ue3"),
        "--ssl-keyfile-password",
        _sec("child-argv-sslpw", "Ss9Lp5Ww1Dd7Kk3Yy"),
    ]
    p = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _children.append(p)
    return {"PID": p.pid}


def stop_children() -> None:
    for p in _children:
        p.kill()
        p.wait()


class Listener(threading.Thread):
    """127.0.0.1:PORT answering every connection with an HTTP response holding the canary."""

    def __init__(self, port: int) -> None:
        super().__init__(daemon=True)
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self.sock.bind(("127.0.0.1", port))
        except OSError:  # taken (another run): any free port, kubectl's default then misses it
            self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.hits = 0

    def run(self) -> None:
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.hits += 1
            try:
                c.settimeout(1)
                with contextlib.suppress(OSError):
                    c.recv(4096)
                body = json.dumps(
                    {
                        "kind": "PodList",
                        "apiVersion": "v1",
                        "items": [{"metadata": {"name": CANARY_TCP}}],
                        "message": CANARY_TCP,
                    }
                ).encode()
                c.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                    + str(len(body)).encode()
                    + b"\r\n\r\n"
                    + body
                )
            except OSError:
                pass
            finally:
                c.close()


# ---- second campaign: fixtures for the new mechanisms ---------------------------------------
CANARY_SHM = "RTCANARYDEVSHM5a6b7c8d9e"
NEW_EXTRA: dict[str, str] = {}  # placeholders the new attempts need ({ENVBLOB}, ...)


def new_format_files() -> dict[str, str | bytes]:
    """Formats and edge cases the redactor is asked about (planted in {B}/new)."""
    f: dict[str, str | bytes] = {}
    f["pod.yaml"] = (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: vllm\nspec:\n  containers:\n"
        "  - name: vllm\n    env:\n    - name: DB_PASSWORD\n"
        f"      value: {_sec('pod-env-yaml', 'Pe7Ya2Ml8Ev4Al9Ue3Xx')}\n"
    )
    f["pod.json"] = (
        json.dumps(
            {
                "kind": "Pod",
                "spec": {
                    "containers": [
                        {
                            "name": "vllm",
                            "env": [
                                {
                                    "name": "HF_HUB_PASSWORD",
                                    "value": _sec("pod-env-json", "Pj6So1Nv7En3Va8Lu2Ee"),
                                }
                            ],
                        }
                    ]
                },
            },
            indent=2,
        )
        + "\n"
    )
    f["litellm.yaml"] = (
        "model_list:\n- model_name: m\n  litellm_params:\n    api_keys:\n"
        f"      - {_sec('yaml-list-keys', 'Lk4Is9Tk3Ey7Sv1Al5Ue')}\n"
        f"secrets:\n  db: {_sec('yaml-secrets-map', 'Sm8Ap3Db6Va2Lu9Ex4')}\n"
    )
    f["my.cnf"] = (
        "[client]\nuser = root\npassword = "
        f"{_sec('ini-spaces', 'correct horse battery staple 9Xq')}\n"
    )
    f["pgpass-escaped.txt"] = (
        f"db.internal:5432:prod:admin:Pa\\:{_sec('pgpass-colon', 'Es5Ca8Pe1Co4Lo7Nn')}\n"
    )
    f["netrc-default.txt"] = (
        f"default\n  login bob\n  password {_sec('netrc-default', 'Nd3Ef6Au9Lt2Pw5Xy')}\n"
    )
    f["key.ppk"] = (
        "PuTTY-User-Key-File-3: ssh-rsa\nEncryption: none\nComment: k\nPublic-Lines: 1\n"
        "AAAAB3NzaC1yc2EAAAADAQABAAAAgQC\nPrivate-Lines: 2\n"
        f"{_sec('ppk-1', 'Pk1Tt2Yy3Uu4Ii5Oo6Pp7Aa8Ss9Dd0Ff1Gg2Hh')}\n"
        f"{_sec('ppk-2', 'Qw2Er3Ty4Ui5Op6As7Df8Gh9Jk0Lz1Xc2Vb3Nm')}\n"
        "Private-MAC: 0123456789abcdef\n"
    )
    f["ssh2-key.txt"] = (
        '---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nComment: "k"\n'
        f"{_sec('ssh2-body', 'Ss2Hh4Tw6Oo8Bb0Dd2Yy4Kk6Ee8Yy0Zz2')}\n"
        "---- END SSH2 ENCRYPTED PRIVATE KEY ----\n"
    )
    f["secret-comment.yaml"] = (
        "apiVersion: v1\nkind: Secret  # database credentials\nmetadata:\n"
        f"  name: db\ndata:\n  db-url: {_sec('k8s-kindcomment', 'S2luZENvbW1lbnRTZWNyZXQxMjM0')}\n"
    )
    f["secret-datacomment.yaml"] = (
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:  # base64\n"
        f"  db-url: {_sec('k8s-datacomment', 'RGF0YUNvbW1lbnRTZWNyZXQ1Njc4')}\n"
    )
    f["secret-quotedkey.yaml"] = (
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n"
        f'  "db.url": {_sec("k8s-quotedkey", "Qk7Ey3Dq9Uo1Te5Dk8Ey")}\n'
    )
    f["secret-flow.yaml"] = (
        "apiVersion: v1\nkind: Secret\nmetadata: {name: db}\n"
        f"data: {{db-url: {_sec('k8s-flow', 'RmxvdywuU2VjcmV0VmFsdWU5ODc2')}}}\n"
    )
    f["secret-sorted.yaml"] = (
        "apiVersion: v1\ndata:\n"
        f"  db-url: {_sec('k8s-sorted', 'U29ydGVkS2V5c1NlY3JldDQ0NTU2')}\n"
        "kind: Secret\nmetadata:\n  name: db\ntype: Opaque\n"
    )
    f["secret-cr.yaml"] = (
        "apiVersion: v1\rkind: Secret\rmetadata:\r  name: db\rdata:\r"
        f"  db-url: {_sec('k8s-cr-only', 'Q1JPbmx5TGluZUVuZGluZ3M3Nzg4')}\r"
    )
    f["utf16-app.conf"] = ("API_KEY=" + _sec("utf16", "Uf16Le8Wi4De2Ch6Ar9Zz") + "\n").encode(
        "utf-16-le"
    )
    f["deploy.service"] = (
        "[Service]\n"
        "ExecStartPre=/usr/bin/docker login -u bot -p "
        f"{_sec('docker-login-p', 'Dl4Pp8Ww2Oo6Rr0Dd3Xx')} nvcr.io\n"
        "ExecStartPre=/usr/bin/mysql -uroot "
        f"-p{_sec('mysql-p', 'My5Sq9Lp3Ww7Dd1Xx')} -e 'select 1'\n"
        f"ExecStartPre=/usr/bin/redis-cli -a {_sec('redis-a', 'Rd6Is2Cl8Ia4Uu0Th')} ping\n"
        f"ExecStart=/usr/bin/curl -u admin:{_sec('curl-u', 'Cu7Rl3Us9Er5Pw1Dd')} http://x/\n"
        f'Environment="A=1" "DB_PASS={_sec("unit-multi", "Um8Lt4Ii0Ee6Nv2Vv")}"\n'
    )
    f["azure.conf"] = (
        "conn = DefaultEndpointsProtocol=https;AccountName=acct;AccountKey="
        f"{_sec('azure-accountkey', 'Az9Ac3Co7Un1Tk5Ey8Bb2Ss6Tt0Oo4Rr')}"
        "==;EndpointSuffix=core.windows.net\n"
    )
    toks = {
        "nvapi": "nvapi-" + "Nv4Ap8Ik2Ey6Gg0Pp3Uu7Cc1Ll5Oo9Dd3Ss7Hh1Jj5Kk9Ll3Mm7Nn1Bb5Vv9Cc",
        "npm": "npm_" + "Np7Mm3Tk9Ee1Nn5Aa2Bb6Cc0Dd4Ee8Ff2Gg6Hh",
        "pypi": "pypi-AgEIcHlwaS5vcmc" + "Py3Pi7Tk1Oo5Kk9Ee2Nn6Aa0Bb4Cc8Dd2Ee6",
        "grafana": "glsa_" + "Gr4Af8An2Aa6Ss0Aa3Bb7Cc1Dd5Ee9Ff3Gg_1a2b3c4d",
        "digitalocean": "dop_v1_"
        + "d0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f",
        "google-oauth": "ya29." + "a0Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr9St1Uv3Wx5Yz7",
        "sendgrid": "SG."
        + "Sg4Ri8Dd2Aa6Bb0Cc3Dd7E"
        + "."
        + "Ee1Ff5Gg9Hh3Ii7Jj1Kk5Ll9Mm3Nn7Oo1Pp5Qq9Rr3Ss",
        "replicate": "r8_" + "Re3Pl7Ic1Aa5Tt9Ee2Bb6Cc0Dd4Ee8Ff2Gg6Hh1",
        "groq": "gsk_" + "Gq5Rr9Oo3Qq7Kk1Aa4Bb8Cc2Dd6Ee0Ff4Gg8Hh2Ii6Jj0Kk4Ll8Mm2",
        "slack-webhook": "https://hooks.slack.com/services/T0123ABCD/B0456EFGH/"
        + "Wh7Oo3Kk9Ss1Ll5Aa2Cc6Kk0",
        "shopify": "shpat_" + "5f1e2d3c4b5a69788796a5b4c3d2e1f0",
    }
    f["tokens.txt"] = "".join(f"{k}: {_sec('tok-' + k, v)}\n" for k, v in toks.items())
    f["config.toml"] = (
        f'password = """{_sec("toml-triple", "Tt3Oo7Mm1Ll5Tr9Ip2")}"""\n'
        f"api_key = '''{_sec('toml-literal', 'Tl4Ii8Tt2Ee6Rr0Al3')}'''\n"
    )
    f["app.log"] = (
        f"2024-01-01 level=info connect password: ab;{_sec('log-semicolon', 'Ls5Em9Ic3Ol7On1Xx')}\n"
        f"2024-01-01 cfg {{user: x, password: ab,{_sec('log-flowcomma', 'Lf6Co0Mm4Aa8Xx2Yy')}}}\n"
        f"2024-01-01 db postgres://app:Xq8@{_sec('url-at', 'Ua7Tt3Ss9Ig1Nn5Pw')}@db:5432/x\n"
        "2024-01-01 argv ['vllm', 'serve', 'm', '--api-key', "
        f"'{_sec('pylist-flag', 'Pl8Is4Tf0La6Gg2Kk')}']\n"
        f"2024-01-01 DB_PASSWORD=Xk9'{_sec('assign-quote', 'Aq9Uu5Oo1Tt7Ee3Xx')}\n"
    )
    f["keys.json"] = (
        json.dumps(
            {
                "encryption_key": _sec("json-encryption-key", "En3Cc7Rr1Yy5Pp9Tt2Kk"),
                "signing_key": _sec("json-signing-key", "Sg4Nn8Ii2Nn6Gg0Kk3Yy"),
                "master_key": _sec("json-master-key", "Ms5Tt9Rr3Kk7Ee1Yy4Zz"),
            }
        )
        + "\n"
    )
    f["docker-inspect.json"] = (
        json.dumps(
            [
                {
                    "Id": "abc",
                    "Config": {
                        "Env": [
                            f"DB_PASSWORD={_sec('inspect-env', 'Ie6Nn0Vv4Pp8Ww2Dd5Xx')}",
                            "PATH=/usr/bin",
                        ],
                        "Cmd": [
                            "serve",
                            "m",
                            "--api-key",
                            _sec("inspect-cmd-flag", "Ic7Mm1Dd5Ff9Ll3Gg6Yy"),
                        ],
                    },
                }
            ],
            indent=2,
        )
        + "\n"
    )
    f["last-applied.yaml"] = (
        "apiVersion: v1\nkind: Secret\nmetadata:\n  annotations:\n"
        "    kubectl.kubernetes.io/last-applied-configuration: |\n"
        '      {"apiVersion":"v1","data":{"db-url":"'
        + _sec("k8s-lastapplied", "TGFzdEFwcGxpZWRTZWNyZXQ5OTAw")
        + '"},"kind":"Secret","metadata":{"name":"db"}}\n  name: db\ntype: Opaque\n'
    )
    f["python-repr.log"] = (
        "INFO non-default args: {'model': 'm', 'api_key': '"
        + _sec("pyrepr-apikey", "Pr9Ep3Ra7Pi1Kk5Ey8Zz")
        + "'}\n"
    )
    return f


WIN = 2 << 20


def _big_b64_lines(tag: str, total: int) -> str:
    line = _body(tag, 99)[:64] + "\n"
    return line * (total // len(line))


def window_files() -> dict[str, str | bytes]:
    """Files around the copies' 2 MiB head/tail windows (planted in {B}/win)."""
    f: dict[str, str | bytes] = {}
    body = _big_b64_lines("pgpw", 3 << 20)
    f["pgp-tail.asc.txt"] = (
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n"
        + body
        + _sec("win-pgp-last", _body("win-pgp-last", 0))
        + "\n=AbCd\n"
        "-----END PGP PRIVATE KEY BLOCK-----\n"
    )
    body2 = _big_b64_lines("rsaw", 3 << 20).replace("\n", "\r\n")
    f["rsa-tail-crlf.txt"] = (
        "-----BEGIN RSA PRIVATE KEY-----\r\n"
        + body2
        + _sec("win-rsa-crlf-last", _body("win-rsa-crlf-last", 0))
        + "\r\n-----END RSA PRIVATE KEY-----\r\n"
    )
    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n" + "".join(
        f"  c{i}: plain-config-value-{i}\n" for i in range(4000)
    )
    bulk = "".join(f"  k{i}: {'QUJD' * 10}\n" for i in range(60000))
    f["k8s-late-header.yaml"] = (
        cm
        + "---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: s\ndata:\n"
        + bulk
        + f"  last: {_sec('win-k8s-late', 'TGF0ZUhlYWRlclNlY3JldFZhbA')}\n"
    )
    pad = "".join(f"log line {i} nothing to see\n" for i in range(100000))  # > 2 MiB
    f["yaml-block-tail.yaml"] = (
        pad
        + "api_key: |\n  "
        + "w" * 200
        + "\n  "
        + _sec("win-yaml-block", "Yb5Ll9Oo3Cc7Kk1Tt4Aa")
        + "\n"
    )
    f["unit-cont-tail.service"] = (
        pad
        + "ExecStart=/usr/bin/vllm serve m --api-key \\\n    "
        + "x" * 10
        + " \\\n    "
        + _sec("win-unit-cont", "Uc6Oo0Nn4Tt8Ii2Nn5Uu")
        + " \\\n    --port 8000\n"
    )
    # a PEM whose BEGIN line is cut by the tail window start
    pem_pad = "z" * (WIN - 20) + "\n"
    tailpem = (
        "-----BEGIN OPENSSH PRIVATE KEY-----\n"
        + _sec("win-cutbegin", _body("win-cutbegin", 0))
        + "\n-----END OPENSSH PRIVATE KEY-----\n"
    )
    f["cut-begin.txt"] = pem_pad + tailpem + "y" * (WIN - len(tailpem) - 10) + "\n"
    # secrets split around the window edge, utf-8 split, NULs, CRLF env
    utf = "é" * (WIN // 2 + 7) + "\n"
    f["utf8-split.env"] = (
        utf + f"OPENAI_API_KEY={_sec('win-utf8', 'sk-proj-Wu8Tf1Ss2Pp3Ll4Ii5Tt6Xx7')}\n"
    )
    f["nul-bytes.txt"] = (
        b"\x00" * 64
        + b"\n"
        + b"x" * (WIN + 10)
        + b"\npassword = "
        + _sec("win-nul", "Nu7Ll3By9Te5Ss1Xx").encode()
        + b"\x00\n"
    )
    f["crlf.env"] = f"DB_HOST=db\r\nWANDB={_sec('crlf-env', 'Cr2Lf6Ee0Nn4Vv8Ww3Yy')}\r\n"
    return f


def build_new() -> None:
    """Fixtures of the second campaign."""
    new = B / "new"
    new.mkdir()
    for name, text in new_format_files().items():
        (new / name).write_bytes(text if isinstance(text, bytes) else text.encode())
    win = B / "win"
    win.mkdir()
    for name, text in window_files().items():
        (win / name).write_bytes(text if isinstance(text, bytes) else text.encode())
    # nested credential files and an unknown home; hard links and copies under innocent names
    nested = {
        ".password-store/work/bank.gpg": "passnested",
        ".aws/sso/cache/abc123.json": "awssso",
        ".config/gcloud/legacy_credentials/u@x/adc.json": "gcloudlegacy",
        ".gnupg/private-keys-v1.d/nested.key": "gnupgnested",
        ".ssh/keys/deploy": "sshnested",
        ".docker/contexts/meta/x/meta.json": "dockerctx",
        ".kube/cache/http/token": "kubecache",
        ".config/gh/sub/hosts.yml": "ghnested",
    }
    creds2 = B / "creds2"
    creds2.mkdir()
    for rel, tag in nested.items():
        v = f"RTHOMENESTED{tag.upper()}{zlib.crc32(tag.encode()) % 10**6:06d}"
        HOME_CANARIES["nested-" + tag] = v
        p = HOME / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(v + "\n")
        os.link(p, creds2 / f"nested_{tag}.txt")
    HOME2.mkdir()
    for rel in (".vault-token", ".aws/credentials", ".config/gh/hosts.yml", ".pgpass"):
        tag = "home2-" + rel.strip(".").replace("/", "-")
        v = f"RTHOMETWO{zlib.crc32(tag.encode()) % 10**8:08d}"
        HOME_CANARIES[tag] = v
        p = HOME2 / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(v + "\n")
        os.link(p, creds2 / f"home2_{rel.strip('.').replace('/', '_')}.txt")
    # a credential dir with many entries: the inode list reads the first 1000 names only
    kr = HOME / ".local" / "share" / "keyrings"
    for i in range(1500):
        (kr / f"decoy{i:04d}.keyring").write_text("decoy\n")
    for i in range(6):
        tag = f"keyringmany{i}"
        v = f"RTHOMEKEYRINGMANY{i}{zlib.crc32(tag.encode()) % 10**6:06d}"
        HOME_CANARIES[tag] = v
        (kr / f"zz-target{i}.keyring").write_text(v + "\n")
        os.link(kr / f"zz-target{i}.keyring", creds2 / f"many_{i}.txt")
    # copies (not links) of credential files with realistic contents: only the redactor stands
    copies = {
        "aws-backup.txt": "[default]\naws_access_key_id = AKIAQWERTYUIOPASDFGH\n"
        f"aws_secret_access_key = {_sec('copy-aws', 'Ca8Ww2Ss4Ee6Cc8Rr0Ee2Tt4Kk6Ee8Yy0Zz2Xx4')}\n",
        "history-copy.txt": "ls\nmysql -h db -uroot "
        f"-p{_sec('copy-hist-mysql', 'Hm3Yy7Ss1Qq5Ll9Pp')}\nexit\n",
        "pgpass-copy.txt": f"db:5432:*:admin:{_sec('copy-pgpass', 'Cp4Gg8Pp2Aa6Ss0Ss')}\n",
        "gitcred-copy.txt": f"https://bob:{_sec('copy-gitcred', 'Gc5Rr9Ee3Dd7Pp1Ww')}"
        "@git.example.com\n",
    }
    for name, text in copies.items():
        (creds2 / name).write_text(text)
    # git: a second repo with a secret in a commit message, a hook, and a blob to show by id
    g = B / "repo2"
    g.mkdir()
    _git(g, "init", "-q", ".")
    (g / ".env").write_text(f"WANDB={_sec('repo2-wandb', 'Rw5Aa9Nn3Dd7Bb1Xx4Yy')}\nPORT=1\n")
    (g / "a.txt").write_text("x\n")
    _git(g, "add", "-A")
    _git(
        g,
        "commit",
        "-q",
        "-m",
        "init\n\nexport API_KEY=" + _sec("commit-msg", "Cm4Ss8Gg2Kk6Ey0Zq3Ww"),
    )
    _git(g, "tag", "v1.0-" + "rc")
    hook = g / ".git" / "hooks" / "post-checkout"
    hook.write_text(f"#!/bin/sh\ntouch {M / 'hook'}\n")
    hook.chmod(0o755)
    (g / ".git" / "hooks" / "pre-commit").write_text(f"#!/bin/sh\ntouch {M / 'hook2'}\n")
    (g / ".git" / "hooks" / "pre-commit").chmod(0o755)
    NEW_EXTRA["ENVBLOB"] = _git(g, "rev-parse", "HEAD:.env")
    # packed refs pointing at the outside repo's objects; a ref name with a glob
    blob = (FH / "blobsha").read_text().strip()
    with open(g / ".git" / "packed-refs", "a", encoding="utf-8") as fh:
        fh.write(f"{blob} refs/tags/outside\n")
    # DoS: crafted near-8 MiB files the copy step must redact whole
    # beside {B}, not in it: a walk of {B} would spend minutes redacting them
    dos = FH / "dos"
    dos.mkdir()
    unit = "kind: Secret\ndata:\n" + "  k: --api-key x\n" * 10
    crafted = (unit * ((8 << 20) // len(unit)))[: (8 << 20) - 4096]
    for i in range(4):
        (dos / f"crafted{i}.yaml").write_text(crafted)
    # a canary in the real /dev/shm (the kernel layer gives a fresh /dev)
    shm = Path("/dev/shm") / f"{BASE.name}-canary.txt"
    try:
        shm.write_text(CANARY_SHM + "\n")
        NEW_EXTRA["SHM"] = str(shm)
    except OSError:
        NEW_EXTRA["SHM"] = "/dev/shm/nonexistent"


def cleanup_new() -> None:
    shm = NEW_EXTRA.get("SHM")
    if shm and shm.startswith("/dev/shm/") and os.path.exists(shm):
        os.unlink(shm)


def start_children_new() -> dict[str, int]:
    """A non-engine process with passwords in argv (ps shows every process) and an engine
    whose environment has secrets under names the withholding rule does not know."""
    script = "import time\ntime.sleep(10800)\n"
    p1 = subprocess.Popen(
        [
            "/usr/bin/python3",
            "-c",
            script,
            "mysql",
            "-uroot",
            "-p" + _sec("child2-mysql-p", "Mp6Yy0Ss4Qq8Ll2Pp"),
            "sshpass",
            "-p",
            _sec("child2-sshpass", "Sp7Hh1Pp5Aa9Ss3Ss"),
        ],
        env={"PATH": "/usr/bin:/bin"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    env = {
        "PATH": "/usr/bin:/bin",
        "HF_PAT": _sec("child3-hfpat", "Hp8Aa2Tt6Xx0Yy4Zz"),
        "VLLM_PWD": _sec("child3-vllmpwd", "Vp9Ww3Dd7Xx1Yy5Zz"),
        "NCCL_IB_PSK": _sec("child3-ncclpsk", "Np0Ss4Kk8Xx2Yy6Zz"),
        "HF_HUB_BEARER": _sec("child3-bearer", "Hb1Ee5Aa9Rr3Xx7Yy"),
        **{k: v for k, v in os.environ.items() if k in ("HF_TOKEN", "RT_AGENT_ENV")},
    }
    p2 = subprocess.Popen(
        [
            "/usr/bin/python3",
            "-c",
            script,
            "vllm.entrypoints.openai.api_server",
            "--model",
            "m",
            "-k",
            _sec("child3-dashk", "Dk2Aa6Ss0Hh4Kk8Xx"),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _children.extend([p1, p2])
    return {"PID2": p1.pid, "PID3": p2.pid}

"""Secrets the red team's second round got past the redactor, each written the way its own
format documents it, and the benign look-alikes beside them that must stay readable.

Expected outcomes come from the formats' specifications, not from the redactor's output:
PostgreSQL's pgpass (``\\:`` escapes a colon), netrc's ``default`` entry, RFC 4716 (SSH2
key framing), PuTTY's ``.ppk`` (``Private-Lines: N``), RFC 7518 (a JWK's private members),
TOML 1.0 multi-line strings, YAML 1.2 (aliases, escapes in double-quoted keys, block
sequences), the Kubernetes Pod ``env`` list and Secret manifest, and the command lines of
mysql, sshpass, redis-cli, docker and curl."""

from __future__ import annotations

import pytest

from agentkit._sandbox._procs import redact_argv
from agentkit._sandbox._redact import redact, redact_entry, redact_file, redact_strict

S = "Qx7Lm2Np9Rt4Wz8Kc3Vb"  # a 20-character secret: letters and digits


def gone(out: str, secret: str = S) -> bool:
    """No 12-character piece of the secret is left (the red team's criterion)."""
    return not any(secret[i:i + 12] in out for i in range(len(secret) - 11))


LEAKS = {
    "pod env yaml": "env:\n- name: DB_PASSWORD\n  value: @\n",
    "pod env yaml, value first": "env:\n- value: @\n  name: HF_TOKEN\n",
    "pod env json": '{"env": [{"name": "HF_HUB_PASSWORD", "value": "@"}]}',
    "pod env flow": "env: [{name: API_KEY, value: @}]",
    "list under a plural key": "litellm_params:\n  api_keys:\n    - @\n",
    "sequence at the key's indent": "api_keys:\n- @\n",
    "mapping under secrets": "secrets:\n  db: @\n",
    "ini value with spaces": "[client]\npassword = correct horse @\n",
    "toml basic multi-line": 'password = """@"""\n',
    "toml literal multi-line": "api_key = '''\n@\n'''\n",
    "value past a semicolon": "connect password: ab;@\n",
    "value past a comma in a flow map": "{user: x, password: ab,@}\n",
    "quote inside an unquoted value": "DB_PASSWORD=Xk9'@\n",
    "@ inside a url password": "postgres://app:Xq8@@@db:5432/x\n",
    "token as a url user": "dsn = 'https://@@o1.ingest.sentry.io/1'\n",
    "azure sas signature": "https://a.blob.core.windows.net/c?sv=2022&sig=@\n",
    "python list argv": "argv ['vllm', 'serve', 'm', '--api-key', '@']\n",
    "json list argv": '"Cmd": [\n  "serve",\n  "--api-key",\n  "@"\n]\n',
    "mysql -pVALUE": "mysql -h db -uroot -p@ -e 'select 1'\n",
    "sshpass -p": "sshpass -p @ ssh host\n",
    "docker login -p": "ExecStartPre=/usr/bin/docker login -u bot -p @ nvcr.io\n",
    "redis-cli -a": "redis-cli -a @ ping\n",
    "curl -u": "curl -u admin:@ https://internal/api\n",
    "docker -e with an opaque name": "docker run -e P=@ img\n",
    "escaped json key": '{"p\\u0061ssword": "@"}\n',
    "escaped nested json key": '{"db": {"s\\u0065cret": "@"}}\n',
    "escaped toml key": '[db]\n"pass\\u0077ord" = "@"\n',
    "escaped yaml key": '"p\\x61ssword": @\n',
    "yaml alias as key": 'name: &n "token"\n*n : @\n',
    "netrc default": "default\n  login bob\n  password @\n",
    "pgpass escaped colon": "db.internal:5432:prod:admin:Pa\\:@\n",
    "encryption key": '{"encryption_key": "@"}\n',
    "signing key": "signing_key: @\n",
    "ssh2 private key": "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nComment: \"k\"\n@\n"
                        "---- END SSH2 ENCRYPTED PRIVATE KEY ----\n",
    "putty ppk": "PuTTY-User-Key-File-3: ssh-rsa\nPublic-Lines: 1\nAAAAB3Nza\nPrivate-Lines: 1\n"
                 "@\nPrivate-MAC: 00\n",
    "jwk private exponent": '{"kty": "RSA", "n": "abc", "e": "AQAB", "d": "@"}\n',
    "apr1 hash": "admin:$apr1$r2Xs8Qp4$@\n",
    "k8s secret, comment after kind": "kind: Secret  # db\ndata:\n  url: @\n",
    "k8s secret, comment after data": "kind: Secret\ndata:  # base64\n  url: @\n",
    "k8s secret, quoted data key": 'kind: Secret\nstringData:\n  "db.url": @\n',
    "k8s secret, flow data": "kind: Secret\nmetadata: {name: db}\ndata: {url: @}\n",
    "k8s secret, all flow": "{apiVersion: v1, kind: Secret, data: {pw: @}}\n",
    "k8s secret, tagged kind": "kind: !!str Secret\ndata:\n  pw: @\n",
    "k8s secret, aliased kind": "k: &k Secret\nkind: *k\ndata:\n  pw: @\n",
    "k8s secret, folded kind": "kind: >-\n  Secret\ndata:\n  pw: @\n",
    "k8s secret, CR line ends": "apiVersion: v1\rkind: Secret\rdata:\r  url: @\r",
    # a fourth helper's held-out attempts (npm, Maven, Hadoop, the AWS CLI, Terraform, gh,
    # htpasswd(1), PowerShell, ECMAScript ??=, OpenTelemetry's OTLP headers variable)
    ".npmrc auth token": "//registry.npmjs.org/:_authToken=@\n",
    "maven settings.xml": "<server><id>x</id><password>@</password></server>\n",
    "hadoop xml property": "<property><name>fs.s3a.secret.key</name><value>@</value></property>",
    "aws configure set": "aws configure set aws_secret_access_key @\n",
    "terraform variable default": 'variable "db_password" {\n  default = "@"\n}\n',
    "gh token on a here-string": "gh auth login --with-token <<< @\n",
    "htpasswd flags apart": "htpasswd -b -c /etc/nginx/.htpasswd admin @\n",
    "powershell env": '$env:OPENAI_API_KEY="@"\n',
    "js nullish assignment": 'process.env.HF_TOKEN ??= "@";\n',
    "echo into a token file": 'echo "@" > ~/.cache/huggingface/token\n',
    "otlp headers": "OTEL_EXPORTER_OTLP_HEADERS=x-honeycomb-team=@\n",
    "basic-auth tuple": 'requests.post(url, auth=("svc", "@"))\n',
}


@pytest.mark.parametrize("name", sorted(LEAKS))
def test_secret_in_its_documented_shape_is_redacted(name: str) -> None:
    text = LEAKS[name].replace("@", S, 1)
    out = redact_file("/etc/app/conf", text)
    assert gone(out), out


TOKENS = ["nvapi-" + S * 2, "glsa_" + S + "_1a2b3c4d", "ya29.a0" + S, "r8_" + S, "gsk_" + S,
          "shpat_" + S, "org-" + S, "AIzaSy" + S + "Ab12Cd34Ef", "dapi" + "0123456789abcdef" * 2]


@pytest.mark.parametrize("token", TOKENS)
def test_service_token_prefixes(token: str) -> None:
    assert gone(redact(f"token_here {token}\n"), token[-16:])


BENIGN = [
    "docker run -p 8000:8000 -p 127.0.0.1:9090:9090 vllm/vllm-openai:v0.11.0",
    "ssh -p 22 host && scp -P 2222 a b", "mkdir -p /opt/vllm/logs", "ls -a /etc/vllm",
    "docker run -e NCCL_IB_HCA=mlx5_0 -e MODEL=meta-llama/Llama-3.1-70B-Instruct img",
    "apiVersion: v1\nkind: ConfigMap\ndata:\n  NCCL_ALGO: Ring\n  NCCL_PROTO: LL128\n",
    "kind: SecretProviderClass\ndata:\n  NCCL_ALGO: Ring\n",
    "env:\n- name: NCCL_DEBUG\n  value: INFO\n- name: MODEL\n  value: Qwen/Qwen3-32B\n",
    "https://huggingface.co/meta-llama/Llama-3.1-8B-Instruct/resolve/main/config.json",
    "image: vllm/vllm-openai@sha256:" + "ab12" * 16, "tokenizer: deepseek-ai/DeepSeek-V3",
    "grep -a -o pattern file", "vllm serve m --max-num-batched-tokens 8192 -tp 8",
    "price is $5$ per hour",
    # references and placeholders, not values
    "args: Namespace(host='0.0.0.0', port=8000, api_key=None, model='m', max_model_len=8192)",
    "    env:\n      HF_TOKEN: ${{ secrets.HF_TOKEN }}\n", 'vllm_api_key: "{{ vault_vllm_key }}"',
    "RUN HF_TOKEN=$(cat /run/secrets/hf_token) python dl.py",
    'client = OpenAI(base_url="http://localhost:8000/v1", api_key="EMPTY")',
    'client = OpenAI(api_key=os.environ["OPENAI_API_KEY"])',
    'tok = AutoTokenizer.from_pretrained("m", token=os.getenv("HF_TOKEN"))',
    "[auth]\nenabled = false\n", "password: ~",
    "kubectl create secret generic hf --from-file=token=./hf_token.txt",
]


@pytest.mark.parametrize("text", BENIGN)
def test_benign_serving_content_stays(text: str) -> None:
    assert redact(text) == text


def test_parsed_entries_below_a_secret_key_and_escaped_keys() -> None:
    assert redact_entry("secrets.db", S) == "[REDACTED:secret]"
    assert redact_entry("litellm_params.api_keys[0]", S) == "[REDACTED:secret]"
    assert redact_entry('db."pass\\u0077ord"', S) == "[REDACTED:secret]"
    assert redact_entry("model_list[0].model_name", "m") == "m"
    assert redact_entry("max_tokens", 4096) == 4096


def test_argv_short_flags_withheld_only_for_credential_values() -> None:
    argv = ["sshpass", "-p", S, "ssh", "-p", "22", "-k", "/etc/x", "mysql", "-p" + S]
    out = redact_argv(argv)
    assert out[2] == "[withheld]" and out[5] == "22" and out[7] == "/etc/x"
    assert gone(" ".join(out))


def test_linked_file_is_redacted_strictly_but_keeps_versions_and_paths() -> None:
    text = f"RTHOMETWO12345678\n{S}\nversion 0.11.0rc2.dev123+g1234abcd /usr/lib/x86_64\n"
    out = redact_strict(text)
    assert "RTHOMETWO" not in out and gone(out)
    assert "0.11.0rc2.dev123+g1234abcd /usr/lib/x86_64" in out
    assert redact_file("/srv/x.txt", text, linked=True) == out

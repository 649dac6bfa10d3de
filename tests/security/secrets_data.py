"""Planted secrets (one or more per format) and a corpus of benign look-alikes.

Each :class:`Secret` is a piece of text as it would sit in a file or command output, and the
fragments of it that must never come out of a tool. Fragments are long and random enough that
finding one in an output can only mean a leak. The benign corpus must come out unchanged.
"""

from __future__ import annotations

import base64
import hashlib
import uuid
from dataclasses import dataclass


@dataclass(frozen=True)
class Secret:
    fmt: str
    text: str
    fragments: tuple[str, ...]


# Random-looking bodies, one per (seed, length): fragments never overlap, so a hit names the
# one sample that leaked.
def _b(i: int, n: int = 34) -> str:
    digest = hashlib.sha512(f"canary-{i}-{n}".encode()).digest()
    text = base64.b64encode(digest).decode().replace("+", "x").replace("/", "y").rstrip("=")
    return ("Q" + text)[:n]


SECRETS: list[Secret] = [
    Secret("hf-token", f"HF_TOKEN=hf_{_b(0)}", (f"hf_{_b(0)}", _b(0)[:20])),
    Secret("hf-token", f"token: hf_{_b(1)}", (_b(1)[:20],)),
    Secret("hf-org-token", f"using api_org_{_b(2)} for the org", (_b(2)[:20],)),
    Secret("openai-key", f"key sk-{_b(3, 48)}", (_b(3, 48)[:20],)),
    Secret("openai-key", f"OPENAI_API_KEY=sk-proj-{_b(4, 40)}_x-{_b(5, 20)}",
           (_b(4, 40)[:20], _b(5, 20))),
    Secret("anthropic-key", f"x-api-key: sk-ant-api03-{_b(6, 60)}AA", (_b(6, 60)[:24],)),
    Secret("aws-access-key", "aws_access_key_id = AKIAQZ8MKP2LWX9VRT4N", ("AKIAQZ8MKP2LWX9VRT4N",)),
    Secret("aws-access-key", "creds ASIAWV3NHS8QKT1XLP6R in log", ("ASIAWV3NHS8QKT1XLP6R",)),
    Secret("aws-secret-key", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ8mKp2LwX",
           ("wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ8mKp2LwX", "bPxRfiCYzQ8mKp2LwX")),
    Secret("aws-secret-key", 'AWS_SECRET_ACCESS_KEY: "Nb6tPy2KqM8wDz4L+X1cRv7HjF3gUe9Ao5Qz8mKp"',
           ("Nb6tPy2KqM8wDz4L+X1cRv7HjF3gUe9Ao5Qz8mKp",)),
    Secret("github-token", f"remote uses ghp_{_b(7, 36)}", (_b(7, 36)[:24],)),
    Secret("github-token", f"GH=github_pat_11ABCDEFG0{_b(0, 22)}_{_b(1, 59)}",
           (_b(0, 22), _b(1, 59)[:30])),
    Secret("jwt", "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJIeDRSbVo3cExxMlduQjl2In0."
                  f"{_b(2, 43)}", ("eyJzdWIiOiJIeDRSbVo3cExxMlduQjl2In0", _b(2, 43))),
    Secret("bearer", f"Authorization: Bearer {_b(3, 30)}", (_b(3, 30),)),
    Secret("bearer", f'curl -H "Authorization: Bearer {_b(4, 28)}" http://127.0.0.1:8000',
           (_b(4, 28),)),
    Secret("bearer", f'{{"headers": {{"Authorization": "Bearer {_b(5, 32)}"}}}}', (_b(5, 32),)),
    Secret("basic-auth", "Authorization: Basic " + base64.b64encode(b"admin:Tc9XwK3qPz6L").decode(),
           (base64.b64encode(b"admin:Tc9XwK3qPz6L").decode(),)),
    Secret("unit-environment", f"Environment=DB_PASSWORD={_b(6, 18)}", (_b(6, 18),)),
    Secret("unit-environment", f'Environment="API_TOKEN={_b(7, 12)} {_b(0, 9)}"',
           (_b(7, 12), _b(0, 9))),
    Secret("unit-environment", f"Environment=\"A=1\" 'MY_SECRET={_b(1, 20)}'", (_b(1, 20),)),
    Secret("unit-environment", f'Environment="HF_TOKEN=hf_{_b(2, 14)}\\\n{_b(3, 22)}"',
           (_b(2, 14), _b(3, 22))),
    Secret("env-file", f"PASSWORD={_b(4, 16)}", (_b(4, 16),)),
    Secret("env-file", f'export SECRET="{_b(5, 10)} {_b(6, 10)}"', (_b(5, 10), _b(6, 10))),
    Secret("env-file", f"WANDB_API_KEY={_b(7, 40)}", (_b(7, 40),)),
    Secret("private-key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n"
                          f"{_b(0, 64)}\n-----END RSA PRIVATE KEY-----",
           ("MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", _b(0, 64)[:30])),
    Secret("private-key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU\n"
                          f"{_b(1, 60)}\n", ("b3BlbnNzaC1rZXktdjEAAAAABG5vbmU", _b(1, 60)[:30])),
    Secret("private-key", '{"key": "-----BEGIN PRIVATE KEY-----\\nMIIEvgIBADANBgkqhkiG9w0BAQEF\\n'
                          f'{_b(2, 40)}\\n-----END PRIVATE KEY-----\\n"}}',
           ("MIIEvgIBADANBgkqhkiG9w0BAQEF", _b(2, 40)[:30])),
    Secret("k8s-secret", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n"
                         f"  password: {base64.b64encode(_b(3, 20).encode()).decode()}\n"
                         f"stringData:\n  url: mysql-{_b(4, 20)}\n",
           (base64.b64encode(_b(3, 20).encode()).decode(), _b(4, 20))),
    Secret("url-credentials", f"DATABASE_URL=postgres://admin:{_b(5, 18)}@db:5432/app",
           (_b(5, 18),)),
    Secret("url-credentials", f"git clone https://bob:{_b(6, 20)}@git.example.com/x.git",
           (_b(6, 20),)),
    Secret("url-credentials", f"redis://:{_b(7, 22)}@cache:6379/0", (_b(7, 22),)),
    Secret("json-value", f'{{"api_key": "{_b(0, 26)}", "model": "kimi"}}', (_b(0, 26),)),
    Secret("json-value", f'{{"client_secret":"{_b(1, 12)}\\n{_b(2, 12)}"}}',
           (_b(1, 12), _b(2, 12))),
    Secret("cli-flag", f"vllm serve m --api-key {_b(3, 24)} --port 8000", (_b(3, 24),)),
    Secret("cli-flag", f"--hf-token={_b(4, 24)}", (_b(4, 24),)),
    Secret("netrc", f"machine api.example.com login bob password {_b(15, 20)}", (_b(15, 20),)),
    Secret("slack-token", f"SLACK=xoxb-1234567890-{_b(6, 24)}", (_b(6, 24),)),
    Secret("gitlab-token", f"glpat-{_b(7, 20)}", (_b(7, 20),)),
    # found by the red team (issue 12): each slipped past the redactor
    Secret("private-key", "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n"
           f"lQOYBG{_b(60, 60)}\n=ab12\n-----END PGP PRIVATE KEY BLOCK-----",
           (_b(60, 60)[:24],)),
    Secret("vault-token", f"VAULT_ADDR=https://v:8200\nvault token hvs.{_b(61, 90)}",
           (_b(61, 90)[:24],)),
    Secret("assignment", f"API_KEY_1={_b(62, 30)}\nSECRET_KEY_BASE={_b(63, 40)}",
           (_b(62, 30)[:20], _b(63, 40)[:20])),
    Secret("assignment", f"MYSQL_PWD={_b(64, 24)}", (_b(64, 24)[:20],)),
    Secret("k8s-secret", f'kind: "Secret"\ndata:\n  password: {_b(65, 32)}',
           (_b(65, 32)[:20],)),
    Secret("k8s-secret", f"+apiVersion: v1\n+kind: Secret\n+data:\n+  token: {_b(66, 32)}",
           (_b(66, 32)[:20],)),
    Secret("cli-flag", "ExecStart=/usr/bin/vllm serve m \\\n    --api-key \\\n    "
           f"{_b(70, 32)} \\\n    --port 8000", (_b(70, 32)[:20],)),
    Secret("cli-flag", f"ExecStart=/usr/bin/srv --api-key -{_b(71, 24)}", (_b(71, 24)[:20],)),
    Secret("k8s-secret", "kind: Secret\nstringData:\n  conf: |\n"
           f"    upstream_auth {_b(72, 30)}\n", (_b(72, 30)[:20],)),
    Secret("k8s-secret", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Secret\n"
           f"  data:\n    key: {_b(73, 30)}\n", (_b(73, 30)[:20],)),
    Secret("k8s-secret", '{"apiVersion": "v1", "kind": "Secret", "data": {"tls.crt": '
           f'"{_b(74, 30)}"}}}}', (_b(74, 30)[:20],)),
    Secret("json-value", f'{{"password": "ab\\"{_b(75, 24)}"}}', (_b(75, 24)[:20],)),
    Secret("assignment", f"password: ab,{_b(76, 24)}", (_b(76, 24)[:20],)),
    Secret("assignment", f"api_key: >\n  {_b(77, 24)}\nport: 1\n", (_b(77, 24)[:20],)),
    Secret("docker-auth", f'{{"auths": {{"r.example": {{"auth": "{_b(78, 32)}"}}}}}}',
           (_b(78, 32)[:20],)),
    Secret("pgpass", f"db.internal:5432:prod:admin:{_b(79, 20)}", (_b(79, 20),)),
    Secret("netrc", f"machine api.example.com\n  login bob\n  password {_b(80, 20)}\n",
           (_b(80, 20),)),
    # red team round 2: fixed-prefix service tokens, and keys the parsers decode
    Secret("sendgrid-key", f"SENDGRID=SG.{_b(81, 22)}.{_b(82, 43)}", (_b(82, 43)[:20],)),
    Secret("npm-token", f"//registry.npmjs.org/:_authToken=npm_{_b(83, 36)}",
           (_b(83, 36)[:20],)),
    Secret("tailscale-key", f"tailscale up --authkey tskey-auth-{_b(84, 30)}",
           (_b(84, 30)[:20],)),
    Secret("azure-account-key", f"DefaultEndpointsProtocol=https;AccountName=st;"
           f"AccountKey={_b(85, 60)}==;EndpointSuffix=core.windows.net", (_b(85, 60)[:20],)),
    Secret("kube-client-key", f"users:\n- name: admin\n  user:\n    client-key-data: "
           f"{_b(86, 60)}\n", (_b(86, 60)[:20],)),
    Secret("slack-webhook", f"url: https://hooks.slack.com/services/T01/B02/{_b(87, 24)}",
           (_b(87, 24),)),
]

FORMATS = sorted({s.fmt for s in SECRETS})


def _benign() -> list[str]:
    lines: list[str] = []
    for i in range(25):
        h = hashlib.sha1(f"commit{i}".encode()).hexdigest()
        lines.append(f"commit {h}")
        lines.append(f"{h[:12]} Merge pull request #{i}")
    for i in range(20):
        lines.append(f"request_id={uuid.uuid5(uuid.NAMESPACE_DNS, str(i))}")
        lines.append(f'"uuid": "GPU-{uuid.uuid5(uuid.NAMESPACE_URL, str(i))}"')
    for i in range(20):
        d = hashlib.sha256(f"blob{i}".encode()).hexdigest()
        lines.append(f"sha256:{d}")
        lines.append(f'"sha256": "{d}"')
    for word in ("hello", "vllm", "kimi", "nccl", "fp8", "world", "cuda", "auto", "json", "x"):
        lines.append(f"payload {base64.b64encode(word.encode()).decode()}")
    lines += [
        "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE",
        "HF_HUB_OFFLINE=1", "HF_HOME=/models/hf-cache", "TRANSFORMERS_OFFLINE=1",
        '"bos_token_id": 163584,', '"eos_token_id": [163585, 163586],', '"pad_token_id": 0,',
        '"max_tokens": 4096,', '"num_tokens": 131072', "max_num_batched_tokens: 8192",
        '"bos_token": "<|im_start|>",', '"eos_token": "</s>",', '"unk_token": "[UNK]",',
        '"pad_token": null,', '"mask_token": {"content": "<mask>", "lstrip": true},',
        '"model_max_length": 131072,', '"tokenizer_class": "TikTokenTokenizer",',
        "--max-num-batched-tokens 8192", "--max-model-len 131072", "--tokenizer-mode auto",
        "--served-model-name kimi-k2.5", "--trust-remote-code", "--api-key $VLLM_API_KEY",
        "Environment=HF_TOKEN_PATH=/etc/vllm/hf-token-path",
        "EnvironmentFile=-/etc/default/vllm-kimi", "Environment=NCCL_PROTO=LL",
        "Environment=NCCL_P2P_LEVEL=SYS", 'Environment="VLLM_WORKER_MULTIPROC_METHOD=spawn"',
        "password_file=/run/credentials/db.pass", "token_endpoint: https://auth.example.com/token",
        "secret: ${DB_SECRET}", "PASSWORD=<changeme>", "api_key: null", "token: true",
        "OPENAI_API_KEY=", "HF_TOKEN=${HF_TOKEN}", "SECRET_KEY=***",
        "https://huggingface.co/nvidia/Kimi-K2.5-NVFP4", "http://127.0.0.1:8000/v1/models",
        "postgres://db.internal:5432/app", "git@github.com:vllm-project/vllm.git",
        "ssh://git@github.com/vllm-project/vllm.git", "user@host:~$ nvidia-smi topo -m",
        "/opt/vllm/venv/lib/python3.12/site-packages/vllm/attention/backends/registry.py",
        "/models/nvidia/Kimi-K2.5-NVFP4/model-00001-of-00119.safetensors",
        "/models/hf-cache/hub/models--moonshotai--Kimi-K2.5/snapshots/abc123",
        "nvidia/Kimi-K2.5-NVFP4", "zai-org/GLM-5", "deepseek-ai/DeepSeek-V3", "Qwen/Qwen3-32B",
        "meta-llama/Llama-3.1-70B-Instruct", "moonshotai/Kimi-K2.5", "kimi-k2.5",
        "INFO 11-20 14:02:11 [gpu_model_runner.py:2345] Using TRITON_MLA attention backend.",
        "INFO Custom allreduce is disabled because your platform lacks GPU P2P capability.",
        "INFO GPU KV cache size: 1,234,567 tokens", "NCCL version 2.27.3+cuda12.9",
        "Maximum concurrency for 131,072 tokens per request: 9.42x",
        "GPU 0: NVIDIA RTX PRO 6000 Blackwell Server Edition (UUID: GPU-1f2e3d4c)",
        "Driver Version: 580.95.05    CUDA Version: 13.0", "compute_cap=12.0",
        "kv_cache_dtype: fp8_e4m3", '"quant_algo": "NVFP4"', '"kv_cache_quant_algo": "FP8"',
        "torch==2.8.0+cu128", "vllm==0.11.0", "Name: nvidia-nccl-cu12", "Version: 2.27.3",
        "sk-learn is not a package name", "The key is in the secret drawer.",
        "Basic configuration of the server follows.", "Bearer tokens are described in RFC 6750.",
        "Authorization: see docs", "token budget exceeded: 4096 > 2048",
        "tokens_per_second=123.4", "num_tokens=42", "use_fast_tokenizer = true",
        "credentials_path = /etc/agentkit/creds.d", "[REDACTED:secret]", "secret_sauce_enabled=1",
        "keyring backend: SecretService", "hf_transfer enabled", "hf_hub_download(...)",
        "api_org is the organisation prefix", "skip-this-step", "task-1234-abcd",
        "eyJ is how base64 JSON starts", "0123456789abcdef" * 2, "deadbeef" * 5,
        "AKIA prefix is for long-term keys", "ghp_ is a GitHub prefix",
        "KillSignal=SIGINT", "TimeoutStartSec=1800", "Restart=on-failure", "User=vllm",
        "[Service]", "ExecStart=/opt/vllm/venv/bin/vllm serve /models/x --port 8000",
        "WorkingDirectory=/opt/vllm", "After=network-online.target",
        "Description=vLLM OpenAI-compatible server (Kimi-K2.5 NVFP4, TP8)",
        "Documentation=https://docs.vllm.ai/", "LimitMEMLOCK=infinity",
        "CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "NCCL_DEBUG=INFO", "NCCL_IB_DISABLE=1",
        "VLLM_ATTENTION_BACKEND=TRITON_MLA", "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
        '{"architectures": ["DeepseekV3ForCausalLM"], "hidden_size": 7168}',
        '"num_hidden_layers": 61,', '"num_attention_heads": 64,', '"kv_lora_rank": 512,',
        '"rope_theta": 50000.0,', '"torch_dtype": "bfloat16",', '"vocab_size": 163840,',
        "  GPU0  GPU1  CPU Affinity  NUMA Affinity", "GPU0   X   SYS   0-63   0",
        "Linux bw-pcie-01 6.8.0-45-generic x86_64", "MemTotal: 1056783212 kB",
        "Nov 20 14:02:11 bw-pcie-01 vllm[2231]: INFO Started server process",
        "Loading safetensors checkpoint shards: 100% Completed | 119/119",
        "export PATH=/usr/local/cuda/bin:$PATH", "LD_LIBRARY_PATH=/usr/local/cuda/lib64",
        "model.layers.0.self_attn.kv_a_proj_with_mqa.weight", "lm_head.weight",
        "weight_map: model-00042-of-00119.safetensors",
        "ETag: \"5d41402abc4b2a76b9719d911017c592\"",
        "Content-Type: application/json", "X-Request-Id: 7f9c2ba4e88f827d616045507605853e",
        "session_id: 42", "auth_method: oidc", "secret_name: db-credentials",
        "token_type: Bearer", "api_version: v1", "key: value", "keyfile: none",
    ]
    return lines


BENIGN: list[str] = _benign()

from .harness import O
K = "K-over-redaction"
for t in [
    "docker run --gpus all -p 8000:8000 vllm/vllm-openai:v0.6.3 --model meta-llama/Llama-3.1-70B-Instruct",
    "docker run -p 8000:8000/tcp vllm/vllm-openai:latest",
    "docker run -p 127.0.0.1:8000:8000/udp img",
    "ssh -p 22 ubuntu@gpu-node-01",
    "ssh -p 2222 ubuntu@10.0.0.12",
    "mkdir -p /x/y",
    "mkdir -p models/llama3",
    "mkdir -p ~/ckpt2024",
    "mkdir -p $HOME/cache2",
    "mkdir -p checkpoints/step_10000",
    "kubectl logs -p vllm-7f9c8d6b5-abcde",
    "docker compose -p llama70b-serving up -d",
    "cp -a checkpoints/step_10000 /backup/",
    "rsync -a models/llama3-70b/ /mnt/nvme/",
    "ls -a",
    "ls -a build2024",
    "grep -P '[a-z]+\\d{3}' server.log",
    "pytest -k test_decode123",
    "git show -p 1a2b3c4d5e6f",
    "wget -P downloads2024 https://x/y.tar",
    "sort -k2,2n -k3 file",
    "xargs -P 8 -n 1 cmd",
    "mysql -h db -P 3306 -u root",
    "timeout -k 10s 300s python bench.py",
    "tar -a -cf out2024.tar.zst data/",
    "git commit -a -m 'bump vllm to v0.6.3.post1'",
    "nvidia-smi -a",
    "ps -p 12345 -o pid,cmd",
    "docker run -e NCCL_IB_HCA=mlx5_0,mlx5_1 -e NCCL_DEBUG=INFO img",
    "docker run -e MODEL=meta-llama/Llama-3.1-70B-Instruct img",
    "docker run -e MODEL=NousResearch/Hermes-3-Llama-3.1-8B img",
    "docker run -e MODEL=HuggingFaceH4/zephyr-7b-beta img",
    "docker run -e NCCL_SOCKET_IFNAME=enp196s0f0np0 img",
    "docker run -e NVIDIA_VISIBLE_DEVICES=GPU-1a2b3c4d-1234-5678-9abc-def012345678 img",
    "docker run -e CUDA_VISIBLE_DEVICES=0,1,2,3 img",
    "docker run -e VLLM_ATTENTION_BACKEND=FLASHINFER img",
    "docker run -e HF_HUB_OFFLINE=1 -e TRANSFORMERS_CACHE=/data/hf img",
    "docker run --env NCCL_TOPO_FILE=/opt/topo/h100x8.xml img",
    "docker run -e GIT_SHA=1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b img",
    "vllm serve meta-llama/Llama-3.1-70B-Instruct --max-num-batched-tokens 8192 --max-model-len 32768 --tensor-parallel-size 8",
    "vllm serve m --num-speculative-tokens 5 --tokenizer meta-llama/Llama-3.1-8B --tokenizer-mode auto",
    "vllm serve m --ssl-keyfile /etc/tls/key.pem --ssl-certfile /etc/tls/cert.pem",
    "vllm serve m --kv-cache-dtype fp8_e4m3 --enable-prefix-caching",
    "python -m sglang.launch_server --model-path Qwen/Qwen2.5-72B-Instruct --tp 8 --skip-tokenizer-init",
    "trtllm-serve /engines/llama3-70b --max_num_tokens 8192 --tokenizer /models/llama3",
    "image: vllm/vllm-openai@sha256:4f0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b",
    "commit 1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b\nAuthor: dev <dev@x.com>",
    "torch 2.5.1+cu124 vllm 0.6.3.post1 flashinfer 0.1.6+cu124torch2.4",
    "NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB ib0:10.0.0.1<0>",
    "model_max_length: 131072\nbos_token: \"<|begin_of_text|>\"\neos_token: \"<|eot_id|>\"\npad_token: null",
    '{"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<unk>", "sep_token": "[SEP]"}',
    '{"add_bos_token": true, "bos_token": {"content": "<s>", "lstrip": false}}',
    '{"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>", "additional_special_tokens": ["<|im_start|>", "<|im_end|>"]}',
    '{"max_tokens": 512, "prompt_tokens": 12, "completion_tokens": 300, "total_tokens": 312}',
    "pin_memory: true\nnum_workers: 8",
    "cpu_pin: 0-15",
    "proxy_bypass = localhost,127.0.0.1",
    "bypass: localhost",
    "hash_salt: 42",
    "spin_lock: true",
    "secretName: hf-token",
    "location /v1 {\n    proxy_pass http://127.0.0.1:8000;\n}",
    "requests_per_token_budget: 128",
    "tokenizer_config.json  special_tokens_map.json  tokenizer.json",
    "kv_cache_key_dtype: fp8",
    "passthrough: true",
    "first_pass: true",
    "ssh -a -p 22 host",
    "curl -k https://localhost:8000/v1/models",
    "curl -u admin: https://x",
    "export NCCL_IB_GID_INDEX=3 NCCL_P2P_LEVEL=NVL",
    "python -c 'import torch; print(torch.cuda.device_count())'",
    "-rw-r--r-- 1 root root 4.0K May  1 12:00 secrets.yaml",
    "pip install vllm==0.6.3.post1 flash-attn==2.6.3",
    "CUDA_HOME=/usr/local/cuda-12.4",
    "key: value",
    "token_budget: 4096",
    "--max-num-seqs 256 --max-seq-len-to-capture 8192",
]:
    O(K, "text: " + t.split("\n")[0][:60], t, name="notes.txt")

K8 = "K-over-k8s"
O(K8, "configmap with data", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: vllm\ndata:\n  MODEL: meta-llama/Llama-3.1-70B-Instruct\n  NCCL_IB_HCA: mlx5_0\n", name="cm.yaml")
O(K8, "configmap then secret multi-doc: configmap part", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: vllm\ndata:\n  MODEL: meta-llama/Llama-3.1-70B-Instruct\n  PORT: \"8000\"\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: hf\ntype: Opaque\n", name="all.yaml")
O(K8, "configmap mentioning kind: Secret in comment", "apiVersion: v1\nkind: ConfigMap  # not a kind: Secret\ndata:\n  MODEL: meta-llama/Llama-3.1-70B-Instruct\n", name="cm.yaml")
O(K8, "pod volumes secret secretName", "spec:\n  volumes:\n    - name: creds\n      secret:\n        secretName: hf-token\n        defaultMode: 0400\n", name="pod.yaml")
O(K8, "imagePullSecrets", "spec:\n  imagePullSecrets:\n    - name: regcred\n  containers:\n    - name: vllm\n", name="pod.yaml")
O(K8, "secretKeyRef", "env:\n  - name: HF_TOKEN\n    valueFrom:\n      secretKeyRef:\n        name: hf\n        key: token\n", name="pod.yaml")
O(K8, "compose top-level secrets with file", "secrets:\n  hf_token:\n    file: ./hf_token.txt\n", name="docker-compose.yml")
O(K8, "compose service secrets list", "services:\n  vllm:\n    secrets:\n      - hf_token\n", name="docker-compose.yml")
O(K8, "k8s env non-secret value", "env:\n  - name: NCCL_DEBUG\n    value: INFO\n  - name: MODEL\n    value: meta-llama/Llama-3.1-70B-Instruct\n", name="pod.yaml")
O(K8, "env name DB_PASSWORD_FILE value path", "env:\n  - name: DB_PASSWORD\n    valueFrom: {secretKeyRef: {name: db, key: pw}}\n  - name: MODEL\n    value: mistralai/Mixtral-8x7B-v0.1\n", name="pod.yaml")
O(K8, "SecretProviderClass spec", "apiVersion: secrets-store.csi.x-k8s.io/v1\nkind: SecretProviderClass\nspec:\n  parameters:\n    objects: |\n      - objectName: hf\n", name="spc.yaml")
O(K8, "ExternalSecret data remoteRef", "apiVersion: external-secrets.io/v1beta1\nkind: ExternalSecret\nspec:\n  data:\n    - secretKey: token\n      remoteRef:\n        key: prod/hf\n", name="es.yaml")
O(K8, "helm values secrets: existingSecret names", "auth:\n  existingSecret: redis-auth\n  existingSecretPasswordKey: password\n", name="values.yaml")
O(K8, "configmap CRLF", "apiVersion: v1\r\nkind: ConfigMap\r\ndata:\r\n  MODEL: meta-llama/Llama-3.1-70B-Instruct\r\n", name="cm.yaml")
O(K8, "secret metadata labels after data", "apiVersion: v1\nkind: Secret\ndata:\n  token: [REDACTED]\nmetadata:\n  name: hf\n  labels:\n    app: vllm\n", name="s.yaml")

KE = "K-over-envfile"
for t in ["MODEL=meta-llama/Llama-3.1-70B-Instruct", "GIT_SHA=1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b",
          "NCCL_SOCKET_IFNAME=enp196s0f0np0", "IMAGE=vllm/vllm-openai:v0.6.3.post1",
          "IMAGE_DIGEST=sha256:4f0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b",
          "NVIDIA_VISIBLE_DEVICES=GPU-1a2b3c4d-1234-5678-9abc-def012345678", "NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3",
          "SERVED_MODEL_NAME=Llama3170BInstructFP8", "HF_HOME=/data/hf", "VLLM_VERSION=0.6.3.post1",
          "TORCH_CUDA_ARCH_LIST=8.0;8.6;9.0+PTX", "MODEL_REVISION=5206a32e0bd3067aef1ce90f5528ade7d866253f"]:
    O(KE, ".env " + t[:50], t + "\n", name=".env.production")

KA = "K-over-argv"
from .harness import CASES
for argv in [["mkdir", "-p", "ckpt/step1000"], ["docker", "run", "-p", "8000:8000/tcp", "img"],
             ["vllm", "serve", "--no-auth", "--port", "8000"], ["kubectl", "logs", "-p", "vllm-7f9c8d6b5-abcde"],
             ["ssh", "-p", "22", "h"], ["docker", "run", "-e", "NCCL_IB_HCA=mlx5_0", "img"],
             ["vllm", "serve", "meta-llama/Llama-3.1-70B-Instruct", "--max-num-batched-tokens", "8192"],
             ["python", "-m", "vllm.entrypoints.openai.api_server", "--tokenizer", "meta-llama/Llama-3.1-8B"],
             ["vllm", "serve", "m", "--ssl-keyfile", "/etc/tls/key.pem"],
             ["sglang", "--sort-key", "name2024abc"], ["vllm", "--kv-cache-dtype", "fp8_e4m3"],
             ["cp", "-a", "checkpoints/step_10000", "/backup"], ["pytest", "-k", "test_decode123"],
             ["docker", "run", "-e", "MODEL=NousResearch/Hermes-3-Llama-3.1-8B", "img"],
             ["torchrun", "--nproc-per-node", "8", "--rdzv-id", "job2024a", "train.py"],
             ["vllm", "serve", "m", "--speculative-model", "[ngram]", "--num-speculative-tokens", "5"],
             ["ray", "start", "--head", "--node-ip-address", "10.0.0.1", "--redis-password", "5241590000000000"],
            ]:
    CASES.append((KA, "over", "argv " + " ".join(argv)[:60], "argv", "", argv, None))

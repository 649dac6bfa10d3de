"""The server log's capacity and load lines, in the engines' own formats.

vLLM (V1 engine, ``vllm/v1/metrics/loggers.py`` LoggingStatLogger.log; every 10 s while busy):
    Engine 000: Avg prompt throughput: 51.2 tokens/s, Avg generation throughput: 59.8
    tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.3%, Prefix cache hit
    rate: 0.0%
vLLM V0 printed "Pending: N reqs" and "Swapped: N reqs" instead of Waiting, and warned on each
preemption ("Sequence group … is preempted by PreemptionMode.… because there is not enough KV
cache space. … total_num_cumulative_preemption=N"); V1 does not log preemptions (they are the
``vllm:num_preemptions`` Prometheus counter).
vLLM capacity at start (``gpu_worker.py``, ``kv_cache_utils.py``): "Available KV cache memory:
16.83 GiB", "GPU KV cache size: 257,152 tokens", "Maximum concurrency for 131,072 tokens per
request: 1.96x", "Model loading took 67.41 GiB", "num_gpu_blocks is: 4018".
SGLang (``scheduler`` log_decode_stats / log_prefill_stats): "Decode batch. #running-req: 1,
#token: 1234, token usage: 0.01, gen throughput (token/s): 60.12, #queue-req: 0" (newer:
"Decode batch, … #full token: …, full token usage: …"); "Prefill batch. … #queue-req: N";
retractions "Decode out of memory happened. #retracted_reqs: N"; capacity "KV Cache is
allocated. #tokens: N, KV size: X GB" (or "K size: X GB, V size: X GB").
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import _regex as re  # re, its compiled patterns kept on disk (_regex.py)

_V1 = re.compile(
    r"Avg prompt throughput: ([\d.]+) tokens/s, Avg generation throughput: ([\d.]+) tokens/s,"
    r" Running: (\d+) reqs,(?: Swapped: (\d+) reqs,)? (?:Waiting|Pending): (\d+) reqs,"
    r" GPU KV cache usage: ([\d.]+)%")
_V0_PREEMPT = re.compile(r"is preempted by PreemptionMode\.\w+ mode because there is not "
                         r"enough KV cache space.*?total_num_cumulative_preemption=(\d+)")
_SGL_DECODE = re.compile(
    r"Decode batch[.,] #running-req: (\d+), #(?:full )?token: (\d+), (?:full )?token usage: "
    r"([\d.]+),.*?gen throughput \(token/s\): ([\d.]+)(?:, #queue-req: (\d+))?")
_SGL_RETRACT = re.compile(r"#retracted_reqs: (\d+)")
_SGL_PREFILL_QUEUE = re.compile(r"Prefill batch[.,].*?#queue-req: (\d+)")

CAPACITY = {
    "kv_memory_gib": re.compile(r"Available KV cache memory: ([\d.]+) GiB"),
    "weights_gib": re.compile(r"Model loading took ([\d.]+) GiB"),
    "num_gpu_blocks": re.compile(r"num_gpu_blocks is: (\d+)"),
    "kv_tokens": re.compile(r"GPU KV cache size: ([\d,]+) tokens"),
    "max_concurrency": re.compile(r"Maximum concurrency for ([\d,]+) tokens per request: "
                                  r"([\d.]+)x"),
    "sglang_kv": re.compile(r"KV Cache is allocated\. #tokens: (\d+), (?:KV size: ([\d.]+) GB"
                            r"|K size: ([\d.]+) GB, V size: ([\d.]+) GB)"),
}


@dataclass
class Sample:
    line: int
    running: int
    waiting: int | None
    usage_pct: float
    gen_tps: float
    prompt_tps: float | None


@dataclass
class Load:
    """What the periodic stats lines say over the logged window."""

    samples: list[Sample] = field(default_factory=list)
    preemptions: int = 0
    preempt_lines: list[int] = field(default_factory=list)
    queue_lines: list[int] = field(default_factory=list)   # SGLang prefill #queue-req > 0
    queued_max: int = 0

    @property
    def max_running(self) -> int:
        return max((s.running for s in self.samples), default=0)

    @property
    def max_waiting(self) -> int:
        return max([s.waiting or 0 for s in self.samples] + [self.queued_max])

    @property
    def max_usage(self) -> float:
        return max((s.usage_pct for s in self.samples), default=0.0)

    def busy(self) -> list[Sample]:
        return [s for s in self.samples if s.running > 0 and s.gen_tps > 0]

    def verdict(self) -> str:
        """"bound": requests waited with the cache nearly full, or requests were preempted;
        "not-bound": nothing ever waited and the cache stayed under 80 %; else "unclear"."""
        if not self.samples and not self.preemptions:
            return "not-established"
        if self.preemptions or any((s.waiting or 0) > 0 and s.usage_pct >= 90
                                   for s in self.samples):
            return "bound"
        if self.max_waiting == 0 and self.max_usage < 80:
            return "not-bound"
        return "unclear"


def parse_load(lines: list[str]) -> Load:
    load = Load()
    for n, line in enumerate(lines, 1):
        m = _V1.search(line)
        if m:
            load.samples.append(Sample(n, int(m[3]), int(m[5]), float(m[6]), float(m[2]),
                                       float(m[1])))
            continue
        m = _SGL_DECODE.search(line)
        if m:
            load.samples.append(Sample(n, int(m[1]), int(m[5]) if m[5] else None,
                                       100 * float(m[3]), float(m[4]), None))
            continue
        m = _V0_PREEMPT.search(line)
        if m:
            load.preemptions = max(load.preemptions, int(m[1]))
            load.preempt_lines.append(n)
            continue
        m = _SGL_RETRACT.search(line)
        if m:
            load.preemptions += int(m[1])
            load.preempt_lines.append(n)
            continue
        m = _SGL_PREFILL_QUEUE.search(line)
        if m and int(m[1]) > 0:
            load.queued_max = max(load.queued_max, int(m[1]))
            load.queue_lines.append(n)
    return load


def parse_capacity(lines: list[str]) -> dict[str, tuple[int, tuple[str | None, ...]]]:
    """{key: (line number, groups)} of the last start's capacity lines (a restart logs them
    again; the running server is the last one)."""
    out: dict[str, tuple[int, tuple[str | None, ...]]] = {}
    for n, line in enumerate(lines, 1):
        for key, pattern in CAPACITY.items():
            m = pattern.search(line)
            if m:
                out[key] = (n, m.groups())
    return out

"""Builds a variant host from a bundled example and checks an investigation's facts against
the expectations written in its scenario.yaml (see README.md beside this file)."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import yaml

from agentkit import Orchestrator
from agentkit._catalog._synth import TemplateSynthesizer
from agentkit._sandbox._host import Host
from agentkit._types import Answer, Plan, TaskResult

from ..citations import audit

HERE = Path(__file__).resolve().parent
VARIANTS = HERE / "variants"
EXAMPLES = HERE.parent.parent / "examples"
REFERENCE_QUESTION = ("Do previous optimizations, esp around allreduce apply? Would setting k/v "
                      "cache to fp8 as the model recommends also improve perf?")

# expectation key → (task that establishes it, fact it is read from)
SOURCES: dict[str, tuple[str, str]] = {
    "servers": ("service-unit", "host"), "current": ("service-unit", "host"),
    "ambiguous": ("service-unit", "host"), "state": ("service-unit", "server_state"),
    "engine": ("service-unit", "engine"), "served_model": ("serve-flags", "model_path"),
    "tp": ("serve-flags", "tensor_parallel"), "nccl": ("nccl-env", "nccl_tuning"),
    "nccl_sources": ("nccl-env", "nccl_tuning"),
    "custom_allreduce": ("custom-allreduce", "custom_allreduce"),
    "previous_model": ("model-diff", "previous_model_paths"),
    "allreduces": ("model-diff", "allreduce"),
    "kv_recommended": ("quant-config", "kv_cache_recommended"),
    "fp8_kv": ("kv-cache-dtype-support", "kv_verdict"),
    "kv_backend": ("kv-cache-dtype-support", "kv_dtype_backend"),
    "vllm_version": ("kv-cache-dtype-support", "vllm_version"),
    "runtime": ("service-unit", "unit"),
}
TEXT_KEYS = {"bottom_contains", "bottom_excludes", "answer_contains", "unanswered"}


@dataclass
class Scenario:
    name: str
    spec: dict[str, Any]

    @property
    def question(self) -> str:
        return str(self.spec.get("question") or REFERENCE_QUESTION)

    @property
    def expect(self) -> dict[str, Any]:
        return dict(self.spec.get("expect") or {})


def load(name: str) -> Scenario:
    spec = yaml.safe_load((VARIANTS / name / "scenario.yaml").read_text())
    unknown = set(spec.get("expect") or {}) - set(SOURCES) - TEXT_KEYS
    if unknown:
        raise ValueError(f"{name}: unknown expectation keys {sorted(unknown)}")
    return Scenario(name, spec)


def names() -> list[str]:
    return sorted(p.name for p in VARIANTS.iterdir() if (p / "scenario.yaml").is_file())


def build(sc: Scenario, dst: Path) -> Path:
    """The variant host: the base example copied, then the scenario's changes in order."""
    spec = sc.spec
    root = dst / sc.name
    shutil.copytree(EXAMPLES / spec["base"], root, symlinks=True)
    for rel in spec.get("remove") or []:
        p = root / rel
        shutil.rmtree(p) if p.is_dir() and not p.is_symlink() else p.unlink()
    for src, to in (spec.get("rename") or {}).items():
        (root / to).parent.mkdir(parents=True, exist_ok=True)
        (root / src).rename(root / to)
    for rel, text in (spec.get("files") or {}).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    for rel, target in (spec.get("symlinks") or {}).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).symlink_to(target)
    for rel, edits in (spec.get("replace") or {}).items():
        text = (root / rel).read_text()
        for old, new in edits:
            if old not in text:
                raise ValueError(f"{sc.name}: {old!r} does not occur in {rel}")
            text = text.replace(old, new)
        (root / rel).write_text(text)
    for rel, keys in (spec.get("json_set") or {}).items():
        data = json.loads((root / rel).read_text())
        for dotted, value in keys.items():
            _json_set(data, dotted.split("."), value)
        (root / rel).write_text(json.dumps(data, indent=2))
    _captures(root, spec)
    _processes(root, spec)
    _gpus(root, spec)
    return root


def _processes(root: Path, spec: dict[str, Any]) -> None:
    """`processes:` — the serving processes the snapshot captured (a list as the
    serving_processes tool returns it); `[]` says none was running."""
    if "processes" not in spec:
        return
    (root / ".agentkit/processes.json").write_text(json.dumps(spec["processes"], indent=1))
    manifest_path = root / ".agentkit/snapshot.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["processes"] = "processes.json"
    manifest_path.write_text(json.dumps(manifest, indent=2))


def _json_set(data: dict[str, Any], keys: list[str], value: Any) -> None:
    for k in keys[:-1]:
        data = data.setdefault(k, {})
    if value is None:
        data.pop(keys[-1], None)
    else:
        data[keys[-1]] = value


def _captures(root: Path, spec: dict[str, Any]) -> None:
    commands = spec.get("commands") or []
    if not commands:
        return
    manifest_path = root / ".agentkit/snapshot.json"
    manifest = json.loads(manifest_path.read_text())
    for n, cmd in enumerate(commands):
        argv = [str(a) for a in cmd["argv"]]
        rel = f"commands/variant-{n}.txt"
        (root / ".agentkit" / rel).write_text(cmd.get("stdout", ""))
        manifest["commands"] = [c for c in manifest["commands"] if c["argv"] != argv]
        manifest["commands"].append({"argv": argv, "stdout": rel,
                                     "exit_code": int(cmd.get("exit_code", 0))})
    manifest_path.write_text(json.dumps(manifest, indent=2))


def _gpus(root: Path, spec: dict[str, Any]) -> None:
    count, link = spec.get("gpus"), spec.get("links")
    if count is None and link is None:
        return
    path = root / ".agentkit/nvml.json"
    nvml = json.loads(path.read_text())
    topo = nvml.get("topology") or {}
    if count is not None:
        nvml["devices"] = nvml["devices"][:count]
        if topo:
            topo["labels"] = topo["labels"][:count]
            topo["matrix"] = [row[:count] for row in topo["matrix"][:count]]
    if link is not None and topo:
        topo["matrix"] = [["X" if i == j else link for j in range(len(row))]
                          for i, row in enumerate(topo["matrix"])]
    path.write_text(json.dumps(nvml, indent=2))


class _Capture(TemplateSynthesizer):
    def __init__(self) -> None:
        self.results: list[TaskResult] = []

    async def synthesize(self, question: str, plan: Plan, results: list[TaskResult]) -> Answer:
        self.results = results
        return await super().synthesize(question, plan, results)


@dataclass
class Outcome:
    answer: Answer
    results: dict[str, TaskResult] = field(default_factory=dict)


def investigate(root: Path, question: str, tasks: list[str] | None = None) -> Outcome:
    orch = Orchestrator.catalog(Host.at(root))
    cap = _Capture()
    orch.synthesizer = cap
    answer = anyio.run(lambda: orch.investigate(question, tasks=tasks))
    return Outcome(answer, {r.task_id: r for r in cap.results})


def bottom_text(answer: Answer) -> str:
    return "\n".join(c.text for c in answer.bottom_line)


def all_text(answer: Answer) -> str:
    return bottom_text(answer) + "\n" + "\n".join(c.text for s in answer.sections
                                                  for c in s.claims)


def _fact(out: Outcome, task: str, fact: str) -> Any:
    """The fact from the task that usually establishes it, else from any task that did
    (the version, say, when the FP8 task stopped early)."""
    r = out.results.get(task)
    if r is not None and fact in r.facts:
        return r.facts[fact].value
    for other in out.results.values():
        if fact in other.facts:
            return other.facts[fact].value
    raise KeyError(fact)


def actual(key: str, out: Outcome) -> Any:
    """The investigation's value for one expectation key, in the vocabulary of README.md."""
    task, fact = SOURCES[key]
    try:
        value = _fact(out, task, fact)
    except KeyError:
        if key == "fp8_kv":
            return "undetermined"
        if key == "previous_model":
            return None
        return "<not established>"
    if key == "servers":
        return sorted(s["name"] for s in value["servers"])
    if key == "current":
        return "ambiguous" if value["ambiguous"] else value["current"]
    if key == "ambiguous":
        return sorted(value["ambiguous"])
    if key == "state":
        return value["value"]
    if key == "runtime":
        return value["runtime"]
    if key == "served_model":
        return "/".join(str(value).rstrip("/").split("/")[-2:])
    if key == "nccl":
        return {s["name"]: s["value"] for s in value}
    if key == "nccl_sources":
        return {s["name"]: f"{s['source']}:{s['line']}" for s in value}
    if key == "custom_allreduce":
        return value["holds"]
    if key == "previous_model":
        return "/".join(value[0].rstrip("/").split("/")[-2:]) if value else None
    if key == "allreduces":
        return [value["served"], value["previous"]]
    return value


def _unit_names(value: Any) -> Any:
    if isinstance(value, list):
        return sorted(_unit_names(v) for v in value)
    return value.removesuffix(".service") if isinstance(value, str) else value


def check(sc: Scenario, tmp: Path) -> list[str]:
    """Every failed expectation, as one line each (empty when the variant passes)."""
    root = build(sc, tmp)
    out = investigate(root, sc.question)
    expect = sc.expect
    fact_keys = [k for k in expect if k in SOURCES]
    missing = sorted({SOURCES[k][0] for k in fact_keys} - set(out.results))
    facts_out = out
    if missing:  # facts the question's plan did not ask for: run those tasks directly
        extra = investigate(root, sc.question, tasks=sorted({SOURCES[k][0] for k in fact_keys}))
        facts_out = Outcome(out.answer, {**out.results, **extra.results})
    problems = []
    for key in fact_keys:
        want, got = expect[key], actual(key, facts_out)
        if key in ("servers", "current", "ambiguous"):  # "x" and "x.service" name one unit
            want, got = _unit_names(want), _unit_names(got)
        if key == "nccl_sources" and isinstance(got, dict):  # only the variables named
            got = {k: got.get(k) for k in want}
        ok = (want in got) if key == "custom_allreduce" and isinstance(got, list) else (
            want == got)
        if not ok:
            problems.append(f"{key}: expected {want!r}, got {got!r}")
    bottom, everything = bottom_text(out.answer).lower(), all_text(out.answer).lower()
    for s in expect.get("bottom_contains") or []:
        if s.lower() not in bottom:
            problems.append(f"bottom line lacks {s!r}")
    for s in expect.get("bottom_excludes") or []:
        if s.lower() in bottom:
            problems.append(f"bottom line has {s!r}")
    for s in expect.get("answer_contains") or []:
        if s.lower() not in everything:
            problems.append(f"answer lacks {s!r}")
    if expect.get("unanswered"):
        part = str(expect["unanswered"]).lower()
        if not any(part in c.text.lower() and "not answered" in c.text.lower()
                   for c in out.answer.bottom_line):
            problems.append(f"bottom line does not name {part!r} as unanswered")
    # every citation resolves and its excerpt shows the fact it stands for (issue 25, item 7)
    problems += [f"citation {p}" for p in audit([c.model_dump() for c in out.answer.citations],
                                                root)]
    if expect.get("current") == "ambiguous":
        for unit in expect.get("ambiguous") or []:
            if unit.lower() not in bottom:
                problems.append(f"bottom line does not name ambiguous candidate {unit!r}")
        if "ambiguous" not in bottom:
            problems.append("bottom line does not say ambiguous")
    return problems

"""Recipe functions about models: architecture from config.json (nested ``text_config``
included), the earlier models on the host, the side-by-side diff with the allreduce arithmetic,
and the checkpoint's quantization (and the KV-cache dtype it recommends)."""

from __future__ import annotations

import re
from typing import Any

from .._hostmodel import HostModel, Server, journal_argv
from ._knowledge import ARCH_KEYS, BF16_BYTES
from ._recipe import RecipeContext, StepFailed, recipe_function

_NESTS = ("text_config.", "language_config.", "llm_config.", "")


async def read_model(ctx: RecipeContext, model_dir: str) -> dict[str, dict[str, Any]]:
    """{meaning: {value, key, evidence}} for one model directory's config.json."""
    path = model_dir.rstrip("/") + "/config.json"
    parsed = await ctx.tool("parse_config", path=path, format="json")
    assert parsed is not None
    entries = {e["key"]: e for e in parsed["entries"]}
    # every key, for the KV-cache arithmetic (_fn_capacity), without reading the file again
    ctx.vars.setdefault("config_entries", {})[model_dir] = entries
    keys = "\n".join(sorted(entries))
    out: dict[str, dict[str, Any]] = {}
    for meaning, names in ARCH_KEYS.items():
        hit = next((entries[n + k] for n in _NESTS for k in names if n + k in entries), None)
        if hit is None:
            ev = ctx.cite("config", f"{path} (no key {meaning})",
                          f"{meaning} is absent from {path}", keys)
            out[meaning] = {"value": None, "key": None, "evidence": [ev]}
        else:
            out[meaning] = {"value": hit["value"], "key": hit["key"],
                            "evidence": [hit["evidence_id"]]}
    out["path"] = {"value": model_dir, "key": None, "evidence": []}
    _derive(out)
    return out


def _derive(m: dict[str, dict[str, Any]]) -> None:
    def v(k: str) -> Any:
        return m[k]["value"]

    def ev(*ks: str) -> list[str]:
        return sorted({e for k in ks for e in m[k]["evidence"]})

    layers = v("num_hidden_layers")
    experts = v("n_routed_experts")
    if experts:
        if v("mlp_only_layers"):
            dense = len(v("mlp_only_layers"))
            dense_src = "mlp_only_layers"
        else:
            dense = v("first_k_dense_replace") or 0
            dense_src = "first_k_dense_replace"
    else:
        dense, dense_src = layers, "n_routed_experts"
    m["dense_layers"] = {"value": dense, "key": None, "evidence": ev(dense_src)}
    moe = (layers - dense) if isinstance(layers, int) and experts else 0
    m["moe_layers"] = {"value": moe, "key": None, "evidence": ev("num_hidden_layers", dense_src)}
    if isinstance(layers, int):
        m["allreduces_per_step"] = {"value": 2 * layers, "key": None,
                                    "evidence": ev("num_hidden_layers")}
    hidden = v("hidden_size")
    if isinstance(hidden, int):
        m["allreduce_bytes_per_token"] = {"value": hidden * BF16_BYTES, "key": None,
                                          "evidence": ev("hidden_size")}
    m["attention"] = {"value": "MLA" if v("kv_lora_rank") else "MHA/GQA", "key": None,
                      "evidence": ev("kv_lora_rank")}


def display_name(model_dir: str) -> str:
    parts = [p for p in model_dir.rstrip("/").split("/") if p]
    return "/".join(parts[-2:])


@recipe_function("question_model")
async def question_model(ctx: RecipeContext) -> str:
    """The model the question asks about: another model on the host when the question names
    exactly one ("…help the Foo-7B model we ran before?"), else the served one. Later steps
    (model_architecture, quant_config) then read that model. Needs: model_path."""
    served = ctx.need("model_path", "serve_flags").value.rstrip("/")
    question = str(ctx.spec.inputs.get("question", ""))
    dirs, ev = await _model_dirs(ctx, served)
    model: HostModel | None = ctx.vars.get("host_model")
    others = {s.model_path for s in (model.servers if model else []) if s.model_path}
    named = [c for c in sorted(set(dirs) | others - {served}) if named_in(question, c)]
    if len(named) == 1 and not named_in(question, served):
        ctx.vars["subject_path"] = named[0]
        ctx.fact("subject_model", {"path": named[0], "name": display_name(named[0]),
                                   "served": display_name(served)}, ev)
        return named[0]
    return served


def _subject(ctx: RecipeContext) -> str:
    return str(ctx.vars.get("subject_path") or ctx.need("model_path", "serve_flags").value)


@recipe_function("model_architecture")
async def model_architecture(ctx: RecipeContext) -> dict[str, Any]:
    """The layout of the served model (or of the one the question names, after
    question_model). Needs: model_path (serve_flags). Sets: served_model."""
    path = _subject(ctx)
    model = await read_model(ctx, path)
    _model_fact(ctx, "served_model", path, model)
    return model


def _model_fact(ctx: RecipeContext, name: str, path: str, model: dict[str, Any]) -> None:
    value = {k: d["value"] for k, d in model.items()}
    value["name"] = display_name(path)
    ctx.fact(name, value, [e for d in model.values() for e in d["evidence"]])
    ctx.vars[name] = model


def _tokens(text: str) -> list[str]:
    return [t for t in re.split(r"[^a-z0-9]+", text.lower()) if t]


def named_in(question: str, model_dir: str) -> bool:
    """Whether the question names this model: the leading words of its directory name
    (for "Foo-7B-Instruct": "foo 7b") appear in the question, in order."""
    name = _tokens(model_dir.rstrip("/").rsplit("/", 1)[-1])
    words = _tokens(question)
    head = name[: 2 if len(name) > 1 else 1]
    return any(words[i : i + len(head)] == head for i in range(len(words)))


_JOURNAL_MODEL = re.compile(r"model='([^']+)'|'model': '([^']+)'|Starting to load model (\S+?)"
                            r"\.{0,3}$|\bserve (/\S+)")


async def _journal_models(ctx: RecipeContext, served: str) -> list[tuple[str, str]]:
    """Models the serving unit's journal shows it served before (latest last), each with
    the evidence of its last mention."""
    unit = ctx.facts["unit"].value["name"] if "unit" in ctx.facts else None
    if unit is None:
        return []
    out = await ctx.tool("run_command", optional=True, argv=journal_argv(unit))
    if not out or out["exit_code"] != 0:
        return []
    seen: dict[str, str] = {}
    lines = out["stdout"].splitlines()
    for n, line in enumerate(lines, 1):
        for m in _JOURNAL_MODEL.finditer(line):
            path = next(g for g in m.groups() if g).rstrip("/")
            if path != served and path.startswith("/"):
                seen.pop(path, None)
                seen[path] = ctx.cite_output_line(out, n)
    return list(seen.items())


async def _model_dirs(ctx: RecipeContext, served: str) -> tuple[list[str], list[str]]:
    parent = served.rsplit("/", 1)[0] or "/"
    grand = parent.rsplit("/", 1)[0] or "/"
    patterns = {f"{parent}/*/config.json", f"{parent}/*/*/config.json",
                f"{grand}/*/*/config.json", f"{grand}/*/config.json"}
    found: set[str] = set()
    ev = []
    for pattern in sorted(patterns):
        listing = await ctx.tool("glob", pattern=pattern.replace("//", "/"))
        if listing:
            ev.append(listing["evidence_id"])
            found.update(p.rsplit("/", 1)[0] for p in listing["paths"])
    found.discard(served)
    return sorted(found), ev


@recipe_function("previous_models")
async def previous_models(ctx: RecipeContext) -> list[str]:
    """The earlier deployment's model, decided from evidence in this order: the model the
    question names; the model another (older, disabled or stopped) unit serves; the model the
    serving unit's journal shows it served before; the only other model directory. Otherwise
    none is compared and the candidates are listed. Needs: model_path.
    Sets: previous_model_paths, previous_choice."""
    served = ctx.need("model_path", "serve_flags").value.rstrip("/")
    if "previous_model" in ctx.spec.inputs:
        paths = [str(ctx.spec.inputs["previous_model"])]
        ctx.fact("previous_model_paths", paths, [])
        ctx.fact("previous_choice", {"path": paths[0], "why": "the caller named it",
                                     "candidates": paths}, [])
        return paths
    dirs, ev = await _model_dirs(ctx, served)
    model: HostModel | None = ctx.vars.get("host_model")
    others = {s.model_path: s for s in (model.servers if model else [])
              if s.model_path and s.model_path != served}
    same = await _same_model(ctx, served, sorted(set(dirs)))
    candidates = sorted((set(dirs) | set(others)) - set(same))
    if same:
        ctx.fact("served_alias", same, ev)
    question = str(ctx.spec.inputs.get("question", ""))
    chosen, why, cite = _decide(question, candidates, others, served)
    if chosen is None:
        history = await _journal_models(ctx, served)
        if history:
            chosen, last_ev = history[-1]
            why = f"the journal of the serving unit shows it served {chosen} before"
            cite = [last_ev]
    if chosen is None and len(candidates) == 1:
        chosen = candidates[0]
        why = ("it is the only other model on the host; no unit, journal line or question "
               "names the model served before, so this comparison assumes it")
    paths = [chosen] if chosen else []
    ctx.fact("previous_model_paths", paths, ev + cite)
    ctx.fact("previous_choice", {"path": chosen, "why": why, "candidates": candidates,
                                 "names": [display_name(c) for c in candidates]}, ev + cite)
    return paths


async def _same_model(ctx: RecipeContext, served: str, dirs: list[str]) -> list[str]:
    """Directories whose config.json is byte for byte the served one's: the same model reached
    another way (a link such as /models/current, or a copy), never an earlier one."""
    mine = await ctx.tool("read_file", optional=True, path=f"{served}/config.json")
    if not mine:
        return []
    out = []
    for d in dirs:
        theirs = await ctx.tool("read_file", optional=True, path=f"{d}/config.json")
        if theirs and theirs["text"] == mine["text"]:
            out.append(d)
    return out


def _decide(question: str, candidates: list[str], others: dict[str, Server], served: str
            ) -> tuple[str | None, str, list[str]]:
    named = [c for c in candidates if named_in(question, c)]
    if len(named) > 1:  # the served model's own name under another org is not "earlier"
        base = served.rsplit("/", 1)[-1]
        named = [c for c in named if c.rsplit("/", 1)[-1] != base] or named
    if len(named) == 1:
        return named[0], "the question names it", []
    if len(others) == 1:
        path, s = next(iter(others.items()))
        return path, f"{s.name} ({s.state.value}) serves it", list(s.argv_evidence)
    return None, "", []


_ROWS = [
    ("Architecture", "architectures"), ("model_type", "model_type"),
    ("Decoder layers (num_hidden_layers)", "num_hidden_layers"),
    ("Dense layers before MoE", "dense_layers"), ("MoE layers", "moe_layers"),
    ("Routed experts", "n_routed_experts"), ("Experts per token", "num_experts_per_tok"),
    ("Shared experts", "n_shared_experts"), ("hidden_size", "hidden_size"),
    ("Attention", "attention"), ("kv_lora_rank", "kv_lora_rank"),
    ("MTP layers (num_nextn_predict_layers)", "num_nextn_predict_layers"),
    ("Sparse indexer (index_topk)", "index_topk"),
    ("TP allreduces per decode step", "allreduces_per_step"),
    ("Bytes per allreduce per token (bf16)", "allreduce_bytes_per_token"),
]


def _cell(d: dict[str, Any] | None) -> dict[str, Any]:
    if d is None or d["value"] is None:
        return {"text": "absent", "evidence": d["evidence"] if d else []}
    value = d["value"]
    text = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
    return {"text": text, "evidence": d["evidence"]}


@recipe_function("model_diff")
async def model_diff(ctx: RecipeContext) -> dict[str, Any]:
    """The served model beside each earlier one, with allreduces per decode step (2 per
    decoder layer: attention output and MLP/MoE down projection) and bytes per allreduce.
    Needs: model_path, previous_model_paths. Sets: served_model, previous, table, allreduce."""
    served_path = ctx.need("model_path", "serve_flags").value
    prev_paths = ctx.need("previous_model_paths", "previous_models").value
    served = await read_model(ctx, served_path)
    _model_fact(ctx, "served_model", served_path, served)
    models = [(display_name(served_path), served)]
    for p in prev_paths:
        try:
            models.append((display_name(p), await read_model(ctx, p)))
        except StepFailed as exc:
            ctx.errors.append(f"earlier model {p} unreadable: {exc}")
    if len(models) < 2:
        ctx.fact("previous", None, ctx.facts["previous_model_paths"].evidence)
        cands = ctx.facts["previous_choice"].value["names"] if "previous_choice" in ctx.facts \
            else []
        raise StepFailed("which model served before is not established: " + (
            f"candidates {', '.join(cands)}, and no unit, journal line or question says which"
            if cands else "no other model is on the host"))
    _prev_name, prev = models[1]
    _model_fact(ctx, "previous", prev["path"]["value"], prev)
    columns = ["", *[f"{n} (serving)" if i == 0 else n for i, (n, _) in enumerate(models)]]
    rows = [[{"text": label, "evidence": []}, *[_cell(m.get(key)) for _, m in models]]
            for label, key in _ROWS]
    ctx.fact("table", {"title": "Served model vs earlier model", "columns": columns,
                       "rows": rows}, [])
    a_new, a_old = (served.get("allreduces_per_step"), prev.get("allreduces_per_step"))
    if a_new and a_old:
        change = 100.0 * (a_new["value"] - a_old["value"]) / a_old["value"]
        ctx.fact("allreduce", {"served": a_new["value"], "previous": a_old["value"],
                               "change_pct": round(change, 1),
                               "served_layers": served["num_hidden_layers"]["value"],
                               "previous_layers": prev["num_hidden_layers"]["value"],
                               "served_bytes": served.get("allreduce_bytes_per_token",
                                                          {}).get("value"),
                               "previous_bytes": prev.get("allreduce_bytes_per_token",
                                                          {}).get("value")},
                 a_new["evidence"] + a_old["evidence"]
                 + served.get("allreduce_bytes_per_token", {}).get("evidence", [])
                 + prev.get("allreduce_bytes_per_token", {}).get("evidence", []))
    ctx.fact("indexer", {"served": served["index_topk"]["value"],
                         "previous": prev["index_topk"]["value"]},
             served["index_topk"]["evidence"] + prev["index_topk"]["evidence"])
    mtp = [(n, m["num_nextn_predict_layers"]) for n, m in models]
    ctx.fact("mtp", {n: d["value"] or 0 for n, d in mtp},
             [e for _, d in mtp for e in d["evidence"]])
    return {"models": [n for n, _ in models]}


@recipe_function("quant_config")
async def quant_config(ctx: RecipeContext) -> dict[str, Any]:
    """Weight quantization and the KV-cache dtype the checkpoint recommends, from
    hf_quant_config.json (ModelOpt) or config.json's quantization_config.
    Needs: model_path. Sets: weight_quant, kv_cache_recommended."""
    path = _subject(ctx).rstrip("/")
    hfq = await ctx.tool("parse_config", optional=True, path=f"{path}/hf_quant_config.json",
                         format="json")
    cfg = await ctx.tool("parse_config", path=f"{path}/config.json", format="json")
    assert cfg is not None
    entries = {e["key"]: e for e in cfg["entries"]}
    if hfq:
        entries.update({f"hf_quant.{e['key']}": e for e in hfq["entries"]})

    def first(*keys: str) -> dict[str, Any] | None:
        return next((entries[k] for k in keys if k in entries), None)

    weight = first("hf_quant.quantization.quant_algo", "quantization_config.quant_method",
                   "text_config.quantization_config.quant_method")
    ctx.fact("weight_quant", str(weight["value"]) if weight else None,
             [weight["evidence_id"]] if weight else [cfg["entries"][0]["evidence_id"]])
    kv = first("hf_quant.quantization.kv_cache_quant_algo")
    bits = first("quantization_config.kv_cache_scheme.num_bits",
                 "text_config.quantization_config.kv_cache_scheme.num_bits")
    kind = first("quantization_config.kv_cache_scheme.type",
                 "text_config.quantization_config.kv_cache_scheme.type")
    rec, ev = None, []
    if kv and kv["value"]:
        rec, ev = str(kv["value"]).lower(), [kv["evidence_id"]]
    if bits and bits["value"] == 8 and kind and kind["value"] == "float":
        rec = rec or "fp8"
        ev += [bits["evidence_id"], kind["evidence_id"]]
    if rec is None:
        ev = [ctx.cite("config", f"{path}/config.json (no KV-cache quantization)",
                       "neither hf_quant_config.json kv_cache_quant_algo nor "
                       "quantization_config.kv_cache_scheme is set", "\n".join(sorted(entries)))]
    ctx.fact("kv_cache_recommended", rec, ev)
    return {"weight": ctx.facts["weight_quant"].value, "kv": rec}

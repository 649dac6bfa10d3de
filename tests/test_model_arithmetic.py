"""The layout arithmetic behind the comparison table, on configs written for the test."""

from __future__ import annotations

from typing import Any

import pytest

from agentkit._catalog._fn_models import _derive


def model(**values: Any) -> dict[str, dict[str, Any]]:
    keys = ("num_hidden_layers", "n_routed_experts", "first_k_dense_replace", "mlp_only_layers",
            "hidden_size", "kv_lora_rank")
    return {k: {"value": values.get(k), "key": k, "evidence": [f"E_{k}"]} for k in keys}


@pytest.mark.parametrize("values,dense,moe", [
    ({"num_hidden_layers": 61, "n_routed_experts": 256, "first_k_dense_replace": 3}, 3, 58),
    ({"num_hidden_layers": 48, "n_routed_experts": 128, "mlp_only_layers": [0, 47]}, 2, 46),
    ({"num_hidden_layers": 48, "n_routed_experts": 128, "mlp_only_layers": []}, 0, 48),
    ({"num_hidden_layers": 32}, 32, 0),  # no experts: every layer is dense
    ({"num_hidden_layers": 40, "n_routed_experts": 64}, 0, 40),
])
def test_dense_and_moe_layers(values: dict[str, Any], dense: int, moe: int) -> None:
    m = model(**values)
    _derive(m)
    assert (m["dense_layers"]["value"], m["moe_layers"]["value"]) == (dense, moe)
    assert m["allreduces_per_step"]["value"] == 2 * values["num_hidden_layers"]
    assert "E_num_hidden_layers" in m["moe_layers"]["evidence"]


def test_bytes_and_attention_cite_their_keys() -> None:
    m = model(num_hidden_layers=4, hidden_size=5120, kv_lora_rank=512)
    _derive(m)
    assert m["allreduce_bytes_per_token"] == {"value": 10240, "key": None,
                                              "evidence": ["E_hidden_size"]}
    assert m["attention"]["value"] == "MLA" and m["attention"]["evidence"] == ["E_kv_lora_rank"]
    m = model(num_hidden_layers=4, hidden_size=4096)
    _derive(m)
    assert m["attention"]["value"] == "MHA/GQA"


def test_no_layer_count_means_no_allreduce_count() -> None:
    m = model(hidden_size=4096)
    _derive(m)
    assert "allreduces_per_step" not in m and m["moe_layers"]["value"] == 0

"""One batch on one host (``_fleet/_batch.py``), called directly: every task of the batch has
exactly one result, in the batch's order; a task this host's catalog lacks is that task's failed
result ("this host runs another agentkit version", docs/fleet.md), not a crash; the host runs
the templates its own agentkit ships, whatever the controller's catalog; and ``deadline_s``
bounds the batch on the host (``Batch``'s docstring): a task still running then is timed out.
Expected values come from those promises."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from agentkit._catalog import _recipe
from agentkit._catalog._load import load_catalog
from agentkit._catalog._template import Step, TaskTemplate
from agentkit._fleet._batch import bundled_catalog, run_batch
from agentkit._fleet._outcome import Batch
from agentkit._sandbox._host import Host
from agentkit._types import TaskResult, TaskSpec

from .conftest import EXAMPLES


def _template(name: str, *steps: Step) -> TaskTemplate:
    return TaskTemplate(name=name, title=name, description="", tools=[], steps=list(steps))


def _spec(tid: str, template: str) -> TaskSpec:
    return TaskSpec(id=tid, title=tid, objective="", template=template)


@pytest.fixture
def catalog(monkeypatch: pytest.MonkeyPatch) -> dict[str, TaskTemplate]:
    async def hang(ctx: Any) -> None:
        await anyio.sleep(3600)  # a host whose filesystem froze

    monkeypatch.setitem(_recipe.FUNCTIONS, "test-fleet-hang", hang)
    return {"quick": _template("quick", Step(fact="answer", value="6 * 7")),
            "hang": _template("hang", Step(call="test-fleet-hang"))}


def _run(batch: Batch, catalog: dict[str, TaskTemplate] | None,
         root: str = "/") -> list[TaskResult]:
    async def go() -> list[TaskResult]:
        with anyio.fail_after(60):  # a bound on a broken deadline, not a speed assertion
            return await run_batch(Host.at(root), batch, catalog)

    return anyio.run(go)


def test_every_task_has_one_result_in_the_batchs_order(
        catalog: dict[str, TaskTemplate]) -> None:
    batch = Batch(question="q", tasks=[_spec("b", "quick"), _spec("a", "no-such-task"),
                                       _spec("c", "quick")])
    got = _run(batch, catalog)
    assert [r.task_id for r in got] == ["b", "a", "c"]
    assert got[0].facts["answer"].value == 42 and got[2].facts["answer"].value == 42
    assert got[0].status != "timed-out" and got[0].status != "failed"


def test_a_task_the_hosts_catalog_lacks_is_that_tasks_failed_result(
        catalog: dict[str, TaskTemplate]) -> None:
    [got] = _run(Batch(question="q", tasks=[_spec("x", "gpu-inventory")]), catalog)
    assert got.task_id == "x" and got.status == "failed"
    assert got.summary == "task 'gpu-inventory' is not in this host's catalog"
    assert got.errors == ["unknown task 'gpu-inventory': this host runs another agentkit "
                          "version"]


def test_an_empty_catalog_knows_no_task_even_a_bundled_one() -> None:
    # the catalog given is the host's whole catalog: an empty one is not "the bundled one"
    [got] = _run(Batch(question="q", tasks=[_spec("x", "gpu-inventory")]), {})
    assert got.status == "failed" and "not in this host's catalog" in got.summary


def test_without_a_catalog_the_host_runs_the_templates_it_ships() -> None:
    assert set(bundled_catalog()) == set(load_catalog())
    assert "gpu-inventory" in bundled_catalog()
    [got] = _run(Batch(question="What GPUs?", tasks=[_spec("gpu", "gpu-inventory")]), None,
                 str(EXAMPLES / "blackwell-kimi"))
    assert got.task_id == "gpu" and got.status == "ok", got


def test_the_batch_deadline_times_out_the_task_still_running(
        catalog: dict[str, TaskTemplate]) -> None:
    batch = Batch(question="q", tasks=[_spec("h", "hang"), _spec("q", "quick")],
                  deadline_s=0.5)
    hung, quick = _run(batch, catalog)
    assert hung.task_id == "h" and hung.status == "timed-out"
    assert quick.task_id == "q" and quick.facts["answer"].value == 42


def test_the_batch_deadline_is_counted_from_the_start_of_the_batch(
        catalog: dict[str, TaskTemplate], monkeypatch: pytest.MonkeyPatch) -> None:
    from agentkit._fleet import _batch

    seen: list[tuple[float, float, str, list[str]]] = []
    real = _batch.Orchestrator.run_tasks

    async def spy(self: Any, plan: Any, parent: Any = None, *, deadline: float) -> Any:
        seen.append((deadline, anyio.current_time(), plan.question, [t.id for t in plan.tasks]))
        return await real(self, plan, parent, deadline=deadline)

    monkeypatch.setattr(_batch.Orchestrator, "run_tasks", spy)
    _run(Batch(question="Is NCCL tuned?", tasks=[_spec("q", "quick"), _spec("u", "nope")],
               deadline_s=300.0), catalog)
    [(deadline, now, question, ids)] = seen
    assert 299.0 < deadline - now <= 300.0
    # the host's run is the batch's question over the tasks it knows
    assert question == "Is NCCL tuned?" and ids == ["q"]

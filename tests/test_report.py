"""The HTML report: self-contained, and in a real headless Chromium the timeline shows one bar
per subagent and a citation click reveals its evidence."""

from __future__ import annotations

import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest

from agentkit.cli import main

from .conftest import EXAMPLES, REFERENCE_QUESTION


@pytest.fixture
def report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    trace, html = tmp_path / "run.jsonl", tmp_path / "run.html"
    assert main(["ask", REFERENCE_QUESTION, "--root", str(EXAMPLES / "blackwell-kimi"), "-q",
                 "--trace", str(trace)]) == 0
    assert main(["report", str(trace), "-o", str(html)]) == 0
    capsys.readouterr()
    return html


def _planned(report: Path) -> int:
    """How many tasks the run planned (its trace's plan event): one timeline bar each. Read
    from the plan, not written here, so a task added to the catalog does not break this."""
    from agentkit._trace._read import read_trace

    plan = read_trace(report.with_suffix(".jsonl")).first("plan")
    assert plan is not None
    return len(plan.data["tasks"])


def test_report_is_self_contained(report: Path) -> None:
    html = report.read_text()
    assert not re.search(r"""(src|href)\s*=\s*["'](https?:)?//""", html)
    assert "@import" not in html and "<link" not in html
    assert html.count('class="bar task"') == _planned(report)
    assert html.count('class="cite"') >= 20


def _browser() -> object:
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
    chromium = shutil.which("chromium")
    driver = shutil.which("chromedriver")
    if not (chromium and driver):
        pytest.skip("needs Debian's chromium and chromium-driver (.ci/run installs them)")
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--window-size=1400,1000"):
        opts.add_argument(flag)
    return webdriver.Chrome(service=Service(driver), options=opts)


def test_report_in_headless_chromium(report: Path, tmp_path: Path) -> None:
    browser = _browser()
    from selenium.webdriver.common.by import By

    try:
        browser.get(report.as_uri())  # type: ignore[attr-defined]
        bars = browser.find_elements(By.CSS_SELECTOR, "svg#timeline rect.bar.task")  # type: ignore[attr-defined]
        assert len(bars) == _planned(report)
        assert {b.get_attribute("data-task") for b in bars} >= {"nccl-env", "model-diff"}
        assert all(float(b.get_attribute("width")) >= 1 for b in bars)
        panel = browser.find_element(By.ID, "evidence-panel")  # type: ignore[attr-defined]
        assert not panel.is_displayed()
        cite = browser.find_elements(By.CSS_SELECTOR, "a.cite")[0]  # type: ignore[attr-defined]
        number = cite.get_attribute("data-ev")
        cite.click()
        details = browser.find_element(By.ID, f"ev-{number}")  # type: ignore[attr-defined]
        assert details.get_attribute("open") is not None
        assert "hit" in details.get_attribute("class")
        assert panel.is_displayed()
        excerpt = details.find_element(By.TAG_NAME, "pre").get_attribute("textContent")
        assert excerpt and excerpt in panel.text.replace("\n", "\n")
        assert "NCCL_PROTO=LL" in panel.text
        shot = tmp_path / "report.png"
        browser.save_screenshot(str(shot))  # type: ignore[attr-defined]
        assert shot.stat().st_size > 10_000
        timeline = browser.find_element(By.ID, "timeline")  # type: ignore[attr-defined]
        timeline.screenshot(str(tmp_path / "timeline.png"))
    finally:
        browser.quit()  # type: ignore[attr-defined]


def test_report_of_an_llm_run_shows_model_and_tool_calls(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from agentkit.testing import FakeLLMServer

    from .conftest import write_tree
    from .llm_script import make_script
    from .test_llm_pipeline import HOST

    root = write_tree(tmp_path / "host", HOST)
    trace, html = tmp_path / "llm.jsonl", tmp_path / "llm.html"
    with FakeLLMServer(make_script(["unit", "nccl-conf", "model"])) as server:
        assert main(["ask", "What is set?", "--root", str(root), "--base-url", server.base_url,
                     "--model", "fake", "-q", "--trace", str(trace)]) == 0
    assert main(["report", str(trace), "-o", str(html)]) == 0
    capsys.readouterr()
    page = html.read_text()
    assert page.count('class="bar task"') == 3
    assert page.count('class="call llm"') == 6  # two model calls per subagent
    assert page.count('class="call tool"') == 3
    assert "llm mode" in page


class _Rows(HTMLParser):
    """Each ``<tr>``'s attributes and cell texts, and each element's text by id."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[tuple[dict[str, str], list[str]]] = []
        self.by_id: dict[str, str] = {}
        self._cell: list[str] | None = None
        self._open: list[tuple[str, str]] = []  # (tag, id) of elements with an id, open

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "tr":
            self.rows.append((a, []))
        elif tag in ("td", "th") and self.rows:
            self._cell = []
        if "id" in a:
            self._open.append((tag, a["id"]))
            self.by_id[a["id"]] = ""

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self.rows:
            self.rows[-1][1].append("".join(self._cell).strip())
            self._cell = None
        if self._open and self._open[-1][0] == tag:
            self._open.pop()

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
        for _, i in self._open:
            self.by_id[i] += data

    def rows_of(self, cls: str) -> list[tuple[dict[str, str], list[str]]]:
        return [(a, cells) for a, cells in self.rows if cls in a.get("class", "").split()]


def _fleet_report(tmp_path: Path, n: int, outliers: list[int], broken: list[int]) -> str:
    from benchmarks._fleet_hosts import make_fleet

    make_fleet(tmp_path / "f", n, outliers=outliers, broken=broken, width=2)
    trace, html = tmp_path / "fleet.jsonl", tmp_path / "fleet.html"
    # 9 when some hosts did not answer (README's exit codes): the broken snapshot, if any
    assert main(["ask", "Which GPU driver?", "--fleet", str(tmp_path / "f"), "-q",
                 "--trace", str(trace)]) == (9 if broken else 0)
    assert main(["report", str(trace), "-o", str(html)]) == 0
    return html.read_text()


def test_a_fleet_report_shows_buckets_and_each_value_group_with_its_hosts_evidence(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from benchmarks._fleet_hosts import DRIVER, OTHER_DRIVER

    # n01-n07: n02 and n06 run the other driver, n05's snapshot is cut off
    page = _fleet_report(tmp_path, 7, outliers=[2, 6], broken=[5])
    capsys.readouterr()
    doc = _Rows()
    doc.feed(page)
    assert doc.by_id["fleet-recap"] == "ok=4 differs=2 failed=1"
    buckets = {a["data-bucket"]: cells for a, cells in doc.rows_of("bucket")}
    assert buckets == {"ok": ["ok", "4", "n[01,03-04,07]"],
                       "differs": ["differs", "2", "n[02,06]"],
                       "failed": ["failed", "1", "n05"]}
    [(_, problem)] = doc.rows_of("problem")
    assert problem[:3] == ["failed", "n05", "1"] and "snapshot.json" in problem[3]
    # the driver fact: the majority's group first, then the outliers', each citing what
    # its own hosts' NVML said, on those hosts
    driver = [(a, cells) for a, cells in doc.rows_of("group")
              if f'"driver_version":"{DRIVER}"' in cells[1]
              or f'"driver_version":"{OTHER_DRIVER}"' in cells[1]]
    assert [(a["class"], cells[2], cells[3]) for a, cells in driver] == [
        ("group majority", "n[01,03-04,07]", "4"), ("group outlier", "n[02,06]", "2")]
    assert DRIVER in driver[0][1][4] and "n[01,03-04,07] · nvml" in driver[0][1][4]
    assert OTHER_DRIVER in driver[1][1][4] and "n[02,06] · nvml" in driver[1][1][4]
    assert DRIVER not in driver[1][1][4]
    same = {a["data-fact"] for a, _ in doc.rows_of("same")}
    assert "gpu-inventory · gpu_count" in same and "gpu-inventory · driver" not in same
    assert "partly established" in page and "7 hosts" in page  # one host did not answer
    assert "nothing established" not in page


def test_a_fleet_split_in_two_shows_no_majority(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    page = _fleet_report(tmp_path, 4, outliers=[1, 2], broken=[])
    capsys.readouterr()
    doc = _Rows()
    doc.feed(page)
    buckets = {a["data-bucket"]: cells for a, cells in doc.rows_of("bucket")}
    assert buckets == {"differs": ["differs", "4", "n[01-04]"]}
    roles = {a["data-nodes"]: a["class"] for a, _ in doc.rows_of("group")}
    assert roles == {"n[01-02]": "group tied", "n[03-04]": "group tied"}
    assert "(no majority)" in page and 'class="group majority"' not in page


def test_a_fleet_outliers_citation_opens_its_own_hosts_evidence_in_chromium(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from benchmarks._fleet_hosts import DRIVER, OTHER_DRIVER

    page = tmp_path / "fleet.html"
    page.write_text(_fleet_report(tmp_path, 5, outliers=[3], broken=[]))
    capsys.readouterr()
    browser = _browser()
    from selenium.webdriver.common.by import By

    try:
        browser.get(page.as_uri())  # type: ignore[attr-defined]
        outlier = browser.find_element(  # type: ignore[attr-defined]
            By.CSS_SELECTOR, 'table.fact tr.group.outlier[data-nodes="n03"]')
        outlier.find_elements(By.CSS_SELECTOR, "a.cite")[0].click()
        panel = browser.find_element(By.ID, "evidence-panel")  # type: ignore[attr-defined]
        assert panel.is_displayed()
        assert panel.text.startswith("[") and "n03 · nvml" in panel.text
        assert OTHER_DRIVER in panel.text and DRIVER not in panel.text
    finally:
        browser.quit()  # type: ignore[attr-defined]

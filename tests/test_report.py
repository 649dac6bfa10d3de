"""The HTML report: self-contained, and in a real headless Chromium the timeline shows one bar
per subagent and a citation click reveals its evidence."""

from __future__ import annotations

import re
import shutil
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


def test_report_is_self_contained(report: Path) -> None:
    html = report.read_text()
    assert not re.search(r"""(src|href)\s*=\s*["'](https?:)?//""", html)
    assert "@import" not in html and "<link" not in html
    assert html.count('class="bar task"') == 9
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
        assert len(bars) == 9
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

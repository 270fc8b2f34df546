"""The workflow's report in a real browser: Debian's chromium, driven by Playwright.

A study of three generated datasets (so that every kind of figure is drawn, the rankings' too) is
run and its report built; chromium opens the home page and every section, every result of every
section (each figure in the format the report starts with, each table's page), switches a
figure's format, and fails on any error of the page (an uncaught exception, a console error).
In a window 1,400 pixels wide it measures what the home page promises: every figure is shown at
100 pixels per inch of its drawing or more (830 pixels for a figure of the full width), and a
table wider than its page scrolls in a box of its own, the page itself never sideways.

Playwright's own browser download (``playwright install``) is never used. Without chromium (or
Playwright) the test is skipped, unless ``DELAYCV_REQUIRE_BROWSER=1`` (CI, ``.ci/run``): then it
fails.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.workflow_copy import copy_workflow, run

pytestmark = pytest.mark.slow

#: The environment variable that makes a machine without the browser fail this test (CI sets it).
REQUIRE_BROWSER = "DELAYCV_REQUIRE_BROWSER"
CHROMIUM = Path("/usr/bin/chromium")
#: chromium without a sandbox (root in a container), a GPU, a first-run dialog or any traffic of
#: its own (QUIC, background networking, component updates, sync); Playwright adds --headless
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
WIDTH = 1400
DPI = 200  # figures.dpi, the default
#: the pixels per inch of its drawing a figure is shown at, at least (the home page's promise)
PIXELS_PER_INCH = 100


def _missing(reason: str):
    if os.environ.get(REQUIRE_BROWSER, "") not in ("", "0"):
        pytest.fail(f"the browser is required ({REQUIRE_BROWSER}=1): {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """A chromium of its own (a fresh profile), or skip (fail under DELAYCV_REQUIRE_BROWSER)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as err:
        _missing(f"Playwright is not installed: {err}")
    if not CHROMIUM.is_file():
        _missing(f"no chromium at {CHROMIUM} (apt-get install chromium)")
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            tmp_path_factory.mktemp("chromium-profile"),
            executable_path=str(CHROMIUM),
            headless=True,
            args=FLAGS,
            viewport={"width": WIDTH, "height": 900},
        )
        yield context
        context.close()


STUDY = {
    "datasets": {f"g{i}": {"generate": {"rows": 400, "seed": i}} for i in (1, 2, 3)},
    "learners": {
        "nb": {"class": "river.naive_bayes.GaussianNB"},
        "nochange": {"class": "NoChange"},
    },
    "policies": {"ideal": {"preset": "ideal"}},
    # two windows of one family: the sensitivity figure; ideal: the policy contrasts
    "policy_grids": {"hitl": {"preset": "hitl", "pos_window": ["1d", "7d"], "neg_window": ["90d"]}},
    "seeds": [1],
    "validation": {"scheme": "bootstrap", "folds": 3},
    "checkpoints": {"every": 100},
    "tests": {"metrics": ["gmean"], "resamples": 200},
}


@pytest.fixture(scope="module")
def report(browser, tmp_path_factory) -> Path:
    """The report of :data:`STUDY` (built after the browser is known to be there)."""
    workdir = copy_workflow(tmp_path_factory.mktemp("report") / "wf", STUDY)
    run(workdir, "--cores", "2")
    run(workdir, "--cores", "1", "--report", "results/report.html")
    return workdir / "results" / "report.html"


class Page:
    """One tab on the report, gathering the page's errors."""

    def __init__(self, browser, report: Path) -> None:
        self.page = browser.new_page()
        self.errors: list[str] = []
        self.page.on("pageerror", lambda err: self.errors.append(f"uncaught: {err}"))
        self.page.on(
            "console",
            lambda msg: (
                self.errors.append(f"console: {msg.text.splitlines()[0]}")
                if msg.type == "error"
                else None
            ),
        )
        self.report = report
        self.home()

    def home(self) -> None:
        self.page.goto(self.report.as_uri())
        self.page.locator("nav").first.wait_for()
        self.check("the home page")
        _check_not_cut(self, "the home page")

    def check(self, where: str) -> None:
        self.page.wait_for_timeout(150)  # (React draws after the click's handler)
        assert not self.errors, f"{where}: {self.errors}"
        assert self.page.locator("nav").count() > 0, f"{where}: the page went blank"

    def click(self, text: str, where: str) -> None:
        self.page.locator("nav").first.get_by_text(text, exact=True).first.click()
        self.check(where)

    def rows(self):
        return self.page.locator("nav table tbody tr")


def _show_every_row(tab: Page, where: str) -> list[str]:
    """Open every result listed (the eye beside it), check what shows; the kinds of what was
    shown (img, html, pdf) and the downloads."""
    shown = []
    rows = tab.rows()
    assert rows.count() > 0, f"{where}: no results listed"
    for i in range(rows.count()):
        row = rows.nth(i)
        name = row.locator("td").first.inner_text()
        eye = row.locator("a").first
        if eye.get_attribute("download") is not None:  # a CSV: offered as a download
            assert eye.get_attribute("href").startswith("data:text/csv"), name
            shown.append("download")
            continue
        eye.click()
        tab.check(f"{where} / {name}")
        shown.append(_check_shown(tab, f"{where} / {name}"))
    return shown


def _check_not_cut(tab: Page, where: str) -> None:
    """What the page shows starts within its scrolling box: nothing sits above or left of it,
    where no scrolling reaches (the template centres a page in the window, and the home page's
    text, taller than a window 900 pixels high, lost its first lines: workflow/report/report.css)."""
    cut = tab.page.evaluate(
        """() => {
            const box = document.querySelector('#app .grow.h-screen.overflow-auto');
            if (!box) return null;
            box.scrollTop = 0;
            box.scrollLeft = 0;
            const outer = box.getBoundingClientRect();
            const inner = [...box.children].map(c => c.getBoundingClientRect());
            return {
                above: Math.max(0, ...inner.map(r => outer.top - r.top)),
                left: Math.max(0, ...inner.map(r => outer.left - r.left)),
            };
        }"""
    )
    assert cut is not None, (
        f"{where}: no scrolling box of the page's content (the template changed?)"
    )
    assert cut["above"] <= 0.5 and cut["left"] <= 0.5, f"{where}: cut off, out of reach: {cut}"


def _check_shown(tab: Page, where: str) -> str:
    _check_not_cut(tab, where)
    page = tab.page
    image = page.locator("img:not(nav img)")
    if image.count():
        image.wait_for()
        page.wait_for_function(
            "() => { const i = document.querySelector('img:not(nav img)'); "
            "return i.complete && i.naturalWidth > 0; }"
        )
        shown, natural = page.evaluate(
            "() => { const i = document.querySelector('img:not(nav img)'); "
            "return [i.getBoundingClientRect().width, i.naturalWidth]; }"
        )
        inches = natural / DPI
        assert shown >= PIXELS_PER_INCH * inches - 1, (
            f"{where}: a figure {inches:.2f} inches wide is shown {shown:.0f} pixels wide in a "
            f"window {WIDTH} pixels wide (less than {PIXELS_PER_INCH} pixels per inch)"
        )
        return "img"
    frame = page.locator("iframe")
    assert frame.count() == 1, f"{where}: nothing shown"
    source = frame.get_attribute("src")
    if source.startswith("data:application/pdf"):
        return "pdf"
    assert source.startswith("data:text/html"), f"{where}: {source[:40]}"
    inner = frame.element_handle().content_frame()
    inner.wait_for_load_state()
    _check_tables_fit(inner, where)
    return "html"


def _check_tables_fit(frame, where: str) -> None:
    """The page never scrolls sideways; each table is in its box, within the page, and a table
    wider than its box can be scrolled there."""
    layout = frame.evaluate(
        """() => {
            const page = document.documentElement;
            return {
                page: [page.scrollWidth, page.clientWidth],
                tables: [...document.querySelectorAll('table')].map(t => {
                    const box = t.parentElement;
                    return {
                        box: box.tagName + '.' + box.className,
                        right: box.getBoundingClientRect().right,
                        table: t.getBoundingClientRect().width,
                        inside: box.clientWidth,
                        scrolls: box.scrollWidth > box.clientWidth,
                        overflow: getComputedStyle(box).overflowX,
                    };
                }),
            };
        }"""
    )
    scroll_width, width = layout["page"]
    assert scroll_width <= width, f"{where}: the page scrolls sideways ({scroll_width} > {width})"
    assert layout["tables"], f"{where}: no table"
    for table in layout["tables"]:
        assert table["box"] == "DIV.table", f"{where}: a table outside its box: {table}"
        assert table["right"] <= width + 0.5, f"{where}: a table's box is cut: {table}"
        if table["table"] > table["inside"] + 0.5:
            assert table["scrolls"] and table["overflow"] in ("auto", "scroll"), (
                f"{where}: a table wider than its box does not scroll: {table}"
            )


def test_every_section_of_the_report_opens_in_a_browser(browser, report):
    tab = Page(browser, report)
    home = tab.page.locator("#app").inner_text()
    # in a short window (a laptop's, under the browser's bars) the home page's text is taller
    # than the window: it scrolls, from its first line
    tab.page.set_viewport_size({"width": WIDTH, "height": 600})
    assert tab.page.evaluate(
        "() => document.querySelector('#app .grow.h-screen').scrollHeight > 600"
    )
    _check_not_cut(tab, "the home page in a window 600 pixels high")
    tab.page.set_viewport_size({"width": WIDTH, "height": 900})
    assert "delaycv evaluated 2 learners" in home
    assert " ," not in home and "ranked across and within the datasets" in home
    categories = tab.page.evaluate("() => categories")
    assert set(categories) == {
        "Datasets",
        "Figures",
        "Permutation tests",
        "Policy contrasts",
        "Rankings",
        "Runs",
    }
    shown: dict[str, list[str]] = {}
    for category, subcategories in categories.items():
        for subcategory in subcategories:
            tab.home()
            tab.click(category, category)
            where = category
            if len(subcategories) > 1:  # (one subcategory is opened at once)
                where = f"{category} / {subcategory}"
                tab.click(subcategory, where)
            shown[where] = _show_every_row(tab, where)
    # one figure of each kind: every figure of each dataset, in the PNG the report starts with
    kinds = [
        "learning curves",
        "bias over the stream",
        "final distributions",
        "pairwise tests",
        "sensitivity to the waiting time",
        "difference to the reference policy",
    ]
    tab.home()
    tab.click("Figures", "Figures")
    tab.click("g1", "Figures / g1")
    listed = [tab.rows().nth(i).locator("td").first.inner_text() for i in range(tab.rows().count())]
    assert sorted(name.split(" (")[0] for name in listed) == sorted(kinds)
    for dataset in ("g1", "g2", "g3"):
        assert shown[f"Figures / {dataset}"] == ["img"] * len(kinds)
    assert shown["Rankings / critical-difference diagram"] == ["img"] * 5
    assert shown["Rankings / Scott-Knott ESD groups"] == ["img"] * 5
    # the tables: their pages shown, the CSV of the rankings offered as downloads
    assert shown["Permutation tests / g1"] == ["html", "html"]
    assert shown["Policy contrasts / g2"] == ["html"] and shown["Runs"] == ["html"]
    assert shown["Datasets"] == ["html"]
    assert sorted(shown["Rankings / tables"]) == ["download"] * 4 + ["html"] * 2
    # the format toggle: the PDF of a figure, the CSV of a table
    tab.page.locator("nav label", has_text="zoomable PDF").click()
    tab.check("Figures / g1: the PDF")
    assert _show_every_row(tab, "Figures / g1 (PDF)") == ["pdf"] * len(kinds)
    tab.home()
    tab.click("Runs", "Runs")
    tab.page.locator("nav label", has_text="download CSV").click()
    tab.check("Runs: the CSV")
    assert _show_every_row(tab, "Runs (CSV)") == ["download"]

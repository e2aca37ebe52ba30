"""`planner serve`'s page in a real browser: Chromium (Debian's `chromium` and `chromium-driver`)
driven by Selenium. Skipped when they are missing, failing instead under CI=true."""

from __future__ import annotations

import contextlib
import os
import shutil
import time

import pytest

pytest.importorskip("starlette", reason="planner serve needs the `serve` extra: pip install '.[serve]'")
webdriver = pytest.importorskip("selenium.webdriver", reason="the browser tests need selenium (the `test` extra)")

from selenium.common.exceptions import (  # noqa: E402
    NoAlertPresentException, NoSuchElementException, StaleElementReferenceException)
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402
from serve_server import Running  # noqa: E402
from test_serve import RENT  # noqa: E402

from planner.outputs.serve.live import Session  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
WAIT = 20  # seconds any one thing may take to appear on the page


def require_chromium() -> tuple[str, str]:
    """Chromium and its driver; skip (or fail under CI=true) when either is missing."""
    browser = CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium")
    driver = CHROMEDRIVER if os.path.exists(CHROMEDRIVER) else shutil.which("chromedriver")
    if browser is None or driver is None:
        reason = ("Chromium or its WebDriver is not installed: the page tests need both; install them with "
                  "`apt-get install chromium chromium-driver`")
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(reason + " (CI=true: failing instead of skipping)")
        pytest.skip(reason)
    return browser, driver


@pytest.fixture
def rent(tmp_path):
    path = tmp_path / "plans" / "rent.plan"
    path.parent.mkdir()
    path.write_text(RENT, encoding="utf-8")
    return path


@contextlib.contextmanager
def chromium_on(session, tmp_path):
    """Debian's Chromium, headless, on a page ``planner serve`` serves for ``session`` on 127.0.0.1."""
    browser, driver_path = require_chromium()
    server = Running(session)
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
                 f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1200,900"):
        options.add_argument(flag)
    driver = None
    try:
        driver = webdriver.Chrome(service=webdriver.ChromeService(executable_path=driver_path), options=options)
        driver.set_page_load_timeout(WAIT)
        driver.set_script_timeout(WAIT)
        driver.get(server.url)
        yield driver
    finally:
        if driver is not None:
            driver.quit()
        server.stop()


@pytest.fixture
def page(rent, tmp_path):
    with chromium_on(Session(str(rent)), tmp_path) as driver:
        yield driver


def wait_for(driver, what, message: str):
    """Until ``what(driver)`` (bounded by WAIT); an element redrawn while it is read is read again."""
    return WebDriverWait(driver, WAIT, poll_frequency=0.05,
                         ignored_exceptions=(NoSuchElementException, StaleElementReferenceException)
                         ).until(lambda d: what(d), message)


def figure(driver, name: str) -> str:
    return driver.find_element(By.CSS_SELECTOR, f'[data-figure="{name}"]').text


def figure_is(driver, name: str, text: str) -> None:
    wait_for(driver, lambda d: figure(d, name) == text, f"{name} never showed {text!r}")


def test_move_a_slider_pick_a_scenario_and_write_back(page, rent):
    before = rent.read_text(encoding="utf-8")
    figure_is(page, "cost", "90.00 USD")  # 2.50 USD/h x 10 h x 4 x 0.9
    slider = page.find_element(By.CSS_SELECTOR, 'input.slider[data-name="gpus"]')
    slider.send_keys(Keys.ARROW_RIGHT)  # one step: 5 GPUs
    figure_is(page, "cost", "112.50 USD")
    assert page.find_element(By.CSS_SELECTOR, 'input.field[data-name="gpus"]').get_attribute("value") == "5"
    Select(page.find_element(By.ID, "scenario")).select_by_value("long")
    figure_is(page, "cost", "1,125.00 USD")  # 100 h in `long`, still 5 GPUs
    wait_for(page, lambda d: d.find_element(By.CSS_SELECTOR, 'input.field[data-name="hours"]')
             .get_attribute("value") == "100", "hours never showed the scenario's 100")
    # the checks run in the plan as written, with the edit: cost == 90 USD fails, left > 0 USD holds
    assert page.find_element(By.ID, "checks-summary").text == "1 passed, 1 failed"
    page.find_element(By.ID, "write").click()
    wait_for(page, lambda d: "wrote 1 literal" in d.find_element(By.ID, "written").text, "the write never finished")
    assert rent.read_text(encoding="utf-8") == before.replace("gpus     = 4 ", "gpus     = 5 ")


def test_typing_a_value_recomputes_the_answer(page):
    figure_is(page, "cost", "90.00 USD")
    field = page.find_element(By.CSS_SELECTOR, 'input.field[data-name="price"]')
    field.clear()
    field.send_keys("3", Keys.ENTER)
    figure_is(page, "cost", "108.00 USD")
    wait_for(page, lambda d: d.find_element(By.CSS_SELECTOR, '[data-answer="break_even_hours"]').text
             == "18.5185 h", "the break-even never moved to 200 / 10.8")


def test_hostile_text_is_shown_as_text(page):
    wait_for(page, lambda d: d.find_element(By.ID, "title").text.startswith("Rent <img"), "no title")
    assert page.find_element(By.ID, "title").text == 'Rent <img src=x onerror=alert(1)> & "pay" <script>alert(2)</script>'
    assert page.find_elements(By.CSS_SELECTOR, "#title *, .doc *") == []
    assert "hourly price <b>per</b> GPU" in page.find_element(By.CSS_SELECTOR, '[data-input="price"] .doc').text
    with pytest.raises(NoAlertPresentException):
        page.switch_to.alert.text  # noqa: B018 (no script of the plan's ever ran)


def test_the_page_reloads_its_inputs_when_the_plan_changes(page, rent):
    figure_is(page, "cost", "90.00 USD")
    rent.write_text(RENT.replace("2.50 USD/h", "5.00 USD/h"), encoding="utf-8")
    os.utime(rent, ns=(time.time_ns() + 10**9, time.time_ns() + 10**9))
    wait_for(page, lambda d: d.find_element(By.CSS_SELECTOR, 'input.field[data-name="price"]')
             .get_attribute("value") == "5", "the page never read the changed plan")
    figure_is(page, "cost", "180.00 USD")


def test_charts_and_monte_carlo(page):
    wait_for(page, lambda d: d.find_elements(By.CSS_SELECTOR, "#charts img.chart"), "no sweep chart")
    page.find_element(By.ID, "simulate").click()
    wait_for(page, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#montecarlo img.histogram")) == 2,
             "no histograms")
    assert page.execute_script(
        "return [...document.querySelectorAll('#montecarlo img')].every(i => i.complete && i.naturalWidth > 0)")


def test_a_slider_over_two_orders_of_magnitude_moves_on_a_log_scale(page):
    figure_is(page, "cost", "90.00 USD")
    slider = page.find_element(By.CSS_SELECTOR, 'input.slider[data-name="price"]')  # 0.25 .. 25 USD/h
    assert (slider.get_attribute("min"), slider.get_attribute("max"), slider.get_attribute("value")) == \
        ("0", "1000", "500")  # 2.50 halfway
    slider.send_keys(Keys.ARROW_RIGHT)  # 0.25 x 100^(501/1000) = 2.5115: 2.512 USD/h
    wait_for(page, lambda d: d.find_element(By.CSS_SELECTOR, 'input.field[data-name="price"]')
             .get_attribute("value") == "2.512", "the field never showed the slider's value")
    figure_is(page, "cost", "90.43 USD")  # 2.512 x 10 x 4 x 0.9 = 90.432


def _shown_number(text: str) -> float:
    return float(text.split()[0].replace(",", ""))


@pytest.mark.parametrize("path, name, typed, overrides, headline, scenario", [
    ("examples/gpu_buy_vs_rent.plan", "gpu_price", "27", {"gpu_price": "27 kUSD"}, "npv_saving", "low_use"),
    ("sheets/llm_cost.plan", "hidden", "5120", {"hidden": "5120"}, "weights_bf16", "llama3_70b/h100"),
])
def test_the_shipped_plans_pages_follow_an_edit_and_a_scenario(tmp_path, path, name, typed, overrides, headline,
                                                                 scenario):
    """The page of the buy-vs-rent example and of llm_cost, in Chromium: a typed input moves the headline
    figure to what `planner eval --set` gives, and so does picking a scenario with the edit kept."""
    import planner

    from conftest import ROOT

    plan = planner.load(ROOT / path)
    expected = plan.eval(overrides=overrides)[headline].number
    in_scenario = plan.eval(scenario=scenario, overrides=overrides)[headline].number
    assert plan.eval()[headline].number != pytest.approx(expected, rel=1e-4)  # the edit moves it
    with chromium_on(Session(str(ROOT / path)), tmp_path) as driver:
        wait_for(driver, lambda d: figure(d, headline), f"no {headline} on the page")
        field = driver.find_element(By.CSS_SELECTOR, f'input.field[data-name="{name}"]')
        field.clear()
        field.send_keys(typed, Keys.ENTER)
        wait_for(driver, lambda d: _shown_number(figure(d, headline)) == pytest.approx(expected, rel=1e-4),
                 f"{headline} never showed planner's {expected}")
        Select(driver.find_element(By.ID, "scenario")).select_by_value(scenario)
        wait_for(driver, lambda d: _shown_number(figure(d, headline)) == pytest.approx(in_scenario, rel=1e-4),
                 f"{headline} never showed planner's {in_scenario} in {scenario}")

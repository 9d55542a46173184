"""The /admin UI end to end in headless Chromium (Debian ``chromium`` + ``chromium-driver``,
driven by Selenium): a real uvicorn server on the embedded stack, review actions clicked in
the page, screenshots written to the test's tmp_path (never into git).
"""

from __future__ import annotations

import secrets
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from knotwork.services.api.app import create_app
from knotwork.settings import Settings
from tests.integration.test_entity_api import seed_people

pytestmark = [pytest.mark.integration]
CHROMIUM, DRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
KEY = "ui-" + secrets.token_hex(8)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, falkordb_url: str) -> Iterator[dict[str, Any]]:
    import uvicorn

    settings = Settings(data_dir=tmp_path_factory.mktemp("admin_ui") / "data",
                        group=f"ui_{secrets.token_hex(4)}", falkordb_url=falkordb_url,
                        embedder="hashing", admin_api_key=KEY)  # type: ignore[arg-type]
    app = create_app(settings)
    port = _free_port()
    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not srv.started and time.monotonic() < deadline:
        time.sleep(0.1)
    assert srv.started, "uvicorn did not start"
    kw = app.state.knotwork
    group = settings.group
    people = seed_people(kw, group, ["Robert Smith", "Robert Smyth", "Alexander Novak",
                                     "Alexandra Novak"])
    kw.add_episode("Bob Smith approved the Atlas budget on Monday.", source="text")
    kw.add_episode("Alex Novak reviewed the hiring plan for the Payments Team.", source="text")
    try:
        yield {"url": f"http://127.0.0.1:{port}", "kw": kw, "group": group, "people": people}
    finally:
        srv.should_exit = True
        thread.join(timeout=30)


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Any]:
    if not (CHROMIUM.exists() and DRIVER.exists()):
        pytest.skip("Debian chromium + chromium-driver are not installed (make install as root)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--no-first-run", "--window-size=1400,1000",
                f"--user-data-dir={tmp_path / 'chrome-profile'}"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(str(DRIVER)), options=options)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


def _shot(driver: Any, tmp_path: Path, name: str) -> Path:
    out = tmp_path / "screenshots"
    out.mkdir(exist_ok=True)
    path = out / f"{name}.png"
    assert driver.save_screenshot(str(path)), name
    assert path.stat().st_size > 5000
    return path


def _card(driver: Any, mention: str) -> Any:
    from selenium.webdriver.common.by import By

    cards = [c for c in driver.find_elements(By.CSS_SELECTOR, "section.review")
             if f"“{mention}”" in c.text]
    assert len(cards) == 1, [c.text[:80] for c in driver.find_elements(By.CSS_SELECTOR, "section.review")]
    return cards[0]


def _reload_after(driver: Any, click: Any) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    marker = driver.execute_script("window.__kw_marker = 1; return 1;")
    assert marker == 1
    click()
    WebDriverWait(driver, 30).until(
        lambda d: d.execute_script("return window.__kw_marker === undefined;"))


def test_review_queue_actions_and_audit_trail(server: dict[str, Any], browser: Any,
                                              tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    url, kw, group, people = server["url"], server["kw"], server["group"], server["people"]
    browser.get(f"{url}/admin")
    # no key: refused (the sign-in page, or the API-key layer's 401 problem), never the queue
    assert "Review queue" not in browser.title
    assert "Sign in" in browser.title or "Unauthorized" in browser.page_source
    _shot(browser, tmp_path, "01-sign-in")

    # sign in on the form: the key, then Enter; the session cookie carries the page's
    # fetch calls, each with the session's CSRF token
    from selenium.webdriver.common.keys import Keys

    browser.find_element(By.ID, "admin-key").send_keys(KEY + Keys.ENTER)
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(browser, 30).until(lambda d: "Review queue" in d.title)
    assert "signed in as admin_api_key" in browser.find_element(By.ID, "actor").text

    # keyboard: j focuses the first item, j again the next; the mention is marked in snippets
    body = browser.find_element(By.TAG_NAME, "body")
    body.send_keys("j")
    focused = browser.find_elements(By.CSS_SELECTOR, "section.review.focus")
    assert len(focused) == 1
    first = focused[0].get_attribute("data-review-id")
    body.send_keys("j")
    assert browser.find_element(By.CSS_SELECTOR, "section.review.focus").get_attribute(
        "data-review-id") != first
    assert browser.find_elements(By.CSS_SELECTOR, ".snippet mark")

    bob = _card(browser, "Bob Smith")
    names = [e.text for e in bob.find_elements(By.CSS_SELECTOR, ".entity .entity-name")]
    assert names == ["Robert Smith", "Robert Smyth"]  # side by side, the attached one first
    assert "Bob Smith" in bob.find_element(By.CSS_SELECTOR, ".entity.attached .aliases").text
    totals = [float(t.text) for t in bob.find_elements(By.CSS_SELECTOR, ".score-total")]
    assert len(totals) == 2 and totals[0] > totals[1] >= 0.8
    assert "approved the Atlas budget" in bob.find_element(By.CSS_SELECTOR, ".snippet").text
    alex = _card(browser, "Alex Novak")
    assert "new" in alex.text  # tied: kept apart, flagged
    _shot(browser, tmp_path, "02-review-queue")

    # Alex Novak is Alexandra: merge the new entity into her (lineage kept)
    target = alex.find_element(By.XPATH, ".//button[contains(., 'Merge into Alexandra Novak')]")
    _reload_after(browser, target.click)
    assert not [c for c in browser.find_elements(By.CSS_SELECTOR, "section.review")
                if "“Alex Novak”" in c.text]
    # Bob Smith is not Robert Smith: reject splits the mention off
    _reload_after(browser, _card(browser, "Bob Smith").find_element(
        By.XPATH, ".//button[normalize-space()='Reject (split off)']").click)
    assert "Nothing to review" in browser.page_source
    _shot(browser, tmp_path, "03-queue-done")

    entities = {e.name: e for e in kw.runtime.graph.list_entities(group)}
    assert "Alex Novak" not in entities and "Alex Novak" in entities["Alexandra Novak"].aliases
    assert "Bob Smith" in entities and "Bob Smith" not in entities["Robert Smith"].aliases

    # the entity page: audit trail and the merge, undone with a click
    browser.get(f"{url}/admin/entities/{people['Alexandra Novak']}?group_id={group}")
    actions = [a.text for a in browser.find_elements(By.CSS_SELECTOR, ".audit-action")]
    assert "entity.merge" in actions
    _shot(browser, tmp_path, "04-entity-before-unmerge")
    _reload_after(browser, browser.find_element(By.CSS_SELECTOR, "button[data-action=unmerge]").click)
    assert "undone" in browser.find_element(By.CSS_SELECTOR, "tr.merge").text
    assert browser.find_elements(By.CSS_SELECTOR, ".audit-action")[0].text == "entity.unmerge"
    _shot(browser, tmp_path, "05-entity-after-unmerge")
    names = {e.name for e in kw.runtime.graph.list_entities(group)}
    assert "Alex Novak" in names

    # search and filter
    browser.get(f"{url}/admin/entities?group_id={group}&q=robert")
    rows = browser.find_elements(By.CSS_SELECTOR, "table tr td a")
    assert {"Robert Smith", "Robert Smyth"} <= {r.text for r in rows}
    browser.get(f"{url}/admin?group_id={group}&status=all&q=bob")
    assert [c.text for c in browser.find_elements(By.CSS_SELECTOR, ".review-status")] == ["rejected"]
    _shot(browser, tmp_path, "06-search-and-filter")
    assert len(list((tmp_path / "screenshots").glob("*.png"))) == 6

    # sign out: back to the sign-in page, and the queue refuses again
    browser.find_element(By.ID, "logout").click()
    WebDriverWait(browser, 30).until(lambda d: "Sign in" in d.title)
    browser.get(f"{url}/admin")
    assert "Review queue" not in browser.title

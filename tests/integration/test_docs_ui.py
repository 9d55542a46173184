"""/docs from local Swagger UI assets (rendered offline in headless Chromium), GET / -> /docs,
and the OpenAPI security schemes as the auth mode enforces them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from knotwork.services.api.app import create_app
from knotwork.services.api.auth import OPEN_PATHS
from knotwork.services.api.docs_ui import API_KEY, BEARER
from knotwork.settings import AuthMode
from tests.conftest import SettingsFactory
from tests.integration.test_admin_ui import CHROMIUM, DRIVER, _free_port

pytestmark = [pytest.mark.integration]


@pytest.fixture
def client(make_settings: SettingsFactory) -> Iterator[TestClient]:
    with TestClient(create_app(make_settings(embedder="hashing"))) as c:
        yield c


def _operations(spec: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(path, method, op) for path, item in spec["paths"].items()
            for method, op in item.items() if isinstance(op, dict) and "responses" in op]


def _spec(make_settings: SettingsFactory, mode: AuthMode) -> dict[str, Any]:
    # the schema is built from the routes alone: no lifespan (no store) needed
    app = create_app(make_settings(embedder="hashing", auth_mode=mode))
    return app.openapi()


def test_docs_page_loads_its_assets_from_this_server(client: TestClient) -> None:
    page = client.get("/docs")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assets = [part.split('"', 1)[0] for part in page.text.split('src="')[1:]]
    assets += [part.split('"', 1)[0] for part in page.text.split('href="')[1:]]
    assert len(assets) >= 3, page.text
    assert all(a.startswith("/") and not a.startswith("//") for a in assets), assets
    for asset in assets:
        response = client.get(asset)
        assert response.status_code == 200, asset
        assert len(response.content) > 500, asset
    assert "SwaggerUIBundle" in client.get("/docs/assets/swagger-ui-bundle.js").text


def test_root_redirects_to_the_docs(client: TestClient) -> None:
    response = client.get("/", follow_redirects=False)
    assert response.status_code in (302, 307) and response.headers["location"] == "/docs"


@pytest.mark.parametrize("mode", [AuthMode.AUTO, AuthMode.ON])
def test_the_schema_declares_bearer_and_x_api_key(make_settings: SettingsFactory,
                                                  mode: AuthMode) -> None:
    spec = _spec(make_settings, mode)
    schemes = spec["components"]["securitySchemes"]
    assert schemes[BEARER]["type"] == "http" and schemes[BEARER]["scheme"] == "bearer"
    assert schemes[API_KEY]["in"] == "header" and schemes[API_KEY]["name"] == "X-API-Key"
    keyed = 0
    for path, method, op in _operations(spec):
        if path.startswith(OPEN_PATHS):
            assert op["security"] == [], (path, method)
            continue
        keyed += 1
        assert {BEARER: []} in op["security"] and {API_KEY: []} in op["security"], (path, method)
        # auto: enforced only once a key exists, so an anonymous call is allowed too
        assert ({} in op["security"]) is (mode is AuthMode.AUTO), (path, method)
    assert keyed >= 10


def test_auth_off_declares_no_security(make_settings: SettingsFactory) -> None:
    spec = _spec(make_settings, AuthMode.OFF)
    assert "securitySchemes" not in spec.get("components", {})
    assert all("security" not in op for _, _, op in _operations(spec))


def test_docs_render_offline_in_chromium(make_settings: SettingsFactory, tmp_path: Path) -> None:
    if not (CHROMIUM.exists() and DRIVER.exists()):
        pytest.skip("Debian chromium + chromium-driver are not installed (make install as root)")
    import threading
    import time

    import uvicorn
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    app = create_app(make_settings(embedder="hashing"))
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    # every host but this server unreachable: a CDN asset would fail and leave the page blank
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--no-first-run", "--window-size=1400,1000",
                "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
                f"--user-data-dir={tmp_path / 'chrome-profile'}"):
        options.add_argument(arg)
    driver = None
    try:
        deadline = time.monotonic() + 60
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.1)
        assert server.started, "uvicorn did not start"
        driver = webdriver.Chrome(service=Service(str(DRIVER)), options=options)
        driver.set_page_load_timeout(60)
        driver.get(f"http://127.0.0.1:{port}/")  # redirected to /docs
        wait = WebDriverWait(driver, 60)
        wait.until(expected_conditions.presence_of_element_located((By.CSS_SELECTOR, ".opblock")))
        assert driver.current_url.endswith("/docs")
        operations = driver.find_elements(By.CSS_SELECTOR, ".opblock")
        assert len(operations) >= 10
        assert driver.find_elements(By.CSS_SELECTOR, ".btn.authorize")  # securitySchemes
        assert "Knotwork" in driver.find_element(By.CSS_SELECTOR, ".info .title").text
        assert driver.save_screenshot(str(tmp_path / "docs.png"))
    finally:
        if driver is not None:
            driver.quit()
        server.should_exit = True
        thread.join(timeout=30)

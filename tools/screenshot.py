"""Re-make the README's admin UI screenshot (docs/images/admin-entity.png).

Not part of the test suite. Ingests the bundled sample data into a data dir, picks the entity
with the most facts, serves the API with ``knotwork serve`` (admin key from
``KNOTWORK_ADMIN_API_KEY``), signs in to /admin in headless Chromium (Debian ``chromium`` +
``chromium-driver``, driven by Selenium, as tests/integration/test_admin_ui.py does) and saves
a 1280x800 PNG of that entity's page (card, facts, mentions). If Pillow is importable and the
PNG is over the size budget, it is re-encoded with a 256-colour palette.

    HF_HUB_OFFLINE=1 .venv/bin/python tools/screenshot.py            # temp data dir
    HF_HUB_OFFLINE=1 .venv/bin/python tools/screenshot.py --data-dir .knotwork/demo --entity-id ID
"""

from __future__ import annotations

import argparse
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "src" / "knotwork" / "sample_data"
CHROMIUM, DRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
WIDTH, HEIGHT = 1280, 800
BUDGET = 200_000  # bytes; the README image should stay light


def _cli(data_dir: Path, *args: str) -> list[str]:
    """The knotwork CLI run by this interpreter (works from a venv or with PYTHONPATH=src)."""
    return [sys.executable, "-c",
            "import sys; from knotwork.services.cli import main; sys.exit(main())", "--data-dir", str(data_dir), *args]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _pick_entity(data_dir: Path) -> tuple[str, str, str]:
    """(entity id, name, group) of the entity with the most facts, mentions breaking ties."""
    from knotwork.core import Knotwork
    from knotwork.resolution.workflow import EntityWorkflow
    from knotwork.settings import Settings

    with Knotwork(Settings(data_dir=data_dir)) as kw:  # type: ignore[call-arg]
        group = kw.settings.group
        wf = EntityWorkflow(kw.runtime, group)
        best: tuple[int, int, str, str] | None = None
        for entity in kw.runtime.graph.list_entities(group):
            view = wf.view(entity.id)
            key = (len(view.relationships), view.mentions_count, entity.id, entity.name)
            if best is None or key[:2] > best[:2]:
                best = key
        if best is None:
            raise SystemExit(f"no entities in {data_dir}: did the ingest fail?")
        return best[2], best[3], group


def _serve(data_dir: Path, key: str, port: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "KNOTWORK_ADMIN_API_KEY": key, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.Popen(_cli(data_dir, "serve", "--port", str(port)), env=env)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"knotwork serve exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as r:
                if r.status == 200:
                    return proc
        except OSError:
            time.sleep(0.5)
    proc.terminate()
    raise SystemExit("knotwork serve did not answer /healthz within 180 s")


def _browser(profile: Path) -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--no-first-run", "--hide-scrollbars",
                f"--window-size={WIDTH},{HEIGHT}", f"--user-data-dir={profile}"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(str(DRIVER)), options=options)
    driver.set_page_load_timeout(60)
    # the viewport exactly WIDTH x HEIGHT, whatever the window decorations take
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1,
                            "mobile": False})
    return driver


def _shoot(url: str, key: str, entity_id: str, group: str, out: Path, profile: Path) -> None:
    from urllib.parse import quote

    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    driver = _browser(profile)
    try:
        driver.get(f"{url}/admin")
        driver.find_element(By.ID, "admin-key").send_keys(key + Keys.ENTER)
        WebDriverWait(driver, 30).until(lambda d: "Review queue" in d.title)
        driver.get(f"{url}/admin/entities/{quote(entity_id)}?group_id={quote(group)}")
        WebDriverWait(driver, 30).until(lambda d: d.find_elements(By.ID, "mentions"))
        out.parent.mkdir(parents=True, exist_ok=True)
        if not driver.save_screenshot(str(out)):
            raise SystemExit("Chromium returned no screenshot")
    finally:
        driver.quit()


def _shrink(out: Path) -> None:
    if out.stat().st_size <= BUDGET:
        return
    try:
        from PIL import Image
    except ImportError:
        print(f"{out} is {out.stat().st_size} bytes; install Pillow to shrink it", file=sys.stderr)
        return
    with Image.open(out) as img:
        small = img.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
    small.save(out, optimize=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, help="reuse this data dir (default: a temp dir)")
    parser.add_argument("--entity-id", help="the entity to show (default: the one with most facts)")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images" / "admin-entity.png")
    args = parser.parse_args()
    if not (CHROMIUM.exists() and DRIVER.exists()):
        print("needs Debian chromium + chromium-driver (/usr/bin/chromium, /usr/bin/chromedriver)",
              file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="kw-shot-") as tmp:
        data_dir = args.data_dir or Path(tmp) / "data"
        env = {**os.environ, "HF_HUB_OFFLINE": "1"}
        subprocess.run(_cli(data_dir, "ingest", str(SAMPLE)), check=True, env=env)
        entity_id, name, group = _pick_entity(data_dir)
        entity_id = args.entity_id or entity_id
        key, port = "shot-" + secrets.token_hex(12), _free_port()
        server = _serve(data_dir, key, port)
        try:
            _shoot(f"http://127.0.0.1:{port}", key, entity_id, group, args.out,
                   Path(tmp) / "chrome-profile")
        finally:
            server.terminate()
            server.wait(timeout=60)
    _shrink(args.out)
    print(f"{args.out}: {name if not args.entity_id else entity_id}, "
          f"{args.out.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())

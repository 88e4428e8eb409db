"""Browser tests: Playwright's Python API driving the system's Chromium (`/usr/bin/chromium`, installed by
`.ci/run` with apt-get; Playwright never downloads a browser here) against pytest-django's live server.

Fixtures for every browser test: `browser` (one Chromium per test session and worker), `page` (a fresh context
per test), `staff_page` (that page logged in to the admin as a superuser) and `screenshot(page, name)`, which keeps
a full-page PNG under `var/test/screenshots/` (CI keeps the folder as an artifact).
"""

import os
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model

CHROMIUM = Path(os.environ.get("BROWSER_TEST_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
STAFF_USERNAME = "cs-lead"
STAFF_PASSWORD = "browser-test-password"
# Long enough for a page served by the live server on a loaded machine; an assertion that waits fails after it.
TIMEOUT_MS = 30_000


@pytest.hookimpl(tryfirst=True)  # before `-m` selects by marker
def pytest_collection_modifyitems(items):
    for item in items:
        if Path(item.fspath).is_relative_to(Path(__file__).parent):
            item.add_marker(pytest.mark.browser)
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium)")
    # Playwright's sync API keeps an event loop on this thread; the ORM calls the tests make between pages are
    # still synchronous code, so Django's guard against ORM calls inside a running loop is lifted for the session.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    playwright = sync_playwright().start()
    chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
    yield chromium
    chromium.close()
    playwright.stop()
    if previous is None:
        os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    else:
        os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture
def page(browser, live_server):
    context = browser.new_context(base_url=live_server.url, locale="ko-KR", viewport={"width": 1400, "height": 900})
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    yield page
    context.close()


@pytest.fixture
def staff_user(transactional_db):
    return get_user_model().objects.create_superuser(STAFF_USERNAME, "lead@example.com", STAFF_PASSWORD)


def log_in(page, *, username=STAFF_USERNAME, password=STAFF_PASSWORD):
    page.goto("/admin/login/?next=/admin/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("input[type=submit]")
    page.wait_for_url("**/admin/")


@pytest.fixture
def staff_page(page, staff_user):
    log_in(page)
    return page


@pytest.fixture
def screenshot():
    folder = Path(settings.TEST_VAR_DIR) / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)

    def take(page, name: str) -> Path:
        path = folder / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return take

"""No request leaves the machine: every page, opened in Chromium, asks only the app's own server.

A ":material/…:" page icon once made every page fetch its favicon from fonts.gstatic.com.
"""

from urllib.parse import urlsplit

import pytest

from tests.e2e.conftest import VIEWPORT, wait_idle

pytestmark = pytest.mark.e2e

LOCAL_SCHEMES = {"data", "blob", "about"}


def test_every_page_asks_only_the_local_server(browser, app_url):
    # A browser context of its own: an empty cache, as a first visit has, so that every file is asked for.
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url))
    page.goto(f"{app_url}/")
    page.get_by_text("Temperature in one picture").first.wait_for(timeout=60_000)
    wait_idle(page)
    links = page.locator('[data-testid="stSidebarNav"] a[data-testid="stSidebarNavLink"]')
    count = links.count()
    assert count >= 10, "every page of the registry is in the sidebar"
    for i in range(count):  # every page but the one open (Home, the default page, need not be first)
        href = links.nth(i).get_attribute("href")
        if href == page.url.split("?")[0]:
            continue
        links.nth(i).click()
        page.wait_for_url(lambda url, href=href: url.split("?")[0] == href, timeout=60_000)  # a page may add parameters
        page.wait_for_timeout(300)
        wait_idle(page, timeout=120_000)
    page.wait_for_timeout(1_000)
    host = urlsplit(app_url).netloc
    outside = sorted({u for u in asked if urlsplit(u).scheme not in LOCAL_SCHEMES and urlsplit(u).netloc != host})
    assert len(asked) > 20, "the pages were loaded"
    assert outside == [], f"requests that left the machine: {outside[:5]}"
    context.close()

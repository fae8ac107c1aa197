"""What the tests read from and do to the viewer's page, in one place."""

import time

from harness import SCREENSHOTS

CAPACITY = 250  # MessageWindow's default: 5 pages of 50
PAGE = 50

STATE = """
const s = document.querySelector('.scroller');
if (!s) return null;
const rows = [...document.querySelectorAll('ol.rows > li')];
return {updates: Number(s.dataset.updates || 0), loading: s.dataset.loading || '', last: s.dataset.lastChange || '',
        attached: s.dataset.attached === 'true', hasOlder: s.dataset.hasOlder === 'true',
        rows: rows.length, first: rows.length ? Number(rows[0].dataset.id) : null,
        lastId: rows.length ? Number(rows[rows.length - 1].dataset.id) : null,
        scrollTop: s.scrollTop, scrollHeight: s.scrollHeight, clientHeight: s.clientHeight,
        maxRows: window.__maxRows || 0};
"""

# The topmost row on screen: the one being read.
TOP_VISIBLE_ROW = """
const s = document.querySelector('.scroller');
const top = s.getBoundingClientRect().top;
for (const r of document.querySelectorAll('ol.rows > li')) {
  const b = r.getBoundingClientRect();
  if (b.bottom > top) return [r.dataset.id, b.top];
}
return null;
"""

ROW_TOP = """
const r = document.querySelector(`ol.rows > li[data-id="${arguments[0]}"]`);
return r ? r.getBoundingClientRect().top : null;
"""

# Counts the rows after every change of the list, for "never over capacity".
WATCH_ROWS = """
const list = document.querySelector('ol.rows');
window.__maxRows = list.children.length;
window.__changes = [];
const scroller = document.querySelector('.scroller');
new MutationObserver(() => window.__changes.push(scroller.dataset.lastChange + ' ' + list.children.length + ' '
    + (scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight)))
  .observe(scroller, {attributes: true, attributeFilter: ['data-updates']});
new MutationObserver(() => { window.__maxRows = Math.max(window.__maxRows, list.children.length); })
  .observe(list, {childList: true});
"""


def wait_until(condition, timeout=20, interval=0.05, message="condition"):
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {message}")
        time.sleep(interval)


def state(driver):
    return driver.execute_script(STATE)


def load(driver, url, view_as=None):
    """A fresh page load (not a same-document hash change)."""
    driver.get("about:blank")
    origin = url.split("/#")[0]
    if view_as is not None:
        driver.get(origin + "/healthz")
        driver.execute_script("sessionStorage.setItem('history-viewer-user', arguments[0])", view_as)
    else:
        driver.get(origin + "/healthz")
        driver.execute_script("sessionStorage.clear()")
    driver.get(url)


def open_conversation(driver, base, cid, view_as=None):
    load(driver, f"{base}/#/conversations/{cid}", view_as)
    wait_until(lambda: (s := state(driver)) and s["updates"] >= 1 and not s["loading"], message=f"{cid} to open")
    driver.execute_script(WATCH_ROWS)
    return state(driver)


def wait_for_update(driver, before, message="an update"):
    """Waits until the screen rendered a change after `before` and no page is loading."""
    return wait_until(lambda: (s := state(driver))["updates"] > before and not s["loading"] and s, message=message)


def distance_to_bottom(s):
    return s["scrollHeight"] - s["scrollTop"] - s["clientHeight"]


def screenshot(driver, name):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(SCREENSHOTS / f"{name}.png"))


def script_errors(driver):
    """Errors the page logged (a CSP refusal, an exception), not failed requests."""
    return [entry["message"] for entry in driver.get_log("browser")
            if entry["level"] == "SEVERE" and "Failed to load resource" not in entry["message"]
            and "net::ERR_" not in entry["message"]]

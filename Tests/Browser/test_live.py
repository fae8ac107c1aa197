"""Jumps, live edits and deletes, sending through a server restart, the
inbox, and narrow screens: the viewer against a real server."""

import tempfile
import time

from selenium.webdriver.common.keys import Keys

from conftest import BIG
from harness import API, Server, make_driver
from page import (PAGE, ROW_TOP, TOP_VISIBLE_ROW, load, open_conversation, screenshot, script_errors, state,
                  wait_for_update, wait_until)


def test_a_jump_to_a_replys_original_and_back(browser, open_server, api):
    s = open_conversation(browser, open_server.url, BIG)
    # A reply in the newest page whose original is far outside it.
    target = browser.execute_script("""
      for (const b of [...document.querySelectorAll('ol.rows > li .reply-ref')].reverse()) {
        const id = Number(b.dataset.target);
        if (!document.querySelector(`ol.rows > li[data-id="${id}"]`)) {
          b.scrollIntoView({block: 'center'});
          return [b.closest('li').dataset.id, id];
        }
      }
      return null;""")
    assert target, "no reply to a message outside the newest page"
    reply_id, original_id = target
    reply_top = browser.execute_script(ROW_TOP, reply_id)
    before = state(browser)
    browser.find_element("css selector", f'ol.rows > li[data-id="{reply_id}"] .reply-ref').click()
    after = wait_for_update(browser, before["updates"], "the jump")
    assert "jumped" in after["last"]
    assert after["first"] <= original_id <= after["lastId"] and after["rows"] <= PAGE + 1
    original = browser.find_element("css selector", f'ol.rows > li[data-id="{original_id}"]')
    assert "target" in original.get_attribute("class")
    assert browser.execute_script("""
      const r = arguments[0].getBoundingClientRect(), s = document.querySelector('.scroller').getBoundingClientRect();
      return r.top >= s.top && r.bottom <= s.bottom;""", original), "the original is not on screen"
    assert browser.current_url.endswith(f"/messages/{original_id}")
    screenshot(browser, "conversation-jump")

    before = state(browser)
    browser.find_element("css selector", ".back-to").click()
    after = wait_for_update(browser, before["updates"], "the way back")
    assert after["first"] <= int(reply_id) <= after["lastId"]
    moved = browser.execute_script(ROW_TOP, reply_id) - reply_top
    assert abs(moved) <= 1, f"back, the reply is {moved} px from where it was"


def test_an_edit_and_a_delete_from_another_client_appear_in_place(browser, open_server, api):
    cid = "chat-0001"
    open_conversation(browser, open_server.url, cid)
    browser.execute_script("const s = document.querySelector('.scroller'); s.scrollTop -= s.clientHeight / 2")
    wait_until(lambda: not state(browser)["loading"])
    row_id, top = browser.execute_script(TOP_VISIBLE_ROW)
    visible = browser.execute_script("""
      const s = document.querySelector('.scroller').getBoundingClientRect();
      return [...document.querySelectorAll('ol.rows > li:not(.deleted)')]
        .filter(r => { const b = r.getBoundingClientRect(); return b.top >= s.top && b.bottom <= s.bottom; })
        .map(r => Number(r.dataset.id));""")
    assert len(visible) >= 3
    edited, deleted = visible[1], visible[2]
    rows_before = state(browser)["rows"]
    api.edit(cid, edited, "changed on another device")
    api.delete(cid, deleted)
    wait_until(lambda: browser.execute_script("""
      const e = document.querySelector(`li[data-id="${arguments[0]}"]`), d = document.querySelector(`li[data-id="${arguments[1]}"]`);
      return e && d && e.textContent.includes('changed on another device') && e.textContent.includes('edited')
        && d.classList.contains('deleted') && d.textContent.includes('deleted');""", edited, deleted),
        message="the edit and the delete")
    assert state(browser)["rows"] == rows_before, "a row was added or removed instead of changed in place"
    moved = browser.execute_script(ROW_TOP, row_id) - top
    assert abs(moved) <= 1, f"the row being read moved {moved} px"


def test_a_send_while_the_server_is_stopped_is_stored_exactly_once_after_it_restarts():
    with tempfile.TemporaryDirectory(prefix="viewer-restart-") as directory:
        server = Server(directory).start()
        driver = make_driver()
        try:
            api = API(server.url)
            api.create("restart", "Through a restart")
            api.post("restart", "bob", "are you there?")
            open_conversation(driver, server.url, "restart", view_as="ana")
            server.stop()
            composer = driver.find_element("css selector", "#composer")
            composer.send_keys("sent while the server was down")
            driver.find_element("css selector", ".composer button[type=submit]").click()
            pending = wait_until(lambda: driver.find_elements("css selector", ".pending-rows li"), message="a pending row")
            screenshot(driver, "conversation-pending")
            assert pending[0].get_attribute("data-state") == "pending"
            assert "Sending" in pending[0].text
            time.sleep(1.5)  # retried meanwhile, still pending
            assert driver.find_elements("css selector", '.pending-rows li[data-state="pending"]')
            server.start()
            wait_until(lambda: not driver.find_elements("css selector", ".pending-rows li")
                       and "sent while the server was down" in driver.find_element("css selector", "ol.rows").text,
                       timeout=30, message="the stored message")
            stored = [m for m in api.all_messages("restart") if m["body"] == "sent while the server was down"]
            assert len(stored) == 1 and stored[0]["sender"] == "ana" and stored[0]["client_id"]
            # The feed, resumed after the restart, does not add it a second time.
            time.sleep(1)
            rows = driver.find_elements("css selector", "ol.rows > li")
            assert sum("sent while the server was down" in r.text for r in rows) == 1
        finally:
            driver.quit()
            server.close()


def test_the_inbox_lists_conversations_by_last_message_with_live_unread_counts(browser, open_server, api):
    load(browser, f"{open_server.url}/#/inbox")
    field = wait_until(lambda: browser.find_elements("css selector", "#view-as") or
                       (browser.find_element("css selector", ".who button").click() and False), message="the user form")
    field[0].send_keys("load-user-0000")
    browser.find_element("css selector", ".view-as button[type=submit]").click()
    inbox = "return [...document.querySelectorAll('.inbox-row')].map(r => [r.dataset.cid, r.textContent, r.querySelector('.badge')?.textContent ?? null])"
    rows = wait_until(lambda: browser.execute_script(inbox), message="inbox rows")
    cids = [cid for cid, _, _ in rows]
    assert set(cids) >= {BIG, "chat-0000", "chat-0001"}
    # The most recent message first, each with its unread count.
    newest = {cid: api.conversation(cid)["newest_id"] for cid in cids}
    assert cids == sorted(cids, key=lambda cid: -newest[cid])
    assert all(badge for _, _, badge in rows)
    api.post(BIG, "zoe", "a new message for the inbox")
    rows = wait_until(lambda: (rows := browser.execute_script(inbox))[0][0] == BIG
                      and "a new message for the inbox" in rows[0][1] and rows,
                      message="the conversation moving to the top")
    assert rows[0][2] == "999+"
    screenshot(browser, "inbox")
    # Keyboard: down from the first conversation focuses the second.
    browser.execute_script("document.querySelector('.inbox-row a').focus()")
    browser.switch_to.active_element.send_keys(Keys.ARROW_DOWN)
    assert browser.execute_script("return document.activeElement.closest('.inbox-row').dataset.cid") == rows[1][0]
    assert script_errors(browser) == []


def test_readable_at_320_px(open_server, api):
    driver = make_driver(width=320, height=640)
    try:
        open_conversation(driver, open_server.url, "chat-0000", view_as="load-user-0000")
        width = driver.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
        assert width[1] == 320
        assert width[0] <= width[1], f"the page is {width[0]} px wide in a {width[1]} px window"
        body = driver.find_element("css selector", "ol.rows > li .body")
        assert body.size["width"] >= 250
        screenshot(driver, "conversation-320px")
        load(driver, f"{open_server.url}/#/inbox", view_as="load-user-0000")
        wait_until(lambda: driver.find_elements("css selector", ".inbox-row"), message="inbox rows")
        width = driver.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
        assert width[0] <= width[1]
        screenshot(driver, "inbox-320px")
    finally:
        driver.quit()


def test_a_jump_to_the_first_unread_message_from_the_inbox(browser, open_server, api):
    cid = "chat-0001"
    api.add_member(cid, "reader-1")  # a new member: everything is unread
    row = next(r for r in api.call("GET", "/v1/users/reader-1/conversations")["conversations"]
               if r["conversation"]["id"] == cid)
    first_unread = row["first_unread_id"]
    assert first_unread == api.all_messages(cid)[0]["id"]
    load(browser, f"{open_server.url}/#/inbox", view_as="reader-1")
    link = wait_until(lambda: browser.find_elements("css selector", f'.inbox-row[data-cid="{cid}"] a'), message="the row")
    link[0].click()
    wait_until(lambda: (s := state(browser)) and s["updates"] >= 1 and not s["loading"], message="the conversation")
    assert first_unread < state(browser)["first"], "the first unread was already loaded"
    before = state(browser)
    browser.find_element("css selector", ".first-unread").click()
    after = wait_for_update(browser, before["updates"], "the jump to the first unread")
    assert "jumped" in after["last"] and after["first"] == first_unread
    marked = browser.find_element("css selector", f'ol.rows > li[data-id="{first_unread}"]')
    assert "first-unread-row" in marked.get_attribute("class") and "New messages" in browser.execute_script(
        "return getComputedStyle(arguments[0], '::before').content", marked)
    assert browser.execute_script("""
      const r = arguments[0].getBoundingClientRect(), s = document.querySelector('.scroller').getBoundingClientRect();
      return r.top >= s.top && r.bottom <= s.bottom;""", marked), "the first unread is not on screen"

"""The conversation screen's scrolling, measured from the DOM's geometry in
headless Chromium against a real history-server."""

from conftest import BIG
from page import (CAPACITY, PAGE, ROW_TOP, TOP_VISIBLE_ROW, distance_to_bottom, open_conversation, screenshot,
                  script_errors, state, wait_for_update, wait_until)

# The bottom-most row on screen.
BOTTOM_VISIBLE_ROW = """
const s = document.querySelector('.scroller');
const bottom = s.getBoundingClientRect().bottom;
const rows = [...document.querySelectorAll('ol.rows > li')].reverse();
for (const r of rows) {
  const b = r.getBoundingClientRect();
  if (b.top < bottom) return [r.dataset.id, b.top];
}
return null;
"""


def test_opens_at_the_bottom_of_100000_messages_and_keeps_the_row_being_read_still(browser, open_server, api):
    conversation = api.conversation(BIG)
    assert conversation["message_count"] >= 100_000
    # Viewing as a user who is no member: open mode shows any conversation.
    s = open_conversation(browser, open_server.url, BIG, view_as="ana")
    assert s["lastId"] == conversation["newest_id"]
    assert s["rows"] == PAGE
    assert distance_to_bottom(s) <= 1, s
    screenshot(browser, "conversation")

    # Up: to the top of the loaded rows, again and again. Each time the row
    # at the top of the screen must stay where it was while older rows are
    # prepended and, past capacity, the newest rows trimmed.
    prepends = trims = 0
    movements = []
    for _ in range(8):
        before = state(browser)
        row_id, top = browser.execute_script("document.querySelector('.scroller').scrollTop = 0;"
                                             + TOP_VISIBLE_ROW)
        after = wait_for_update(browser, before["updates"], "a prepend")
        assert "prepended" in after["last"], after
        assert after["first"] < before["first"]
        moved = browser.execute_script(ROW_TOP, row_id) - top
        assert abs(moved) <= 1, f"row {row_id} moved {moved} px on {after['last']}"
        movements.append(abs(moved))
        assert after["rows"] <= CAPACITY
        prepends += 1
        trims += "trimmed" in after["last"]
    assert trims >= 3, "the window never trimmed its newest rows"
    s = state(browser)
    assert not s["attached"] and s["rows"] == CAPACITY

    # Down again: newer pages are appended and the oldest rows trimmed; the
    # row at the bottom of the screen stays still until the window reaches
    # the newest message again.
    appends = 0
    while not state(browser)["attached"]:
        before = state(browser)
        seen = len(browser.execute_script("return window.__changes"))
        row_id, top = browser.execute_script(
            "{ const e = document.querySelector('.scroller'); e.scrollTop = e.scrollHeight; }" + BOTTOM_VISIBLE_ROW)
        after = wait_for_update(browser, before["updates"], "an append")
        changes = browser.execute_script("return window.__changes")[seen:]
        assert changes[0].startswith("appended"), changes
        appends += 1
        assert appends <= 10
        if after["attached"]:
            # The last page reached the newest message: a reader at the
            # bottom follows it, and settles there on the newest page.
            after = wait_until(lambda: (s := state(browser))["rows"] == PAGE and s, message="settling at the bottom")
            assert distance_to_bottom(after) <= 1, after
            break
        assert changes[0].startswith("appended trimmed"), changes
        moved = browser.execute_script(ROW_TOP, row_id) - top
        assert abs(moved) <= 1, f"row {row_id} moved {moved} px on {after['last']}"
        movements.append(abs(moved))
    assert appends >= 3
    print(f"{prepends} prepends ({trims} with a trim), {appends} appends: the row being read moved at most "
          f"{max(movements)} px")
    s = state(browser)
    assert s["lastId"] == conversation["newest_id"]
    assert s["maxRows"] <= CAPACITY, f"{s['maxRows']} rows were rendered at once"
    assert script_errors(browser) == []


def test_a_short_chat_sits_at_the_top(browser, open_server, api):
    api.create("short-chat", "A short chat")
    for text in ("first", "second", "third"):
        api.post("short-chat", "ana", text)
    s = open_conversation(browser, open_server.url, "short-chat")
    assert s["rows"] == 3 and not s["hasOlder"]
    assert s["scrollTop"] == 0 and s["scrollHeight"] <= s["clientHeight"]
    frame_top, first_top = browser.execute_script(
        "return [document.querySelector('.scroller').getBoundingClientRect().top,"
        " document.querySelector('ol.rows > li').getBoundingClientRect().top]")
    # Only the 40 px "beginning of the conversation" line is above the first row.
    assert first_top - frame_top <= 41
    assert "beginning" in browser.find_element("css selector", ".top-edge").text


def test_a_reader_scrolled_up_is_not_moved_by_50_new_messages_and_jumps_to_latest(browser, open_server, api):
    cid = "chat-0000"
    s = open_conversation(browser, open_server.url, cid)
    # Up by a screen and a half: still in the loaded rows, far from both ends.
    browser.execute_script("const s = document.querySelector('.scroller'); s.scrollTop -= s.clientHeight * 1.5")
    wait_until(lambda: not state(browser)["loading"])
    row_id, top = browser.execute_script(TOP_VISIBLE_ROW)
    for n in range(50):
        api.post(cid, "bob", f"news {n}")
    button = browser.find_element("css selector", ".new-count")
    wait_until(lambda: button.is_displayed() and button.text.startswith("50 new"), message="50 new")
    moved = browser.execute_script(ROW_TOP, row_id) - top
    assert abs(moved) <= 1, f"the reader was moved {moved} px by new messages"
    # The live region speaks a new text 50 ms after it is set (dom.js,
    # announce): the button can show "50 new" while it still says 49.
    announcer = browser.find_element("css selector", "#announcer")
    wait_until(lambda: "50 new" in announcer.get_attribute("textContent"), message="announced 50 new")

    before = state(browser)
    button.click()
    after = wait_for_update(browser, before["updates"], "jump to latest")
    assert "replaced" in after["last"]
    newest = api.conversation(cid)["newest_id"]
    assert after["lastId"] == newest and after["rows"] == PAGE
    assert distance_to_bottom(after) <= 1
    assert not button.is_displayed()

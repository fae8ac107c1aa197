"""Tokens mode: the viewer asks for a token, keeps it in memory only, and
shows exactly what its user may see."""

import tempfile
import time
from pathlib import Path

import jwt

from harness import API, Server
from page import load, screenshot, state, wait_until

SECRET = "browser-test-secret-0123456789abcdef0123456789"


def mint(sub, admin=False):
    claims = {"sub": sub, "exp": int(time.time()) + 600}
    if admin:
        claims["scope"] = "admin"
    return jwt.encode(claims, SECRET, algorithm="HS256", headers={"kid": "k1"})


def test_a_stranger_cannot_open_a_conversation_and_the_token_stays_in_memory(browser):
    with tempfile.TemporaryDirectory(prefix="viewer-tokens-") as directory:
        secrets = Path(directory) / "secrets.txt"
        secrets.write_text(f"k1 {SECRET}\n")
        server = Server(directory, extra=["--jwt-hs256-secret-file", str(secrets)]).start()
        try:
            admin = API(server.url, mint("backend", admin=True))
            for cid, member in (("ours", "alice"), ("theirs", "bob")):
                admin.create(cid, f"{member}'s room")
                admin.add_member(cid, member)
                admin.post(cid, member, f"hello from {member}")

            load(browser, f"{server.url}/#/inbox")
            field = wait_until(lambda: browser.find_elements("css selector", "#token"), message="the sign-in form")[0]
            field.send_keys(mint("mallory", admin=False)[:-4] + "AAAA")
            browser.find_element("css selector", ".sign-in button[type=submit]").click()
            wait_until(lambda: "refused" in browser.find_element("css selector", ".sign-in .error").text,
                       message="a bad signature refused")
            screenshot(browser, "sign-in")

            token = mint("alice")
            field = browser.find_element("css selector", "#token")
            field.clear()
            field.send_keys(token)
            browser.find_element("css selector", ".sign-in button[type=submit]").click()
            rows = wait_until(lambda: browser.execute_script(
                "return [...document.querySelectorAll('.inbox-row')].map(r => r.dataset.cid)"), message="alice's inbox")
            assert rows == ["ours"]
            assert "alice" in browser.find_element("css selector", "#who").text
            kept = browser.execute_script("""return JSON.stringify([Object.entries(localStorage),
              Object.entries(sessionStorage), location.href, document.cookie])""")
            assert token not in kept and token[-20:] not in kept

            browser.execute_script("location.hash = '#/conversations/theirs'")
            wait_until(lambda: browser.find_elements("css selector", ".missing [role=alert]"), message="not found")
            assert browser.find_elements("css selector", "ol.rows > li") == []
            assert "hello from bob" not in browser.page_source

            browser.execute_script("location.hash = '#/conversations/ours'")
            wait_until(lambda: (s := state(browser)) and s["rows"] == 1, message="alice's conversation")
            assert "hello from alice" in browser.find_element("css selector", "ol.rows").text

            browser.refresh()
            wait_until(lambda: browser.find_elements("css selector", "#token"), message="the token forgotten on reload")
        finally:
            server.close()

"""A real history-server process, its API from Python, and headless Chromium.

The browser tests drive Debian's chromium through chromedriver (Selenium)
against the server binary that `swift build` made, over a SQLite file in a
temporary folder and a free loopback port: the app, the server and the
layout engine are the ones that ship.
"""

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("HISTORY_BUILD_DIR", ROOT / ".build" / "debug"))
SERVER = Path(os.environ.get("HISTORY_SERVER", BUILD / "history-server"))
LOAD = Path(os.environ.get("HISTORY_LOAD", BUILD / "history-load"))
SCREENSHOTS = Path(os.environ.get("HISTORY_SCREENSHOTS", Path(__file__).resolve().parent / "screenshots"))


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def seed_direct(database, conversations, messages, prefix, members=0):
    """`history-load seed --direct`: a bulk load straight into the file."""
    command = [str(LOAD), "seed", "--direct", str(database), "--conversations", str(conversations),
               "--messages", str(messages), "--prefix", prefix, "--quiet"]
    if members:
        command += ["--add-members", "--members", str(members)]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, timeout=300)


class Server:
    """history-server as a child process; `stop()` and `start()` again keep
    the database and the port, as a restart in production would."""

    def __init__(self, directory, extra=(), port=None):
        self.directory = Path(directory)
        self.database = self.directory / "history.sqlite"
        self.extra = list(extra)
        self.port = port or free_port()
        self.process = None
        self.log = open(self.directory / "server.log", "ab")

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def start(self):
        command = [str(SERVER), "--port", str(self.port), "--database", str(self.database),
                   "--durability", "normal", "--access-log", "off", "--log-level", "warning", *self.extra]
        environment = {k: v for k, v in os.environ.items() if not k.startswith("HISTORY_")}
        self.process = subprocess.Popen(command, stdout=self.log, stderr=self.log, env=environment)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"history-server exited with {self.process.returncode}; see {self.log.name}")
            try:
                with urllib.request.urlopen(self.url + "/healthz", timeout=1) as answer:
                    if answer.status == 200:
                        return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("history-server did not answer /healthz within 30 s")

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def close(self):
        self.stop()
        self.log.close()


class API:
    """Just enough of API v1 to play the other clients."""

    def __init__(self, base, token=None):
        self.base = base
        self.token = token

    def call(self, method, path, body=None, expect=(200, 201)):
        headers = {}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        request = urllib.request.Request(self.base + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                status, text = answer.status, answer.read()
        except urllib.error.HTTPError as error:
            status, text = error.code, error.read()
        if expect and status not in expect:
            raise AssertionError(f"{method} {path}: {status} {text[:300]!r}")
        return json.loads(text) if text else None

    def create(self, cid, title=None):
        return self.call("POST", "/v1/conversations", {"id": cid, "title": title or cid})

    def post(self, cid, sender, body, **extra):
        return self.call("POST", f"/v1/conversations/{cid}/messages", {"sender": sender, "body": body, **extra})

    def edit(self, cid, message_id, body):
        return self.call("PATCH", f"/v1/conversations/{cid}/messages/{message_id}", {"body": body})

    def delete(self, cid, message_id):
        return self.call("DELETE", f"/v1/conversations/{cid}/messages/{message_id}")

    def conversation(self, cid):
        return self.call("GET", f"/v1/conversations/{cid}")

    def add_member(self, cid, user, role="member"):
        return self.call("PUT", f"/v1/conversations/{cid}/members/{user}", {"role": role})

    def all_messages(self, cid):
        messages, before = [], None
        while True:
            query = "?limit=200" + (f"&before={before}" if before else "")
            page = self.call("GET", f"/v1/conversations/{cid}/messages{query}")
            messages = page["messages"] + messages
            if not page["has_older"]:
                return messages
            before = page["oldest_id"]


def make_driver(width=1000, height=800):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--hide-scrollbars", "--force-device-scale-factor=1", "--lang=en-US",
                     f"--window-size={width},{height}"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver"))
    driver = webdriver.Chrome(options=options, service=service)
    driver.set_script_timeout(30)
    if width < 500:
        # Chromium's windows are at least 500 px wide: emulate a narrower screen.
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                               {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": True})
    return driver

import tempfile

import pytest

from harness import API, Server, make_driver, seed_direct

BIG = "big-0000"


@pytest.fixture(scope="session")
def open_server():
    """Open mode over a database with one 100,000-message conversation
    (big-0000) and two small ones (chat-0000, chat-0001), each with
    load-user-0000 as a member."""
    with tempfile.TemporaryDirectory(prefix="viewer-test-") as directory:
        server = Server(directory)
        seed_direct(server.database, 1, 100_000, "big-", members=1)
        seed_direct(server.database, 2, 700, "chat-", members=1)
        server.start()
        try:
            yield server
        finally:
            server.close()


@pytest.fixture(scope="session")
def api(open_server):
    return API(open_server.url)


@pytest.fixture(scope="session")
def browser():
    driver = make_driver()
    try:
        yield driver
    finally:
        driver.quit()

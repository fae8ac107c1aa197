#!/usr/bin/env python3
"""What one typing call costs the server (and PostgreSQL), typers alone.

`history-load run --scenario typing` measures what typers cost the page
readers beside them; on one machine that figure moves with everything else
the two cores do. This runs the typers alone: `--typers` keep-alive
connections (1,000: issue 24's figure), each sending `PUT
/v1/conversations/{cid}/typing` every 2 s as a distinct member, and divides
the server's CPU time (and with `--database-pid` the CPU time of the
PostgreSQL postmaster and its backends) over the calls answered in
`--seconds`. docs/performance.md, "What a typing call costs".

Set-up (tokens mode, members seeded as `history-load` names them):

    history-server --database "$DB" --jwt-hs256-secret-file keys \\
        --rate-limit-reads 0 --rate-limit-writes 0 --max-connections 20100 \\
        --max-connections-per-client 0 --access-log off --port 28916 &
    history-load seed --url http://127.0.0.1:28916 --jwt-secret-file keys \\
        --members 1000 --conversations 16 --messages 20000
    scripts/typing_call_cost.py --port 28916 --key-file keys \\
        --server-pid $! [--database-pid "$(head -1 "$PGDATA/postmaster.pid")"]

Needs PyJWT. Loopback only; the loop is bounded by `--seconds`.
"""
import argparse
import asyncio
import os
import random
import subprocess
import time

import jwt


CPU_SECONDS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cpu_seconds.py")


def cpu_seconds(pid, postgres=False):
    """The process's CPU seconds (a postmaster's with its backends'), by scripts/cpu_seconds.py."""
    command = [CPU_SECONDS, str(pid)] + (["postgres"] if postgres else [])
    return float(subprocess.run(command, capture_output=True, text=True, check=True).stdout)


async def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--key-file", required=True, help="the server's --jwt-hs256-secret-file (KID SECRET)")
    parser.add_argument("--server-pid", type=int, required=True)
    parser.add_argument("--database-pid", type=int, help="a PostgreSQL postmaster on this machine")
    parser.add_argument("--typers", type=int, default=1000)
    parser.add_argument("--members", type=int, default=1000, help="as seeded: load-user-0000 ...")
    parser.add_argument("--conversations", type=int, default=16, help="as seeded: load-0000 ...")
    parser.add_argument("--seconds", type=float, default=15)
    arguments = parser.parse_args()
    kid, secret = open(arguments.key_file).read().split()[:2]
    now = int(time.time())
    counts = {"calls": 0, "failures": 0}
    stop = time.time() + arguments.seconds + 4

    async def typer(index):
        subject = "load-user-%04d" % (index % arguments.members)
        token = jwt.encode({"sub": subject, "iat": now, "exp": now + 3600}, secret, algorithm="HS256",
                           headers={"kid": kid})
        reader, writer = await asyncio.open_connection("127.0.0.1", arguments.port)
        await asyncio.sleep(random.random() * 2)  # spread over the 2 s
        body = b'{"typing":true}'
        while time.time() < stop:
            conversation = "load-%04d" % random.randrange(arguments.conversations)
            writer.write(b"PUT /v1/conversations/%s/typing HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                         b"Authorization: Bearer %s\r\nContent-Type: application/json\r\n"
                         b"Content-Length: %d\r\n\r\n%s" % (conversation.encode(), token.encode(), len(body), body))
            head = await reader.readuntil(b"\r\n\r\n")
            counts["calls" if head.startswith(b"HTTP/1.1 204") else "failures"] += 1
            await asyncio.sleep(2)
        writer.close()

    tasks = [asyncio.create_task(typer(index)) for index in range(arguments.typers)]
    await asyncio.sleep(3)  # every typer connected and calling
    calls, server, database, started = counts["calls"], cpu_seconds(arguments.server_pid), \
        cpu_seconds(arguments.database_pid, True) if arguments.database_pid else 0, time.time()
    await asyncio.sleep(arguments.seconds)
    answered = counts["calls"] - calls
    elapsed = time.time() - started
    line = "typing calls %.0f/s, server CPU per call %.1f µs" % (
        answered / elapsed, (cpu_seconds(arguments.server_pid) - server) / max(1, answered) * 1e6)
    if arguments.database_pid:
        line += ", database CPU per call %.1f µs" % (
            (cpu_seconds(arguments.database_pid, True) - database) / max(1, answered) * 1e6)
    print(line + ", %d refused or failed" % counts["failures"])
    await asyncio.gather(*tasks, return_exceptions=True)


asyncio.run(main())

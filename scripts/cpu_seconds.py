#!/usr/bin/env python3
"""CPU seconds (utime + stime from /proc) of a process, or with a second
argument of a PostgreSQL postmaster with its live children and the children
that exited: what the bench scripts divide by the requests answered.

    scripts/cpu_seconds.py PID [postgres]
"""
import os, sys
hz = os.sysconf("SC_CLK_TCK")
def stat(pid):
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()
pid = sys.argv[1]
fields = stat(pid)
ticks = int(fields[11]) + int(fields[12])
if len(sys.argv) > 2:
    ticks += int(fields[13]) + int(fields[14])
    for child in os.listdir("/proc"):
        if child.isdigit():
            try:
                f = stat(child)
            except OSError:
                continue
            if f[1] == pid:
                ticks += int(f[11]) + int(f[12])
print(ticks / hz)

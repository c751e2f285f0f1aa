# SPDX-License-Identifier: BSD-2-Clause
#
# For tests/e2e/python_fork_exit.sh: fork N children that exit at once
# (each the kernel gives its parent's Python entry), then one more that
# runs worker_fn for a fixed amount of work, and wait for it.
import os
import sys


def worker_fn(n):
    x = 0
    for i in range(n):
        x += i
    return x


def main():
    for _ in range(int(sys.argv[1])):
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
    pid = os.fork()
    if pid == 0:
        worker_fn(int(sys.argv[2]))
        os._exit(0)
    os.waitpid(pid, 0)


main()

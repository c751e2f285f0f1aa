# SPDX-License-Identifier: BSD-2-Clause
#
# pywork: a Python workload whose call tree is known by construction, and
# an in-process oracle of where its threads are, for the tests of Python
# frames in stacks (issue #24; tests/e2e/python_*.sh, tests/bench).  Runs
# on CPython 3.7-3.13 unchanged, until SIGTERM or SIGINT: never for a fixed
# time or number of rounds.
#
#   python3 pywork.py [--depth D] MODE ORACLE [READY]
#
# MODE:
#   cpu    the work thread ("pw-work") loops main -> middle -> leaf_hot /
#          leaf_cold; leaf_hot calls unit() 3 times a round, leaf_cold once:
#          the same loop body, so 75/25 by construction, not by calibration.
#   all    the same, twice a round, then one unit() each at the leaf of
#          recurse() D+1 frames deep (D, default 12), inside a generator
#          (consume -> gen_units), inside an asyncio task (async_job, after
#          an await, on the thread's own event loop) and from C (sort_round
#          -> sorted(key=sort_key)); and a second thread ("pw-sleep") that
#          blocks in time.sleep() from sleeper -> nap.
#   sleep  only the sleeper thread.
# The oracle ("pw-oracle") samples sys._current_frames() at ~200 Hz, at
# random intervals (no phase lock with a round), for one thread: the work
# thread (cpu, all: only when it has run since the sample before: on-CPU
# time) or the sleeper (sleep: wall time); it never counts itself.  It
# keeps ORACLE.count up to date (the number of samples so far, rewritten
# every 20 samples) so a test can wait for enough of them.
# READY, written once everything runs (by rename, so it is whole):
#   pid PID / work TID / sleep TID / oracle TID (0: no such thread) /
#   depth D / root PATH (the work thread's path root -> main; the
#   sleeper's root -> sleeper in sleep mode).
# On SIGTERM or SIGINT: the threads stop after their round, ORACLE gets
# the oracle's counts in folded form, one "PATH COUNT" line per path
# (root -> leaf qualnames, ';'-joined: co_qualname where the interpreter
# has it, 3.11+, else co_name, as stkreport names Python frames), and the
# process exits 0.

import asyncio
import os
import random
import signal
import sys
import threading
import time

UNIT_ITERS = 20000      # one unit: ~1-3 ms of one CPU, whatever the version
ORACLE_HZ = 200
ORACLE_MIN_CPU = 0.0005  # s of the subject's CPU time between two samples
NAP_S = 0.05

stop = threading.Event()


def unit():
    x = 0
    for i in range(UNIT_ITERS):
        x = (x * 33 + i) & 0xFFFFF
    return x


def leaf_hot():
    unit()
    unit()
    unit()


def leaf_cold():
    unit()


def middle():
    leaf_hot()
    leaf_cold()


def recurse(n):
    if n == 0:
        return unit()
    return recurse(n - 1)


def gen_units():
    yield unit()


def consume():
    for _ in gen_units():
        pass


async def async_job():
    await asyncio.sleep(0)
    return unit()


def sort_key(x):
    unit()
    return x


SORT_ITEMS = [0]        # one item: sort_key runs once a round


def sort_round():
    return sorted(SORT_ITEMS, key=sort_key)


def frame_name(f):
    code = f.f_code
    return getattr(code, "co_qualname", code.co_name)


def frame_path(f):
    names = []
    while f is not None:
        names.append(frame_name(f))
        f = f.f_back
    names.reverse()
    return ";".join(names)


def native_id():
    # threading.get_native_id() is 3.8+; make bench's baseline runs 3.7.
    if hasattr(threading, "get_native_id"):
        return threading.get_native_id()
    return int(os.readlink("/proc/thread-self").split("/")[-1])


def name_thread(name):
    try:
        with open("/proc/self/task/%d/comm" % native_id(), "w") as c:
            c.write(name)
    except OSError:
        pass


class Shared:
    def __init__(self):
        self.tids = {"work": 0, "sleep": 0, "oracle": 0}
        self.root = ""
        self.started = threading.Event()


def main(sh, mode, depth):
    name_thread("pw-work")
    sh.tids["work"] = native_id()
    sh.root = frame_path(sys._getframe())
    sh.started.set()
    loop = None
    if mode == "all":
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
    while not stop.is_set():
        middle()
        if mode == "all":
            middle()
            recurse(depth)
            consume()
            loop.run_until_complete(async_job())
            sort_round()
    if loop is not None:
        loop.close()


def nap():
    time.sleep(NAP_S)


def sleeper(sh, mode):
    name_thread("pw-sleep")
    sh.tids["sleep"] = native_id()
    if mode == "sleep":
        sh.root = frame_path(sys._getframe())
    sh.started.set()
    while not stop.is_set():
        nap()


def oracle(sh, subject, on_cpu, counts, count_file):
    name_thread("pw-oracle")
    sh.tids["oracle"] = native_id()
    rng = random.Random(24)
    period = 1.0 / ORACLE_HZ
    n = 0
    # On-CPU truth (cpu, all): a sample counts only if the subject has run
    # since the last one counted (its CPU clock moved).  A thread the
    # machine preempts for 30 ms stays at one place for 6 wake-ups: unbiased,
    # but clustered, which spreads the counts past binomial tolerances
    # (seen beside a CPU hog: 83.7% for 75%, from ~400 samples).
    clock = time.pthread_getcpuclockid(subject.ident) if on_cpu else None
    ran = -1.0
    # The wake-ups follow their own schedule, each 0.5-1.5 periods after
    # the one before (uniform): never after the moment a sample was taken.
    # That moment is tied to the work thread's round (the oracle gets the
    # GIL at once where the work thread lets it go, in the event loop's
    # select()), and a schedule counted from it would sample the same
    # part of each round again and again.
    due = time.monotonic()
    while not stop.is_set():
        due += period * (0.5 + rng.random())
        wait = due - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        if clock is not None:
            try:
                cpu = time.clock_gettime(clock)
            except OSError:     # the subject is gone: pywork is ending
                break
            if cpu - ran < ORACLE_MIN_CPU:
                continue
            ran = cpu
        f = sys._current_frames().get(subject.ident)
        if f is None:
            continue
        path = frame_path(f)
        del f
        counts[path] = counts.get(path, 0) + 1
        n += 1
        if n % 20 == 0:
            write_atomic(count_file, "%d\n" % n)
    write_atomic(count_file, "%d\n" % n)


def write_atomic(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, path)


def usage():
    sys.stderr.write("usage: pywork.py [--depth D] cpu|all|sleep ORACLE [READY]\n")
    sys.exit(2)


def run(argv):
    depth = 12
    if len(argv) >= 2 and argv[0] == "--depth":
        depth = int(argv[1])
        argv = argv[2:]
    if len(argv) not in (2, 3) or argv[0] not in ("cpu", "all", "sleep") or depth < 0:
        usage()
    mode, oracle_file = argv[0], argv[1]
    ready_file = argv[2] if len(argv) == 3 else None

    # Threads inherit the signal mask: with SIGTERM and SIGINT blocked in
    # all of them, only sigwait() below takes them, wherever they land.
    sigs = {signal.SIGTERM, signal.SIGINT}
    signal.pthread_sigmask(signal.SIG_BLOCK, sigs)
    # The oracle waits for the GIL at most this long before the work
    # thread is asked to drop it (default 5 ms): a sample is taken at most
    # this late, or earlier where the work thread lets the GIL go by
    # itself (select()), which thus gets the samples of the 0.2 ms before.
    sys.setswitchinterval(0.0002)

    sh = Shared()
    counts = {}
    threads = []
    if mode in ("cpu", "all"):
        subject = threading.Thread(target=main, args=(sh, mode, depth), name="pw-work")
        threads.append(subject)
    if mode in ("all", "sleep"):
        sl = threading.Thread(target=sleeper, args=(sh, mode), name="pw-sleep")
        threads.append(sl)
        if mode == "sleep":
            subject = sl
    for t in threads:
        sh.started.clear()
        t.start()
        sh.started.wait()
    orc = threading.Thread(target=oracle, args=(sh, subject, mode != "sleep", counts,
                                                oracle_file + ".count"),
                           name="pw-oracle")
    orc.start()
    while sh.tids["oracle"] == 0:
        time.sleep(0.001)
    if ready_file:
        write_atomic(ready_file, "pid %d\nwork %d\nsleep %d\noracle %d\ndepth %d\nroot %s\n" % (
            os.getpid(), sh.tids["work"], sh.tids["sleep"], sh.tids["oracle"], depth, sh.root))

    signal.sigwait(sigs)
    stop.set()
    for t in threads + [orc]:
        t.join()
    lines = ["%s %d\n" % (p, c) for p, c in sorted(counts.items())]
    write_atomic(oracle_file, "".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))

"""Room on the heap before a large read: huge pages where the machine has them, and the
allocator of any process but ``pi``'s own left alone."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest

from pi_core import heap

# Makes room as the pi process would, fills it with parsed-line-sized strings, and
# prints whether it did, whether a heap mapping of that size is marked for huge pages
# ("hg"), and the huge pages the process then holds.
PROBE = """
import sys
from pi_core import heap
heap.allow()
made = heap.make_room(64 << 20)
again = heap.make_room(32 << 20)  # no smaller room after a larger one
strings = [("%06d" % n) * 500 for n in range(15_000)]  # 3 KB each: malloc's heap
marked, size = False, 0
for line in open("/proc/self/smaps"):
    if line[0] in "0123456789abcdef" and "-" in line.split()[0]:
        low, high = (int(x, 16) for x in line.split()[0].split("-"))
        size, heap_line = high - low, line.rstrip().endswith("[heap]")
    elif line.startswith("VmFlags:") and heap_line and size >= 32 << 20:
        marked = marked or " hg" in line
huge = next(int(l.split()[1]) for l in open("/proc/self/smaps_rollup") if l.startswith("AnonHugePages"))
print(made, again, marked, huge >= 16 << 10)
"""


@pytest.mark.process
@pytest.mark.skipif(not heap._available(), reason="needs glibc and transparent huge pages")
def test_the_pi_process_reads_into_huge_pages_made_room_for_once():
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "False", "True", "True"]


def test_other_processes_and_other_threads_keep_their_allocator(monkeypatch):
    monkeypatch.setattr(heap, "_allowed", False)
    monkeypatch.setattr(heap, "_made", 0)
    assert heap.make_room(64 << 20) is False and heap._made == 0
    monkeypatch.setattr(heap, "_allowed", True)
    answers = []
    thread = threading.Thread(target=lambda: answers.append(heap.make_room(64 << 20)))
    thread.start()
    thread.join()
    assert answers == [False] and heap._made == 0

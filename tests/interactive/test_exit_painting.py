"""The fullscreen exit paints what is left of the transcript on every core
(:mod:`pi_plugins.interactive.exit_painting`): the same lines, in order, whoever paints
them, and a child that fails costs nothing but time."""

import os

import pytest

from pi_plugins.interactive import exit_painting

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="forks children")


@pytest.fixture
def two_workers(monkeypatch):
    monkeypatch.setattr(exit_painting, "PARALLEL_FROM_CHARS", 0)
    monkeypatch.setattr(exit_painting, "workers", lambda: 2)


def test_runs_cut_the_items_into_contiguous_runs_of_about_equal_size():
    assert exit_painting.runs([10] * 10, 2) == [range(0, 5), range(5, 10)]
    assert exit_painting.runs([1, 1, 1, 100], 2) == [range(0, 3), range(3, 4)]
    assert exit_painting.runs([5], 4) == [range(0, 1)]
    assert exit_painting.runs([], 2) == []


def test_children_paint_the_same_lines_in_order(two_workers):
    parent = os.getpid()
    painted = exit_painting.paint_all([100] * 9, lambda i: [f"line {i}", f"by {'parent' if os.getpid() == parent else 'child'}"])
    assert [lines[0] for lines in painted] == [f"line {i}" for i in range(9)]
    assert {lines[1] for lines in painted} == {"by parent", "by child"}  # the work was shared


def test_a_child_that_fails_leaves_its_run_to_the_chat(two_workers):
    parent = os.getpid()

    def paint(i):
        if os.getpid() != parent:
            raise RuntimeError("the child breaks")
        return [f"line {i}"]

    assert exit_painting.paint_all([100] * 6, paint) == [[f"line {i}"] for i in range(6)]



def test_a_child_that_hangs_is_stopped_and_its_run_painted_by_the_chat(two_workers, monkeypatch):
    import time

    monkeypatch.setattr(exit_painting, "CHILD_GRACE_SECONDS", 0.5)
    parent = os.getpid()

    def paint(i):
        if os.getpid() != parent:
            time.sleep(60)  # stuck
        return [f"line {i}"]

    started = time.monotonic()
    assert exit_painting.paint_all([100] * 4, paint) == [[f"line {i}"] for i in range(4)]
    assert time.monotonic() - started < 10


def test_a_caller_that_stops_early_leaves_no_child_running(two_workers, monkeypatch):
    import time

    forked = []
    fork = exit_painting._fork
    monkeypatch.setattr(exit_painting, "_fork", lambda part, paint: forked.append(fork(part, paint)) or forked[-1])

    def paint(i):
        if i >= 2:
            time.sleep(30)  # the child's run: still painting when the caller stops
        return [f"line {i}"]

    painted = exit_painting.paint_each([100] * 4, paint)
    assert next(painted) == ["line 0"]
    painted.close()
    assert forked and forked[0] is not None
    with pytest.raises(ChildProcessError):
        os.waitpid(forked[0][0], os.WNOHANG)  # the child was ended and reaped

"""`paused_gc`: no automatic collection inside, the collector's earlier state after (nesting, threads,
exceptions), and nothing lost: a cycle made while paused is collected once the pause ends."""

from __future__ import annotations

import gc
import threading
import weakref
from collections.abc import Iterator

import pytest

from hudi_meta.gc_pause import paused_gc


@pytest.fixture(autouse=True)
def collector_enabled() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_nested_pauses_resume_once_the_outermost_ends() -> None:
    with paused_gc():
        assert not gc.isenabled()
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_disabled_collector_stays_disabled() -> None:
    gc.disable()
    with paused_gc():
        pass
    assert not gc.isenabled()


def test_an_exception_still_resumes() -> None:
    with pytest.raises(ValueError), paused_gc():
        raise ValueError("inside")
    assert gc.isenabled()


def test_decorated_function_pauses_each_call() -> None:
    @paused_gc()
    def inside() -> bool:
        return gc.isenabled()

    assert inside() is False and inside() is False
    assert gc.isenabled()


def test_overlapping_pauses_of_two_threads() -> None:
    """Thread A pauses, B pauses, A leaves: still paused until B leaves too."""
    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()
    seen: list[bool] = []

    def a() -> None:
        with paused_gc():
            a_in.set()
            b_in.wait(5)
        a_out.set()

    def b() -> None:
        a_in.wait(5)
        with paused_gc():
            b_in.set()
            a_out.wait(5)
            seen.append(gc.isenabled())

    threads = [threading.Thread(target=a), threading.Thread(target=b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert seen == [False]
    assert gc.isenabled()


def test_a_cycle_made_while_paused_is_collected_after() -> None:
    class Node:
        other: object

    with paused_gc():
        first, second = Node(), Node()
        first.other, second.other = second, first
        ref = weakref.ref(first)
        del first, second
        assert ref() is not None  # only the collector frees a cycle
    gc.collect()
    assert ref() is None

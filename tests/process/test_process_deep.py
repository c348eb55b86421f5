"""Deep sizing: the same total as pympler, on a worker thread that reports progress and stops."""

import threading

import pytest
from pympler import asizeof

from doctor.process.deep import DeepSizeTask, deep_size_async, measure_deep_size


def make_history(entries):
    shared_prefix = "tool output " * 50
    return [
        {"role": "model", "parts": [{"functionResponse": {"name": "shell", "response": {"output": shared_prefix + str(i)}}}]}
        for i in range(entries)
    ]


def test_entry_by_entry_total_equals_asizeof_of_the_whole_history():
    history = make_history(50)
    history.append(history[0])  # a repeated entry is counted once
    size = measure_deep_size(history)
    assert size.bytes == asizeof.asizeof(history)
    assert (size.items_sized, size.items_total, size.complete) == (51, 51, True)


def test_a_non_sequence_history_is_sized_in_one_piece():
    history = {"messages": make_history(3)}
    size = measure_deep_size(history)
    assert size.bytes == asizeof.asizeof(history)
    assert size.items_total == 1


def test_progress_ends_with_every_entry_done():
    calls = []
    measure_deep_size(make_history(20), on_progress=lambda done, total: calls.append((done, total)))
    assert calls[-1] == (20, 20)
    assert all(done <= total for done, total in calls)


def test_worker_measures_off_the_calling_thread():
    threads = []
    task = deep_size_async(make_history(10), on_progress=lambda *_: threads.append(threading.current_thread()))
    size = task.result(timeout=10)
    assert size.complete
    assert threads and all(thread is not threading.main_thread() for thread in threads)


def test_cancelling_the_worker_returns_a_partial_size():
    reached_entry = threading.Event()
    release = threading.Event()

    class Gate:
        """An entry whose sizing blocks until the test has cancelled the task."""

        def __init__(self, size_of_payload):
            self.payload = "p" * size_of_payload

        @property
        def __dict__(self):  # pympler reads __dict__ while sizing the instance
            reached_entry.set()
            release.wait(5)
            return {"payload": object.__getattribute__(self, "payload")}

    history = ["before", Gate(100)] + make_history(100)
    task = deep_size_async(history)
    assert reached_entry.wait(5)
    task.cancel()
    release.set()
    size = task.result(timeout=10)
    assert not size.complete
    assert size.items_sized == 2 and size.items_total == 102
    assert size.bytes < asizeof.asizeof(history)


def test_errors_on_the_worker_reraise_from_result():
    def broken_progress(done, total):
        raise RuntimeError("progress sink is gone")

    task = DeepSizeTask(make_history(3), on_progress=broken_progress)
    with pytest.raises(RuntimeError, match="sink is gone"):
        task.result(timeout=10)
    assert task.done()

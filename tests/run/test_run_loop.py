import asyncio
import signal
import threading

import pytest

from ragqa.run import LoopThread, run_sync


def test_run_sync_returns_and_raises():
    async def add(a, b):
        await asyncio.sleep(0)
        return a + b

    async def boom():
        raise ValueError("no")

    assert run_sync(add(2, 3)) == 5
    with pytest.raises(ValueError, match="no"):
        run_sync(boom())


def test_run_sync_works_inside_a_running_loop_and_keeps_one_loop():
    async def loop_id():
        return id(asyncio.get_running_loop())

    async def caller():
        # a notebook cell: a loop is already running in this thread
        return run_sync(loop_id()), run_sync(loop_id())

    first, second = asyncio.run(caller())
    assert first == second  # one loop across runs: clients bound to it stay valid


def test_interrupt_cancels_the_task_and_lets_it_unwind():
    runner = LoopThread(name="test-loop")
    started, unwound = threading.Event(), threading.Event()

    async def long_run():
        started.set()
        try:
            await asyncio.sleep(3600)
        finally:
            unwound.set()

    def interrupt_when_started():
        started.wait()
        import _thread

        _thread.interrupt_main()

    # Ctrl-C as Python handles it by default: a shell starts background jobs with SIGINT ignored
    # (`pytest ... &`), and then interrupt_main() does nothing and this test would wait forever
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    threading.Thread(target=interrupt_when_started, daemon=True).start()
    try:
        with pytest.raises(KeyboardInterrupt):
            runner.run(long_run(), grace_s=30)
        assert unwound.is_set()
    finally:
        runner.stop()
        signal.signal(signal.SIGINT, previous)


def test_submit_from_the_loop_thread_is_refused():
    runner = LoopThread(name="test-loop")
    try:

        async def nested():
            inner = asyncio.sleep(0)
            with pytest.raises(RuntimeError):
                runner.submit(inner)
            return True

        assert runner.run(nested())
    finally:
        runner.stop()
    with pytest.raises(RuntimeError):
        runner.submit(asyncio.sleep(0))


def test_a_timeout_error_raised_by_the_run_propagates():
    async def times_out():
        raise TimeoutError("judge deadline")

    with pytest.raises(TimeoutError, match="judge deadline"):
        run_sync(times_out())

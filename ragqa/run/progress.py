"""A run's progress, with rate and ETA: a rich bar on a terminal, a line in a notebook, plain lines elsewhere.

One :class:`RunProgress` serves every entry point: ``ragqa evaluate`` and ``ragqa calibrate``
(on stderr) and ``ragqa.evaluate`` / ``ragqa.aevaluate`` / ``ragqa.calibrate`` (``progress=``).
It counts (sample, metric) pairs: the runner calls :meth:`RunProgress.start` with the estimate
just before the first judge call and :meth:`RunProgress.advance` after each pair is recorded.

The rate is the mean since the start (pairs per second), and the ETA the pairs left at that rate:
over a whole run this is steadier than a recent-window rate when results arrive in bursts (a
sample's metrics are recorded together). Every display shows the same text
(:func:`rate_and_eta`), read from one injectable clock.
"""

from __future__ import annotations

import importlib
import math
import sys
import time
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Any, Literal

from rich.console import Console
from rich.text import Text

if TYPE_CHECKING:
    from ragqa.run.estimate import RunEstimate

__all__ = ["ProgressMode", "RunProgress", "choose_mode", "format_duration", "in_notebook", "rate_and_eta"]

ProgressMode = Literal["bar", "notebook", "lines", "off"]
"""``bar``: a rich progress bar (a terminal); ``notebook``: one line updated in place (Jupyter);
``lines``: a plain line every ~10% or 30 s (logs, CI); ``off``: nothing."""

Clock = Callable[[], float]

_LINE_EVERY_S = 30.0
"""In ``lines`` mode, the longest gap between two lines (besides one line per ~10% of the pairs)."""
_NOTEBOOK_EVERY_S = 0.2
"""In ``notebook`` mode, the shortest gap between two updates of the line."""


def in_notebook() -> bool:
    """Whether this process is a Jupyter kernel (IPython's ZMQ shell: Jupyter, VS Code, Colab)."""
    shell = sys.modules.get("IPython")
    if shell is None:
        return False
    try:
        ip = shell.get_ipython()
    except AttributeError:  # pragma: no cover - an unusual IPython
        return False
    return ip is not None and type(ip).__name__ in ("ZMQInteractiveShell", "Shell")


def choose_mode(progress: bool | None, *, stream: IO[str] | None = None, ci: bool = False) -> ProgressMode:
    """The display for a ``progress`` option.

    Args:
        progress: ``False``: off. ``None`` (the Python API's default): on in a terminal or a
            notebook, off otherwise. ``True`` (the CLI's default): also plain lines when the stream
            is not a terminal.
        stream: where progress goes (default ``sys.stderr``).
        ci: a CI run (the bar is replaced by plain lines there: CI logs keep every frame).

    Returns:
        ``notebook`` in a Jupyter kernel, ``bar`` on a terminal outside CI, else ``lines`` when
        ``progress`` is True, else ``off``.
    """
    if progress is False:
        return "off"
    if in_notebook():
        return "notebook"
    out = stream if stream is not None else sys.stderr
    terminal = bool(getattr(out, "isatty", lambda: False)())
    if terminal and not ci:
        return "bar"
    return "lines" if progress else "off"


def format_duration(seconds: float) -> str:
    """``H:MM:SS`` (rich's style); ``-:--:--`` when unknown (NaN or infinite)."""
    if not math.isfinite(seconds):
        return "-:--:--"
    whole = max(0, round(seconds))
    return f"{whole // 3600}:{whole % 3600 // 60:02d}:{whole % 60:02d}"


def rate_and_eta(done: int, total: int, elapsed: float) -> str:
    """``12.5/s · ETA 0:00:31``: the mean rate since the start and the time left at that rate.

    Args:
        done: pairs finished.
        total: pairs in the run.
        elapsed: seconds since the start.

    Returns:
        The text; the rate reads ``-/s`` and the ETA ``-:--:--`` until a pair is done. Rates of
        10/s and more are whole numbers, slower ones have one decimal.
    """
    if done <= 0 or elapsed <= 0:
        return "-/s · ETA -:--:--"
    rate = done / elapsed
    shown = f"{rate:.0f}" if rate >= 10 else f"{rate:.1f}"
    return f"{shown}/s · ETA {format_duration(max(0, total - done) / rate)}"


class RunProgress:
    """Shows a run's progress in one of the :data:`ProgressMode` displays.

    Args:
        mode: the display (see :func:`choose_mode`).
        stream: where the bar and the lines go (default ``sys.stderr``).
        clock: seconds, monotonic (default :func:`time.monotonic`); tests inject one.
        transient: remove the bar when the run ends (the CLI, whose report follows), or leave its
            last frame (the Python API).
        show_estimate: print the run's estimate line (:class:`~ragqa.run.estimate.RunEstimate`)
            on ``stream`` when the run starts, in every mode (``ragqa calibrate``).
        display: the notebook display function (default ``IPython.display.display``); tests inject one.
    """

    def __init__(
        self,
        mode: ProgressMode,
        *,
        stream: IO[str] | None = None,
        clock: Clock = time.monotonic,
        transient: bool = True,
        show_estimate: bool = False,
        display: Callable[..., Any] | None = None,
    ) -> None:
        """Remember how to show progress; nothing is shown before :meth:`start`."""
        self.mode = mode
        self.stream = stream
        self.clock = clock
        self.transient = transient
        self.show_estimate = show_estimate
        self.total = 0
        self.done = 0
        self._display = display
        self._started = 0.0
        self._bar: Any = None
        self._task: Any = None
        self._handle: Any = None
        self._next_line = 0
        self._last_shown = -math.inf

    @property
    def _out(self) -> IO[str]:
        return self.stream if self.stream is not None else sys.stderr

    def text(self) -> str:
        """The progress as one line: ``scoring 120/480 sample x metric · 25/s · ETA 0:00:14 · 0:00:05``."""
        elapsed = self.clock() - self._started
        return (
            f"scoring {self.done}/{self.total} sample x metric · {rate_and_eta(self.done, self.total, elapsed)}"
            f" · {format_duration(elapsed)}"
        )

    def start(self, estimate: RunEstimate) -> None:
        """Print the estimate when asked, and start the display for ``estimate.pairs`` pairs (none for 0)."""
        if self.show_estimate:
            print(str(estimate), file=self._out, flush=True)
        self.total = estimate.pairs
        self.done = 0
        self._started = self.clock()
        self._next_line = 0
        if not self.total:
            return
        if self.mode == "bar":
            self._start_bar()
        elif self.mode == "notebook":
            self._show_notebook(force=True)

    def _start_bar(self) -> None:
        # rich.progress is imported only when a bar is shown: the offline job's start-up stays light
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self._bar = Progress(
            TextColumn("scoring"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("sample x metric"),
            _rate_column(),
            TimeElapsedColumn(),
            console=Console(file=self._out, stderr=self.stream is None, highlight=False),
            transient=self.transient,
            get_time=self.clock,
            refresh_per_second=4,
        )
        self._bar.start()
        self._task = self._bar.add_task("scoring", total=self.total)

    def advance(self, _result: object = None) -> None:
        """Count one finished (sample, metric) pair and update the display."""
        self.done += 1
        if self._bar is not None:
            self._bar.update(self._task, completed=self.done)
        elif self.mode == "notebook":
            self._show_notebook(force=self.done >= self.total)
        elif self.mode == "lines":
            now = self.clock()
            due = self.done >= self._next_line or now - self._last_shown >= _LINE_EVERY_S
            if due or self.done == self.total:
                self._next_line = self.done + max(1, self.total // 10)
                self._last_shown = now
                elapsed = now - self._started
                print(
                    f"scored {self.done}/{self.total} (sample x metric) in {elapsed:.1f} s · "
                    f"{rate_and_eta(self.done, self.total, elapsed)}",
                    file=self._out,
                    flush=True,
                )

    def _show_notebook(self, *, force: bool) -> None:
        now = self.clock()
        if not force and now - self._last_shown < _NOTEBOOK_EVERY_S:
            return
        self._last_shown = now
        line = self.text()
        if self._handle is None:
            show = self._display if self._display is not None else _ipython_display()
            self._handle = show(_Line(line), display_id=True)
        else:
            self._handle.update(_Line(line))

    def stop(self) -> None:
        """End the display (idempotent); in a notebook, the last line shows the final count."""
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
        elif self.mode == "notebook" and self._handle is not None and self.total:
            self._handle.update(_Line(self.text()))


def _ipython_display() -> Callable[..., Any]:
    """``IPython.display.display`` (IPython is there whenever :func:`in_notebook` is true)."""
    module = importlib.import_module("IPython.display")
    show: Callable[..., Any] = module.display
    return show


class _Line:
    """A text line as a notebook shows it (plain text; no HTML needed)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _rate_column() -> Any:
    """A rich progress column showing :func:`rate_and_eta` of the task, read from the progress's clock."""
    from rich.progress import ProgressColumn, Task

    class RateColumn(ProgressColumn):
        def render(self, task: Task) -> Text:
            """``12/s · ETA 0:00:31`` for ``task``."""
            return Text(rate_and_eta(int(task.completed), int(task.total or 0), task.elapsed or 0.0))

    return RateColumn()

"""Progress bars for long management commands (tqdm): rows done / total, rows per second and the time left.

Drawn on the command's stderr only when it is a terminal, so logs, pipes and tests get the plain summary line.
"""

from tqdm import tqdm


class _CommandStream:
    """A command's OutputWrapper adds a newline to every write; a progress bar redraws one line with `\\r`."""

    def __init__(self, wrapper):
        self._wrapper = wrapper

    def write(self, text: str) -> None:
        self._wrapper.write(text, ending="")

    def flush(self) -> None:
        self._wrapper.flush()

    def isatty(self) -> bool:
        return self._wrapper.isatty()


def command_progress(command, *, total: int | None, description: str) -> tqdm:
    """A bar on `command.stderr`; call `.update(n)` as rows are done and `.close()` at the end."""
    stream = _CommandStream(command.stderr)
    return tqdm(
        total=total,
        desc=description,
        unit="행",
        file=stream,
        disable=not stream.isatty(),
        dynamic_ncols=True,
        mininterval=0.2,
    )


class StagedProgress:
    """`progress(stage, done, total)` callbacks from a service, drawn as one bar that restarts at each stage."""

    def __init__(self, command, *, description: str):
        self._bar = command_progress(command, total=None, description=description)
        self._description = description
        self._stage = None

    def __call__(self, stage: str, done: int, total: int) -> None:
        if stage != self._stage:
            self._stage = stage
            self._bar.reset(total=total)
            self._bar.set_description(f"{self._description} · {stage}")
        self._bar.update(done - self._bar.n)

    def close(self) -> None:
        self._bar.close()

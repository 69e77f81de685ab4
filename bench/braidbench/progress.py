"""Progress of a long run: one line per measurement, with an ETA.

The total is the number of measurements a workload plans; the estimate of
the time left assumes the rest take as long on average as those so far
(loads and restarts between them included).
"""
import sys
import time


def _clock(seconds):
    seconds = int(round(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class Progress:
    def __init__(self, total=0, out=sys.stdout):
        self.total = total
        self.done = 0
        self.out = out
        self.t0 = time.time()

    def add(self, n):
        """More measurements planned than counted at the start."""
        self.total += n

    def log(self, text):
        """A line without a step (a phase starting, a table loaded)."""
        stamp = time.strftime("%H:%M:%S")
        print(f"[{stamp}] {text}", file=self.out, flush=True)

    def step(self, text):
        """One measurement done: its line, with the count and the ETA."""
        self.done += 1
        now = time.time()
        elapsed = now - self.t0
        total = max(self.total, self.done)
        # the rate from the first measurement on (setting up, loading
        # tables before it would make the first estimates far too long)
        if self.done == 1:
            self.t_first = now
            left = elapsed * (total - 1)
        else:
            left = (now - self.t_first) / (self.done - 1) * (total - self.done)
        stamp = time.strftime("%H:%M:%S")
        print(f"[{stamp}] {self.done:>3}/{total} {_clock(elapsed)} elapsed, "
              f"ETA {_clock(left)}  {text}", file=self.out, flush=True)

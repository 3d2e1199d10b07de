"""What a command about to do long work (a run, a worker, a replay, the demo) does first, while
its process still has one thread."""

from agentctl._speedups.process import start_up_done
from agentctl.services.lifecycle.start import prepare_views


def begin_long_work() -> None:
    """A normal user's process moves into the namespace its views of the tree cache are
    mounted in (the kernel makes one only for a single-threaded process, and a run starts
    several); then the start-up is over: what exists now lives as long as the process."""
    prepare_views()
    start_up_done()

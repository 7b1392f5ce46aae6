"""`python -m autograder.worker IN_FD OUT_FD` (a spawned worker, already confined)."""

import os
import sys

from autograder.worker.runner import serve

serve(int(sys.argv[1]), int(sys.argv[2]))
os._exit(0)

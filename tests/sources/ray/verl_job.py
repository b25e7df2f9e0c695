"""The entrypoint the Ray tests submit with ``ray job submit``: it prints a real verl run's
console lines (tests/fixtures/logs/generated/verl/verl_07_console_only/console.log, step
lines behind tqdm's bar), ``delay`` seconds apart, up to the line of step ``last``, then
ends as ``how`` says: ``finish`` (exit 0), ``raise`` (an exception, as a crashed trainer
does), or ``hang`` (sleeps until stopped).

Usage: python verl_job.py CONSOLE_LOG LAST_STEP finish|raise|hang DELAY_S
"""

import sys
import time

log, last, how, delay = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
with open(log, encoding="utf-8") as lines:
    for line in lines:
        print(line, end="", flush=True)
        if f"step:{last} -" in line:
            break
        time.sleep(delay)
if how == "raise":
    raise RuntimeError("CUDA error: an illegal memory access was encountered")
if how == "hang":
    time.sleep(600)

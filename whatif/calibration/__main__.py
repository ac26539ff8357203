"""``python -m whatif.calibration``: replay Kueue's scheduler performance harness, print the table.

Prints, per harness configuration, the Markdown table of ``whatif/README.md`` and one line of
figures (``config= cohorts= workloads= cpu_s=``).  Exit 1 when the simulated run fails what the
harness's checker asserts or the ranges' order of the classes.
"""

from __future__ import annotations

import argparse
import sys
import time

from whatif.calibration.checker import failures
from whatif.calibration.harness import CONFIGS
from whatif.calibration.replay import replay
from whatif.calibration.report import table


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m whatif.calibration", description=__doc__)
    p.add_argument("--config", choices=sorted(CONFIGS), action="append", help="default: every configuration")
    p.add_argument(
        "--cohorts",
        type=int,
        default=1,
        help="cohorts to replay (default 1: the same figures; 0: all of them)",
    )
    args = p.parse_args(argv)
    failed = False
    for name in args.config or ["baseline", "large-scale"]:
        config = CONFIGS[name]
        start = time.process_time()
        summary = replay(config, args.cohorts)
        cpu = time.process_time() - start
        print("\n".join(table(config, summary)))
        workloads = sum(f.count for f in summary.workloads.values())
        print(f"\nconfig={name} cohorts={summary.cohorts} workloads={workloads} cpu_s={cpu:.2f}\n")
        failed = failed or bool(failures(summary, config.ranges, config.queues.name))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

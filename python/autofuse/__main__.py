"""`python -m autofuse doctor`: checks this machine's toolchain, cache and kernels (doctor.py)."""

import argparse
import sys


def main() -> int:
    ap = argparse.ArgumentParser(prog="python -m autofuse", description=__doc__)
    ap.add_argument("command", choices=["doctor"], help="doctor: check that kernels compile and run here")
    ap.parse_args()
    from . import doctor

    return doctor.run()


if __name__ == "__main__":
    sys.exit(main())

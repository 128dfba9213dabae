# SPDX-License-Identifier: Apache-2.0
"""Runs one end-to-end test module for ctest, as `python3 -m unittest -v MODULE` does,
but exits 77 when every test in it skipped itself (valgrind in a sanitizer build, say),
which ctest then shows as skipped (SKIP_RETURN_CODE), not as passed.

Usage: run_module.py MODULE
"""

import sys
import unittest

SKIPPED = 77


def main(argv):
    if len(argv) != 1:
        sys.stderr.write("usage: run_module.py MODULE\n")
        return 2
    suite = unittest.defaultTestLoader.loadTestsFromName(argv[0])
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    if not result.wasSuccessful():
        return 1
    # A class that skips in setUpClass runs none of its tests and counts one skip.
    if result.skipped and (result.testsRun == 0 or len(result.skipped) == result.testsRun):
        print("every test of %s skipped itself" % argv[0])
        return SKIPPED
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

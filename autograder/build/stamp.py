"""`python -m autograder.build.stamp [KEY ...]`: record that two languages agree.

After changing a text in both languages, stamp its translation entry
(`<assignment>:cells.cell-006`, a prefix such as `<assignment>:messages`,
or `texts:stub` for the build's own texts); with no KEY, only entries that have
no hash yet are stamped. See `autograder.build.editions`."""

import sys

from autograder.build import editions

if __name__ == "__main__":
    sys.exit(editions.main(["stamp", *sys.argv[1:]]))

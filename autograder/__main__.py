import sys


def _judge(argv):
    from autograder.cli import main

    return main(argv, judge=True)


if len(sys.argv) == 3 and sys.argv[1] == "--zygote":  # a one-submission command's judge (autograder.zygote)
    from autograder import zygote

    zygote.serve(int(sys.argv[2]), _judge)

from autograder.cli import main  # noqa: E402

raise SystemExit(main())

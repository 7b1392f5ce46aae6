"""The assignments a bench runs on: `--assignment NAME` (repeatable), else every one
grading.yml lists. A bench names no assignment itself."""


def add_argument(ap):
    ap.add_argument(
        "--assignment",
        action="append",
        metavar="NAME",
        help="only this assignment (repeatable; default: every one grading.yml lists)",
    )


def assignments(args, prog):
    """The chosen assignments in grading.yml's order; an unknown name is a one-line exit."""
    from autograder import config

    known = config.load().assignments
    unknown = sorted(set(args.assignment or ()) - set(known))
    if unknown:
        raise SystemExit(f"{prog}: unknown assignment {unknown[0]}; known: {', '.join(known)}")
    return [a for a in known if not args.assignment or a in args.assignment]

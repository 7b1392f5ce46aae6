"""What several checks of one submission share, made once (`once_per_submission`: a
training run, one worker call for four checks).
"""

from autograder.judge.failure import Failure


def once_per_submission(store, sub, make):
    """`make()` for the submission `sub`, made once and shared by the checks that read it (a
    training run: one worker call for four checks). A failure (`fail`) is kept and raised again
    for each check. `store` is the suite module's own dict, {id(sub): (sub, value or message)}:
    it keeps one submission, the one being graded."""
    key = id(sub)
    if key in store and store[key][0] is sub:
        kept = store[key][1]
        if isinstance(kept, Failure):
            raise kept.again()
        return kept
    store.clear()  # the previous submission's: never needed again
    try:
        kept = make()
    except Failure as exc:
        store[key] = (sub, exc)
        raise
    store[key] = (sub, kept)
    return kept

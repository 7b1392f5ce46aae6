"""The cfg of the judge's run in progress."""

_CFG = []  # the cfg the judge grades this submission with (conftest.py sets it for each run)


def use_cfg(cfg):
    """The suites' one source of settings for the run that starts (None: it ended):
    the judge's cfg (`KitPlugin.kit_cfg`), never a grading.yml found in the working folder."""
    _CFG[:] = [cfg] if cfg is not None else []


def judge_cfg():
    """The cfg of the judge's run in progress (what the `cfg` fixture gives the tests)."""
    if not _CFG:
        raise RuntimeError("checks.use_cfg(): KitPlugin.kit_cfg missing")  # the suites run under the judge only
    return _CFG[0]

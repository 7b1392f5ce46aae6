"""Module questions: what a class the student writes must hold (its parameter table, no
persistent buffer the contract does not list).
"""

from autograder.judge.failure import Msg
from autograder.messages import t
from autograder.private.suites import failing


def check_parameter_table(reply, want, what, missing_cause, shape_cause, extra_cause):
    """A built module's state_dict as the worker listed it (`reply`: a construct call's reply,
    after .to(float64); its `params` and `buffers`, {name: {"shape", "dtype"}}) holds exactly the
    contract's parameters (`want`: {name: shape}), each float64, and nothing else.
    The causes, each a message or None: `missing_cause()` for a name missing,
    `shape_cause(name, got, expected)` for a wrong shape, `extra_cause(name)` for the first
    parameter the contract does not list."""
    params = reply.params or {}
    for pname, shape in want.items():
        if pname not in params:
            failing.fail(
                failing.caused(
                    t("lab_missing_parameter", module=what, name=pname, params=sorted(params)), missing_cause()
                )
            )
        got = tuple(params[pname]["shape"])
        if got != tuple(shape):
            failing.fail(
                failing.caused(
                    t("mha_parameter_shape", module=what, name=pname, got=got, expected=tuple(shape)),
                    shape_cause(pname, got, tuple(shape)),
                )
            )
        if params[pname]["dtype"] != "float64":
            failing.fail(t("mha_parameter_not_moved", module=what, name=pname, dtype=params[pname]["dtype"]))
    extra = sorted(set(params) - set(want))
    if extra:
        failing.fail(failing.caused(t("lab_extra_parameter", module=what, name=extra[0]), extra_cause(extra[0])))
    check_no_persistent_buffer(reply, want, what)


def check_no_persistent_buffer(reply, want, what):
    """A built module's state_dict holds no persistent buffer the contract does not list
    (`want`: its names): the judge loads the contract's names, as a training run's
    load_state_dict does, and a key it has no value for breaks that load."""
    extra = sorted(set(reply.buffers or {}) - set(want))
    if extra:
        short = extra[0].rsplit(".", 1)[-1]
        failing.fail(
            failing.caused(
                t("lab_persistent_buffer", module=what, name=extra[0]), Msg("cause_lab_persistent_buffer", short=short)
            )
        )

"""Parametrisation shared by the hidden suites.

Fixtures `sub`, `cfg`, `cells` and `provided` come from the judge's plugin
(`autograder.judge.KitPlugin`), and so do the settings read here: the cfg the
judge grades with (`KitPlugin.kit_cfg`, the one the `cfg` fixture gives a check:
the library's functions take it from the check, never from a global), never a
grading.yml of the working folder, so that the cases collected, their evidence
marks and the points always come from one file.

Here: `dd`, every (device, dtype) pair of
the cfg on a real device present on this machine (CUDA cases are not
collected without CUDA), and `device`, every listed device including `meta`,
where only shapes, dtypes and devices are checked.

Cases on an evidence device (the cfg's `scoring.evidence_devices`, CUDA)
carry the `evidence` mark: the judge reports their failures and scores them
zero-weight, so a score is the same on every machine.

`KIT_SIMULATE_DEVICES=cuda` (the kit's own tests) collects the CUDA cases on
a machine without CUDA, run where they can be: `device` cases on the meta
device (it shows a tensor built on the CPU, as CUDA would) and `dd` cases on
the CPU in the CUDA case's dtype.
"""

import os

import pytest
import torch

STAND_IN = {"cuda": {"device": "meta", "dd": "cpu"}}  # where a simulated device's cases run


def _simulated():
    return {d.strip() for d in os.environ.get("KIT_SIMULATE_DEVICES", "").split(",") if d.strip()}


def _present(device):
    if device == "cuda":
        return torch.cuda.is_available()
    return device in ("cpu", "meta")


def _where(device, fixture):
    """(collected?, the device the case runs on)."""
    if _present(device):
        return True, device
    if device in _simulated() and device in STAND_IN:
        return True, STAND_IN[device][fixture]
    return False, None


def pytest_configure(config):
    config.addinivalue_line("markers", "evidence: a case reported but never scored (see scoring.evidence_devices)")
    config.addinivalue_line("markers", "weight(w): this check's weight within its question (default 1)")
    config.addinivalue_line(
        "markers",
        "property: a check of a property, not of the values: it earns at most "
        "the share its question's value checks earn (judge.scoring)",
    )


def judge_cfg(config):
    """The cfg the judge's plugin grades with: the suites' one source of settings."""
    for plugin in config.pluginmanager.get_plugins():
        cfg = getattr(plugin, "kit_cfg", None)
        if cfg is not None:
            return cfg
    raise pytest.UsageError("autograder.judge.KitPlugin.kit_cfg missing")  # the suites run under the judge only


def pytest_generate_tests(metafunc):
    cfg = judge_cfg(metafunc.config)
    devices = cfg.devices
    evidence = cfg.evidence_devices()

    def param(value, device, case_id):
        marks = [pytest.mark.evidence] if device in evidence else []
        return pytest.param(value, id=case_id, marks=marks)

    if "dd" in metafunc.fixturenames:
        params = []
        for d, dts in devices.items():
            ok, run_on = _where(d, "dd")
            if d == "meta" or not ok:
                continue
            params += [param((run_on, getattr(torch, t)), d, f"{d}-{t}") for t in dts]
        metafunc.parametrize("dd", params)
    if "device" in metafunc.fixturenames:
        params = []
        for d in devices:
            ok, run_on = _where(d, "device")
            if ok:
                params.append(param(run_on, d, d))
        metafunc.parametrize("device", params)

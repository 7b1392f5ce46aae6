"""Parametrisation shared by the hidden suites.

Fixtures `sub`, `cfg`, `cells` and `provided` come from the judge's plugin
(`autograder.judge.KitPlugin`). Here: `dd`, every (device, dtype) pair of
grading.yml on a real device present on this machine (CUDA cases are not
collected without CUDA), and `device`, every listed device including `meta`,
where only shapes, dtypes and devices are checked.
"""
import torch

from autograder import config as config_mod


def _present(device):
    if device == "cuda":
        return torch.cuda.is_available()
    return device in ("cpu", "meta")


def pytest_generate_tests(metafunc):
    devices = config_mod.load().devices
    if "dd" in metafunc.fixturenames:
        pairs = [(d, getattr(torch, t)) for d, dts in devices.items() if d != "meta" and _present(d) for t in dts]
        metafunc.parametrize("dd", pairs, ids=[f"{d}-{str(t)[6:]}" for d, t in pairs])
    if "device" in metafunc.fixturenames:
        devs = [d for d in devices if _present(d)]
        metafunc.parametrize("device", devs)

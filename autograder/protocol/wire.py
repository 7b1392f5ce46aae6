"""The judge <-> worker wire format: JSON headers plus raw tensor bytes, never pickle.

A message is: 8-byte big-endian length of the whole body, then the body:
4-byte header length, the UTF-8 JSON header, then the concatenated tensor
payloads. Values inside the header are plain JSON, except these tagged objects:

    {"$t": i, "dtype": "float32", "shape": [2, 3], "device": "cpu", "grad": false}
        tensor number i (payload i); meta tensors carry no payload
    {"$tuple": [...]}, {"$dict": {...}}, {"$float": "nan" | "inf" | "-inf"}
    {"$dtype": "float16"}              a torch.dtype of the whitelist
    {"$device": "cuda:0"}              a torch.device: cpu, meta or cuda (with an index)
    {"$other": "numpy.ndarray"}        a value the wire does not carry

Both sides use this module; the judge validates everything it decodes
(dtype whitelist, payload sizes, nesting depth) because the worker is untrusted.
"""

import json
import math
import re
import struct
from collections.abc import Callable
from typing import Any

import torch

DTYPES = {
    name: getattr(torch, name)
    for name in (
        "float64",
        "float32",
        "float16",
        "bfloat16",
        "complex64",
        "complex128",
        "int64",
        "int32",
        "int16",
        "int8",
        "uint8",
        "bool",
    )
}
DTYPE_NAMES = {v: k for k, v in DTYPES.items()}
DEVICE_PATTERN = re.compile(r"(cpu|meta|cuda)(:\d{1,3})?")  # the devices a value may name
MAX_DEPTH = 16
MAX_HEADER = 1 << 20  # the JSON part of a worker's reply; tensor payloads are bounded by the reply cap


class WireError(Exception):
    """A message that does not follow the wire format."""


def dtype_name(dtype: torch.dtype) -> str:
    return DTYPE_NAMES.get(dtype, str(dtype).replace("torch.", ""))


def flat_tensors(value: Any) -> list[torch.Tensor]:
    """The tensors in a nested list/tuple, depth first: the order in which both
    sides count a call's input tensors (the in-place check pairs them up)."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in flat_tensors(v)]
    return []


def tensor_bytes(t: torch.Tensor) -> bytes:
    """A tensor's values as raw bytes (row-major, on the CPU; empty for meta)."""
    t = t.detach()
    if t.device.type == "meta":
        return b""
    flat = t.reshape(-1).contiguous().cpu()
    if flat.dtype == torch.bool:
        flat = flat.to(torch.uint8)
    return flat.view(torch.uint8).numpy().tobytes()


def encode(value: Any) -> bytes:
    """Return the bytes of one message carrying `value`."""
    payloads: list[bytes] = []

    def enc(v: Any, depth: int = 0) -> Any:
        if depth > MAX_DEPTH:
            return {"$other": "nesting too deep"}
        if v is None or isinstance(v, (bool, str)):
            return v
        if isinstance(v, int):
            return v if abs(v) < 2**63 else {"$other": "int too large"}
        if isinstance(v, float):
            return v if math.isfinite(v) else {"$float": repr(v)}
        if isinstance(v, torch.Tensor):
            if v.dtype not in DTYPE_NAMES or v.is_sparse:
                return {"$other": f"tensor of {v.dtype}"}
            payloads.append(tensor_bytes(v))
            return {
                "$t": len(payloads) - 1,
                "dtype": DTYPE_NAMES[v.dtype],
                "shape": list(v.shape),
                "device": str(v.device),
                "grad": bool(v.requires_grad),
            }
        if isinstance(v, torch.dtype):
            return {"$dtype": DTYPE_NAMES[v]} if v in DTYPE_NAMES else {"$other": str(v)}
        if isinstance(v, torch.device):
            return {"$device": str(v)} if DEVICE_PATTERN.fullmatch(str(v)) else {"$other": "torch.device"}
        if isinstance(v, tuple):
            return {"$tuple": [enc(x, depth + 1) for x in v]}
        if isinstance(v, list):
            return [enc(x, depth + 1) for x in v]
        if isinstance(v, dict) and all(isinstance(k, str) for k in v):
            return {"$dict": {k: enc(x, depth + 1) for k, x in v.items()}}
        kind = type(v)
        return {"$other": f"{kind.__module__}.{kind.__qualname__}"}

    header = json.dumps(enc(value)).encode()
    body = struct.pack(">I", len(header)) + header + b"".join(payloads)
    return struct.pack(">Q", len(body)) + body


def decode(
    body: bytes | bytearray | memoryview, device: str | torch.device | None = None, max_header: int | None = MAX_HEADER
) -> Any:
    """Rebuild the value of one message body (the bytes after the length prefix;
    bytes or a memoryview).

    Tensors are rebuilt on `device` when given (the worker puts inputs where the
    judge asked), else on the CPU, except meta tensors, which stay meta. The
    device a tensor came from is kept in `tensor.wire_device` (a string).
    Anything that does not follow the format raises `WireError`, whatever
    went wrong inside (the worker that sent it is untrusted). `max_header`
    bounds the JSON part (None: the judge's own requests, whose cells are
    bounded by grading.yml's `notebook_code_kb`).
    """
    try:
        return _decode(body, device, max_header)
    except WireError:
        raise
    except (
        RecursionError,
        MemoryError,
        ValueError,
        TypeError,
        AttributeError,
        KeyError,
        IndexError,
        OverflowError,
        RuntimeError,
        struct.error,
    ) as exc:
        raise WireError(f"undecodable message ({type(exc).__name__})") from None


def _decode(body: bytes | bytearray | memoryview, device: str | torch.device | None, max_header: int | None) -> Any:
    if len(body) < 4:
        raise WireError("message too short")
    (hlen,) = struct.unpack(">I", body[:4])
    if 4 + hlen > len(body):
        raise WireError("header length past the end of the message")
    if max_header is not None and hlen > max_header:
        raise WireError(f"header of {hlen} bytes, over the {max_header}-byte limit")
    try:
        header = json.loads(bytes(body[4 : 4 + hlen]).decode())
    except (UnicodeDecodeError, ValueError) as exc:
        raise WireError(f"header is not JSON: {exc}") from None
    offsets = [4 + hlen]

    def payload(spec: Any) -> torch.Tensor:  # a tensor tag of the JSON header
        dtype = DTYPES.get(spec.get("dtype"))
        shape = spec.get("shape")
        if (
            dtype is None
            or not isinstance(shape, list)
            or not all(isinstance(s, int) and 0 <= s < 2**40 for s in shape)
        ):
            raise WireError(f"bad tensor header {spec!r:.200}")
        numel = math.prod(shape)
        src_device = str(spec.get("device", "cpu"))[:16]
        if src_device == "meta" or device == "meta":
            t = torch.empty(shape, dtype=dtype, device="meta")
        else:
            itemsize = 1 if dtype == torch.bool else torch.empty((), dtype=dtype).element_size()
            start = offsets[0]
            end = start + numel * itemsize
            if end > len(body):
                raise WireError("tensor payload past the end of the message")
            offsets[0] = end
            raw = bytearray(body[start:end])
            if dtype == torch.bool:
                t = (
                    torch.frombuffer(raw, dtype=torch.uint8).to(torch.bool)
                    if numel
                    else torch.empty(0, dtype=torch.bool)
                )
            else:
                t = torch.frombuffer(raw, dtype=dtype) if numel else torch.empty(0, dtype=dtype)
            t = t.reshape(shape)
            if device is not None:
                t = t.to(device)
        if spec.get("grad") and device is not None and (t.is_floating_point() or t.is_complex()):
            t.requires_grad_(True)
        t.wire_device = src_device  # type: ignore[attr-defined]  # an attribute of our own on the tensor
        return t

    def dec(v: Any, depth: int = 0) -> Any:
        if depth > MAX_DEPTH + 2:
            raise WireError("nesting too deep")
        if isinstance(v, list):
            return [dec(x, depth + 1) for x in v]
        if isinstance(v, dict):
            if "$t" in v:
                return payload(v)
            if "$tuple" in v:
                if not isinstance(v["$tuple"], list):
                    raise WireError("a tuple that is not a list")
                return tuple(dec(x, depth + 1) for x in v["$tuple"])
            if "$dict" in v:
                if not isinstance(v["$dict"], dict):
                    raise WireError("a dict that is not an object")
                return {str(k)[:200]: dec(x, depth + 1) for k, x in v["$dict"].items()}
            if "$float" in v:
                if v["$float"] not in ("nan", "inf", "-inf"):
                    raise WireError("a float tag that is not nan or inf")
                return float(v["$float"])
            if "$dtype" in v:
                if not isinstance(v["$dtype"], str) or v["$dtype"] not in DTYPES:
                    raise WireError("a dtype tag outside the whitelist")
                return DTYPES[v["$dtype"]]
            if "$device" in v:
                if not isinstance(v["$device"], str) or not DEVICE_PATTERN.fullmatch(v["$device"]):
                    raise WireError("a device tag that names no device the kit uses")
                return torch.device(v["$device"])
            if "$other" in v:
                return Other(str(v["$other"])[:200])
            raise WireError("untagged object in message")
        return v

    return dec(header)


class Other:
    """A value the worker returned that the wire does not carry (only its type name)."""

    def __init__(self, type_name: str) -> None:
        self.type_name = type_name

    def __repr__(self) -> str:
        return f"<{self.type_name}>"


def read_exact(read: Callable[[int], bytes], n: int) -> bytes:
    chunks: list[bytes] = []
    got = 0
    while got < n:
        chunk = read(n - got)
        if not chunk:
            raise EOFError("peer closed the channel")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def read_body(read: Callable[[int], bytes], max_bytes: int) -> bytes:
    (n,) = struct.unpack(">Q", read_exact(read, 8))
    if n > max_bytes:
        raise WireError(f"message of {n} bytes exceeds the limit of {max_bytes}")
    return read_exact(read, n)

"""Each bug charged once: the judge stands in for a graded function that
another graded function of the same assignment calls.

When the suites call, say, the student's `dot_attention`, the worker's
`masked_softmax` is replaced (for that call only) by a proxy that sends its
tensors to the judge through the wire; the judge answers with the reference's
result, forward and backward. So `dot_attention` is graded as if the
`masked_softmax` it calls were right, and the reference never reaches the
worker as code. The judge answers only the functions it listed for the call
in progress, never the function being graded nor one whose reference can run
the reference of the function being graded (`reaching`), and at most
MAX_CALLBACKS times per call. grading.yml `scoring.isolate_dependencies:
false` turns this off.

Whose error an answer is: the reference refusing the arguments the student's code sent
(`faults.contract`, around each call of the reference on them) is the student's, answered
as an error their code raises; any other error here (this module's own plumbing, a
reference that fails on what it accepts) is the kit's and leaves `answer` as it came.
"""

import functools
import importlib
import inspect
import math
import types
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import torch

from autograder.faults import Refused, contract
from autograder.judge import detect
from autograder.messages import t
from autograder.protocol.grads import vjp
from autograder.text import one_line

if TYPE_CHECKING:
    from autograder.config import Config

MAX_CALLBACKS = 256  # a loop over a batch calls its softmax a few times; a flood is the student's own loss
KINDS = ("construct", "forward")  # a graded class's callbacks: build one, run one (forward or backward)


REFERENCES = "autograder.private.solutions"


def _reference_module(assignment: str) -> types.ModuleType | None:
    try:
        return importlib.import_module(f"{REFERENCES}.{assignment}")
    except ImportError:
        return None


def _graded(assignment: str, kind: Callable[[Any], bool]) -> dict[str, Any]:
    """The members of the assignment's reference module that `kind` accepts, defined there
    (not imported), not private, not provided to students."""
    module = _reference_module(assignment)
    if module is None:
        return {}
    provided = set(getattr(module, "PROVIDED", ()))
    return {
        n: v
        for n, v in vars(module).items()
        if kind(v) and v.__module__ == module.__name__ and not n.startswith("_") and n not in provided
    }


def graded_functions(assignment: str) -> dict[str, Callable[..., Any]]:
    """The assignment's graded functions (not classes; not provided ones) from its reference module."""
    return _graded(assignment, inspect.isfunction)


def graded_classes(assignment: str) -> dict[str, type[torch.nn.Module]]:
    """The assignment's graded classes (nn.Module subclasses defined in its reference module, not provided ones)."""
    return _graded(assignment, lambda v: inspect.isclass(v) and issubclass(v, torch.nn.Module))


def reaching(target: object, candidates: dict[str, Any], names: dict[str, Any]) -> set[str]:
    """The names among `candidates` ({name: reference function or class}) whose reference can
    run `target` (a reference function or class): it is `target`, a subclass of it, or it
    reaches one of those through `_named`, at any depth. `names`: the reference module's own
    names, which a reference may reach as an attribute (`solutions.DecoderBlock`)."""
    return {n for n, obj in candidates.items() if _reaches(obj, target, names)}


def graded_functions_of(names: dict[str, Any]) -> dict[str, Any]:
    """The reference functions and classes among a reference module's names (`vars(module)`)."""
    return {n: v for n, v in names.items() if _is_reference(v) and not n.startswith("_")}


def _reaches_any(start: object, target: object, names: dict[str, Any]) -> bool:
    """`_reaches` from any callable: a function outside the references (a suite's lambda, a
    wrapper) is followed through the references it names, its closure and defaults."""
    todo, seen = [start], set()
    while todo:  # unwrap what holds a function: a partial, a bound method, a callable object
        obj = todo.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if _is_reference(obj):
            if _reaches(obj, target, names) or _member_of(obj, target):
                return True
            if inspect.isfunction(obj) and "." in obj.__qualname__:  # a method: what its class runs, it may run
                module = importlib.import_module(obj.__module__)
                todo.append(getattr(module, obj.__qualname__.split(".")[0], None))
        elif inspect.isfunction(obj):
            if any(_reaches(o, target, names) for o in _named_in_any(obj, names)):
                return True
        elif isinstance(obj, functools.partial):
            todo += [obj.func, *obj.args, *obj.keywords.values()]
        elif inspect.ismethod(obj):
            todo += [obj.__func__, obj.__self__]
        elif callable(obj) and not inspect.isclass(obj) and not inspect.isbuiltin(obj):
            todo += [type(obj), getattr(type(obj), "__call__", None)]
    return False


def _member_of(obj: object, target: object) -> bool:
    """Whether `obj` is a function defined in the body of the class `target` (its method)."""
    return (
        inspect.isclass(target)
        and inspect.isfunction(obj)
        and obj.__module__ == target.__module__
        and obj.__qualname__.startswith(target.__qualname__ + ".")
    )


def _named_in_any(fn: types.FunctionType, names: dict[str, Any]) -> list[Any]:
    """What a non-reference function names that the call graph follows: references, and the
    functions in its closure and defaults (followed in turn)."""
    found: list[Any] = []
    seen: set[int] = set()
    todo: list[Any] = [fn]
    while todo:
        f = todo.pop()
        if id(f) in seen or not inspect.isfunction(f):
            continue
        seen.add(id(f))
        for v in _values_named(f, names):  # `ref.DecoderBlock` too: `names` holds the reference's own
            if _is_reference(v):
                found.append(v)
            elif inspect.isfunction(v):
                todo.append(v)
    return found


def _reaches(start: object, target: object, names: dict[str, Any]) -> bool:
    seen: set[int] = set()
    todo = [start]
    while todo:
        obj = todo.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if obj is target or (inspect.isclass(obj) and inspect.isclass(target) and issubclass(obj, target)):
            return True
        todo.extend(_named(obj, names))
    return False


def _is_reference(obj: object) -> bool:
    """A function or class of the kit's reference modules (the only code the call graph follows)."""
    return (inspect.isfunction(obj) or inspect.isclass(obj)) and str(getattr(obj, "__module__", "")).startswith(
        REFERENCES
    )


def _named(obj: object, names: dict[str, Any]) -> list[Any]:
    """The reference functions and classes `obj`'s reference can run directly, worked out
    conservatively from the references themselves, never by running them: every name its
    code objects (nested functions, lambdas and comprehensions included) load, looked up in
    its module's globals and among `names`; its defaults and closure; for a class, its bases
    and every member of it and of its reference bases (methods, static and class methods,
    properties, class attributes). A submodule a class builds is named in its code
    (`self.ffn = FeedForward(...)`), so a class that holds the target's class at any depth
    reaches it here. What a reference could reach without naming it (getattr on a string,
    `globals()[...]`) is not seen: tests/test_stand_in_reach.py builds every graded class
    and checks its submodules."""
    if inspect.isfunction(obj):
        return _named_in(obj, names)
    if not inspect.isclass(obj):
        return []
    bases = [b for b in obj.__mro__ if _is_reference(b)]
    found: list[Any] = bases[1:]  # what it inherits from another reference runs in it
    for member in (v for b in bases for v in vars(b).values()):
        if isinstance(member, (staticmethod, classmethod)):
            member = member.__func__
        parts = [member.fget, member.fset, member.fdel] if isinstance(member, property) else [member]
        for part in parts:
            if inspect.isfunction(part):
                found += _named_in(part, names)
            elif _is_reference(part):  # a class attribute that is a reference (`block = DecoderBlock`)
                found.append(part)
    return found


def _named_in(fn: types.FunctionType, names: dict[str, Any]) -> list[Any]:
    """The reference functions and classes a function names: in its code, defaults and closure."""
    return [v for v in _values_named(fn, names) if _is_reference(v)]


def _values_named(fn: types.FunctionType, names: dict[str, Any]) -> list[Any]:
    """What a function may use by name: every name its code objects (nested ones included) load,
    looked up in its globals and among `names`, and its defaults and closure."""
    loaded: set[str] = set()
    codes = [fn.__code__]
    while codes:
        code = codes.pop()
        loaded.update(code.co_names)
        codes.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    values = [fn.__globals__.get(n) for n in loaded] + [names.get(n) for n in loaded]
    values += list(fn.__defaults__ or ()) + list((fn.__kwdefaults__ or {}).values())
    values += [c.cell_contents for c in fn.__closure__ or () if _filled(c)]
    return values


def _filled(cell: types.CellType) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


class StandIn:
    def __init__(self, assignment: str, cfg: "Config") -> None:
        on = cfg.scoring.get("isolate_dependencies", True)
        questions = cfg.questions(assignment)
        self.functions = {
            n: f for n, f in graded_functions(assignment).items() if on and detect.question_name(n) in questions
        }
        self.classes = {
            n: c for n, c in graded_classes(assignment).items() if on and detect.question_name(n) in questions
        }
        self.used: dict[str, set[str]] = {}  # graded target -> names the judge stood in for while it ran
        module = _reference_module(assignment)
        self._reference: dict[str, Any] = dict(vars(module)) if module is not None else {}
        self._allowed: dict[str, list[str]] = {}
        # the most a stand-in's answer may hold (what the judge reads from a worker at most):
        # broadcasting small inputs could otherwise make the judge build a huge result
        self.max_bytes = int(cfg.limits.get("reply_bytes") or 0)

    def allowed(self, target: str) -> list[str]:
        """What the judge stands in for while `target` runs: the others, less those whose
        reference can run `target`'s (`reaching`): never built into the worker for the call,
        so no path inside them (a stood-in TransformerLM's `blocks.0`, a DecoderBlock's
        `ffn`) and no call through them reaches the part being graded."""
        if target not in self._allowed:
            names = {**self.functions, **self.classes}
            own = self._reference.get(target)
            near = reaching(own, names, self._reference) if _is_reference(own) else set()
            self._allowed[target] = sorted(n for n in names if n != target and n not in near)
        return list(self._allowed[target])

    def reaches_target(self, target: str, name: str) -> bool:
        """Whether `name` is the graded `target` or a graded function or class whose reference
        can run `target`'s (`reaching`): one the judge never answers for while `target` runs."""
        if name == target:
            return True
        own, graded = self._reference.get(target), {**graded_functions_of(self._reference), **self.classes}
        return _is_reference(own) and name in reaching(
            own, {k: v for k, v in graded.items() if k == name}, self._reference
        )

    def runs_target(self, target: str, fn: object) -> bool:
        """Whether `fn` (a function the judge would answer with) is, or can run, `target`'s reference."""
        own = self._reference.get(target)
        if not _is_reference(own):
            return False
        return fn is own or _reaches_any(fn, own, self._reference)

    def answer(self, target: str, allowed: list[str], message: dict[str, Any], count: int) -> dict[str, Any]:
        """The reply to one callback from the worker (plain data, checked here)."""
        reply = self._answer(target, allowed, message, count)
        if not reply.get("ok"):
            name = message.get("name") if isinstance(message.get("name"), str) else "?"
            reply["error"] = t("stand_in_error", name=one_line(name, 60), why=reply["error"])
        return reply

    def _answer(self, target: str, allowed: list[str], message: dict[str, Any], count: int) -> dict[str, Any]:
        if count > MAX_CALLBACKS:
            return {"ok": False, "error": t("stand_in_flood", n=MAX_CALLBACKS)}
        name = message.get("name")
        args, kwargs = message.get("args"), message.get("kwargs")
        kind = message.get("kind")
        if (
            not isinstance(name, str)
            or name not in allowed
            or not isinstance(args, list)
            or not isinstance(kwargs, dict)
            or not all(isinstance(k, str) for k in kwargs)
            or (kind is None) != (name in self.functions)
            or (kind is not None and (kind not in KINDS or name not in self.classes))
        ):
            return {"ok": False, "error": t("stand_in_refused")}
        self.used.setdefault(target, set()).add(name)
        try:
            if kind is not None:
                return self._module(self.classes[name], kind, args, kwargs, message)
            return self._function(self.functions[name], args, kwargs, message)
        except Refused as exc:  # the reference refused the student's arguments: any other error is the kit's
            return {"ok": False, "error": exc.line()}

    def _function(
        self, fn: Callable[..., Any], args: list[Any], kwargs: dict[str, Any], message: dict[str, Any]
    ) -> dict[str, Any]:
        """A graded function's callback: the reference's result on the arguments sent, or
        (with `grad_outputs`) its gradients at them."""
        args, kwargs = [_local(a) for a in args], {k: _local(v) for k, v in kwargs.items()}
        grads_out = message.get("grad_outputs")
        size = _output_bytes(fn, args, kwargs)  # on the meta device: shapes, no memory
        if self.max_bytes and size > self.max_bytes:
            return {"ok": False, "error": t("stand_in_too_big", size=size, limit=self.max_bytes)}
        if grads_out is None:
            with torch.no_grad(), contract(args, kwargs):
                value = fn(*args, **kwargs)
            return {"ok": True, "value": _detached(value)}
        return {"ok": True, "grads": _backward(fn, args, kwargs, grads_out)}

    def _module(
        self, cls: type[torch.nn.Module], kind: str, args: list[Any], kwargs: dict[str, Any], message: dict[str, Any]
    ) -> dict[str, Any]:
        """A graded class's callback. `construct`: the parameters of the reference built with
        the student's (plain) arguments, {dotted name: tensor}, the reference's own initial
        values (seeded: the judge's random state is left as it was). `forward`: the reference
        built with the arguments of `construct` (sent again), the parameters sent (`params`,
        their names and shapes checked first) in place of its own, called on `args` and
        `kwargs`; with `grad_outputs`, the gradients w.r.t. the floating inputs (`grads`, in
        the order of the tensors among args then kwargs, as for a function) and w.r.t. every
        parameter (`param_grads`, by name)."""
        ctor = args if kind == "construct" else message.get("construct")
        if kind == "forward":
            if (
                not isinstance(ctor, dict)
                or not isinstance(ctor.get("args"), list)
                or not isinstance(ctor.get("kwargs"), dict)
            ):
                return {"ok": False, "error": t("stand_in_refused")}
            c_args, c_kwargs = ctor["args"], ctor["kwargs"]
        else:
            c_args, c_kwargs = args, kwargs
        key = _shape_key(c_args, c_kwargs)
        if key is None or any(isinstance(v, torch.Tensor) for v in [*c_args, *c_kwargs.values()]):
            return {"ok": False, "error": t("stand_in_not_plain", module=cls.__name__)}
        paths, shapes = _layout(cls, key, c_args, c_kwargs)  # on the meta device: names and shapes, no memory
        if kind == "construct":
            size = (
                sum(math.prod(s) for s in shapes.values())
                * torch.empty((), dtype=torch.get_default_dtype()).element_size()
            )
            if self.max_bytes and size > self.max_bytes:
                return {"ok": False, "error": t("stand_in_too_big", size=size, limit=self.max_bytes)}
            with torch.random.fork_rng(devices=[]), torch.no_grad(), contract(c_args, c_kwargs):
                torch.manual_seed(0)
                module = cls(*c_args, **c_kwargs)
            initial = {n: p.detach() for n, p in _named_parameters(module).items()}
            return {"ok": True, "params": initial, "parts": _parts(module)}
        path = message.get("path", "")
        if not isinstance(path, str) or path not in paths:
            return {"ok": False, "error": t("stand_in_refused")}
        prefix = path + "." if path else ""
        shapes = {n[len(prefix) :]: s for n, s in shapes.items() if n.startswith(prefix)}
        params = message.get("params")
        wrong = _wrong_parameters(params, shapes)
        if wrong is not None:
            return {"ok": False, "error": wrong}
        assert isinstance(params, dict)
        grads_out = message.get("grad_outputs")
        call = (cls, c_args, c_kwargs, path)
        size = _module_output_bytes(call, key, params, args, kwargs)
        if self.max_bytes and size > self.max_bytes:
            return {"ok": False, "error": t("stand_in_too_big", size=size, limit=self.max_bytes)}
        if grads_out is None:
            with torch.no_grad():
                value = _call_module(call, params, args, kwargs)
            return {"ok": True, "value": _detached(value)}
        grads, param_grads = _module_backward(call, params, args, kwargs, grads_out)
        return {"ok": True, "grads": grads, "param_grads": param_grads}


def _local(v: Any) -> Any:
    """A device the worker named, as the judge computes on it: the judge's CPU for a GPU
    (the worker moves the answer to its own device), meta stays meta."""
    if isinstance(v, torch.device) and v.type != "meta":
        return torch.device("cpu")
    return v


def _named_parameters(module: torch.nn.Module) -> dict[str, torch.Tensor]:
    """The reference module's parameters by dotted name, in registration order (its state_dict's names)."""
    return dict(module.named_parameters())


def _parts(module: torch.nn.Module) -> dict[str, dict[str, Any]]:
    """{path: {"type": class name, "torch": whether it is torch.nn's class of that name, "attrs":
    its plain attributes}} of the module ("") and each submodule, parents first: what the
    worker's stand-in rebuilds (a submodule the student's code calls, such as
    `self.ffn.linear1`, answered by the judge as the reference's; one of torch.nn's classes an
    instance of that class there, so that `isinstance(m, nn.Linear)` holds)."""
    out = {}
    for path, m in module.named_modules():
        attrs = {
            k: v
            for k, v in vars(m).items()
            if not k.startswith("_")
            and k != "training"
            and not isinstance(v, torch.Tensor)
            and _shape_key([v], {}) is not None
        }
        kind = type(m).__name__
        out[path] = {"type": kind, "torch": type(m) is getattr(torch.nn, kind, None), "attrs": attrs}
    return out


def _layout(
    cls: type[torch.nn.Module], key: tuple[Any, ...], args: list[Any], kwargs: dict[str, Any]
) -> tuple[set[str], dict[str, tuple[int, ...]]]:
    """The paths of the submodules of `cls(*args, **kwargs)` ("" the module itself) and its
    parameters' {name: shape}, from one build on the meta device (no memory), kept per class
    and arguments."""
    if (cls, key) not in _LAYOUTS:
        with torch.device("meta"), torch.no_grad(), contract(args, kwargs):
            module = cls(*args, **kwargs)
        if len(_LAYOUTS) >= _SIZES_KEPT:
            _LAYOUTS.clear()
        shapes = {n: tuple(p.shape) for n, p in _named_parameters(module).items()}
        _LAYOUTS[(cls, key)] = ({p for p, _ in module.named_modules()}, shapes)
    return _LAYOUTS[(cls, key)]


_LAYOUTS: dict[tuple[type[torch.nn.Module], tuple[Any, ...]], tuple[set[str], dict[str, tuple[int, ...]]]] = {}
Built = tuple[type[torch.nn.Module], list[Any], dict[str, Any], str]  # class, its arguments, the submodule's path


def _wrong_parameters(params: object, shapes: dict[str, tuple[int, ...]]) -> str | None:
    """Why the parameters sent are not those of the module the arguments build (None: they are)."""
    if not isinstance(params, dict):
        return t("stand_in_refused")
    for name in params:
        if name not in shapes:
            return t("stand_in_parameter_unknown", param=one_line(str(name), 60), names=", ".join(shapes))
    for name, shape in shapes.items():
        if name not in params:
            return t("stand_in_parameter_missing", param=name)
        p = params[name]
        if not isinstance(p, torch.Tensor) or not p.is_floating_point():
            return t("stand_in_parameter_not_float", param=name)
        if tuple(p.shape) != shape:
            return t("stand_in_parameter_shape", param=name, got=tuple(p.shape), expected=shape)
    return None


def _call_module(call: Built, params: dict[str, torch.Tensor], args: list[Any], kwargs: dict[str, Any]) -> Any:
    """The reference module built with the call's arguments (its submodule at the call's path),
    run with `params` in place of its own (in their dtype, on their device): built on the meta
    device, so building costs no memory and its initial values are never computed."""
    cls, c_args, c_kwargs, path = call
    with torch.device("meta"), torch.no_grad(), contract(c_args, c_kwargs):
        module = cls(*c_args, **c_kwargs)
    buffers = dict(module.named_buffers())
    if buffers:  # a class with buffers (none of today's): its own, built for real
        with torch.random.fork_rng(devices=[]), torch.no_grad(), contract(c_args, c_kwargs):
            torch.manual_seed(0)
            module = cls(*c_args, **c_kwargs)
    part = module.get_submodule(path)
    with contract(params, args, kwargs):
        return torch.func.functional_call(part, params, tuple(args), kwargs, strict=not buffers)


def _module_output_bytes(
    call: Built, key: tuple[Any, ...], params: dict[str, torch.Tensor], args: list[Any], kwargs: dict[str, Any]
) -> int:
    """The bytes the module's outputs would take, worked out on meta copies (kept per call shape)."""
    call_key = _shape_key([*args, *(params[n] for n in sorted(params))], kwargs)
    full = None if call_key is None else (call[0], key, call[3], call_key)
    if full is not None and full in _MODULE_SIZES:
        return _MODULE_SIZES[full]

    def meta(v: Any) -> Any:
        return torch.empty(v.shape, dtype=v.dtype, device="meta") if isinstance(v, torch.Tensor) else v

    with torch.no_grad():
        out = _call_module(
            call,
            {n: meta(p) for n, p in params.items()},
            [meta(a) for a in args],
            {k: meta(v) for k, v in kwargs.items()},
        )
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    size = sum(o.numel() * o.element_size() for o in outs if isinstance(o, torch.Tensor))
    if full is not None:
        if len(_MODULE_SIZES) >= _SIZES_KEPT:
            _MODULE_SIZES.clear()
        _MODULE_SIZES[full] = size
    return size


_MODULE_SIZES: dict[tuple[Any, ...], int] = {}


def _module_backward(
    call: Built,
    params: dict[str, torch.Tensor],
    args: list[Any],
    kwargs: dict[str, Any],
    grads_out: object,
) -> tuple[list[torch.Tensor | None], dict[str, torch.Tensor | None]]:
    """Gradients of the module's outputs (against `grads_out`) w.r.t. its floating inputs (one
    entry per tensor among args then kwargs, None for the others) and its parameters (by name)."""
    args, kwargs, leaves = _as_leaves(args, kwargs)
    names = list(params)
    ps = {n: params[n].detach().clone().requires_grad_(True) for n in names}
    out = _call_module(call, ps, args, kwargs)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    _check_grad_outputs(grads_out, outs)
    assert isinstance(grads_out, list)
    pairs = [
        (o, g)
        for o, g in zip(outs, grads_out)
        if isinstance(o, torch.Tensor) and isinstance(g, torch.Tensor) and o.requires_grad
    ]
    live = [v for v in leaves if v is not None] + [ps[n] for n in names]
    with contract(grads_out):  # cotangents of another shape than the outputs: the student's
        grads: Sequence[torch.Tensor | None] = (
            vjp([o for o, _ in pairs], live, [g.to(o.dtype) for o, g in pairs]) if pairs else [None] * len(live)
        )
    n_in = len(live) - len(names)
    it = iter(grads[:n_in])
    return [None if v is None else next(it) for v in leaves], dict(zip(names, grads[n_in:]))


def _output_bytes(fn: Callable[..., Any], args: list[Any], kwargs: dict[str, Any]) -> int:
    """The bytes `fn`'s outputs would take, worked out on meta copies of the inputs.

    On the meta device torch works out shapes in Python (about 2 ms a call, where the call itself
    takes 30 us on the CPU), and a suite's callbacks repeat the same shapes: a size is kept per
    function and per call shape (`_shape_key`), at most _SIZES_KEPT of them."""
    key = _shape_key(args, kwargs)
    if key is not None and (fn, key) in _SIZES:
        return _SIZES[(fn, key)]

    def meta(v: Any) -> Any:
        if isinstance(v, torch.device):  # a function that builds its result on a device it is given
            return torch.device("meta")
        return torch.empty(v.shape, dtype=v.dtype, device="meta") if isinstance(v, torch.Tensor) else v

    with torch.no_grad(), torch.device("meta"), contract(args, kwargs):  # and one that builds it on the default device
        out = fn(*[meta(a) for a in args], **{k: meta(v) for k, v in kwargs.items()})
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    size = sum(o.numel() * o.element_size() for o in outs if isinstance(o, torch.Tensor))
    if key is not None:
        if len(_SIZES) >= _SIZES_KEPT:
            _SIZES.clear()
        _SIZES[(fn, key)] = size  # only a call that returned: an error is worked out again
    return size


_SIZES: dict[tuple[Callable[..., Any], tuple[Any, ...]], int] = {}
_SIZES_KEPT = 4096


def _shape_key(args: list[Any], kwargs: dict[str, Any]) -> tuple[Any, ...] | None:
    """What a call's output size depends on: each top-level tensor's shape and dtype (its values
    never reach the meta copy) and every other value exactly (its type too: True is not 1); None
    where a value could hide a tensor or is not plain (not kept)."""

    def plain(v: Any) -> Any:
        if v is None or isinstance(v, (bool, int, float, str)):
            return (type(v).__name__, v)
        if isinstance(v, (torch.dtype, torch.device)):
            return (type(v).__name__, str(v))
        if isinstance(v, (list, tuple)):
            items = [plain(x) for x in v]
            return None if any(i is None for i in items) else (type(v).__name__, tuple(items))
        return None  # a tensor inside a list reaches `fn` with its values; anything else: not kept

    def one(v: Any) -> Any:
        if isinstance(v, torch.Tensor):
            return ("tensor", tuple(v.shape), str(v.dtype))
        return plain(v)

    names = [None] * len(args) + sorted(kwargs)
    parts = [one(a) for a in args] + [one(kwargs[k]) for k in sorted(kwargs)]
    return None if any(p is None for p in parts) else tuple(zip(names, parts))


def _detached(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.detach()
    if isinstance(value, (tuple, list)):
        return [_detached(v) for v in value]
    return value


def _backward(
    fn: Callable[..., Any], args: list[Any], kwargs: dict[str, Any], grads_out: object
) -> list[torch.Tensor | None]:
    """Gradients of `fn` at the call's inputs, for the tensors among `args` and `kwargs` (in that order)."""
    args, kwargs, leaves = _as_leaves(args, kwargs)
    with contract(args, kwargs):
        out = fn(*args, **kwargs)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    _check_grad_outputs(grads_out, outs)
    assert isinstance(grads_out, list)
    pairs = [(o, g) for o, g in zip(outs, grads_out) if isinstance(g, torch.Tensor) and o.requires_grad]
    live = [v for v in leaves if v is not None]
    with contract(grads_out):  # cotangents of another shape than the outputs: the student's
        grads: Sequence[torch.Tensor | None] = (
            vjp([o for o, _ in pairs], live, [g.to(o.dtype) for o, g in pairs])
            if pairs and live
            else [None] * len(live)
        )
    it = iter(grads)
    return [None if v is None else next(it) for v in leaves]


def _check_grad_outputs(grads_out: object, outs: list[Any]) -> None:
    """Cotangents sent for another number of outputs than the function's: refused (the student's)."""
    if not isinstance(grads_out, list) or len(grads_out) != len(outs):
        raise Refused(ValueError("gradients for a different number of outputs"))


def _as_leaves(args: list[Any], kwargs: dict[str, Any]) -> tuple[list[Any], dict[str, Any], list[torch.Tensor | None]]:
    """A call's inputs with each floating tensor a fresh leaf that requires grad, and one
    entry per tensor among `args` then `kwargs` (its leaf, None for a tensor of another kind)."""
    leaves: list[torch.Tensor | None] = []

    def leaf(v: Any) -> Any:
        if isinstance(v, torch.Tensor) and v.is_floating_point():
            v = v.detach().clone().requires_grad_(True)
            leaves.append(v)
            return v
        if isinstance(v, torch.Tensor):
            leaves.append(None)
        return v

    return [leaf(a) for a in args], {k: leaf(v) for k, v in kwargs.items()}, leaves

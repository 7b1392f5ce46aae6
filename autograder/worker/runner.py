"""The sandboxed worker: runs a student's notebook code and answers calls.

Forked by the fork server (`autograder.sandbox.forkserver`) or started as
`python -m autograder.worker IN_FD OUT_FD`, already confined (rlimits,
unprivileged uid, its own file system view). It imports the standard library,
torch and `autograder.protocol`, nothing else of the kit. Everything it sends is
plain data (see `wire`): the judge trusts none of it beyond what it checks.

Requests (one message each, answered by one message):
    {"op": "load", "cells": [{"index": i, "source": str}], "provided": str,
     "packages": [name] | None}
    {"op": "call", "target": name, "args": [...], "kwargs": {...},
     "device": "cpu", "construct": {"args": [...], "kwargs": {...}} | None,
     "to": {"dtype": "float64"} | None, "state": {param: tensor} | None,
     "cotangents": [tensor, ...] | None, "trace": bool, "return_inputs": bool}
    {"op": "exit"}

A call may list graded functions the judge stands in for (`"isolate": [name]`):
for that call only, those names in the notebook's namespace answer through
the judge (`{"op": "callback", ...}` messages, forward and backward), so the
function being graded is graded as if the ones it calls were right. The names
that are graded classes (`"stand_in_classes": [name]`, among `isolate`) become
an nn.Module subclass whose constructor asks the judge for the parameters of
the reference module built with the same arguments (`"kind": "construct"`) and
registers them under the same dotted names, and whose forward sends its inputs
and its current parameters to the judge (`"kind": "forward"`, forward and
backward: gradients for the inputs and the parameters).

A call may name functions the judge answers and logs (`"watch": [name]`, `judge.watch`): a
name of the notebook's namespace, or a dotted path from one to a function or a class's method
(`nn.Linear.forward`: the module's parameters and buffers go with each call). A call may carry
a memory cap (`"data_limit": bytes`, `sandbox.memcap`): the worker lowers its hard RLIMIT_DATA
to it and asks the judge to read it back (`{"op": "callback", "kind": "memory_cap"}`) before
anything of the call runs. `{"op": "ready"}` runs nothing: the judge measures a bare worker.

A call may also pass functions as its first arguments (`"call_with": [{"proxy":
name} | {"own": name}]`, a student's test called with the function it tests):
a proxy answered by the judge under `name`, or the notebook's own `name` (as it
stands during the call, after `isolate`).
"""

import io
import os
import select
import sys
import traceback

from autograder.protocol import wire
from autograder.protocol.forbidden import FORBIDDEN
from autograder.protocol.grads import vjp
from autograder.protocol.wire import flat_tensors

MESSAGE_CHARS = 600
CONSTRUCT_SEED = 0  # the global RNG's seed before a module is built (`Runner._call`)
# Exit status of a worker whose pipes to the judge the student's code closed,
# replaced or wrote into: it cannot be trusted to read the next request or to
# answer, so it ends at once (after the cell or call that did it) and the judge
# words it (`sandbox.client`). Student code may exit with it too: it only words
# its own death.
PIPES_LOST = 73


def _where(exc):
    """The innermost notebook line an exception passed through:
    {"cell": index, "line": n, "function": name} (the judge words it)."""
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if frame.filename.startswith("<cell ") and frame.filename[6:-1].isdigit():
            return {"cell": int(frame.filename[6:-1]), "line": frame.lineno, "function": frame.name}
    return None


def _error(exc):
    if isinstance(exc, OSError) and exc.errno == 27:  # EFBIG: RLIMIT_FSIZE on printed output
        import resource

        cap = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
        return {
            "type": "OutputLimit",
            "cap": cap,  # the judge words it (this message is a fallback)
            "message": f"printed more than the {cap}-byte output limit; output truncated",
            "where": _where(exc),
        }
    msg = str(exc)
    if len(msg) > MESSAGE_CHARS:
        msg = msg[:MESSAGE_CHARS] + " ..."
    out = {"type": type(exc).__name__, "message": msg, "where": _where(exc)}
    if isinstance(exc, RuntimeError) and "allocate" in msg and "memory" in msg:
        out["out_of_memory"] = True  # torch's CPU allocator refused (the judge words a capped call's so)
    return out


class _Sink(io.RawIOBase):
    """Where a loading cell's prints go: nowhere. Nobody reads what loading prints (the
    judge grades what the graded calls return), so it costs neither the output budget of
    the calls after it nor the cell that prints (a scratch cell printing in a loop runs
    to its end)."""

    def writable(self):
        return True

    def write(self, b):
        return len(memoryview(b).cast("B"))


def _sink():
    return io.TextIOWrapper(io.BufferedWriter(_Sink()), encoding="utf-8", errors="replace")


def _rewind_output():
    os.ftruncate(1, 0)
    os.lseek(1, 0, os.SEEK_SET)


def _fresh_output():
    """Start the printed-output budget (RLIMIT_FSIZE on the output file, fds 1 and 2: one
    open file) afresh: each request, and each loading cell, has the whole of it. What an
    earlier one printed, a buffer that a full file left unwritten included, is dropped: a
    function's own output is its only budget."""
    try:
        _rewind_output()
    except OSError:
        return  # not a file (a worker run by hand): no budget to reset
    for stream in (sys.__stdout__, sys.__stderr__):
        try:
            if stream is not None:
                stream.flush()  # into the emptied file, then dropped below
        except (OSError, ValueError):
            pass
    try:
        _rewind_output()
    except OSError:
        pass


def _guard_imports(packages):
    """Let the notebook's code import only the standard library and `packages` (the judge's
    list, `judge.form.ALLOWED`), as the notebook is told and its public checks hold it to;
    whatever this environment happens to hold besides (torch's own dependencies, the kit's)
    fails as a package the grader lacks would, on every deployment alike.

    Whose import it is comes from the stack, not from the namespace the import names: the
    nearest frame that is neither the import machinery nor the standard library (`importlib`,
    `exec`, `pickle` act for whoever called them) decides. Code the notebook compiled (a
    cell, an `exec` of a string, a function either defined) has no file of its own; torch's,
    numpy's and matplotlib's code does, and their own lazy imports pass. Both ways a module
    is asked for pass here: `builtins.__import__` (every import statement and `__import__`
    call, of a module loaded already or not) and a finder first on `sys.meta_path` (every
    search for a module not loaded yet: `importlib.import_module`, `find_spec`, ...)."""
    import builtins
    import sysconfig

    real = builtins.__import__
    allowed = frozenset(packages) | frozenset(getattr(sys, "stdlib_module_names", ()))
    stdlib = tuple(os.path.join(os.path.realpath(sysconfig.get_paths()[k]), "") for k in ("stdlib", "platstdlib"))

    def acts_for_caller(filename):
        """The import machinery or the standard library: it imports for whoever called it."""
        if filename.startswith("<frozen "):
            return True
        path = os.path.realpath(filename) if os.path.isabs(filename) else ""
        return path.startswith(stdlib) and "-packages" + os.sep not in path

    def notebooks(frame):
        while frame is not None:
            filename = frame.f_code.co_filename
            if not acts_for_caller(filename):
                return not os.path.isabs(filename)  # `<cell 3>`, `<string>`: no file, the notebook's
            frame = frame.f_back
        return False

    def refused(top):
        return ModuleNotFoundError(f"No module named {top!r}", name=top)

    def notebook_import(name, globals=None, locals=None, fromlist=(), level=0):
        top = name.partition(".")[0]
        if level == 0 and top not in allowed and notebooks(sys._getframe(1)):
            raise refused(top)
        return real(name, globals, locals, fromlist, level)

    class NotebookFinder:
        """First on sys.meta_path: refuses the notebook a module not yet loaded; finds nothing."""

        @staticmethod
        def find_spec(name, path=None, target=None):
            top = name.partition(".")[0]
            if top not in allowed and notebooks(sys._getframe(1)):
                raise refused(top)
            return None

    builtins.__import__ = notebook_import
    sys.meta_path.insert(0, NotebookFinder())


def _put_back(done):
    """Undo `Worker._watch`: each (owner, attribute, what it held), last first."""
    for owner, attr, before in reversed(done):
        if isinstance(owner, dict):
            owner[attr] = before
        else:
            setattr(owner, attr, before)


def _tensor_slots(torch, args, kwargs):
    """Where a call's tensor inputs are (("a", index) or ("k", name)), and those tensors in order."""
    slots = [("a", i) for i, a in enumerate(args) if isinstance(a, torch.Tensor)]
    slots += [("k", k) for k, v in kwargs.items() if isinstance(v, torch.Tensor)]
    return slots, [args[i] if kind == "a" else kwargs[i] for kind, i in slots]


def _with_tensors(args, kwargs, slots, tensors):
    """The call's arguments with `tensors` put back in their `slots`."""
    a, k = list(args), dict(kwargs)
    for (kind, i), t in zip(slots, tensors):
        if kind == "a":
            a[i] = t
        else:
            k[i] = t
    return a, k


class Worker:
    def __init__(self):
        import torch

        torch.set_num_threads(1)
        self.torch = torch
        # Made before any student code runs: replacing `_make_counter` (or this
        # module's names) from a cell later changes nothing for this worker.
        self._counter_class = _make_counter(torch)
        self.ns = {"__name__": "__main__", "__builtins__": __builtins__}
        self.rpc = None  # set by serve(): one message to the judge and its answer
        self.check_pipes = lambda: None  # set by serve(): exits (PIPES_LOST) where student code broke them
        self._after_load = None  # the random generators' states once the cells ran (`public`)
        import random

        # Taken before any student code runs, as `_counter_class`: a cell that replaces them
        # (torch.get_rng_state = None) changes nothing for the states `public` restores.
        self._rng = (random.getstate, random.setstate, torch.get_rng_state, torch.set_rng_state)

    def _ask(self, name):
        """One message to the judge about `name` and its answer; an error the judge words raises."""
        rpc = self.rpc

        def ask(message):
            reply = rpc(message)
            if not isinstance(reply, dict) or not reply.get("ok"):
                error = reply.get("error") if isinstance(reply, dict) else None
                raise RuntimeError(str(error) if error else name)  # the judge words it
            return reply

        return ask

    def _proxy(self, name):
        """`name` answered by the judge: the tensors go through the wire, forward and backward."""
        torch = self.torch

        def proxy(*args, **kwargs):
            slots, tensors = _tensor_slots(torch, args, kwargs)
            named = [v for v in [*args, *kwargs.values()] if isinstance(v, torch.device)]
            # where the result goes: the inputs' device, else the one the call names (the judge computes on its CPU)
            device = tensors[0].device if tensors else named[0] if named else torch.device("cpu")

            def rebuilt(ts):
                return _with_tensors(args, kwargs, slots, ts)

            ask = self._ask(name)

            class Call(torch.autograd.Function):
                @staticmethod
                def forward(ctx, *ts):
                    ctx.save_for_backward(*ts)
                    a, k = rebuilt([t.detach() for t in ts])
                    value = ask({"op": "callback", "name": name, "args": a, "kwargs": k})["value"]
                    if isinstance(value, list):
                        return tuple(v.to(device) for v in value)
                    return value.to(device)

                @staticmethod
                def backward(ctx, *grads):
                    ts = ctx.saved_tensors
                    a, k = rebuilt([t.detach() for t in ts])
                    got = ask({"op": "callback", "name": name, "args": a, "kwargs": k, "grad_outputs": list(grads)})[
                        "grads"
                    ]
                    return tuple(None if g is None else g.to(t.device, t.dtype) for g, t in zip(got, ts))

            return Call.apply(*tensors)

        proxy.__name__ = name
        return proxy

    def _watch(self, names):
        """Stand the judge in, for this call, for each watched name (`judge.watch`): a function
        of the notebook's namespace (`attention`), or an attribute reached from it by a dotted
        path (`nn.Linear.forward`, `F.linear`). A function is answered as `_proxy` answers one,
        forward and backward; a method of a class (an attribute of a class that is a plain
        function) sends its module's parameters and buffers too (`_method_proxy`). Returns
        [(owner, attribute, what it held)] to put back after the call."""
        done = []
        try:
            for name in names:
                if not isinstance(name, str) or not all(p.isidentifier() for p in name.split(".")):
                    raise LookupError(f"cannot watch {name!r}")
                *path, attr = name.split(".")
                if not path:
                    if attr not in self.ns:
                        raise NameError(f"name {attr!r} is not defined")
                    done.append((self.ns, attr, self.ns[attr]))
                    self.ns[attr] = self._proxy(name)
                    continue
                owner = self.ns[path[0]] if path[0] in self.ns else None
                if owner is None:
                    raise NameError(f"name {path[0]!r} is not defined")
                for part in path[1:]:
                    owner = getattr(owner, part)
                before = (
                    owner.__dict__[attr] if isinstance(owner, type) and attr in owner.__dict__ else getattr(owner, attr)
                )
                method = (
                    isinstance(owner, type) and callable(before) and not isinstance(before, (staticmethod, classmethod))
                )
                done.append((owner, attr, before))
                setattr(owner, attr, self._method_proxy(name) if method else self._proxy(name))
        except BaseException:
            _put_back(done)
            raise
        return done

    def _method_proxy(self, name):
        """A method answered by the judge (forward only): the call's arguments after `self`, and
        `self`'s parameters and persistent buffers ({name: tensor}, `_state_entries`) as `state`."""
        torch = self.torch
        ask = self._ask(name)

        def method(module, *args, **kwargs):
            state = {}
            if isinstance(module, torch.nn.Module):
                params, buffers = _state_entries(module, torch)
                state = {n: v.detach() for n, v in {**params, **buffers}.items()}
            slots, tensors = _tensor_slots(torch, args, kwargs)
            device = tensors[0].device if tensors else torch.device("cpu")

            class Call(torch.autograd.Function):
                @staticmethod
                def forward(ctx, *ts):
                    a, k = _with_tensors(args, kwargs, slots, [t.detach() for t in ts])
                    value = ask({"op": "callback", "name": name, "args": a, "kwargs": k, "state": state})["value"]
                    if isinstance(value, list):
                        return tuple(v.to(device) for v in value)
                    return value.to(device)

                @staticmethod
                def backward(ctx, *grads):
                    raise RuntimeError(f"{name}: the grader answers it forward only (no gradients through it)")

            return Call.apply(*tensors)

        method.__name__ = name.rpartition(".")[2]
        return method

    def _module_proxy(self, name):
        """The graded class `name` answered by the judge: an nn.Module subclass with the
        reference's parameters (names, shapes, initial values: the judge's) and submodules
        (each one a part of the same kind, with the reference submodule's plain attributes),
        whose forward and backward, and those of each submodule, the judge computes from
        the inputs and the current parameters."""
        torch = self.torch
        nn = torch.nn
        ask = self._ask(name)

        def forward(self, *args, **kwargs):
            built, path, names = object.__getattribute__(self, "_stand_in")
            params = [self.get_parameter(n) for n in names]
            slots, tensors = _tensor_slots(torch, args, kwargs)
            first = tensors or params
            device = first[0].device if first else torch.device("cpu")
            n_in = len(tensors)

            def message(ts):
                a, k = _with_tensors(args, kwargs, slots, [t.detach() for t in ts[:n_in]])
                state = {n: p.detach() for n, p in zip(names, ts[n_in:])}
                return {
                    "op": "callback",
                    "name": name,
                    "kind": "forward",
                    "construct": built,
                    "path": path,
                    "params": state,
                    "args": a,
                    "kwargs": k,
                }

            class Call(torch.autograd.Function):
                @staticmethod
                def forward(ctx, *ts):
                    ctx.save_for_backward(*ts)
                    value = ask(message(ts))["value"]
                    if isinstance(value, list):
                        return tuple(v.to(device) for v in value)
                    return value.to(device)

                @staticmethod
                def backward(ctx, *grads):
                    ts = ctx.saved_tensors
                    reply = ask(dict(message(ts), grad_outputs=list(grads)))
                    got = list(reply["grads"])[:n_in] + [None] * (n_in - len(reply["grads"]))
                    got += [reply["param_grads"].get(n) for n in names]
                    return tuple(None if g is None else g.to(t.device, t.dtype) for g, t in zip(got, ts))

            return Call.apply(*tensors, *params)

        kinds = {}

        def part(kind, of_torch):
            """A submodule of the stand-in: the reference's submodule class name, answered by the
            judge; one of torch.nn's classes (`of_torch`, the judge's word) a subclass of it, built
            without its __init__ (the judge sends the parameters and plain attributes)."""
            base = getattr(nn, kind, None) if of_torch else None
            if not (isinstance(base, type) and issubclass(base, nn.Module)):
                base = nn.Module
            key = (kind, base)
            if key not in kinds:
                kinds[key] = type(kind, (base,), {"forward": forward, "__module__": "__main__"})
            m = kinds[key].__new__(kinds[key])
            nn.Module.__init__(m)
            return m

        def init(self, *args, **kwargs):
            nn.Module.__init__(self)
            built = {"args": list(args), "kwargs": dict(kwargs)}
            reply = ask({"op": "callback", "name": name, "kind": "construct", **built})
            everything = list(reply["params"])
            modules = {"": self}
            for path, info in reply["parts"].items():  # parents before their children
                m = self
                if path:
                    *up, leaf = path.split(".")
                    m = part(info["type"], info.get("torch") is True)
                    modules[".".join(up)].add_module(leaf, m)
                    modules[path] = m
                prefix = path + "." if path else ""
                names = [n[len(prefix) :] for n in everything if n.startswith(prefix)]
                object.__setattr__(m, "_stand_in", (built, path, names))
                for attr, value in info["attrs"].items():
                    if not hasattr(nn.Module, attr) and attr not in m.__dict__:
                        object.__setattr__(m, attr, value)
            for dotted, value in reply["params"].items():
                owner, _, leaf = dotted.rpartition(".")
                modules[owner].register_parameter(leaf, nn.Parameter(value))

        return type(name, (nn.Module,), {"__init__": init, "forward": forward, "__module__": "__main__"})

    # -- load -----------------------------------------------------------
    def load(self, req):
        from autograder.worker import plots

        plots.install()  # plots are not drawn here (see plots)
        if isinstance(req.get("packages"), list):
            _guard_imports([p for p in req["packages"] if isinstance(p, str)])
        report = []
        provided = req.get("provided") or ""
        if provided:
            exec(compile(provided, "<provided>", "exec"), self.ns)
        printed = sys.stdout, sys.stderr
        try:
            self._run_cells(req["cells"], report)
        finally:
            sys.stdout, sys.stderr = printed
        if provided:
            # Provided functions are the reference's, whatever the cells redefined.
            exec(compile(provided, "<provided>", "exec"), self.ns)
        names = sorted(k for k, v in self.ns.items() if callable(v) and not k.startswith("_"))
        self._after_load = self._random_states()
        return {"cells": report, "names": names}

    def _random_states(self):
        """The random generators' states: Python's and torch's CPU one (through the functions
        taken at start, `_rng`), numpy's where imported and still readable. Only a matter of
        fidelity: nothing a cell did to them may end the load."""
        getstate, _, get_torch, _ = self._rng
        states = {"random": getstate(), "torch": get_torch()}
        try:
            states["numpy"] = sys.modules["numpy"].random.get_state()
        except Exception:  # noqa: BLE001 - not imported, or replaced by a cell: left as it is
            pass
        return states

    def _restore_random(self, states):
        _, setstate, _, set_torch = self._rng
        setstate(states["random"])
        set_torch(states["torch"])
        try:
            sys.modules["numpy"].random.set_state(states["numpy"])
        except Exception:  # noqa: BLE001 - not imported at load, or replaced since: left as it is
            pass

    def _run_cells(self, cells, report):
        """Run the notebook's cells in order, each with its prints discarded (`_Sink`) and the
        output file's budget afresh (what a cell writes to fd 1 itself), into `report`."""
        for cell in cells:
            idx = cell["index"]
            try:  # the judge reads this if the cell kills the worker, and skips that cell
                with open(os.environ.get("KIT_PROGRESS", "progress"), "w") as f:
                    f.write(str(idx))
            except OSError:
                pass
            _fresh_output()
            sys.stdout, sys.stderr = _sink(), _sink()  # anew each cell: one may close or replace them
            try:
                code = compile(cell["source"], f"<cell {idx}>", "exec")
                exec(code, self.ns)
                report.append({"index": idx, "ok": True})
            except BaseException as exc:  # noqa: BLE001 - a cell may raise anything, SystemExit included
                report.append({"index": idx, "ok": False, "error": _error(exc)})
            self.check_pipes()  # right after the cell that broke them: the judge skips that one

    # -- public tests -----------------------------------------------------
    def public(self, req):
        """Run otter exception-style public tests against the notebook's globals.

        Each test file's `@test_case` functions get their arguments by name
        from the notebook's globals (`env` gets the globals), as otter does.
        The tests are public: running them here, beside the student's code, is
        the self-check `grader.check_all()` gives, not grading.
        """
        import inspect
        import types

        # As on a fresh load (`check`): the random generators as the cells left them, whatever
        # the graded calls before drew (the judge runs these after its last verdict call)
        if self._after_load is not None:
            self._restore_random(self._after_load)
        results = []
        for test in req["tests"]:
            cases = []

            def test_case(*_a, **_k):
                if _a and callable(_a[0]) and not _k:  # bare @test_case
                    cases.append(_a[0])
                    return _a[0]

                def wrap(fn):
                    cases.append(fn)
                    return fn

                return wrap

            fake = types.ModuleType("otter.test_files")
            fake.test_case = test_case
            saved = {k: sys.modules.get(k) for k in ("otter", "otter.test_files")}
            sys.modules["otter"] = types.ModuleType("otter")
            sys.modules["otter.test_files"] = fake
            outcome = {"name": test["name"], "cases": []}
            try:
                exec(compile(test["source"], f"<public test {test['name']}>", "exec"), {"__name__": "public_test"})
            except BaseException as exc:  # noqa: BLE001
                outcome["error"] = _error(exc)
            finally:
                for k, v in saved.items():
                    if v is None:
                        sys.modules.pop(k, None)
                    else:
                        sys.modules[k] = v
            for fn in cases:
                params = inspect.signature(fn).parameters
                kwargs = {p: (self.ns if p == "env" else self.ns.get(p)) for p in params}
                try:
                    fn(**kwargs)
                    outcome["cases"].append({"name": fn.__name__, "ok": True})
                except BaseException as exc:  # noqa: BLE001
                    outcome["cases"].append({"name": fn.__name__, "ok": False, "error": _error(exc)})
            results.append(outcome)
        return {"ok": True, "results": results}

    # -- call -----------------------------------------------------------
    def call(self, req):
        torch = self.torch
        target = req["target"]
        fn = self.ns.get(target)
        if fn is None:
            return {
                "ok": False,
                "error": {"type": "NameError", "message": f"name '{target}' is not defined", "where": None},
            }
        if not callable(fn):
            return {
                "ok": False,
                "error": {"type": "TypeError", "message": f"'{target}' is not callable", "where": None},
            }
        args, kwargs = req.get("args", []), req.get("kwargs", {})
        reply = {"ok": True}
        # Grad mode is global and a notebook cell may have turned it off; the
        # suites measure gradients through autograd, so every call starts with
        # it on (the function itself may still turn it off).
        torch.set_grad_enabled(True)
        counter = self._counter_class() if req.get("trace") else None
        isolate = [n for n in (req.get("isolate") or []) if isinstance(n, str) and n != target]
        classes = set(req.get("stand_in_classes") or [])
        saved = {n: self.ns[n] for n in isolate if n in self.ns}
        for n in isolate:
            self.ns[n] = self._module_proxy(n) if n in classes else self._proxy(n)
        watched = []
        try:
            try:
                watched = self._watch(req.get("watch") or [])
            except Exception as exc:  # noqa: BLE001 - a watched name the notebook lacks, or its code broke
                return {"ok": False, "error": _error(exc)}
            given = []
            for item in req.get("call_with") or []:
                if isinstance(item, dict) and isinstance(item.get("proxy"), str):
                    given.append(self._proxy(item["proxy"]))
                elif isinstance(item, dict) and callable(self.ns.get(item.get("own"))):
                    given.append(self.ns[item["own"]])
                else:
                    name = item.get("own") if isinstance(item, dict) else item
                    return {
                        "ok": False,
                        "error": {"type": "NameError", "message": f"name {name!r} is not defined", "where": None},
                    }
            return self._call(req, fn, given + list(args), kwargs, reply, counter)
        finally:
            _put_back(watched)
            for n in isolate:
                if n in saved:
                    self.ns[n] = saved[n]
                else:
                    self.ns.pop(n, None)

    def _call(self, req, fn, args, kwargs, reply, counter):
        torch = self.torch
        try:
            params = {}
            if req.get("construct") is not None:
                c = req["construct"]
                # Every construction draws the same numbers: a parameter the judge does not load
                # (a bias the contract has not) and dropout then hold the same values in every
                # call of a case, so a property compared across calls (causality, padding) sees
                # the student's module, never two draws of it.
                torch.manual_seed(CONSTRUCT_SEED)
                obj = fn(*c.get("args", []), **c.get("kwargs", {}))
                if isinstance(obj, torch.nn.Module):
                    to = req.get("to") or {}
                    dtype = getattr(torch, to["dtype"]) if to.get("dtype") else None
                    obj = obj.to(device=req.get("device", "cpu"), dtype=dtype)
                    params, buffers = _state_entries(obj, torch)
                    reply["params"] = _tensor_table(params)
                    reply["buffers"] = _tensor_table(buffers)
                    if req.get("state") is not None:
                        state = req["state"]
                        missing = sorted(set(state) - set(params))
                        if missing:
                            raise AttributeError(
                                f"the module has no parameter {missing[0]!r} (its parameters: {sorted(params)})"
                            )
                        with torch.no_grad():
                            for name, value in state.items():
                                if tuple(params[name].shape) != tuple(value.shape):
                                    raise ValueError(
                                        f"parameter {name!r} has shape {tuple(params[name].shape)}, expected {tuple(value.shape)}"
                                    )
                                params[name].copy_(value)
                if not req.get("invoke", True):
                    reply["value"] = None
                    return reply
                fn = obj
            if counter is not None:
                with counter:
                    value = fn(*args, **kwargs)
            else:
                value = fn(*args, **kwargs)
        except BaseException as exc:  # noqa: BLE001
            return {"ok": False, "error": _error(exc)}
        reply["value"] = value
        if counter is not None:
            reply["op_count"] = counter.count
            reply["forbidden_seen"] = sorted(counter.forbidden)
        if req.get("cotangents") is not None:
            reply["grads"] = self._grads(value, req["cotangents"], args, kwargs, params)
        if req.get("return_inputs"):  # the judge compares them with what it sent
            reply["inputs_after"] = [a.detach() for a in flat_tensors([args, list(kwargs.values())])]
        return reply

    def _grads(self, value, cotangents, args, kwargs, params):
        outs = flat_tensors(value)
        inputs = [t for t in flat_tensors([args, list(kwargs.values())]) if t.requires_grad]
        names = list(params)
        leaves = inputs + [params[n] for n in names]
        pairs = [(o, c) for o, c in zip(outs, cotangents) if c is not None]
        # its own reasons as a catalog key and integer fields (the judge says them), never words
        if len(outs) < len(cotangents):
            return {"error_key": "grads_output_count", "fields": {"n": len(cotangents), "got": len(outs)}}
        if not any(o.requires_grad for o, _ in pairs):
            return {"error_key": "grads_not_connected", "fields": {}}
        try:
            live = [(o, c) for o, c in pairs if o.requires_grad]
            grads = vjp([o for o, _ in live], leaves, [c for _, c in live])
        except BaseException as exc:  # noqa: BLE001
            return {"error": f"{type(exc).__name__}: {str(exc)[:MESSAGE_CHARS]}"}
        return {"inputs": list(grads[: len(inputs)]), "params": dict(zip(names, grads[len(inputs) :]))}


def _state_entries(module, torch):
    """({name: Parameter}, {name: persistent buffer}) of a module and its submodules: the
    entries its state_dict holds, as load_state_dict matches them by name (a buffer
    registered with persistent=False is no entry). Read from the modules' own
    `_parameters`/`_buffers`/`_modules` dicts and Parameter attributes, never through
    methods a class can override (`named_parameters`, `state_dict`, `named_modules`,
    `__getattr__`), so a module cannot hide an entry it created."""
    params, buffers, seen = {}, {}, set()

    def walk(m, prefix, depth):
        if id(m) in seen or depth > 16:
            return
        seen.add(id(m))
        own = object.__getattribute__(m, "__dict__")
        found = own.get("_parameters")
        for name, p in dict.items(found) if isinstance(found, dict) else ():
            if isinstance(p, torch.nn.Parameter):
                params.setdefault(prefix + str(name), p)
        for name, v in dict.items(own):
            if isinstance(v, torch.nn.Parameter):
                params.setdefault(prefix + str(name), v)
        found, transient = own.get("_buffers"), own.get("_non_persistent_buffers_set")
        transient = set.copy(transient) if isinstance(transient, set) else set()
        for name, b in dict.items(found) if isinstance(found, dict) else ():
            if isinstance(b, torch.Tensor) and name not in transient:
                buffers.setdefault(prefix + str(name), b)
        subs = own.get("_modules")
        for name, sub in dict.items(subs) if isinstance(subs, dict) else ():
            if isinstance(sub, torch.nn.Module):
                walk(sub, f"{prefix}{name}.", depth + 1)

    walk(module, "", 0)
    return params, buffers


def _tensor_table(tensors):
    """{name: {"shape", "dtype", "device"}} of named tensors: what the judge reads of a module's state."""
    return {
        n: {"shape": list(v.shape), "dtype": str(v.dtype).replace("torch.", ""), "device": str(v.device)}
        for n, v in tensors.items()
    }


def _make_counter(torch):
    from torch.overrides import TorchFunctionMode

    class Counter(TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.count = 0
            self.forbidden = set()

        def __torch_function__(self, func, types, args=(), kwargs=None):
            self.count += 1
            name = getattr(func, "__name__", "")
            if name in FORBIDDEN:
                self.forbidden.add(name)
            return func(*args, **(kwargs or {}))

    return Counter


def _limit_cpu(seconds):
    """Lower this process's soft RLIMIT_CPU to `seconds` from now (the hard limit stays)."""
    if not seconds:
        return
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    want = int(usage.ru_utime + usage.ru_stime + seconds) + 1
    if hard != resource.RLIM_INFINITY:
        want = min(want, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (want, hard))


def _cap_memory(limit, rpc):
    """A call the judge capped (`sandbox.memcap`): lower this process's hard RLIMIT_DATA to
    `limit` bytes (no process raises a hard limit again) and ask the judge to read it back
    before the call runs. None to go on; else the reply that ends the call (the judge's words)."""
    if limit is None:
        return None
    import resource

    try:
        resource.setrlimit(resource.RLIMIT_DATA, (int(limit), int(limit)))
    except (OSError, ValueError) as exc:
        return {"ok": False, "error": _error(exc)}
    answer = rpc({"op": "callback", "kind": "memory_cap"})
    if isinstance(answer, dict) and answer.get("ok"):
        return None
    error = answer.get("error") if isinstance(answer, dict) else None
    return {"ok": False, "error": {"type": "MemoryError", "message": str(error or "memory cap"), "where": None}}


def _write(fd_out, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd_out, view) :]


def _pipe_ids(fd_in, fd_out):
    return tuple((st.st_dev, st.st_ino) for st in (os.fstat(fd_in), os.fstat(fd_out)))


def _check_pipes(fd_in, fd_out, ids):
    """End the worker (PIPES_LOST) unless both descriptors are still the
    judge's pipes and no byte waits on the request pipe: whenever this runs,
    the judge is waiting for this worker's answer and has sent nothing, so a
    waiting byte was written by student code (through /proc/self/fd)."""
    try:
        ok = _pipe_ids(fd_in, fd_out) == ids and not select.select([fd_in], [], [], 0)[0]
    except (OSError, ValueError):
        ok = False
    if not ok:
        os._exit(PIPES_LOST)


def _rpc(rfile, fd_out, message, check=lambda: None):
    """Ask the judge during a call (it stands in for a graded function) and wait for its answer."""
    check()
    _write(fd_out, wire.encode(message))
    return wire.decode(wire.read_body(rfile.read, 1 << 34), device=None, max_header=None)


def serve(fd_in, fd_out):
    rfile = os.fdopen(fd_in, "rb", buffering=0)
    ids = _pipe_ids(fd_in, fd_out)

    def check():
        _check_pipes(fd_in, fd_out, ids)

    worker = None
    while True:
        try:
            body = wire.read_body(rfile.read, 1 << 34)
        except EOFError:
            return
        req = wire.decode(body, device=None, max_header=None)  # the judge's own request
        op = req.get("op")
        _limit_cpu(req.get("cpu_seconds"))
        if op == "exit":
            return
        _fresh_output()  # each request prints within the whole budget, whatever came before
        if worker is None:
            worker = Worker()
            worker.rpc = lambda message: _rpc(rfile, fd_out, message, check)
            worker.check_pipes = check
        if op == "load":
            reply = worker.load(req)
        elif op == "public":
            reply = worker.public(req)
        elif op == "ready":  # no student code yet: the judge reads a bare worker's size (`sandbox.memcap`)
            reply = {"ok": True}
        elif op == "call":
            device = req.get("device", "cpu")
            req = wire.decode(body, device=device, max_header=None)  # inputs where the judge asked
            refused = _cap_memory(req.get("data_limit"), worker.rpc)
            reply = refused if refused is not None else worker.call(req)
        else:
            reply = {"ok": False, "error": {"type": "ProtocolError", "message": f"unknown op {op!r}", "where": None}}
        if isinstance(reply, dict):
            # Threads running Python code (threading or _thread), not torch's or
            # CUDA's native ones: the judge retires a worker whose call left
            # more than loading did.
            reply["py_threads"] = len(sys._current_frames())
        try:
            data = wire.encode(reply)
        except BaseException as exc:  # noqa: BLE001 - e.g. a tensor subclass that breaks on serialisation
            data = wire.encode({"ok": False, "error": _error(exc)})
        check()  # a reply on a pipe the student's code broke would reach no one, or the wrong request
        _write(fd_out, data)

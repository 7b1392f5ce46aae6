"""No stand-in answers for the part being graded (issue 33): while the judge grades a target,
it offers no stand-in whose reference can run the target's reference, neither through a
submodule path of a stood-in class (a TransformerLM's `blocks.0`, a DecoderBlock's `ffn`) nor
through the call graph of the references (a stood-in `dot_attention` runs the reference
`masked_softmax`). Worked out here independently of `stand_in.reaching`: class paths from real
builds of every graded class, calls from the references' source (every name and attribute
their syntax mentions), for every target of every graded assignment."""

import ast
import importlib
import inspect
import pkgutil

import pytest
import torch

from autograder import config
from autograder.judge.stand_in import StandIn, graded_classes, graded_functions
from autograder.private import solutions

CFG = config.load()
ASSIGNMENTS = [a for a in CFG.assignments if graded_functions(a) or graded_classes(a)]
# Constructor arguments for a real build of every graded class (a new class fails
# test_every_graded_class_is_built until it is listed here).
BUILD = {
    "MultiHeadAttention": (8, 2),
    "Encoder": (7, 4, 6),
    "AttentionDecoder": (7, 4, 6, 5),
    "FeedForward": (8, 12),
    "DecoderBlock": (8, 2, 12),
    "TransformerLM": (9, 8, 2, 12, 2),
    "GroupedQueryAttention": (8, 4, 2),
}


def _modules():
    return [importlib.import_module(f"{solutions.__name__}.{m.name}") for m in pkgutil.iter_modules(solutions.__path__)]


def _source_calls():
    """{(module, name): names its source mentions} for every top-level def and class of every
    reference module, each mention resolved in that module (by name: an import of another
    reference module's name resolves to that module's def)."""
    defs, mentions = {}, {}
    for module in _modules():
        for node in ast.parse(inspect.getsource(module)).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                said = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
                said |= {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}
                if isinstance(node, ast.ClassDef):
                    said -= {node.name}
                mentions[(module.__name__, node.name)] = said
                defs[(module.__name__, node.name)] = getattr(module, node.name)
    by_object = {id(obj): key for key, obj in defs.items()}
    graph = {}
    for (mod, name), said in mentions.items():
        ns = vars(importlib.import_module(mod))
        graph[(mod, name)] = {by_object[id(ns[s])] for s in said if s in ns and id(ns[s]) in by_object}
    return graph


GRAPH = _source_calls()


def _runs_by_source(assignment, name, target):
    """Whether `name`'s reference mentions `target`'s, directly or through other references."""
    module = f"{solutions.__name__}.{assignment}"
    start, goal = (module, name), _key(assignment, target)
    seen, todo = set(), [start]
    while todo:
        key = todo.pop()
        if key in seen:
            continue
        seen.add(key)
        if key == goal:
            return True
        todo.extend(GRAPH.get(key, ()))
    return False


def _key(assignment, name):
    obj = getattr(importlib.import_module(f"{solutions.__name__}.{assignment}"), name)
    return (obj.__module__, obj.__name__)


def _holds(assignment, name, target):
    """The paths of a real build of graded class `name` whose submodule is an instance of the
    graded class `target` (none for a function on either side)."""
    classes = graded_classes(assignment)
    if name not in classes or target not in classes:
        return []
    with torch.device("meta"):
        built = classes[name](*BUILD[name])
    return [path for path, m in built.named_modules() if isinstance(m, classes[target])]


def _violations(assignment, offered):
    """(target, stand-in, how) for every stand-in `offered(target)` lists that reaches target."""
    out = []
    for target in [*graded_functions(assignment), *graded_classes(assignment)]:
        for name in offered(target):
            for path in _holds(assignment, name, target):
                out.append((target, name, f"path {path!r}"))
            if _runs_by_source(assignment, name, target):
                out.append((target, name, "calls"))
    return out


def _old_rule(stand_in):
    """What the judge offered before issue 33: every other graded name."""
    return lambda target: sorted(n for n in [*stand_in.functions, *stand_in.classes] if n != target)


def test_every_graded_class_is_built():
    assert {n for a in ASSIGNMENTS for n in graded_classes(a)} <= set(BUILD)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_no_offered_stand_in_reaches_the_target_by_any_path_or_call(assignment):
    s = StandIn(assignment, CFG)
    assert _violations(assignment, s.allowed) == []


def test_the_old_rule_offered_stand_ins_that_reach_the_target():
    """The check above fails on what the judge offered before: both ways, in the two
    assignments the issue names."""
    tb = _violations("transformer_block", _old_rule(StandIn("transformer_block", CFG)))
    assert ("DecoderBlock", "TransformerLM", "path 'blocks.0'") in tb
    assert ("FeedForward", "DecoderBlock", "path 'ffn'") in tb
    assert ("FeedForward", "TransformerLM", "path 'blocks.1.ffn'") in tb
    assert ("positional_encoding", "TransformerLM", "calls") in tb
    classic = _violations("classic_attention", _old_rule(StandIn("classic_attention", CFG)))
    assert ("masked_softmax", "dot_attention", "calls") in classic


def test_only_what_reaches_the_target_is_withheld():
    """Every other graded name is still offered: the stand-ins that charge each bug once stay."""
    for assignment in ASSIGNMENTS:
        s = StandIn(assignment, CFG)
        for target, offered in ((t, s.allowed(t)) for t in [*s.functions, *s.classes]):
            withheld = set(_old_rule(s)(target)) - set(offered)
            assert all(_runs_by_source(assignment, n, target) for n in withheld), (target, withheld)
    tb = StandIn("transformer_block", CFG)
    assert tb.allowed("TransformerLM") == ["DecoderBlock", "FeedForward", "next_token_loss", "positional_encoding"]
    assert tb.allowed("DecoderBlock") == ["FeedForward", "next_token_loss", "positional_encoding"]
    assert tb.allowed("FeedForward") == ["next_token_loss", "positional_encoding"]

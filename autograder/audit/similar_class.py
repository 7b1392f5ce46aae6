"""A synthetic class for measuring the similar-submissions check (`autograder.report.similar`).

`disguise(source, rng)` is what a student who copies does to hide it: the locals renamed
(consistently), two neighbouring statements that do not depend on each other swapped, the
docstring and comments rewritten, the layout changed (the code is printed again from its
tree). The honest students come from an assignment's own synthetic class, in its folder
(`layout.SIMILAR_CLASS`, found with `declarations.similar_class`): its graded `FUNCTIONS`
and `honest_student(rng)`, one student's solutions of them, each written from a student's
own choices of how to write every step and names of their own, so independent solutions of a
five-line function look as alike as they do in a real class. `honest_class` and
`planted_class` build a class from it.
"""

import ast

# a student's (or a copier's) own comments
COMMENTS = (
    "scale by sqrt(d_k)",
    "shape (..., T_q, T_k)",
    "apply the mask",
    "softmax over the keys",
    "weighted sum of the values",
    "rows with no allowed key get zeros",
    "see the lecture notes",
    "TODO: check shapes",
    "compute attention",
    "b, t, d",
)


def pick(rng, options):
    return options[rng.randrange(len(options))]


def honest_class(students, n, rng):
    """{id: {function: source}}: `n` students of `students` (an assignment's synthetic class)
    writing each function their own way."""
    return {f"s{i:03d}": students.honest_student(rng) for i in range(n)}


# -- what a copier does ------------------------------------------------------------------------
class _Rename(ast.NodeTransformer):
    def __init__(self, mapping):
        self.mapping = mapping

    def visit_Name(self, node):
        if node.id in self.mapping:
            node.id = self.mapping[node.id]
        return node


def _swap_neighbours(body, rng):
    """Swap one pair of neighbouring assignments where neither reads what the other writes."""
    spots = []
    for i in range(len(body) - 1):
        a, b = body[i], body[i + 1]
        if isinstance(a, ast.Assign) and isinstance(b, ast.Assign):
            written_a = {n.id for t in a.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            written_b = {n.id for t in b.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            read_a = {n.id for n in ast.walk(a.value) if isinstance(n, ast.Name)}
            read_b = {n.id for n in ast.walk(b.value) if isinstance(n, ast.Name)}
            if not (written_a & read_b) and not (written_b & read_a) and not (written_a & written_b):
                spots.append(i)
    if spots:
        i = pick(rng, spots)
        body[i], body[i + 1] = body[i + 1], body[i]


def _disguise_function(fn, rng):
    params = {a.arg for a in fn.args.args + fn.args.kwonlyargs}
    local = sorted({n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)} - params)
    mapping = {name: f"{pick(rng, ('tmp', 'val', 'my', 'x', 'res'))}_{name[:2]}{k}" for k, name in enumerate(local)}
    _Rename(mapping).visit(fn)
    if fn.body and isinstance(fn.body[0], ast.Expr) and isinstance(getattr(fn.body[0], "value", None), ast.Constant):
        fn.body = fn.body[1:] or [ast.Pass()]
    _swap_neighbours(fn.body, rng)


def disguise(source, rng):
    """`source` as a copier hands it in: in each function (and method) the locals renamed,
    the docstring dropped, two independent neighbours swapped; then printed again with
    comments of the copier's own."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            _disguise_function(node, rng)
    out = []
    for line in ast.unparse(ast.fix_missing_locations(tree)).split("\n"):
        if line.strip() and rng.random() < 0.4:
            indent = line[: len(line) - len(line.lstrip())]
            out.append(f"{indent}# {pick(rng, COMMENTS)}")
        out.append(line)
    return "\n".join(out) + "\n"


def planted_class(students, n, copies, rng, own=0):
    """({id: {function: source}}, {(copier, source id)}): `n - copies` honest students of
    `students` (an assignment's synthetic class), and `copies` students each handing in a
    disguised copy of one honest student's functions but `own` of them, which the copier
    writes on their own."""
    honest = honest_class(students, n - copies, rng)
    ids = sorted(honest)
    out = dict(honest)
    planted = set()
    for k in range(copies):
        victim = pick(rng, ids)
        copier = f"c{k:03d}"
        mine = set(rng.sample(students.FUNCTIONS, own))
        fresh = students.honest_student(rng)
        out[copier] = {f: fresh[f] if f in mine else disguise(src, rng) for f, src in honest[victim].items()}
        planted.add(tuple(sorted((copier, victim))))
    return out, planted

"""The class's numbers, per assignment, from the submissions `load` read.

Plain arithmetic on plain data (no words, no figures), so the tests can check
each figure against one computed by hand:
- scores: count, mean, median, standard deviation (of the population), the
  share at 0 and at full marks, over the submissions graded in full or in part;
- per question: mean, full-credit rate, difficulty (the mean of score / max)
  and discrimination: the Pearson correlation of the question's score with the
  rest of the total (total minus that question), as PrairieLearn reports it;
  None ("n/a") with fewer than 3 submissions or no spread on either side;
- per check (question, test function): how many graded submissions it failed
  (`failed` > 0: any scored case failed), of how many, sorted by share;
- likely causes: counted once per submission, by catalog key (so the same cause
  counts alike in every language), by text where there is no key; their share,
  like a check's, is of the graded submissions that carry check data.
"""

import math
import statistics
from collections import Counter
from dataclasses import dataclass, field

EPS = 1e-9
MIN_FOR_CORRELATION = 3


@dataclass
class Summary:
    count: int
    mean: float | None
    median: float | None
    sd: float | None
    at_zero: float | None  # shares, 0..1
    at_full: float | None
    maximum: float
    values: list


@dataclass
class QuestionStats:
    name: str
    maximum: float
    count: int
    mean: float | None
    full_credit: float | None
    difficulty: float | None
    discrimination: float | None
    values: list


@dataclass
class CheckStats:
    question: str
    check: str
    failing: int
    of: int

    @property
    def share(self):
        return self.failing / self.of if self.of else 0.0


@dataclass
class CauseStats:
    key: str | None
    text: str
    count: int
    share: float
    questions: list
    ids: list
    seen: list = field(default_factory=list)  # [(language, id, cause record)] by id, to word it


@dataclass
class AssignmentStats:
    name: str | None
    submissions: list  # every submission placed in this assignment, by id
    scored: list  # those in the statistics
    summary: Summary
    questions: list
    checks: list  # every check run, most failed first
    causes: list

    @property
    def left_out(self):
        return len(self.submissions) - len(self.scored)


def pearson(xs, ys):
    """The Pearson correlation of two equal-length lists, or None where it is undefined."""
    n = len(xs)
    if n < MIN_FOR_CORRELATION or n != len(ys):
        return None
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    if sxx <= EPS or syy <= EPS:
        return None
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    return max(-1.0, min(1.0, sxy / math.sqrt(sxx * syy)))


def _share(flags):
    return sum(flags) / len(flags) if flags else None


def describe(values, maxima):
    """Summary of scores `values`, each out of its own `maxima` (the same length)."""
    top = Counter(maxima).most_common()
    maximum = max((m for m, c in top if c == top[0][1]), default=0.0)
    if not values:
        return Summary(0, None, None, None, None, None, maximum, [])
    return Summary(
        count=len(values),
        mean=statistics.fmean(values),
        median=statistics.median(values),
        sd=statistics.pstdev(values),
        at_zero=_share([v <= EPS for v in values]),
        at_full=_share([m > 0 and v >= m - EPS for v, m in zip(values, maxima)]),
        maximum=maximum,
        values=list(values),
    )


def _question_order(subs):
    order = []
    for s in subs:
        order += [q for q in s.questions if q not in order]
    return order


def question_stats(scored, name):
    have = [s for s in scored if name in s.questions]
    values = [s.questions[name][0] for s in have]
    maxima = [s.questions[name][1] for s in have]
    if not have:
        return QuestionStats(name, 0.0, 0, None, None, None, None, [])
    rest = [s.score - s.questions[name][0] for s in have]
    return QuestionStats(
        name=name,
        maximum=max(maxima),
        count=len(have),
        mean=statistics.fmean(values),
        full_credit=_share([m > 0 and v >= m - EPS for v, m in zip(values, maxima)]),
        difficulty=statistics.fmean(v / m if m > 0 else 1.0 for v, m in zip(values, maxima)),
        discrimination=pearson(values, rest),
        values=values,
    )


def check_stats(scored, order):
    """Every (question, check) the graded submissions ran, most failed first."""
    with_data = [s for s in scored if s.has_checks]
    seen, failing = [], Counter()
    for s in with_data:
        for c in s.checks:
            ident = (c["question"], c["check"])
            if ident not in seen:
                seen.append(ident)
            if c.get("failed", 0) > 0:
                failing[ident] += 1
    rank, first = {q: n for n, q in enumerate(order)}, {i: n for n, i in enumerate(seen)}
    ranked = sorted(seen, key=lambda i: (-failing[i], rank.get(i[0], len(rank)), first[i]))
    return [CheckStats(q, c, failing[(q, c)], len(with_data)) for q, c in ranked]


def cause_ident(cause):
    return ("key", cause["key"]) if cause.get("key") else ("text", cause["text"])


def cause_stats(scored, order):
    """Likely causes, each counted once per submission, most common first; the share is of
    the graded submissions with check data (as for checks: the ones whose causes are known)."""
    with_data = [s for s in scored if s.has_checks]
    found = {}
    for s in with_data:
        for cause in s.causes:
            ident = cause_ident(cause)
            entry = found.setdefault(ident, {"ids": [], "questions": set(), "seen": []})
            if s.id not in entry["ids"]:
                entry["ids"].append(s.id)
                entry["seen"].append((s.language, s.id, cause))
            entry["questions"] |= {q for q in cause.get("questions", []) if isinstance(q, str)}
    rank = {q: n for n, q in enumerate(order)}
    out = [
        CauseStats(
            key=ident[1] if ident[0] == "key" else None,
            text=e["seen"][0][2]["text"],
            count=len(e["ids"]),
            share=len(e["ids"]) / len(with_data),
            ids=sorted(e["ids"]),
            questions=sorted(e["questions"], key=lambda q: (rank.get(q, len(rank)), q)),
            seen=sorted(e["seen"], key=lambda x: x[1]),
        )
        for ident, e in found.items()
    ]
    return sorted(out, key=lambda c: (-c.count, c.key or "", c.text))


def assignment_stats(name, subs):
    subs = sorted(subs, key=lambda s: s.id)
    scored = [s for s in subs if s.scored and s.questions]
    order = _question_order(scored) or _question_order(subs)
    return AssignmentStats(
        name=name,
        submissions=subs,
        scored=scored,
        summary=describe([s.score for s in scored], [s.max_score for s in scored]),
        questions=[question_stats(scored, q) for q in order],
        checks=check_stats(scored, order),
        causes=cause_stats(scored, order),
    )


def by_assignment(submissions):
    """AssignmentStats of each assignment in the folder, by name (unknown last)."""
    groups = {}
    for s in submissions:
        groups.setdefault(s.assignment, []).append(s)
    names = sorted(n for n in groups if n is not None) + ([None] if None in groups else [])
    return [assignment_stats(n, groups[n]) for n in names]

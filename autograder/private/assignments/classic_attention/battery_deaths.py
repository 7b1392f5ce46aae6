"""Hostile battery cases: every way a worker can end costs the call it was in,
and nothing else (classic attention, whose graded functions are called one at
a time). Signals of every kind (real-time, a number Python has no name for,
SIGSYS, a SIGXCPU the code sends itself, SIGSTOP, the job-control stops),
exit statuses, the worker's pipes closed or flooded, at load and in a graded
call. Each function that dies loses its question; every other question keeps
its marks; never an internal error. Registered into `cases.CASES` on import.

Several deaths share one submission (one per graded function): each question
is judged on its own, and every death ends its worker, so the next function
runs in a fresh one."""

from autograder.audit.hostile.cases import append, case, ipynb, others_of, reference, replace_function
from autograder.private.assignments.classic_attention.battery_cases import (
    CLASSIC,
    CLASSIC_FULL,
    CLASSIC_POINTS,
    CLASSIC_QS,
)

NO_INTERNAL_ERROR = ["internal grader error"]
# what the reference notebook's functions compute, for a function that dies only sometimes or not at all
DOT = (
    "    scores = (encoder_states @ decoder_state.unsqueeze(-1)).squeeze(-1)\n"
    "    weights = masked_softmax(scores, mask, dim=-1)\n"
    "    return (weights.unsqueeze(1) @ encoder_states).squeeze(1), weights\n"
)
GENERAL_SIGNATURE = "(decoder_state, encoder_states, W, mask=None)"
SIGNATURES = {
    "dot_attention": "(decoder_state, encoder_states, mask=None)",
    "general_attention": GENERAL_SIGNATURE,
    "concat_attention": "(decoder_state, encoder_states, W_a, v_a, mask=None)",
    "additive_attention": "(decoder_state, encoder_states, W_a, U_a, v_a, mask=None)",
}
CLOSE_PIPES = (
    "    for fd in map(int, os.listdir('/proc/self/fd')):\n"
    "        if fd > 2:\n"
    "            try:\n"
    "                os.close(fd)\n"
    "            except OSError:\n"
    "                pass\n"
)
FLOOD_PIPES = (
    "    for fd in map(int, os.listdir('/proc/self/fd')):\n"
    "        if fd > 2:\n"
    "            try:\n"
    "                os.write(fd, b'garbage ' * 100000)\n"
    "            except OSError:\n"
    "                pass\n"
)


def _dying(nb, deaths):
    """`nb` with each named function replaced by one that does `body` (after `import os, signal, time`)."""
    for name, body in deaths.items():
        nb = replace_function(nb, name, f"def {name}{SIGNATURES[name]}:\n    import os, signal, time\n{body}")
    return nb


def _lost(*names):
    return dict(
        max_score=CLASSIC_FULL - sum(CLASSIC_POINTS[n] for n in names) + 1e-6,
        questions_lose=list(names),
        questions_keep_full=others_of(CLASSIC_QS, *names),
        must_not_contain=NO_INTERNAL_ERROR,
    )


@case(
    "death_cell_rt_signal",
    "classic attention: a notebook cell sends its own process signal 40 (a real-time "
    "signal with no name) while the notebook loads: the cell is skipped, every question keeps its marks",
    assignment=CLASSIC,
    max_score=CLASSIC_FULL,
    questions_keep_full=list(CLASSIC_QS),
    must_not_contain=NO_INTERNAL_ERROR,
    reason_contains=["crashed with signal 40"],
)
def _():
    return ipynb(append(reference(CLASSIC, demo=False), "import os\nos.kill(os.getpid(), 40)\n"))


@case(
    "death_signals",
    "classic attention: dot_attention sends itself SIGRTMIN+2, general_attention SIGSYS, "
    "concat_attention signal 63 (no name), additive_attention SIGXCPU (its own kill, not the CPU limit)",
    assignment=CLASSIC,
    reason_contains=["crashed with signal 36"],
    **_lost("dot_attention", "general_attention", "concat_attention", "additive_attention"),
)
def _():
    return ipynb(
        _dying(
            reference(CLASSIC, demo=False),
            {
                "dot_attention": "    os.kill(os.getpid(), signal.SIGRTMIN + 2)\n    time.sleep(1)\n",
                "general_attention": "    os.kill(os.getpid(), signal.SIGSYS)\n    time.sleep(1)\n",
                "concat_attention": "    os.kill(os.getpid(), 63)\n    time.sleep(1)\n",
                "additive_attention": "    os.kill(os.getpid(), signal.SIGXCPU)\n    time.sleep(1)\n",
            },
        )
    )


@case(
    "death_stops",
    "classic attention: dot_attention stops its own process (SIGSTOP): ended at once, not at "
    "the wall clock; general_attention sends itself SIGTSTP, SIGTTIN and SIGTTOU, which the kernel discards in "
    "the worker's own session, then answers right",
    assignment=CLASSIC,
    reason_contains=["stopped the process that runs your code with signal 19 (SIGSTOP)"],
    max_seconds=120,
    **_lost("dot_attention"),
)
def _():
    return ipynb(
        _dying(
            reference(CLASSIC, demo=False),
            {
                "dot_attention": "    os.kill(os.getpid(), signal.SIGSTOP)\n" + DOT,
                "general_attention": (
                    "    for s in (signal.SIGTSTP, signal.SIGTTIN, signal.SIGTTOU):\n"
                    "        os.kill(os.getpid(), s)\n"
                    "    scores = ((encoder_states @ W.T) @ decoder_state.unsqueeze(-1)).squeeze(-1)\n"
                    "    weights = masked_softmax(scores, mask, dim=-1)\n"
                    "    return (weights.unsqueeze(1) @ encoder_states).squeeze(1), weights\n"
                ),
            },
        )
    )


@case(
    "death_exits_and_pipes",
    "classic attention: dot_attention calls os._exit(3), general_attention closes "
    "every descriptor >= 3 (its pipes to the judge) and answers, concat_attention floods them with garbage and "
    "answers, additive_attention calls os._exit(0)",
    assignment=CLASSIC,
    reason_contains=["closed or wrote into the pipes between your code and the grader"],
    **_lost("dot_attention", "general_attention", "concat_attention", "additive_attention"),
)
def _():
    return ipynb(
        _dying(
            reference(CLASSIC, demo=False),
            {
                "dot_attention": "    os._exit(3)\n",
                "general_attention": CLOSE_PIPES + "    return decoder_state, decoder_state\n",
                "concat_attention": FLOOD_PIPES + "    return decoder_state, decoder_state\n",
                "additive_attention": "    os._exit(0)\n",
            },
        )
    )

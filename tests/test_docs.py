"""The documentation: README.md is the front door, `docs/` a MkDocs (Material) site.

The site builds in strict mode (a link to a missing page, a missing anchor, or a page
left out of the nav fails the build, and a broken copy shows that it does), the README's
own links lead somewhere, and every `python -m autograder ...` command line quoted in
the README or the site (also `.venv/bin/python -m autograder ...` and
`attention-kit ...`) is one the CLI's own parser accepts, as
`tests/test_deploy_templates.py` checks the deployment templates' lines."""

import contextlib
import importlib.util
import io
import os
import re
import shlex
import shutil
import subprocess
import sys

import pytest
import yaml

from autograder import cli
from conftest import ROOT

DOCS = ROOT / "docs"
CONFIG = DOCS / "mkdocs.yml"
PAGES = DOCS / "pages"
README = ROOT / "README.md"


def _need_mkdocs():
    """mkdocs and the Material theme are in [dev]; under CI a missing one fails, never skips."""
    missing = [name for name in ("mkdocs", "material") if importlib.util.find_spec(name) is None]
    if missing:
        message = f"{' and '.join(missing)} not installed: pip install -e '.[dev]'"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)


def _build(config, site):
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # Material's banner, not a finding
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def _pages():
    return sorted(PAGES.rglob("*.md"))


def test_the_site_is_configured_strict_and_offline():
    config = yaml.safe_load(CONFIG.read_text())
    assert config["docs_dir"] == "pages" and config["strict"] is True
    validation = config["validation"]
    assert validation["nav"]["omitted_files"] == "warn" and validation["nav"]["not_found"] == "warn"
    assert all(
        validation["links"][key] == "warn" for key in ("not_found", "anchors", "absolute_links", "unrecognized_links")
    )
    assert config["theme"]["name"] == "material" and config["theme"]["font"] is False  # no Google Fonts
    assert config.get("plugins", []) == ["search"], "no plugin that downloads (social, privacy, ...)"
    assert f"/docs/{config['site_dir']}/" in (ROOT / ".gitignore").read_text().splitlines()


def test_the_site_builds_strictly(tmp_path):
    _need_mkdocs()
    proc = _build(CONFIG, tmp_path / "site")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    for page in _pages():  # every page became a page of the site (directory URLs)
        rel = page.relative_to(PAGES).with_suffix("")
        assert (
            (tmp_path / "site")
            .joinpath(*(rel.parts[:-1] if rel.name == "index" else rel.parts), "index.html")
            .is_file()
        ), page


def test_a_broken_link_a_missing_anchor_and_an_orphan_page_fail_the_build(tmp_path):
    _need_mkdocs()
    copy = tmp_path / "docs"
    shutil.copytree(DOCS, copy, ignore=shutil.ignore_patterns("site"))
    index = copy / "pages" / "index.md"
    index.write_text(index.read_text() + "\n[gone](no-such-page.md) and [no anchor](layout.md#no-such-heading)\n")
    (copy / "pages" / "orphan.md").write_text("# Not in the nav\n")
    proc = _build(copy / "mkdocs.yml", tmp_path / "site")
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out[-3000:]
    assert "no-such-page.md" in out and "no-such-heading" in out and "orphan.md" in out, out[-3000:]


def _slug(heading):
    """GitHub's anchor for a README heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_the_readme_links_lead_somewhere():
    text = README.read_text()
    anchors = {_slug(h) for h in re.findall(r"^#+ (.+)$", text, re.M)}
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    local = [link for link in links if not re.match(r"[a-z]+://", link)]
    assert local, "the README links into the docs"
    for link in local:
        path, _, anchor = link.partition("#")
        if path:
            assert (ROOT / path).is_file(), link
        else:
            assert anchor in anchors, link
    linked = {(ROOT / link.partition("#")[0]).resolve() for link in local if link.partition("#")[0]}
    assert (PAGES / "index.md").resolve() in linked


# A command line of the kit inside a code span or a code block: what follows the command.
_COMMAND = re.compile(r"(?:^|(?<=[\s;&|(]))(?:(?:\S*/)?python3?\s+-m\s+autograder|attention-kit)(?=\s|$)(.*)$")
_SHELL_END = re.compile(r"\s(?:\|\|?|&&|;|#)(?:\s|$)")  # a pipe, a list, a comment: the command ends there
_REDIRECT = re.compile(r"^(?:\d?>>?|<|&>|\d?>&\d)")


def _code(text):
    """Each code line of a Markdown text: fenced blocks line by line (shell continuations
    joined), inline code spans whole (a span may run over a line break)."""
    fence = re.compile(r"^ *```[^\n]*\n(.*?)^ *```", re.S | re.M)
    for block in fence.findall(text):
        yield from block.replace("\\\n", " ").splitlines()
    for span in re.findall(r"`([^`]+)`", fence.sub("", text)):
        yield " ".join(span.split())


def _words(args_text):
    """The words of a documented command line, as the CLI gets them: placeholders
    (`<name>`, `$VAR`) become a word, a synopsis's `[optional parts]` are kept, its
    `a|b` alternatives take the first and its `X...` repetitions one X; redirections
    and whatever follows a pipe or a list are dropped."""
    text = _SHELL_END.split(f" {args_text} ")[0]
    text = re.sub(r"<[^<>\s]+>", "X", text)
    text = re.sub(r"\$\{?([A-Za-z_]\w*)\}?", r"\1", text)
    text = text.replace("[", " ").replace("]", " ")
    words, skip = [], False
    for word in shlex.split(text):
        if skip:
            skip = False
            continue
        if _REDIRECT.match(word):
            skip = word in (">", ">>", "<", "&>", "2>", "2>>")  # the target is the next word
            continue
        word = word.split("|")[0].removesuffix("...")
        if word:
            words.append(word)
    return words


def documented_command_lines():
    """(file, line as written, words) for every command line of the kit in the README and the site."""
    found = []
    for path in [README, *_pages()]:
        for line in _code(path.read_text()):
            m = _COMMAND.search(line)
            if m is None or m.group(1).strip() in ("", "..."):  # a mention of the command, not a command line
                continue
            found.append((path.relative_to(ROOT), line.strip(), _words(m.group(1))))
    return found


def _cli_verbs():
    """The verbs the CLI's own parser offers (from its help)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        cli.main(["--help"], parse_only=True)
    verbs = set(re.findall(r"^    ([a-z][a-z-]*)(?:\s|$)", out.getvalue(), re.M))
    assert {"build", "grade"} <= verbs, out.getvalue()  # the help's layout changed: fail, never pass vacuously
    return verbs


def test_every_documented_command_line_is_one_the_cli_accepts():
    lines = documented_command_lines()
    assert len(lines) >= 10, lines
    verbs = set()
    for where, line, words in lines:
        if words == ["--version"]:
            with contextlib.redirect_stdout(io.StringIO()), pytest.raises(SystemExit) as exit_:
                cli.main(words, parse_only=True)
            assert exit_.value.code == 0, (where, line)
            continue
        try:
            with contextlib.redirect_stderr(io.StringIO()) as err:
                args = cli.main(words, parse_only=True)
        except SystemExit as exc:
            raise AssertionError(
                f"{where}: the CLI refuses `{line}` as {words} (exit {exc.code}):\n{err.getvalue()}"
            ) from None
        verbs.add(args.verb)
    missing = _cli_verbs() - verbs
    assert not missing, f"verbs no command line in the README or docs/pages shows: {sorted(missing)}"


@pytest.mark.parametrize(
    "args_text, words",
    [
        (
            "grade SUBMISSION... --out DIR [--assignment NAME] [--resume]",
            ["grade", "SUBMISSION", "--out", "DIR", "--assignment", "NAME", "--resume"],
        ),
        (
            "report OUT [--lang pt-BR|en] [--export canvas|moodle]",
            ["report", "OUT", "--lang", "pt-BR", "--export", "canvas"],
        ),
        ("ci --workflow > .github/workflows/check.yml", ["ci", "--workflow"]),
        ("grade $SUBS/<name> --out out 2>&1 | tee log", ["grade", "SUBS/X", "--out", "out"]),
        (
            "deploy slurm --set OUT=/a/b --set VAR=VALUE ... && bash x.sh",
            ["deploy", "slurm", "--set", "OUT=/a/b", "--set", "VAR=VALUE"],
        ),
    ],
)
def test_a_documented_line_becomes_the_words_the_cli_gets(args_text, words):
    assert _words(args_text) == words

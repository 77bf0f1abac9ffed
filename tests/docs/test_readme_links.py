"""The README works from a fresh clone of this repository alone: every relative link in it, and
in the Markdown files it links, names a file of the clone (and a heading there, for `#anchor`
links); its shell examples are quoted so that zsh (macOS's default shell) runs them as bash
does."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.M | re.S)
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.M)


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository as a user's `git clone` has it: HEAD, nothing else."""
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout (or no git): nothing to clone")
    target = tmp_path_factory.mktemp("clone") / "schemarag"
    subprocess.run(
        ["git", "clone", "--quiet", "--no-hardlinks", str(REPO), str(target)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return target


def links(markdown: str) -> Iterator[str]:
    """The targets of the Markdown links in `markdown`, outside code."""
    prose = CODE_SPAN.sub("", FENCE.sub("", markdown))
    for match in LINK.finditer(prose):
        yield match[1]


def anchors(markdown: str) -> set[str]:
    """The anchors GitHub gives the headings of `markdown` (lower case, punctuation dropped,
    spaces as hyphens, `-1`, `-2` after repeats)."""
    seen: dict[str, int] = {}
    found = set()
    for heading in HEADING.findall(FENCE.sub("", markdown)):
        text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "")
        slug = re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def broken_links(root: Path, start: Path) -> list[str]:
    """Every relative link, from `start` and the Markdown files it leads to inside `root`,
    that names no file of `root` or no heading of the file it names."""
    problems: list[str] = []
    todo, done = [start], set()
    while todo:
        page = todo.pop()
        if page in done:
            continue
        done.add(page)
        text = page.read_text(encoding="utf-8")
        for target in links(text):
            if re.match(r"^[a-z][a-z0-9+.\-]*:", target, re.I):  # https:, mailto:
                continue
            path_part, _, anchor = target.partition("#")
            linked = (page.parent / path_part).resolve() if path_part else page
            where = f"{page.relative_to(root)}: ({target})"
            if not linked.is_relative_to(root.resolve()) or not linked.exists():
                problems.append(f"{where}: no such file in the clone")
                continue
            if linked.suffix == ".md":
                if anchor and anchor not in anchors(linked.read_text(encoding="utf-8")):
                    problems.append(f"{where}: no heading #{anchor} in {linked.name}")
                todo.append(linked)
    return problems


def test_every_link_of_the_readme_resolves_in_a_fresh_clone(clone: Path) -> None:
    assert (clone / "README.md").exists()
    assert broken_links(clone, clone / "README.md") == []


def test_the_link_check_finds_what_a_clone_lacks(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "B.md").write_text("# Decision log\n## Users' examples\n")
    (tmp_path / "README.md").write_text(
        "See [design](../shared/DESIGN.md), [log](docs/B.md#decision-log), "
        "[ex](docs/B.md#users-examples), [gone](docs/B.md#nowhere), [web](https://x.org/a.md)"
        " and `[not a link](nowhere.md)`.\n```sh\n[also](not-a-link.md)\n```\n"
    )
    assert broken_links(tmp_path, tmp_path / "README.md") == [
        "README.md: (../shared/DESIGN.md): no such file in the clone",
        "README.md: (docs/B.md#nowhere): no heading #nowhere in B.md",
    ]


def unquoted_globs(script: str) -> list[str]:
    """The shell words of `script` (one command per line, `#` comments, `\\` continuations)
    with a glob character (`[`, `*`, `?`) outside quotes: zsh stops on them ("no matches
    found") where bash passes them on as they are."""
    found: list[str] = []
    for line in script.replace("\\\n", " ").splitlines():
        word, quote, bad = "", "", False
        for i, char in enumerate(line + " "):
            if quote:
                quote = "" if char == quote else quote
            elif char in "'\"":
                quote = char
            elif char == "#" and not word and (i == 0 or line[i - 1] in " \t"):
                break
            elif char in " \t;|&()":
                if bad:
                    found.append(word)
                word, bad = "", False
                continue
            elif char in "[*?":
                bad = True
            word += char
    return found


def test_the_readme_shell_examples_run_in_zsh_as_in_bash() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```(?:sh|bash|shell|console)\n(.*?)^```", readme, re.M | re.S)
    assert blocks
    assert [word for block in blocks for word in unquoted_globs(block)] == []


def test_the_glob_check_finds_unquoted_brackets() -> None:
    script = (
        "schemarag catalog show ddl[postgres]:w/ --json   # the dialect [in a comment]\n"
        "schemarag index build 'infoschema[schema]:e/' --schemas \"sales_*\" \\\n"
        "  --exclude tmp_*\n"
        "pip install -e '.[docs]'\n"
    )
    assert unquoted_globs(script) == ["ddl[postgres]:w/", "tmp_*"]

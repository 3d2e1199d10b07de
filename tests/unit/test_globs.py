"""Path globs with gitignore conventions: what they match, what they refuse, their properties."""

from __future__ import annotations

import warnings

import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

from agentctl.domain import globs
from agentctl.domain.errors import BadInput
from agentctl.domain.test_side import DEFAULT_TEST_PATHS


@pytest.mark.parametrize(("pattern", "path", "expected"), [
    # no slash: any depth
    ("*.lock", "yarn.lock", True),
    ("*.lock", "web/app/yarn.lock", True),
    ("*.lock", "yarn.lock.bak", False),
    (".env", ".env", True),
    (".env", "deploy/.env", True),
    (".env", ".envrc", False),
    (".env.*", "config/.env.prod", True),
    ("id_rsa*", "home/.ssh/id_rsa.pub", True),
    # a slash anchors at the root
    ("src/**", "src/app.py", True),
    ("src/**", "src/deep/er/app.py", True),
    ("src/**", "lib/src/app.py", False),
    ("src/**", "srcx/app.py", False),
    ("/pom.xml", "pom.xml", True),
    ("/pom.xml", "module/pom.xml", False),
    (".github/workflows/*.yml", ".github/workflows/deploy.yml", True),
    (".github/workflows/*.yml", ".github/workflows/sub/deploy.yml", False),
    # * and ? stay within one segment
    ("src/*.py", "src/app.py", True),
    ("src/*.py", "src/pkg/app.py", False),
    ("src/?.py", "src/a.py", True),
    ("src/?.py", "src/ab.py", False),
    ("a?b", "a/b", False),
    # ** spans any number of segments, zero included
    ("src/**/*.py", "src/app.py", True),
    ("src/**/*.py", "src/a/b/c/app.py", True),
    ("src/**/*.py", "src/a/b/c/app.txt", False),
    ("**/test/**", "test/a.py", True),
    ("**/test/**", "module/test/a.py", True),
    ("**/test/**", "module/tests/a.py", False),
    ("**/generated/**", "a/generated/b/c.java", True),
    ("**", "anything/at/all", True),
    # a pattern that matches a folder covers everything below it
    ("infra", "infra/main.tf", True),
    ("infra", "modules/infra/main.tf", True),
    ("infra/", "infra/main.tf", True),
    ("deployment/*", "deployment/k8s/app.yaml", True),
    ("infra", "infrastructure/main.tf", False),
    # character classes
    ("file[0-9].txt", "file7.txt", True),
    ("file[0-9].txt", "fileA.txt", False),
    ("file[!0-9].txt", "fileA.txt", True),
    ("file[!0-9].txt", "file7.txt", False),
    # literal characters that mean something to regular expressions
    ("a+b(c).txt", "a+b(c).txt", True),
    ("a+b(c).txt", "aab(c).txt", False),
    ("v1.2", "v1x2", False),
    # case matters, as in git
    ("*.PY", "app.py", False),
    # ./ is the root
    ("./src/**", "src/app.py", True),
])
def test_glob_matches(pattern: str, path: str, expected: bool) -> None:
    assert globs.matches(pattern, path) is expected


@pytest.mark.parametrize(("pattern", "problem"), [
    ("", "empty path glob"),
    ("   ", "empty path glob"),
    ("!src/**", "negation"),
    ("src\\*.py", "separator"),
    ("a\0b", "separator"),
    ("../outside/**", "'..'"),
    ("src/../../etc", "'..'"),
    ("src/[abc", "never closed"),
    ("[", "never closed"),
])
def test_malformed_glob_is_refused_with_what_is_wrong(pattern: str, problem: str) -> None:
    with pytest.raises(BadInput, match=problem):
        globs.validate_glob(pattern)


@pytest.mark.parametrize("pattern", ["[]", "[]a]", "[!]", "[z-a]", "[a/b]"])
def test_glob_that_cannot_be_compiled_is_refused_as_malformed(pattern: str) -> None:
    with pytest.raises(BadInput, match="malformed glob"):
        globs.validate_glob(pattern)
        globs.compile_glob(pattern)


@pytest.mark.parametrize(("pattern", "normalised"), [
    ("src/**", "src/**"), ("  *.lock ", "*.lock"), ("./src/**", "src/**"), ("a/b/", "a/b/"),
])
def test_validate_returns_the_normalised_pattern(pattern: str, normalised: str) -> None:
    assert globs.validate_glob(pattern) == normalised


def test_first_match_names_the_first_rule_that_matches() -> None:
    rules = ("infra/**", "*.tf", ".github/**")
    assert globs.first_match(rules, "infra/main.tf") == "infra/**"
    assert globs.first_match(rules, "modules/vpc.tf") == "*.tf"
    assert globs.first_match(rules, "src/app.py") is None
    assert globs.first_match((), "anything") is None


@pytest.mark.parametrize(("pattern", "sample"), [
    ("src/**", "src/x"), ("*.lock", "x.lock"),
    (".github/workflows/*.yml", ".github/workflows/x.yml"),
    ("file[0-9].txt", "filex.txt"), ("/pom.xml", "pom.xml"), ("a?c", "axc"),
])
def test_representative_path(pattern: str, sample: str) -> None:
    assert globs.representative_path(pattern) == sample


def test_matching_paths_finds_each_matching_path_of_a_listing_once_in_order() -> None:
    listing = "".join(f"{p}\0" for p in [
        "src/app.py", "deploy/.env", ".env.prod", "keys/server.pem", "a.pem/inside.txt",
        "file7.txt", "notes.envy", "home/.ssh/id_rsa.pub", "src/q[z.txt"])
    rules = (".env", ".env.*", "*.pem", "id_rsa*", "file[0-9].txt", "src/q[[]z.txt")
    assert globs.matching_paths(rules, listing) == [
        "deploy/.env", ".env.prod", "keys/server.pem", "a.pem/inside.txt", "file7.txt",
        "home/.ssh/id_rsa.pub", "src/q[z.txt"]
    assert globs.matching_paths(("**",), listing) == [p for p in listing.split("\0") if p]
    assert globs.matching_paths((), listing) == []
    assert globs.matching_paths(rules, "") == []


# --- properties -----------------------------------------------------------------------------

SEGMENT = st.text(alphabet="abcxyz019_-.", min_size=1, max_size=6).filter(
    lambda s: s not in (".", ".."))
PATH = st.lists(SEGMENT, min_size=1, max_size=5).map("/".join)
PATTERN_TEXT = st.text(alphabet="abx./*?-_", min_size=1, max_size=16)


def _valid(pattern: str) -> str:
    try:
        return globs.validate_glob(pattern)
    except BadInput:
        assume(False)
        raise


@given(PATTERN_TEXT)
def test_a_glob_matches_its_own_representative_path(pattern: str) -> None:
    _valid(pattern)
    assert globs.matches(pattern, globs.representative_path(pattern))


@given(st.lists(SEGMENT, max_size=4), SEGMENT)
def test_a_pattern_without_slash_matches_its_name_at_any_depth(folders: list[str],
                                                                name: str) -> None:
    assert globs.matches(name, "/".join([*folders, name]))


@given(st.lists(SEGMENT, min_size=1, max_size=3), PATH)
def test_an_anchored_pattern_matches_only_at_the_root(folders: list[str], rest: str) -> None:
    anchored = "/".join(folders)
    assume("/" in anchored)
    assert globs.matches(anchored, f"{anchored}/{rest}")
    assert not globs.matches(anchored, f"prefix/{anchored}")


@given(SEGMENT, st.lists(SEGMENT, min_size=1, max_size=4))
def test_a_star_never_crosses_a_slash(top: str, below: list[str]) -> None:
    path = "/".join([top, *below])
    assert globs.matches(f"{top}/**", path)
    assert globs.matches(f"{top}/**/{below[-1]}", path)
    if len(below) > 1:
        assert not globs.matches(f"{top}/*.never", path)
        assert not globs.matches(f"{top}/*/*.never", path)


@given(st.text(min_size=1, max_size=12))
@example("[]")
@example("[z-a]")
@example("[a/b]")
def test_every_pattern_either_is_refused_or_compiles(pattern: str) -> None:
    try:
        globs.validate_glob(pattern)
    except BadInput:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        globs.compile_glob(pattern)


@pytest.mark.parametrize("pattern", ["q[[]z.txt", "w[[:digit:]]v", "src/[[]x"])
def test_compiling_a_glob_prints_no_python_warning(pattern: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        globs.matches(pattern, "src/x")


@given(st.lists(PATTERN_TEXT | st.sampled_from(["[ab]x", "x[!a].b", "a/[x-z]*", "**/a?"]),
                max_size=4),
       st.lists(PATH, max_size=12, unique=True))
def test_matching_paths_is_the_paths_one_of_the_patterns_matches(patterns: list[str],
                                                                 paths: list[str]) -> None:
    for pattern in patterns:
        _valid(pattern)
    listing = "".join(f"{path}\0" for path in paths)
    expected = [path for path in paths if globs.first_match(patterns, path) is not None]
    assert globs.matching_paths(patterns, listing) == expected


# --- plain segments: the same answers as the regex, without compiling it ---------------------

# paths a rule may meet, odd ones included: empty segments, a leading or trailing slash, a
# newline in a name or at the end (where the regex's `$` matches before it)
ODD_PATH = st.lists(st.text(alphabet="abx.*-_\n", max_size=5), min_size=1, max_size=5).map(
    "/".join) | st.sampled_from(["", "/", "//", "a//b", "/a/b", "a/b/", "a\n", ".env\n", "a/\n"])


@given(st.text(alphabet="abx./*-", min_size=1, max_size=14) | st.sampled_from(
    ["**/a", "a/**", "**/a/**", "*/a", "a/*", "**/*", "/a", "a/", "*", "**", "a/**/b", "a**b"]),
       ODD_PATH | PATH)
@example("**/generated/**", "src/generated/x.py")
@example(".env", "deploy/.env")
@example("*.lock", "web/yarn.lock/x")
@example("dist/**", "dist")
@example("dist/**", "dist/")
@example("a*b*a", "aba")
@example(".env", ".env\n")
def test_a_plain_glob_matches_exactly_the_paths_its_regex_matches(pattern: str,
                                                                  path: str) -> None:
    _valid(pattern)
    assert globs.matches(pattern, path) == (globs.compile_glob(pattern).match(path) is not None)


def test_the_default_rules_are_almost_all_matched_without_a_regex() -> None:
    rules = (*DEFAULT_TEST_PATHS, "**/pyproject.toml", "**/requirements/*.txt", "dist/**",
             "**/generated/**", "*.generated.*", ".env.*", "src/test/**")
    assert all(globs.plain_segments(rule) is not None for rule in rules)
    assert globs.plain_segments("src/?.py") is None and globs.plain_segments("a/**/b") is None
    assert globs.plain_segments("file[0-9].txt") is None

"""Which forge, API and repository a remote URL means; `[pr]` settings win."""

from __future__ import annotations

import pytest

from agentctl.domain.enums import Forge
from agentctl.domain.errors import BadInput
from agentctl.execution.pull_requests.forge import _message, detect


@pytest.mark.parametrize(("url", "kind", "api", "repository"), [
    ("git@github.com:octo/calc.git", Forge.GITHUB, "https://api.github.com", "octo/calc"),
    ("https://github.com/octo/calc", Forge.GITHUB, "https://api.github.com", "octo/calc"),
    ("https://gitlab.com/group/sub/app.git", Forge.GITLAB, "https://gitlab.com/api/v4",
     "group/sub/app"),
    ("ssh://git@gitlab.example.org/team/app.git", Forge.GITLAB,
     "https://gitlab.example.org/api/v4", "team/app"),
    ("/srv/git/app.git", Forge.NONE, "", ""),
    ("https://bitbucket.org/octo/calc.git", Forge.NONE, "", ""),
])
def test_the_forge_is_read_from_the_remote_url(url: str, kind: Forge, api: str,
                                               repository: str) -> None:
    target = detect(url, forge=Forge.AUTO, api_url="", repository="")
    assert (target.kind, target.api_url, target.repository) == (kind, api, repository)


def test_settings_name_the_forge_api_and_repository_for_enterprise_hosts() -> None:
    target = detect("git@ghe.corp:octo/calc.git", forge=Forge.GITHUB,
                    api_url="https://ghe.corp/api/v3/", repository="")
    assert (target.kind, target.api_url, target.repository) == (
        Forge.GITHUB, "https://ghe.corp/api/v3", "octo/calc")


def test_a_forge_without_a_repository_is_bad_input_naming_the_setting() -> None:
    with pytest.raises(BadInput, match=r'set \[pr\] repository = "owner/name"'):
        detect("/srv/git/app.git", forge=Forge.GITHUB, api_url="", repository="")


@pytest.mark.parametrize(("body", "message"), [
    (b'{"message": "Validation Failed", "errors": [{"message": "No commits"}]}',
     "Validation Failed; No commits"),
    (b'{"message": ["Another open merge request already exists"]}',
     "Another open merge request already exists"),
    (b'<html>bad gateway</html>', "<html>bad gateway</html>"),
])
def test_the_forges_own_message_is_what_the_error_says(body: bytes, message: str) -> None:
    assert _message(body) == message

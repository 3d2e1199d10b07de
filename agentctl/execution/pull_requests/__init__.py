"""Pull requests: the forge clients (GitHub, GitLab) and the branch a PR is pushed from."""

"""`agentctl run`: start, list, show and cancel runs. One module per job; the group is in
`commands`, so that `task submit --run` imports `start` without the other commands."""

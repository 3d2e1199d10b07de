"""`agentctl task`: submit, list, show and cancel tasks. One module per job; the group is in
`commands`, so that `task list` imports neither the submit dialog nor the run pipeline."""

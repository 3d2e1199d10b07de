"""`agentctl verdict`: show and explain a verdict, approve or reject one. The group is in
`commands`, so that reading a verdict imports nothing a decision needs."""

"""Everything that touches the outside world on a run's behalf: git, processes, tools, agents."""

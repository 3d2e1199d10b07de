"""Test files of projects whose sdists ship none (tomli's), copied verbatim from the release's
tag in the project's repository: a corpus case lays them on its base (`upstream_tests`). They
are the projects' tests, not agentctl's: never collected here."""

collect_ignore_glob = ["*"]

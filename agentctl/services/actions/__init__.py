"""What a user does with tasks and finished runs: sessions, tasks, approvals, pull requests,
attestations, replays.
"""

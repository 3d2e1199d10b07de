"""The attempt pipeline: one attempt of a run, from its workspace and agent to the patch, its
checks and the verdict.
"""

"""The command line: parse, call one service or view, render. Heavy imports stay inside commands.

Command modules do not use `from __future__ import annotations`: Typer inspects every command's
signature at start-up, and evaluating string annotations there cost more than the commands'
own work in `task list`.
"""

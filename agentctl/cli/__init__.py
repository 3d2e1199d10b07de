"""The command line: parse, call one service or view, render. Heavy imports stay inside commands."""

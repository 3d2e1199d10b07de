"""The model and its rules. Standard library only: no IO, no ORM, no git, no subprocess."""

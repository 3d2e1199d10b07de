"""Rendering records for people (Rich). Data access stays in the commands and views."""

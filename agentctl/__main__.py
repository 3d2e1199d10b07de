from agentctl.cli.main import command

command()

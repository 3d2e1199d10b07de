from agentctl.cli.main import main

main()

"""The guide's reference pages, generated: docs/reference/configuration.md from the settings models and
docs/reference/commands.md from the command line's parser. `python -m bot.cli.reference` writes them;
`python -m bot.cli.reference --check` says whether the checked-in copies are current (a test runs it).
"""

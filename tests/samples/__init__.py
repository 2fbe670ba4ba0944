"""What the tests build for the bot to work on: the demo incident's configuration, real git repositories,
and real kernel runs with every kind of step."""

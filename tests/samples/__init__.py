"""What the tests build for the code to work on: the demo incident's configuration, real git repositories, real
kernel runs with every kind of step, run-store records, and fake credentials in every format the redactor knows."""

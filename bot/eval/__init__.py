"""`opsagent eval`: scenarios with recorded tool outputs, run through the real kernel and scored at three levels.

Side effects are always dry runs; the report's text is `bot.cli.eval_report`'s business.
"""

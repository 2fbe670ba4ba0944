"""Who may start an investigation, and how often: workspaces, channels, rate limits, concurrency, daily spend.

`policy` decides and returns facts (`Refused`); `bot.slack.refusals` words them for the person who asked.
"""

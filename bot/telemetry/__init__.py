"""What the bot tells its operators about itself: Prometheus metrics, OpenTelemetry spans, and its logs.

Every log line passes the redactor; metrics and spans are fed by the kernel's event stream.
"""

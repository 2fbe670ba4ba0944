"""What one client may hold of the bot's HTTP server: time to send its request head and body, body sizes, and a
share of the connections, apart from the share kept for health probes and Slack's signed requests.

- `limits.py`     the limits (`HttpLimits`) and the connection caps derived from them and the open-file limit.
- `admission.py`  who may hold a connection: a share per client address for connections that have proven nothing.
- `site.py`       the TCP site whose connections go through the admission, and the middleware that classifies
                  each request once its head is complete.
- `bodies.py`     a request body's size limit and time to arrive, and reading one within them.
- `open_files.py` the process's open-file limit, raised to its hard limit at start-up.
"""

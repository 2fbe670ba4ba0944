"""Stand-ins that speak a real protocol in place of what cannot run here: Slack's Web API and Socket Mode, model
APIs, Loki and Elasticsearch, an OTLP collector, an operator's action receiver, Prometheus' scrape, a wall clock."""

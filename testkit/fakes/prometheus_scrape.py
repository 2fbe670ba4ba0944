"""Reading a `/metrics` answer the way Prometheus does: prometheus_client's own text parser, samples by name and labels."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def parse_samples(text: str) -> Samples:
    """Every sample of an exposition, keyed by its name and its sorted labels."""
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def sample(samples: Samples, name: str, **labels: str) -> float | None:
    """One sample's value, or None when the exposition has no such series."""
    return samples.get((name, tuple(sorted(labels.items()))))

"""Verification of approved actions: a while after an approved side effect ran, the read that showed the symptom is
run again, and the run's trace, the audit log and the thread say whether the action held."""

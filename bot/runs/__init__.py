"""One investigation's life: the service that starts, stops and resumes runs, durability, and replica duties.

A run is carried to its end through pauses and restarts; its trace in the store is the checkpoint.
"""

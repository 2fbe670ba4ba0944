"""Memory of past incidents: what earlier investigations concluded, searched by `similar_incidents`.

The memory is a protocol (the bot's run store implements it); past root causes reach the model as hypotheses to
re-check, with their feedback and age, never as conclusions.
"""

from opsagent_tools.memory.check import check_memory
from opsagent_tools.memory.family import MemoryFamily
from opsagent_tools.memory.records import IncidentMemory, PastIncident
from opsagent_tools.memory.settings import MemorySettings
from opsagent_tools.memory.tools import similar_incidents_tool

__all__ = [
    "IncidentMemory",
    "MemoryFamily",
    "MemorySettings",
    "PastIncident",
    "check_memory",
    "similar_incidents_tool",
]

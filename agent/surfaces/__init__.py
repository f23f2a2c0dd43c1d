"""What users and applications touch.

The Python client, LangGraph's ``BaseStore``, the tools, the MCP server, served
authentication and access, whole operations, checkpointers, the trace page and the memory
browser.

Surfaces call the graphs and open stores through the services; nothing below imports them.
The command line (``agent/cli``) and the benchmark harness (``agent/eval``) sit above.
"""

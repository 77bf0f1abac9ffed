"""`schemarag mcp`: the knowledge base as a Model Context Protocol server.

- `estate`  `Estate`: what the tools answer (find, list, describe, run, generate), as Python;
- `server`  `create_server`: those answers as tools of the official SDK's `MCPServer`;
- `run`     the transports: stdio, and streamable HTTP behind the HTTP API's key check.
"""

"""The workspace service, the one place the CLI and the language server ask: the folders with
their settings and trust (`service`), the incremental index the server keeps (`index`, with
the import `graph`), the answers for a folder — show, list, check, jit, each agent's view
(`queries`) — which agents read which file (`readers`), and the effective context per agent
and folder with its diff (`effective`). Above the agents: it may import every agent; agents
never import it."""
